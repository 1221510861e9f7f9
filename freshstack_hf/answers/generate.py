"""An LLM answer baseline: a chat model answers each question from its top retrieved docs, citing them.

Through the transport the registry opens for the endpoint (`freshstack_hf.llm.registry`, as the build and the
judge do: for an OpenAI-compatible endpoint the `LLMClient`, with its cache, retries, bounded concurrency, JSON
repair and re-asks), so generating the same answers twice costs nothing the second time. The reply's citations
are document numbers, checked against the documents actually given (a citation of a document that was not shown
is refused and re-asked), then mapped to doc ids; sentences past the word cap are dropped, so the result always
passes `read_answers`. Scoring it is the same as any answer file: citations exactly, All/Vital by a judge
(ideally another model than this one).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from functools import partial
from pathlib import Path

from freshstack_hf.answers.answer_set import Answer, AnswerSet, Sentence
from freshstack_hf.answers.parse import DEFAULT_MAX_WORDS
from freshstack_hf.answers.rag_prompts import answer_messages, parse_answer
from freshstack_hf.llm.config import LLMConfig
from freshstack_hf.llm.registry import open_transport
from freshstack_hf.llm.transport import ChatRequest
from freshstack_hf.topic import Topic

DOCS_PER_ANSWER = 3


def llm_answers(
    topic: Topic,
    ranked: Mapping[str, Sequence[str]],
    *,
    base_url: str,
    model: str,
    cache_path: str | Path,
    api_key_env: str = "OPENAI_API_KEY",
    docs_per_answer: int = DOCS_PER_ANSWER,
    max_words: int = DEFAULT_MAX_WORDS,
    max_concurrency: int = 8,
    run_id: str = "",
) -> AnswerSet:
    """One cited answer per query of `topic` that `ranked` (query id -> doc ids, best first) holds docs for."""
    config = LLMConfig(base_url=base_url, model=model, api_key_env=api_key_env, max_concurrency=max_concurrency)
    client = open_transport(config, cache_path)
    texts = {d.doc_id: d.text for d in topic.docs}
    plans: list[tuple[str, list[str]]] = []
    requests, parsers = [], []
    for query in topic.queries:
        top = [d for d in ranked.get(query.query_id, ()) if d in texts][:docs_per_answer]
        if not top:
            continue
        question = f"{query.title}\n\n{query.body}".strip()
        plans.append((query.query_id, top))
        requests.append(ChatRequest(answer_messages(question, [texts[d] for d in top]), label=query.query_id))
        parsers.append(partial(parse_answer, n_docs=len(top)))
    replies = client.chat_many(requests, stage="answer_generate", parse=parsers, desc="answers")
    answers: dict[str, Answer] = {}
    for (qid, top), sentences in zip(plans, replies, strict=True):
        kept, words = [], 0
        for text, cites in sentences:
            words += len(text.split())
            if words > max_words:
                break
            kept.append(Sentence(text, tuple(top[c] for c in cites)))
        if kept:
            answers[qid] = Answer(qid, tuple(kept), tuple(top))
    run = run_id or f"llm-top{docs_per_answer}:{model}"
    return AnswerSet(answers, source=f"{run} ({topic.name})", run_id=run, fmt="trec-rag")
