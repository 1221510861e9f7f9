"""Judge agreement: how far a build's judge agrees with a reference repo's judgments, and what the disagreement
does to scores (rank agreement between two snapshots of a topic is `drift.rank_agreement`).

A build's judge (an LLM, or the offline heuristic) is only as good as its agreement with trusted labels. Here the
reference's judged (nugget, document) pairs are judged again through the build's own task builder, backend,
batching and cache (`judgments.judge_tasks`: each question's documents in blocks, all its nuggets per call, the
documents as written), and compared pair by pair: Cohen's kappa, accuracy, and the precision and recall of
"supports". Then the effect: the repo's candidate lists scored under the reference and the re-judged
judgments, and the Kendall tau between the two orderings of those systems.
"""

from __future__ import annotations

import gzip
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from freshstack_hf.errors import FreshStackError
from freshstack_hf.metrics import evaluate
from freshstack_hf.metrics.qrels import NuggetQrels
from freshstack_hf.pipeline.stages.judgments import judge_tasks
from freshstack_hf.records import NuggetJudgment
from freshstack_hf.repo.dataset import Dataset
from freshstack_hf.runs.run import from_ids

EFFECT_MEASURES = ("alpha_ndcg@10", "coverage@20")
CANDIDATE_STEMS = ("bm25", "dense", "top_ranked")


def agreement_counts(reference: list[int], predicted: list[int]) -> dict[str, Any]:
    """Cohen's kappa, accuracy, precision and recall of support (label 1) over paired binary labels."""
    n = len(reference)
    tp = sum(1 for r, p in zip(reference, predicted, strict=True) if r and p)
    fp = sum(1 for r, p in zip(reference, predicted, strict=True) if p and not r)
    fn = sum(1 for r, p in zip(reference, predicted, strict=True) if r and not p)
    tn = n - tp - fp - fn
    if not n:
        return {"pairs": 0, "kappa": None, "accuracy": None, "precision": None, "recall": None}
    observed = (tp + tn) / n
    expected = ((tp + fp) * (tp + fn) + (fn + tn) * (fp + tn)) / (n * n)
    kappa = 1.0 if expected == 1 else (observed - expected) / (1 - expected)
    return {
        "pairs": n,
        "kappa": kappa,
        "accuracy": observed,
        "precision": tp / (tp + fp) if tp + fp else None,
        "recall": tp / (tp + fn) if tp + fn else None,
        "confusion": {"tp": tp, "fp": fp, "fn": fn, "tn": tn},
        "reference_supported": tp + fn,
        "judge_supported": tp + fp,
    }


def judge_agreement(
    repo: str | Path,
    topic: str,
    backend: Any,
    *,
    docs_per_call: int = 20,
    max_doc_tokens: int = 1024,
) -> dict[str, Any]:
    """Re-judge `topic`'s judged pairs with `backend` (a build backend) and compare with the repo's labels."""
    dataset = Dataset(repo, topics=[topic])
    t = dataset.topic(topic)
    reference = {(j.nugget_id, j.doc_id): int(j.relevance > 0) for j in t.judgments}
    owner = {j.nugget_id: j.query_id for j in t.judgments}
    nugget_ids: dict[str, list[str]] = {}
    nugget_text: dict[str, str] = {}
    for n in t.nuggets:
        nugget_ids.setdefault(n.query_id, []).append(n.nugget_id)
        nugget_text[n.nugget_id] = n.text
    docs: dict[str, list[str]] = {}
    for nugget_id, doc_id in reference:
        listed = docs.setdefault(owner[nugget_id], [])
        if doc_id not in listed:
            listed.append(doc_id)
    needed = {d for ids in docs.values() for d in ids}
    text_of = {d.doc_id: d.text for d in t.docs if d.doc_id in needed}
    missing = needed - set(text_of)
    docs = {q: [d for d in ids if d in text_of] for q, ids in docs.items()}
    questions = {q.query_id: f"{q.title}\n\n{q.body}".strip() for q in t.queries}
    nuggets = {q: [(n, nugget_text[n]) for n in ids] for q, ids in nugget_ids.items()}
    predicted, calls = rejudge(backend, questions, nuggets, docs, text_of, docs_per_call, max_doc_tokens)
    pairs = [pair for pair in reference if pair in predicted]
    result = agreement_counts([reference[p] for p in pairs], [predicted[p] for p in pairs])
    result["skipped_pairs"] = len(reference) - len(pairs)
    result["skipped_docs_without_text"] = len(missing)
    result["calls"] = calls
    rejudged = [
        NuggetJudgment(j.query_id, j.nugget_id, j.doc_id, predicted.get((j.nugget_id, j.doc_id), j.relevance))
        for j in t.judgments
    ]
    result["effect"] = _effect(dataset, topic, t, rejudged)
    return result


