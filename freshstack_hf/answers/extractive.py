"""An extractive, citation-faithful answer baseline: sentences copied from the top retrieved docs, each citing its doc.

No model writes anything: for each of a query's top `docs_per_answer` docs (a retrieval run, e.g. the RRF hybrid
of `freshstack_hf.baselines`), the doc's prose sentences that share the most weighted terms with the question
are copied, in the doc's order, and cite that doc. Every citation is therefore faithful by construction, which
makes this the floor an LLM answer has to beat on All/Vital without losing citation precision. A doc with no
prose (a code chunk) contributes a one-line summary of its first code block, still citing it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from freshstack_hf.answers.answer_set import Answer, AnswerSet, Sentence
from freshstack_hf.answers.parse import DEFAULT_MAX_WORDS
from freshstack_hf.topic import Topic

DOCS_PER_ANSWER = 3
SENTENCES_PER_DOC = 2
RUN_ID = "extractive-top3"


def extractive_answers(
    topic: Topic,
    ranked: Mapping[str, Sequence[str]],
    *,
    docs_per_answer: int = DOCS_PER_ANSWER,
    sentences_per_doc: int = SENTENCES_PER_DOC,
    max_words: int = DEFAULT_MAX_WORDS,
    run_id: str = RUN_ID,
) -> AnswerSet:
    """One answer per query of `topic` that `ranked` (query id -> doc ids, best first) holds docs for."""
    texts = {d.doc_id: d.text for d in topic.docs}
    answers: dict[str, Answer] = {}
    for query in topic.queries:
        top = [d for d in ranked.get(query.query_id, ()) if d in texts][:docs_per_answer]
        sentences = _answer(f"{query.title} {query.body}", top, texts, sentences_per_doc, max_words)
        if sentences:
            answers[query.query_id] = Answer(query.query_id, tuple(sentences), tuple(top))
    return AnswerSet(answers, source=f"{run_id} ({topic.name})", run_id=run_id, fmt="trec-rag")


def _answer(
    question: str, doc_ids: Sequence[str], texts: Mapping[str, str], per_doc: int, max_words: int
) -> list[Sentence]:
    from freshstack_hf.llm.offline_text import drop_links, split_markdown, summarize_code, terms

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
