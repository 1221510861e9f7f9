"""The answer baselines: one cited answer per query from a run's top docs, by copying them or by a chat model.

`extractive_answers` is extractive and citation-faithful: no model writes anything. For each of a query's top
`docs_per_answer` docs (a retrieval run, e.g. the RRF hybrid of `freshstack_hf.baselines`), the doc's prose
sentences that share the most weighted terms with the question are copied, in the doc's order, and cite that doc.
Every citation is therefore faithful by construction, which makes this the floor an LLM answer has to beat on
All/Vital without losing citation precision. A doc with no prose (a code chunk) contributes a one-line summary of
its first code block, still citing it.

`llm_answers` asks a chat model to answer each question from its top docs, citing them, through the transport the
registry opens for the endpoint (`freshstack_hf.llm.registry`, as the build and the judge do: for an
OpenAI-compatible endpoint the `LLMClient`, with its cache, retries, bounded concurrency, JSON repair and re-asks),
so generating the same answers twice costs nothing the second time. The reply's citations are document numbers,
checked against the documents actually given (a citation of a document that was not shown is refused and
re-asked), then mapped to doc ids; sentences past the word cap are dropped, so the result always passes
`read_answers`. Scoring either is the same as any answer file: citations exactly, All/Vital by a judge (for the
LLM's answers, ideally another model than the one that wrote them).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from functools import partial
from pathlib import Path

from freshstack_hf.answers.answer_set import Answer, AnswerSet, Sentence
from freshstack_hf.answers.parse import DEFAULT_MAX_WORDS
from freshstack_hf.answers.rag_prompts import answer_messages, parse_answer
from freshstack_hf.llm.config import LLMConfig
from freshstack_hf.llm.offline_text import drop_links, split_markdown, summarize_code, terms
from freshstack_hf.llm.registry import open_transport
from freshstack_hf.llm.transport import ChatRequest
from freshstack_hf.topic import Topic

DOCS_PER_ANSWER = 3  # the docs each baseline answers from, the query's best first
SENTENCES_PER_DOC = 2  # extractive: the sentences copied from each doc
EXTRACTIVE_RUN_ID = "extractive-top3"


def extractive_answers(
    topic: Topic,
    ranked: Mapping[str, Sequence[str]],
    *,
    docs_per_answer: int = DOCS_PER_ANSWER,
    sentences_per_doc: int = SENTENCES_PER_DOC,
    max_words: int = DEFAULT_MAX_WORDS,
    run_id: str = EXTRACTIVE_RUN_ID,
) -> AnswerSet:
    """One answer per query of `topic` that `ranked` (query id -> doc ids, best first) holds docs for."""
    texts = {d.doc_id: d.text for d in topic.docs}
    answers: dict[str, Answer] = {}
    for query in topic.queries:
        top = [d for d in ranked.get(query.query_id, ()) if d in texts][:docs_per_answer]
        sentences = _extract(f"{query.title} {query.body}", top, texts, sentences_per_doc, max_words)
        if sentences:
            answers[query.query_id] = Answer(query.query_id, tuple(sentences), tuple(top))
    return AnswerSet(answers, source=f"{run_id} ({topic.name})", run_id=run_id, fmt="trec-rag")


def _extract(
    question: str, doc_ids: Sequence[str], texts: Mapping[str, str], per_doc: int, max_words: int
) -> list[Sentence]:
    wanted = terms(question)
    out: list[Sentence] = []
    words = 0
    for doc_id in doc_ids:
        units = split_markdown(texts[doc_id])
        prose = [drop_links(text) for kind, text in units if kind == "prose"]
        prose = [s for s in prose if len(s.split()) >= 3]
        if prose:
            scores = [sum(w for t, w in terms(s).items() if t in wanted) for s in prose]
            best = sorted(range(len(prose)), key=lambda i: (-scores[i], i))[:per_doc]
            picked = [prose[i] for i in sorted(best)]  # the doc's own order reads better than score order
        else:
            code = next((summarize_code(text) for kind, text in units if kind == "code"), "")
            picked = [code] if code else []
        for text in picked:
            n = len(text.split())
            if words + n > max_words:
                return out
            out.append(Sentence(text, (doc_id,)))
            words += n
    return out


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
