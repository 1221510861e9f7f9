"""Reading generated answers and refusing bad ones with every problem listed, each with its line.

Two formats are read:

* TREC RAG 2024 JSONL, one answer per line: `{"topic_id", "run_id", "references": [doc ids, ranked],
  "answer": [{"text": sentence, "citations": [indexes into references]}]}`;
* a JSON object `{query_id: {"text": answer, "citations": [doc ids]}}`, for answers with no sentence split.

Validation is always strict: an answer scored against the wrong query or citing a doc outside the corpus would
be a wrong number, not a warning, so unknown query ids, unknown doc ids, citation indexes out of range, empty
answers, answers over the word cap (400 as TREC RAG), repeated queries and malformed lines are collected into one
`freshstack_hf.errors.ValidationError`. A topic query with no answer is not a problem: it scores 0.
"""

from __future__ import annotations

import json
from collections.abc import Container, Iterator
from pathlib import Path
from typing import Any, TypedDict

from freshstack_hf.answers.answer_set import Answer, AnswerSet, Sentence
from freshstack_hf.errors import FreshStackError, Problem, ValidationError
from freshstack_hf.runs.parse import open_text

DEFAULT_MAX_WORDS = 400  # TREC RAG 2024's answer length cap
FORMATS = ("trec-rag", "json")

__all__ = ["DEFAULT_MAX_WORDS", "Answer", "AnswerSet", "Sentence", "parse_answers", "read_answers", "to_trec_rag"]


class AnswerChecks(TypedDict):
    """What an answer file is checked against, passed on unchanged from `read_answers` to `parse_answers`."""

    query_ids: Container[str] | None
    doc_ids: Container[str] | None
    max_words: int | None
    other_query_ids: Container[str]


def read_answers(
    path: str | Path,
    *,
    query_ids: Container[str] | None = None,
    doc_ids: Container[str] | None = None,
    max_words: int | None = DEFAULT_MAX_WORDS,
    other_query_ids: Container[str] = (),
) -> AnswerSet:
    """Read and check an answer file (`.gz` allowed); raise `ValidationError` listing every problem found.

    Answers to `other_query_ids` (the queries of a dataset's other topics, when only some are scored) are left
    out unchecked and counted in `AnswerSet.skipped`, so one whole-dataset file serves every `--topic`."""

    checks = AnswerChecks(query_ids=query_ids, doc_ids=doc_ids, max_words=max_words, other_query_ids=other_query_ids)
    return parse_answers(open_text(Path(path), "answer"), source=str(path), **checks)


def parse_answers(
    text: str,
    *,
    source: str = "answers",
    query_ids: Container[str] | None = None,
    doc_ids: Container[str] | None = None,
    max_words: int | None = DEFAULT_MAX_WORDS,
    fmt: str | None = None,
    other_query_ids: Container[str] = (),
) -> AnswerSet:
    """Check answers held in memory (an upload); the format is detected unless `fmt` names it."""
    fmt = fmt or detect_format(text)
    if fmt not in FORMATS:
        raise FreshStackError(f"unknown answer format {fmt!r}: use one of {', '.join(FORMATS)}")
    checker = _Checker(source, query_ids, doc_ids, max_words, other_query_ids)
    run_id = ""
    if fmt == "trec-rag":
        for row, line in enumerate(text.splitlines(), 1):
            if line.strip():
                run_id = checker.trec_line(line, row) or run_id
    else:
        for query_id, value, row in checker.top_level(text):
            checker.json_entry(query_id, value, row)
    if not checker.answers and not checker.problems:
        about = f" for these topics ({checker.skipped} for others)" if checker.skipped else ""
        checker.add(f"the file holds no answers{about}", None)
    if checker.problems:
        found = sorted(checker.problems, key=lambda p: (p.row is None, p.row or 0))
        raise ValidationError(found, title=f"answer file {source} is not valid")
    return AnswerSet(checker.answers, source, run_id, fmt, checker.skipped)


