"""Nuggets, sub-questions and closed-book answers written from the question and its accepted answer, with no model.

Nuggets are the accepted answer's own technical sentences and code blocks (at most `MAX_NUGGETS`, the most
technical and most on-question kept); sub-questions and the closed-book answer are assembled from the question's
title, explicit questions, error lines and the identifiers it mentions.
"""

from __future__ import annotations

import re
from collections import Counter

from freshstack_hf.llm.offline_text import (
    CODEISH,
    INLINE_CODE,
    WORD,
    drop_links,
    split_markdown,
    summarize_code,
    terms,
)
from freshstack_hf.pipeline.backends import QA, NuggetText

MAX_NUGGETS = 6
MAX_SUBQUESTIONS = 5

_GENERIC_TEXT = "error problem issue question work works working help code example following solution"
GENERIC = frozenset(_GENERIC_TEXT.split())
PLEASANTRY = re.compile(
    r"^\s*(hope (this|it|that) helps|thanks?\b|thank you|good luck|cheers|happy coding|regards|best\b|"
    r"edit\s*:?\s*$|update\s*:?\s*$|you('re| are) welcome|glad (i|to)|let me know|hth\b)",
    re.IGNORECASE,
)
IMPERATIVE = re.compile(
    r"^(use|add|set|run|install|change|replace|remove|call|make|create|put|update|try|pass|define|enable|disable|"
    r"configure|import|wrap|move|register|publish|clear|rename|delete|upgrade|downgrade|switch|check|declare|"
    r"return|extend|implement|override|specify|include|edit|open|restart|you (need|should|must|can|have) to|"
    r"you (should|must|can))\b",
    re.IGNORECASE,
)
ERROR_LINE = re.compile(
    r"(error|exception|fatal|traceback|undefined|not found|cannot|can't|could not|failed|uncaught|denied|invalid)",
    re.IGNORECASE,
)
VERSION = re.compile(r"\b\d+\.\d+(\.\d+)?\b")
ABBREVIATION = frozenset({"e.g", "i.e", "etc", "vs", "cf"})


def _substantive(sentence: str) -> bool:
    """Three words, two content terms: "Run the following:" only introduces the code block that follows it."""
    return len(sentence.split()) >= 3 and len([t for t in terms(sentence) if t not in GENERIC]) >= 2


def _technical(unit: str) -> int:
    """How much technical content a sentence carries: inline code, identifiers, versions, imperative fixes."""
    score = len(INLINE_CODE.findall(unit)) + sum(1 for w in WORD.findall(unit) if CODEISH.search(w))
    score += len(VERSION.findall(unit)) + (2 if IMPERATIVE.match(unit) else 0)
    return score


def nuggets_of(qa: QA) -> list[NuggetText]:
    question = {t for t in terms(qa.question) if t not in GENERIC}
    cands: list[tuple[int, str, int, bool]] = []  # (position, text, question overlap, fix-bearing)
    plain: list[tuple[bool, int, str, int, bool]] = []  # (thin?, ...): no technical content, fallbacks only
    seen: set[str] = set()
    for pos, (kind, unit) in enumerate(split_markdown(qa.answer)):
        text = summarize_code(unit) if kind == "code" else drop_links(unit)
        if not text or text in seen or (kind == "prose" and (PLEASANTRY.match(text) or text.endswith("?"))):
            continue  # repeats, thanks and rhetorical questions carry no new fact
        seen.add(text)
        overlap = len(question & set(terms(unit)))
        tech = 3 if kind == "code" else _technical(text)
        unit_info = (pos, text, overlap, kind == "code" or bool(IMPERATIVE.match(text)))
        substantive = kind == "code" or _substantive(text)  # not an image caption or "Run the following:"
        if substantive and (tech or overlap):
            cands.append(unit_info)
        elif len(text.split()) >= 3:
            plain.append((not substantive, *unit_info))
    fallback = [info[1:] for info in sorted(plain)[: max(0, 2 - len(cands))]]
    cands = sorted(cands + fallback)  # a short or non-technical answer still gets two units when it has them
    if len(cands) > MAX_NUGGETS:
        ranked = sorted(cands, key=lambda c: (-(2 * c[2] + _technical(c[1]) + 2 * c[3]), c[0]))
        cands = sorted(ranked[:MAX_NUGGETS])
    if not cands:
        return []
    best = max(c[2] for c in cands)
    first_fix = next((c[0] for c in cands if c[3]), None)
    return [
        NuggetText(text, "vital" if (best and overlap == best) or pos == first_fix else "okay")
        for pos, text, overlap, _ in cands
    ]


def subquestions_of(qa: QA) -> list[str]:
    units = split_markdown(qa.body)
    asked = [u for k, u in units if k == "prose" and u.endswith("?")]
    out = [qa.title.strip(), *asked[:2]]
    out += [f'What causes "{line}"?' for line in _error_lines(qa.body)[:2]]
    out += [f"How to use {name}?" for name in _identifiers(qa.question)[:3]]
    seen: set[str] = set()
    unique = [q for q in out if q and not (q.lower() in seen or seen.add(q.lower()))]
    if len(unique) < 2:
        unique.append(f"How to solve: {qa.title.strip() or qa.body.strip()[:120]}?")
    return unique[:MAX_SUBQUESTIONS]


def closed_book_of(qa: QA) -> str:
    parts = [f"{qa.title.strip().rstrip('?')}."]
    names = _identifiers(qa.question)[:6]
    if names:
        parts.append(f"The answer depends on how {', '.join(names)} are used and configured.")
    for line in _error_lines(qa.body)[:2]:
        parts.append(f'The error "{line}" points at the cause.')
    return " ".join(parts)


def _error_lines(text: str) -> list[str]:
    """Lines that look like an error message, trimmed and deduplicated, in the order the question shows them."""
    lines = [ln.strip().strip("`") for ln in text.splitlines()]
    hits = [ln[:160] for ln in lines if len(ln) >= 8 and ERROR_LINE.search(ln) and not ln.endswith("?")]
    return list(dict.fromkeys(hits))[:10]


def _identifiers(text: str) -> list[str]:
    """Code identifiers the question mentions (inline code first, then code-shaped words), most frequent first."""
    text = drop_links(text)
    counts: Counter[str] = Counter()
    for span in INLINE_CODE.findall(text):
        if len(span) <= 60:
            counts[span.strip()] += 2
    for word in WORD.findall(text):
        if CODEISH.search(word) and len(word) > 2 and word.lower() not in ABBREVIATION:
            counts[word] += 1
    out: list[str] = []
    for word, _ in sorted(counts.items(), key=lambda kv: (-kv[1], text.find(kv[0]))):
        short_code = len(word) < 4 and word.isupper()  # `S02` out of `SQLSTATE[42S02]` is no identifier
        if not short_code and not any(word in kept for kept in out):
            out.append(word)
    return out