def rejudge(
    backend: Any,
    questions: dict[str, str],
    nuggets: dict[str, list[tuple[str, str]]],
    docs: dict[str, list[str]],
    text_of: dict[str, str],
    docs_per_call: int = 20,
    max_doc_tokens: int = 1024,
) -> tuple[dict[tuple[str, str], int], int]:
    """Judge every (nugget, document) of each question through the build's task builder, as the build would.

    `nuggets` maps a question to its (nugget_id, text) in order and `docs` to its document ids; returns
    {(nugget_id, doc_id): 0 or 1} and the number of judge calls. Shared by `judge_agreement` and the offline
    judge's calibration on released judgments, so both measure the judge exactly as a build runs it.
    """
    texts = {q: tuple(text for _, text in items) for q, items in nuggets.items()}
    tasks = judge_tasks(questions, texts, docs, text_of, docs_per_call, max_doc_tokens)
    predicted: dict[tuple[str, str], int] = {}
    for task, matrix in zip(tasks, backend.judge(tasks), strict=True):
        ids = [nugget_id for nugget_id, _ in nuggets[task.query_id]]
        for doc_id, supports in zip(task.doc_ids, matrix, strict=True):
            for nugget_id, yes in zip(ids, supports, strict=True):
                predicted[(nugget_id, doc_id)] = int(bool(yes))
    return predicted, len(tasks)


@dataclass(frozen=True)
class ReferencePairs:
    """Judged (nugget, document) pairs with the documents' texts, grouped the way a build judges them."""

    nuggets: dict[str, list[tuple[str, str]]]  # query_id -> [(nugget_id, text)], in order
    docs: dict[str, list[str]]  # query_id -> judged document ids that have a text, in order
    text_of: dict[str, str]
    labels: dict[tuple[str, str], int]  # (nugget_id, doc_id) -> 1 supported, 0 not
    skipped_pairs: int  # pairs whose document has no text


def load_reference_pairs(judgments: Path, texts: Path) -> ReferencePairs:
    """Released judgments as nugget lists (JSON Lines: `query_id`, `nugget_id`, `nugget`, `supported`,
    `not_supported`, the release's `relevant_corpus_ids` / `non_relevant_corpus_ids`) and the documents' texts
    (JSON Lines, optionally gzipped: `_id`, `text`). Pairs whose document has no text are counted, not judged."""
    text_of: dict[str, str] = {}
    opener = gzip.open if texts.suffix == ".gz" else open
    with opener(texts, "rt", encoding="utf-8") as handle:
        for line_no, line in enumerate(handle, 1):
            if line.strip():
                row = _row(texts, line_no, line, ("_id", "text"))
                text_of[row["_id"]] = row["text"]
    nuggets: dict[str, list[tuple[str, str]]] = {}
    docs: dict[str, list[str]] = {}
    labels: dict[tuple[str, str], int] = {}
    skipped = 0
    for line_no, line in enumerate(judgments.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        row = _row(judgments, line_no, line, ("query_id", "nugget_id", "nugget", "supported", "not_supported"))
        query_id, nugget_id = str(row["query_id"]), str(row["nugget_id"])
        nuggets.setdefault(query_id, []).append((nugget_id, row["nugget"]))
        listed = docs.setdefault(query_id, [])
        for label, ids in ((1, row["supported"]), (0, row["not_supported"])):
            for doc_id in ids:
                if doc_id not in text_of:
                    skipped += 1
                    continue
                labels[(nugget_id, doc_id)] = label
                if doc_id not in listed:
                    listed.append(doc_id)
    return ReferencePairs(nuggets, docs, {d: text_of[d] for ids in docs.values() for d in ids}, labels, skipped)


def _row(path: Path, line_no: int, line: str, keys: tuple[str, ...]) -> dict[str, Any]:
    try:
        row = json.loads(line)
    except json.JSONDecodeError as exc:
        raise FreshStackError(f"{path}, line {line_no}: not JSON ({exc.msg})") from exc
    missing = [k for k in keys if k not in row]
    if missing:
        raise FreshStackError(f"{path}, line {line_no}: missing {', '.join(missing)}; each row needs {', '.join(keys)}")
    return row


def _effect(dataset: Any, topic: str, t: Any, rejudged: list[NuggetJudgment]) -> dict[str, Any]:
    """The candidate lists under both sets of judgments, and the Kendall tau of their orderings."""
    before = dataset.qrels(topic)
    after = NuggetQrels.from_judgments(rejudged, nuggets=t.nuggets)
    systems: dict[str, dict[str, dict[str, float]]] = {}
    for stem in CANDIDATE_STEMS:
        try:
            run = from_ids(dataset.candidates(topic, stem))
        except FreshStackError:
            continue
        systems[stem] = {
            "reference": evaluate(before, run, list(EFFECT_MEASURES)).metrics,
            "rejudged": evaluate(after, run, list(EFFECT_MEASURES)).metrics,
        }
    taus: dict[str, float | None] = {}
    for measure in EFFECT_MEASURES:
        taus[measure] = _kendall_tau(
            [systems[s]["reference"][measure] for s in systems], [systems[s]["rejudged"][measure] for s in systems]
        )
    return {"systems": systems, "kendall_tau": taus}


def _kendall_tau(a: list[float], b: list[float]) -> float | None:
    if len(a) < 2:
        return None
    from scipy.stats import kendalltau

    tau = kendalltau(a, b).statistic
    return None if tau != tau else float(tau)  # NaN when one ordering is all ties
