"""What a leaderboard submitter uploads, made from runs: TREC run files and TREC RAG answer files."""

from __future__ import annotations

from pathlib import Path

from freshstack_hf.answers import AnswerSet, extractive_answers, to_trec_rag


def write_trec(path: Path, run: dict[str, dict[str, float]], tag: str = "bm25", depth: int = 100) -> Path:
    lines = []
    for qid, docs in run.items():
        ranked = sorted(docs.items(), key=lambda kv: (-kv[1], kv[0]))[:depth]
        lines += [f"{qid} Q0 {doc} {rank} {score:.6f} {tag}" for rank, (doc, score) in enumerate(ranked, 1)]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def merged(runs: dict[str, dict[str, dict[str, float]]], topics: list[str] | None = None) -> dict:
    return {q: d for t, run in runs.items() if topics is None or t in topics for q, d in run.items()}


def answers_text(dataset, runs, topics=None) -> str:
    """Extractive answers from the BM25 runs, as TREC RAG JSONL (every topic, or only `topics`)."""
    answers = {}
    for name in topics or dataset.topics:
        ranked = {q: sorted(docs, key=lambda d: -docs[d]) for q, docs in runs[name].items()}
        answers |= extractive_answers(dataset.topic(name), ranked).answers
    return to_trec_rag(AnswerSet(answers, "x", "bm25-extractive", "trec-rag"))
