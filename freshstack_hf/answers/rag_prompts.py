"""The prompts of the RAG track with the strict parsers of their replies: nugget assignment (the judge) and
cited answer generation (the LLM answer baseline, `freshstack_hf.answers.baseline_answers`).

One request per query lists the question, the query's nuggets (numbered from 1) and the answer, and asks for one
label per nugget among TREC RAG's three (Ragnarök's nugget assignment): `support`, `partial_support`,
`not_support`. The parser refuses a reply that skips a nugget or invents a label, because a missing label would
silently become a wrong score; the client then repairs the reply or asks again. `PROMPT_VERSION` is part of every
cache key through the wording, and is reported with the scores.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from freshstack_hf.llm.document_cut import cut_document
from freshstack_hf.llm.repair import ParseError, load_json

PROMPT_VERSION = "freshstack-hf-answers-2"  # 2: answers and documents as written, cut in cl100k tokens
SUPPORT, PARTIAL, NOT_SUPPORT = "support", "partial_support", "not_support"
LABELS = (SUPPORT, PARTIAL, NOT_SUPPORT)
MAX_ANSWER_TOKENS = 2000  # answers are capped at 400 words when read; this only bounds an unchecked caller
MAX_DOC_TOKENS = 512  # each document given to the answer generator

ASSIGN_SYSTEM = (
    "You grade answers to technical questions against grading notes (nuggets). For each numbered nugget, decide "
    "whether the answer states it: `support` when the answer states the nugget's fact completely (in words or in "
    "code), `partial_support` when it states part of the fact or states it vaguely, `not_support` when the fact "
    "is absent or contradicted. Judge only what the answer says, not whether it is correct otherwise."
)


def assign_messages(question: str, nuggets: Sequence[str], answer: str) -> list[dict[str, str]]:
    """One batched request: every nugget of the query with the answer, one label wanted per nugget."""
    numbered = "\n".join(f"{i}. {text}" for i, text in enumerate(nuggets, 1))
    user = (
        f"<question>\n{question.strip()}\n</question>\n\n<nuggets>\n{numbered}\n</nuggets>\n\n"
        f"<answer>\n{cut_document(answer.strip(), MAX_ANSWER_TOKENS)}\n</answer>\n\n"
        f"Label each of the {len(nuggets)} nuggets, in order, with one of {', '.join(LABELS)}. Reply with JSON "
        'only, one label per nugget, in this shape:\n{"labels": ["support", "not_support"]}'
    )
    return [{"role": "system", "content": ASSIGN_SYSTEM}, {"role": "user", "content": user}]


def parse_assignments(text: str, n_nuggets: int) -> list[str]:
    """The labels of `n_nuggets` nuggets, in order; `{"labels": [...]}` or a bare list; case and spaces forgiven."""
    data: Any = load_json(text)
    if isinstance(data, dict):
        data = data.get("labels")
    if not isinstance(data, list) or not all(isinstance(x, str) for x in data):
        raise ParseError('expected {"labels": [<one label per nugget>]}')
    labels = [x.strip().lower().replace(" ", "_").replace("-", "_") for x in data]
    bad = [x for x in labels if x not in LABELS]
    if bad:
        raise ParseError(f"unknown label {bad[0]!r}; use only {', '.join(LABELS)}")
    if len(labels) != n_nuggets:
        raise ParseError(f"expected {n_nuggets} labels (one per nugget, in order), got {len(labels)}")
    return labels


# ---- answer generation (the LLM answer baseline) --------------------------------------------------------------

GENERATE_SYSTEM = (
    "You answer technical questions using only the numbered documents given. Write a short, direct answer of a "
    "few sentences (API names, settings, commands). Every sentence cites the numbers of the documents that state "
    "it; leave out anything no document states."
)


def answer_messages(
    question: str, doc_texts: Sequence[str], max_words: int = 300, max_doc_tokens: int = MAX_DOC_TOKENS
) -> list[dict[str, str]]:
    """One request per query: the question and its top documents (as written, each cut to `max_doc_tokens`
    cl100k tokens), numbered from 1, for a cited answer."""
    docs = "\n\n".join(
        f'<document id="{i}">\n{cut_document(text, max_doc_tokens)}\n</document>' for i, text in enumerate(doc_texts, 1)
    )
    user = (
        f"<question>\n{question.strip()}\n</question>\n\n{docs}\n\n"
        f"Answer in at most {max_words} words. Reply with JSON only, one object per sentence, citing documents "
        'by number:\n{"answer": [{"text": "<a sentence>", "citations": [1]}, '
        '{"text": "<another sentence>", "citations": [2, 3]}]}'
    )
    return [{"role": "system", "content": GENERATE_SYSTEM}, {"role": "user", "content": user}]


def parse_answer(text: str, n_docs: int) -> list[tuple[str, list[int]]]:
    """(sentence, 0-based doc indexes) pairs; a citation of a document that was not given is refused."""
    data: Any = load_json(text)
    items = data.get("answer") if isinstance(data, dict) else data
    if not isinstance(items, list) or not items:
        raise ParseError('expected {"answer": [{"text": ..., "citations": [...]}]} with at least one sentence')
    out: list[tuple[str, list[int]]] = []
    for i, item in enumerate(items, 1):
        if not isinstance(item, dict) or not isinstance(item.get("text"), str) or not item["text"].strip():
            raise ParseError(f'sentence {i} must be an object with a non-empty "text"')
        cites = item.get("citations", [])
        if not isinstance(cites, list) or not all(isinstance(c, int) and not isinstance(c, bool) for c in cites):
            raise ParseError(f'sentence {i}: "citations" must be a list of document numbers')
        bad = [c for c in cites if not 1 <= c <= n_docs]
        if bad:
            raise ParseError(f"sentence {i} cites document {bad[0]}, but documents are numbered 1 to {n_docs}")
        out.append((" ".join(item["text"].split()), [c - 1 for c in dict.fromkeys(cites)]))
    return out
