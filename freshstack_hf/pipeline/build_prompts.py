"""Every prompt the build sends to a model, with the strict parser of its answer.

Kept in one module with one `PROMPT_VERSION` so the manifest can say which wording made a topic's nuggets and
judgments, and so a wording change is one reviewed diff (it also changes every cache key, which is the point).
The parsers are strict on purpose: a judgment that skips a document or names a nugget that does not exist would
silently become a wrong qrel, so it is a `ParseError`, which the client repairs or re-asks.

Documents and nuggets are numbered from 1 in the prompts (what models count naturally); parsers return 0-based
structures.
"""

from __future__ import annotations

import json
import re
from typing import Any

from freshstack_hf.llm.document_cut import CUT_MARK
from freshstack_hf.llm.repair import ParseError, load_json
from freshstack_hf.pipeline.backends import IMPORTANCE, QA, JudgeTask, NuggetText

PROMPT_VERSION = "freshstack-hf-prompts-2"  # 2: documents as written, cut in cl100k tokens
MAX_NUGGETS = 10
SUBQUESTIONS = (2, 5)

NUGGETS_SYSTEM = (
    "You write grading notes for technical questions. Given a question and the answer its asker accepted, list "
    "the atomic facts that any correct answer to the question has to state: one claim per note (a setting, an "
    "API call, a cause, a step, a version constraint), specific enough to check against documentation. Mark "
    "each note `vital` when an answer without it would be wrong or useless, `okay` when it is helpful detail."
)
SUBQUESTIONS_SYSTEM = (
    "You break a long technical question into the smaller questions someone would search documentation for "
    "to solve it. Each sub-question stands on its own (name the library, API or error it is about)."
)
CLOSED_BOOK_SYSTEM = (
    "You are an experienced developer answering a technical question from memory, without looking anything "
    "up. Give a direct, concrete answer with the relevant API names, configuration and code."
)
JUDGE_SYSTEM = (
    "You check documentation against grading notes. For each numbered document, decide which of the numbered "
    "nuggets it supports: a document supports a nugget when it states the nugget's fact or shows it in code "
    "or configuration, so that a reader could learn the fact from the document alone. Mentioning the same "
    "topic is not enough."
)
SYSTEMS = {
    "nuggets": NUGGETS_SYSTEM,
    "subquestions": SUBQUESTIONS_SYSTEM,
    "closed_book": CLOSED_BOOK_SYSTEM,
    "judge": JUDGE_SYSTEM,
}


def _qa_block(qa: QA, with_answer: bool) -> str:
    parts = [f"<question>\n{qa.question}\n</question>"]
    if with_answer:
        parts.append(f"<answer>\n{qa.answer.strip()}\n</answer>")
    return "\n\n".join(parts)


def nugget_messages(qa: QA) -> list[dict[str, str]]:
    user = (
        f"{_qa_block(qa, True)}\n\n"
        f"Write at most {MAX_NUGGETS} grading notes for this question, most important first, taking the facts "
        "from the accepted answer. Reply with JSON only, in this shape:\n"
        '{"nuggets": [{"text": "<one atomic fact>", "importance": "vital"}, '
        '{"text": "<another fact>", "importance": "okay"}]}'
    )
    return [{"role": "system", "content": NUGGETS_SYSTEM}, {"role": "user", "content": user}]


def subquestion_messages(qa: QA) -> list[dict[str, str]]:
    lo, hi = SUBQUESTIONS
    user = (
        f"{_qa_block(qa, False)}\n\n"
        f"Write {lo} to {hi} sub-questions whose answers together solve this question. Reply with a JSON list "
        'of strings only, for example ["<sub-question 1>", "<sub-question 2>"].'
    )
    return [{"role": "system", "content": SUBQUESTIONS_SYSTEM}, {"role": "user", "content": user}]


def closed_book_messages(qa: QA) -> list[dict[str, str]]:
    user = f"{_qa_block(qa, False)}\n\nAnswer the question in plain text (code blocks allowed)."
    return [{"role": "system", "content": CLOSED_BOOK_SYSTEM}, {"role": "user", "content": user}]


