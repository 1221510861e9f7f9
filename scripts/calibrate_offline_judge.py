"""Grid-search the offline judge's thresholds and print the chosen setting with its measured agreement.

Two sets of labelled pairs:

* `--released` (what the shipped setting is chosen on): 571 real (nugget, document) pairs of the FreshStack
  release's langchain judgments (GPT-4o labels, tests/fixtures/released/), each document rebuilt exactly at its
  pinned commit. Every pair is scored as a build scores it (`judge_tasks`: blocks of 20 documents, cut at 1,024
  cl100k tokens). Among the rules whose support rate is within two points of the release's, the one with the
  highest Cohen's kappa wins: an offline judge that says "supports" more often than GPT-4o inflates every score.
  The whole search is also run leave-one-question-out, the honest estimate of how it does on new questions.
* the default, the hand-labelled Laravel pairs (a check, no longer the choice): each pair is (nugget, a
  character range of a Laravel docs file, supported?), scored once (term-overlap share and MiniLM cosine, as
  `OfflineBackend.judge` does); every rule is tried and the best accuracy of each family is reported.

Copy the chosen setting into freshstack_hf/pipeline/offline/judge_rule.py together with the figures printed here.

    .venv/bin/python scripts/calibrate_offline_judge.py --released
    .venv/bin/python scripts/calibrate_offline_judge.py [--data ../shared/data] [--lexical-only]
"""

from __future__ import annotations

import argparse
import json
import sys
import tarfile
from itertools import product
from pathlib import Path

from freshstack_hf.pipeline.judge_agreement import ReferencePairs, agreement_counts, load_reference_pairs
from freshstack_hf.pipeline.offline.backend import OfflineBackend
from freshstack_hf.pipeline.offline.judge_rule import decide
from freshstack_hf.pipeline.stages.judgments import judge_tasks

ROOT = Path(__file__).resolve().parents[1]
FIXTURE = ROOT / "tests" / "fixtures" / "offline_support_pairs.jsonl"
DEFAULT_DATA = ROOT.parent / "shared" / "data"
RELEASED = ROOT / "tests" / "fixtures" / "released"
RATE_TOLERANCE = 0.02  # a chosen rule says "supports" within two points of the reference's rate


def load_pairs(fixture: Path, tarball: Path) -> list[tuple[str, str, bool]]:
    """(nugget, document text, label) for every fixture row, the text cut from the tarball by offsets."""
    rows = [json.loads(line) for line in fixture.read_text(encoding="utf-8").splitlines() if line.strip()]
    files: dict[str, str] = {}
    with tarfile.open(tarball) as tar:
        for name in {r["doc"]["path"] for r in rows}:
            member = tar.extractfile(name)
            if member is None:
                raise SystemExit(f"{tarball}: {name} is not a file")
            files[name] = member.read().decode("utf-8")
    return [(r["nugget"], files[r["doc"]["path"]][r["doc"]["start"] : r["doc"]["end"]], r["label"]) for r in rows]


def metrics(pred: list[bool], gold: list[bool]) -> dict[str, float]:
    tp = sum(p and g for p, g in zip(pred, gold, strict=True))
    fp = sum(p and not g for p, g in zip(pred, gold, strict=True))
    fn = sum(g and not p for p, g in zip(pred, gold, strict=True))
    precision = tp / (tp + fp) if tp + fp else 0.0
    recall = tp / (tp + fn) if tp + fn else 0.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    accuracy = sum(p == g for p, g in zip(pred, gold, strict=True)) / len(gold)
    return {"accuracy": accuracy, "precision": precision, "recall": recall, "f1": f1}


def grid() -> list[dict]:
    """Every candidate setting; the lexical-only rule is the one with `cosine=None`."""
    steps = [round(0.05 * i, 2) for i in range(1, 20)]
    out = [{"combine": "lexical", "lexical_threshold": t} for t in steps]
    out += [{"combine": c, "lex_gate": a, "cos_gate": b} for c in ("and", "or") for a, b in product(steps, steps)]
    weights = [round(0.05 * i, 2) for i in range(2, 19)]
    out += [{"combine": "mix", "mix_weight": w, "mix_threshold": t} for w, t in product(weights, steps)]
    return out


def evaluate(setting: dict, shares: list[float], cosines: list[float] | None, gold: list[bool]) -> dict[str, float]:
    if setting["combine"] == "lexical":
        pred = [decide(s, None, setting) for s in shares]
    else:
        pred = [decide(s, c, setting) for s, c in zip(shares, cosines or [], strict=True)]
    return metrics(pred, gold)


def cross_validated(settings: list[dict], shares: list[float], cosines: list[float] | None, gold: list[bool]) -> float:
    """Held-out accuracy when the grid search only sees 4/5 of the pairs: how much the choice overfits 89 pairs."""
    correct = 0
    for fold in range(5):
        train = [i for i in range(len(gold)) if i % 5 != fold]
        test = [i for i in range(len(gold)) if i % 5 == fold]

        def pick(idx: list[int]) -> tuple[list[float], list[float] | None, list[bool]]:
            return (
                [shares[i] for i in idx],
                None if cosines is None else [cosines[i] for i in idx],
                [gold[i] for i in idx],
            )

        scored = [(evaluate(s, *pick(train))["accuracy"], -rank, s) for rank, s in enumerate(settings)]
        setting = max(scored, key=lambda x: x[:2])[2]
        correct += evaluate(setting, *pick(test))["accuracy"] * len(test)
    return correct / len(gold)


