"""Grid-search the offline judge's thresholds on the hand-labelled Laravel pairs and print the chosen setting.

Each pair is (nugget, a character range of a Laravel docs file, supported?). The script scores every pair once
(term-overlap share and MiniLM cosine, exactly as `OfflineBackend.judge` does), then tries every rule:
lexical share alone, share AND cosine, share OR cosine, and a weighted mix, and reports accuracy, precision,
recall and F1 for the best setting of each (ties go to the higher F1, then the simpler rule). Copy the winners
into freshstack_hf/build/offline.py together with the figures printed here.

    .venv/bin/python scripts/calibrate_offline_judge.py [--data /work/shared/data] [--lexical-only]
"""

from __future__ import annotations

import argparse
import json
import sys
import tarfile
from itertools import product
from pathlib import Path

from freshstack_hf.build.offline import OfflineBackend, decide

ROOT = Path(__file__).resolve().parents[1]
FIXTURE = ROOT / "tests" / "fixtures" / "offline_support_pairs.jsonl"
DEFAULT_DATA = ROOT.parent / "shared" / "data"


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


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA, help="the shared data folder")
    parser.add_argument("--lexical-only", action="store_true", help="skip the MiniLM model")
    args = parser.parse_args(argv)
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
