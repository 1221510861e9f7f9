"""How far a judge agrees with a reference repo's judgments, and what the disagreement does to scores.

A build's judge (an LLM, or the offline heuristic) is only as good as its agreement with trusted labels. Here the
reference's judged (nugget, document) pairs are judged again through the build's own task builder, backend,
batching and cache (`judgments.judge_tasks`: each question's documents in blocks, all its nuggets per call, the
documents as written), and compared pair by pair: Cohen's kappa, accuracy, and the precision and recall of
"supports". Then the effect: the repo's candidate lists scored under the reference and the re-judged
judgments, and the Kendall tau between the two orderings of those systems.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from freshstack_hf.build.judgments import judge_tasks
from freshstack_hf.records import NuggetJudgment

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
    from freshstack_hf.repo.dataset import Dataset

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
    nuggets = {q: tuple(nugget_text[n] for n in ids) for q, ids in nugget_ids.items()}
    tasks = judge_tasks(questions, nuggets, docs, text_of, docs_per_call, max_doc_tokens)
    matrices = backend.judge(tasks)
    predicted: dict[tuple[str, str], int] = {}
    for task, matrix in zip(tasks, matrices, strict=True):
        ids = nugget_ids[task.query_id]
        for doc_id, supports in zip(task.doc_ids, matrix, strict=True):
            for nugget_id, yes in zip(ids, supports, strict=True):
                predicted[(nugget_id, doc_id)] = int(bool(yes))
    pairs = [pair for pair in reference if pair in predicted]
    result = agreement_counts([reference[p] for p in pairs], [predicted[p] for p in pairs])
    result["skipped_pairs"] = len(reference) - len(pairs)
    result["skipped_docs_without_text"] = len(missing)
    result["calls"] = len(tasks)
    rejudged = [
        NuggetJudgment(j.query_id, j.nugget_id, j.doc_id, predicted.get((j.nugget_id, j.doc_id), j.relevance))
        for j in t.judgments
    ]
    result["effect"] = _effect(dataset, topic, t, rejudged)
    return result


def _effect(dataset: Any, topic: str, t: Any, rejudged: list[NuggetJudgment]) -> dict[str, Any]:
    """The candidate lists under both sets of judgments, and the Kendall tau of their orderings."""
    from freshstack_hf.errors import FreshStackError
    from freshstack_hf.metrics import evaluate
    from freshstack_hf.metrics.qrels import NuggetQrels
    from freshstack_hf.runs.run import from_ids

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