def detect_format(text: str) -> str:
    """`json` for one JSON object keyed by query id, else `trec-rag` (a one-line JSONL file is TREC RAG too)."""
    body = text.lstrip()
    if not body.startswith("{"):
        return "trec-rag"
    try:
        value = json.loads(body)
    except json.JSONDecodeError:
        return "trec-rag"  # several lines of JSON objects, or a broken file the JSONL reader reports per line
    return "trec-rag" if isinstance(value, dict) and ("answer" in value or "topic_id" in value) else "json"


class _Checker:
    """Collects answers and problems while the lines are read."""

    def __init__(
        self,
        source: str,
        query_ids: Container[str] | None,
        doc_ids: Container[str] | None,
        max_words: int | None,
        others: Container[str] = (),
    ) -> None:
        self.source = source
        self.query_ids = query_ids
        self.doc_ids = doc_ids
        self.max_words = max_words
        self.others = others
        self.skipped = 0
        self.answers: dict[str, Answer] = {}
        self.problems: list[Problem] = []

    def skip(self, query_id: str | None) -> bool:
        """True (and counted) for an answer to another topic's query: not checked, not kept."""
        if query_id is None or query_id not in self.others or (self.query_ids and query_id in self.query_ids):
            return False
        self.skipped += 1
        return True

    def add(self, message: str, row: int | None, fix: str = "") -> None:
        self.problems.append(Problem(self.source, message, row=row, fix=fix, unit="line"))

    # ---- TREC RAG JSONL ---------------------------------------------------------------------------------

    def trec_line(self, line: str, row: int) -> str:
        """Check one JSONL line; returns its run id ("" when absent)."""
        try:
            item = json.loads(line)
        except json.JSONDecodeError as exc:
            self.add(f"not valid JSON ({exc.msg} at column {exc.colno})", row)
            return ""
        if not isinstance(item, dict):
            self.add("each line must be a JSON object with topic_id, references and answer", row)
            return ""
        query_id = _query_id(item.get("topic_id"))
        if self.skip(query_id):
            return ""
        if query_id is None:
            self.add('"topic_id" is missing or not a string', row, 'give the query id, e.g. "topic_id": "78256921"')
        references = item.get("references", [])
        if not isinstance(references, list) or not all(isinstance(d, str) and d for d in references):
            self.add('"references" must be a list of doc ids', row)
            references = None
        sentences = item.get("answer")
        parsed: list[Sentence] = []
        before = len(self.problems)
        if not isinstance(sentences, list):
            self.add('"answer" must be a list of {"text": ..., "citations": [...]} sentences', row)
        else:
            for i, sentence in enumerate(sentences, 1):
                parsed.extend(self._sentence(sentence, i, references, row))
        if references is not None:
            self._docs(references, query_id, row)
        if query_id is not None:
            # sentences already refused would make the answer look empty or short: check its text only when whole
            whole = len(self.problems) == before
            self._keep(Answer(query_id, tuple(parsed), tuple(references or ()), row), check_text=whole)
        run_id = item.get("run_id", "")
        return run_id if isinstance(run_id, str) else ""

    def _sentence(self, sentence: Any, i: int, references: list[str] | None, row: int) -> Iterator[Sentence]:
        if not isinstance(sentence, dict) or not isinstance(sentence.get("text"), str):
            self.add(f'answer sentence {i} must be an object with a string "text"', row)
            return
        citations = sentence.get("citations", [])
        if not isinstance(citations, list) or not all(_is_index(c) for c in citations):
            self.add(f'answer sentence {i}: "citations" must be a list of indexes into "references"', row)
            return
        if references is None:
            return
        bad = [c for c in citations if not 0 <= c < len(references)]
        if bad:
            n = len(references)
            valid = f"valid indexes 0 to {n - 1}" if n else "it is empty"
            self.add(f"answer sentence {i} cites index {bad[0]}, but references has {n} doc id(s) ({valid})", row)
            return
        yield Sentence(sentence["text"], tuple(references[c] for c in citations))

    # ---- JSON {query_id: {"text", "citations"}} --------------------------------------------------------

    def top_level(self, text: str) -> Iterator[tuple[str, Any, int]]:
        """The top-level (key, value, line of the key) pairs of a JSON object, so each problem gets its line."""
        decoder = json.JSONDecoder()
        pos = _skip(text, 0)
        if text[pos : pos + 1] != "{":
            self.add("expected a JSON object {query_id: {text, citations}}", 1)
            return
        pos = _skip(text, pos + 1)
        if text[pos : pos + 1] == "}":
            return
        while True:
            line = text.count("\n", 0, pos) + 1
            try:
                key, pos = decoder.raw_decode(text, pos)
                if not isinstance(key, str):
                    raise ValueError("a query id (a string) was expected")
                pos = _skip(text, pos)
                if text[pos : pos + 1] != ":":
                    raise ValueError("':' was expected after the query id")
                value, pos = decoder.raw_decode(text, _skip(text, pos + 1))
            except (json.JSONDecodeError, ValueError) as exc:
                message = exc.msg if isinstance(exc, json.JSONDecodeError) else str(exc)
                self.add(f"not valid JSON ({message})", text.count("\n", 0, pos) + 1)
                return
            yield key, value, line
            pos = _skip(text, pos)
            if text[pos : pos + 1] == ",":
                pos = _skip(text, pos + 1)
                continue
            if text[pos : pos + 1] == "}" and not text[pos + 1 :].strip():
                return
            self.add("not valid JSON (expected ',' or the closing '}')", text.count("\n", 0, pos) + 1)
            return

    def json_entry(self, query_id: str, value: Any, row: int) -> None:
        if self.skip(query_id):
            return
        if not isinstance(value, dict) or not isinstance(value.get("text"), str):
            self.add(f'query {query_id!r}: expected {{"text": "...", "citations": [doc ids]}}', row)
            return
        citations = value.get("citations", [])
        if not isinstance(citations, list) or not all(isinstance(d, str) and d for d in citations):
            self.add(f'query {query_id!r}: "citations" must be a list of doc ids', row)
            return
        self._docs(citations, query_id, row)
        sentence = Sentence(value["text"], tuple(dict.fromkeys(citations)))
        self._keep(Answer(query_id, (sentence,), tuple(dict.fromkeys(citations)), row))

    # ---- shared checks ---------------------------------------------------------------------------------

    def _docs(self, doc_ids: list[str], query_id: str | None, row: int) -> None:
        if self.doc_ids is None:
            return
        unknown = list(dict.fromkeys(d for d in doc_ids if d not in self.doc_ids))
        for doc_id in unknown:
            about = f" (query {query_id!r})" if query_id else ""
            self.add(f"unknown doc {doc_id!r}{about}: not in the topic's corpus", row)

    def _keep(self, answer: Answer, *, check_text: bool = True) -> None:
        qid, row = answer.query_id, answer.row
        if self.query_ids is not None and qid not in self.query_ids:
            self.add(f"unknown query {qid!r}", row, "answer only the queries of the topics being scored")
            return
        if qid in self.answers:
            self.add(f"query {qid!r} is answered twice (first on line {self.answers[qid].row})", row)
            return
        if check_text and not answer.text:
            self.add(f"query {qid!r}: the answer is empty", row, "write at least one sentence")
        elif check_text and self.max_words is not None and answer.words > self.max_words:
            self.add(f"query {qid!r}: the answer has {answer.words} words, more than the cap of {self.max_words}", row)
        self.answers[qid] = answer


def _query_id(value: Any) -> str | None:
    """Query ids are strings; an integer (a common slip for numeric Stack Overflow ids) is read as its digits."""
    if isinstance(value, str) and value.strip():
        return value.strip()
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    return None


def _is_index(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _skip(text: str, pos: int) -> int:
    while pos < len(text) and text[pos] in " \t\r\n":
        pos += 1
    return pos


def to_trec_rag(answers: AnswerSet, run_id: str | None = None) -> str:
    """The answers as TREC RAG 2024 JSONL (what `read_answers` reads back), citations as reference indexes."""
    lines = []
    for answer in answers.answers.values():
        references = list(dict.fromkeys([*answer.references, *answer.cited]))
        index = {doc_id: i for i, doc_id in enumerate(references)}
        sentences = [{"text": s.text, "citations": [index[d] for d in s.citations]} for s in answer.sentences]
        record = {"run_id": run_id or answers.run_id, "topic_id": answer.query_id, "references": references}
        lines.append(json.dumps({**record, "answer": sentences}, ensure_ascii=False))
    return "".join(line + "\n" for line in lines)