def released_scores(backend: OfflineBackend, ref: ReferencePairs) -> list[tuple[str, float, float | None, int]]:
    """(query_id, share, cosine, label) of every reference pair, from the documents a build's judge would see."""
    nuggets = {q: tuple(text for _, text in items) for q, items in ref.nuggets.items()}
    out = []
    for task in judge_tasks(dict.fromkeys(ref.nuggets, ""), nuggets, ref.docs, ref.text_of, 20, 1024):
        shares, cosines = backend.scores(task.nuggets, task.doc_texts)
        ids = [nugget_id for nugget_id, _ in ref.nuggets[task.query_id]]
        for i, doc_id in enumerate(task.doc_ids):
            for j, nugget_id in enumerate(ids):
                cosine = None if cosines is None else cosines[i][j]
                out.append((task.query_id, shares[i][j], cosine, ref.labels[(nugget_id, doc_id)]))
    return out


def _predict(setting: dict, rows: list[tuple[str, float, float | None, int]]) -> list[int]:
    lexical = setting["combine"] == "lexical"
    return [int(decide(share, None if lexical else cos, setting)) for _, share, cos, _ in rows]


def _choose(settings: list[dict], rows: list[tuple[str, float, float | None, int]]) -> dict:
    """The highest-kappa rule among those whose support rate is near the reference's (first in grid order on ties)."""
    gold = [label for *_, label in rows]
    rate = sum(gold) / len(gold)
    best, best_key = settings[0], None
    for rank, setting in enumerate(settings):
        pred = _predict(setting, rows)
        if abs(sum(pred) / len(pred) - rate) > RATE_TOLERANCE:
            continue
        key = (agreement_counts(gold, pred)["kappa"], -rank)
        if best_key is None or key > best_key:
            best, best_key = setting, key
    return best


def _figures(gold: list[int], pred: list[int]) -> str:
    m = agreement_counts(gold, pred)
    return (
        f"kappa {m['kappa']:.3f} precision {m['precision'] or 0:.3f} recall {m['recall'] or 0:.3f} "
        f"says supports {m['judge_supported']} (reference {m['reference_supported']})"
    )


def calibrate_released(lexical_only: bool) -> int:
    ref = load_reference_pairs(RELEASED / "langchain_judgments.jsonl", RELEASED / "langchain_judged_chunks.jsonl.gz")
    backend = OfflineBackend(use_embeddings=not lexical_only)
    rows = released_scores(backend, ref)
    have_cos = all(cos is not None for _, _, cos, _ in rows)
    gold = [label for *_, label in rows]
    print(f"{len(rows)} released pairs of {len(ref.nuggets)} questions, {sum(gold)} supported; embeddings: {have_cos}")
    current = _predict({**backend.setting, "combine": backend.setting["combine"] if have_cos else "lexical"}, rows)
    print(f"shipped setting: {_figures(gold, current)}")
    for family in ("lexical", "combined") if have_cos else ("lexical",):
        settings = [g for g in grid() if (g["combine"] == "lexical") == (family == "lexical")]
        chosen = _choose(settings, rows)
        print(f"{family}: chosen {json.dumps(chosen)}  {_figures(gold, _predict(chosen, rows))}")
        held_out: dict[int, int] = {}
        for query in ref.nuggets:
            train = [r for r in rows if r[0] != query]
            test = [i for i, r in enumerate(rows) if r[0] == query]
            picked = _choose(settings, train)
            held_out.update(zip(test, _predict(picked, [rows[i] for i in test]), strict=True))
        figures = _figures(gold, [held_out[i] for i in range(len(rows))])
        print(f"{family}: leave-one-question-out of this search: {figures}")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA, help="the shared data folder")
    parser.add_argument("--lexical-only", action="store_true", help="skip the MiniLM model")
    parser.add_argument("--released", action="store_true", help="choose on the release's real judgments")
    args = parser.parse_args(argv)
    if args.released:
        return calibrate_released(args.lexical_only)
    pairs = load_pairs(FIXTURE, args.data / "github" / "laravel-docs.tar.gz")
    backend = OfflineBackend(use_embeddings=not args.lexical_only)
    shares, cosines = [], []
    for nugget, doc, _ in pairs:
        share, cosine = backend.scores([nugget], [doc])
        shares.append(share[0][0])
        cosines.append(cosine[0][0] if cosine else None)
    gold = [label for _, _, label in pairs]
    have_cos = all(c is not None for c in cosines)
    print(f"{len(pairs)} pairs, {sum(gold)} supported; embeddings: {have_cos}")
    settings = [g for g in grid() if g["combine"] == "lexical" or have_cos]
    cos = cosines if have_cos else None
    best: dict[str, tuple] = {}
    for rank, setting in enumerate(settings):
        m = evaluate(setting, shares, cos, gold)
        key = (round(m["accuracy"], 6), round(m["f1"], 6), -rank)
        if setting["combine"] not in best or key > best[setting["combine"]][0]:
            best[setting["combine"]] = (key, setting, m)
    for combine, (_, setting, m) in best.items():
        figures = " ".join(f"{k} {v:.3f}" for k, v in m.items())
        print(f"{combine:8s} {json.dumps(setting)}  {figures}")
    chosen = max(best.values(), key=lambda b: b[0])
    print(f"chosen: {json.dumps(chosen[1])}")
    print(f"5-fold cross-validated accuracy of this search: {cross_validated(settings, shares, cos, gold):.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