def judge_messages(task: JudgeTask) -> list[dict[str, str]]:
    """The documents go in as written (line breaks and indentation kept); the cut was made by the stage."""
    nuggets = "\n".join(f"{j}. {n}" for j, n in enumerate(task.nuggets, 1))
    docs = "\n\n".join(f'<document id="{i}">\n{text}\n</document>' for i, text in enumerate(task.doc_texts, 1))
    k = len(task.doc_texts)
    limit = task.doc_token_limit
    cut_note = (
        f"Documents are shown as written; one longer than {limit} tokens shows its first {limit} tokens and ends "
        f"with {CUT_MARK.strip()!r}.\n\n"
        if limit
        else ""
    )
    user = (
        f"<question>\n{task.question}\n</question>\n\n<nuggets>\n{nuggets}\n</nuggets>\n\n{docs}\n\n{cut_note}"
        f"First think step by step, briefly, about what each document states. Then end your reply with one JSON "
        f"object that lists every document from 1 to {k} exactly once, with the numbers of the nuggets it "
        f"supports (an empty list when it supports none):\n"
        '{"judgments": [{"doc": 1, "supported_nuggets": [2]}, {"doc": 2, "supported_nuggets": []}]}'
    )
    return [{"role": "system", "content": JUDGE_SYSTEM}, {"role": "user", "content": user}]


# ---- parsers ---------------------------------------------------------------------------------------------


def parse_nuggets(text: str) -> list[NuggetText]:
    data = load_json(text)
    items = data.get("nuggets") if isinstance(data, dict) else None
    if not isinstance(items, list) or not items:
        raise ParseError('expected {"nuggets": [...]} with at least one nugget')
    nuggets: list[NuggetText] = []
    for i, item in enumerate(items, 1):
        if not isinstance(item, dict) or not isinstance(item.get("text"), str) or not item["text"].strip():
            raise ParseError(f'nugget {i} must be an object with a non-empty "text"')
        importance = str(item.get("importance", "")).strip().lower()
        if importance not in IMPORTANCE:
            raise ParseError(f'nugget {i} has importance {item.get("importance")!r}; use "vital" or "okay"')
        nuggets.append(NuggetText(" ".join(item["text"].split()), importance))
    return nuggets[:MAX_NUGGETS]


def parse_subquestions(text: str) -> list[str]:
    data = load_json(text)
    if isinstance(data, dict) and len(data) == 1:
        data = next(iter(data.values()))  # {"subquestions": [...]} is a common, harmless variant
    lo, hi = SUBQUESTIONS
    if not isinstance(data, list) or not all(isinstance(q, str) and q.strip() for q in data):
        raise ParseError("expected a JSON list of non-empty strings")
    if not lo <= len(data) <= hi:
        raise ParseError(f"expected {lo} to {hi} sub-questions, got {len(data)}")
    return [" ".join(q.split()) for q in data]


def parse_closed_book(text: str) -> str:
    answer = text.strip()
    if not answer:
        raise ParseError("the answer is empty")
    return answer


def parse_judgments(text: str, n_docs: int, n_nuggets: int) -> list[list[bool]]:
    """`[doc][nugget] -> supports?` from the reply's final JSON; every document exactly once, indices in range."""
    data = _last_json_object(text)
    items = data.get("judgments") if isinstance(data, dict) else None
    if not isinstance(items, list):
        raise ParseError('expected a final JSON object {"judgments": [...]}')
    matrix: list[list[bool] | None] = [None] * n_docs
    for item in items:
        if not isinstance(item, dict) or not _is_int(item.get("doc")):
            raise ParseError('each judgment must be {"doc": <number>, "supported_nuggets": [<numbers>]}')
        doc = item["doc"]
        if not 1 <= doc <= n_docs:
            raise ParseError(f"document {doc} does not exist (documents are 1 to {n_docs})")
        if matrix[doc - 1] is not None:
            raise ParseError(f"document {doc} is judged twice")
        supported = item.get("supported_nuggets")
        if not isinstance(supported, list) or not all(_is_int(j) for j in supported):
            raise ParseError(f'document {doc}: "supported_nuggets" must be a list of nugget numbers')
        bad = [j for j in supported if not 1 <= j <= n_nuggets]
        if bad:
            raise ParseError(f"document {doc} names nugget {bad[0]}, but nuggets are numbered 1 to {n_nuggets}")
        row = [False] * n_nuggets
        for j in supported:
            row[j - 1] = True
        matrix[doc - 1] = row
    missing = [i + 1 for i, row in enumerate(matrix) if row is None]
    if missing:
        raise ParseError(f"documents {missing} are missing from the judgments; list every document 1 to {n_docs}")
    return [row for row in matrix if row is not None]


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _last_json_object(text: str) -> Any:
    """The JSON object that closes a chain-of-thought reply: the last `{"judgments"` one, else any JSON found."""
    starts = [m.start() for m in re.finditer(r'\{\s*"judgments"', text)]
    decoder = json.JSONDecoder()
    for start in reversed(starts):
        for candidate in (text[start:], re.sub(r",\s*([}\]])", r"\1", text[start:])):
            try:
                return decoder.raw_decode(candidate)[0]
            except json.JSONDecodeError:
                continue
    return load_json(text)
