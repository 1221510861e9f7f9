"""Text handling of the offline backend: markdown split into sentences and code blocks, and weighted terms.

These helpers only read text; they know nothing of nuggets, queries or thresholds. They live apart from
`pipeline/offline/` so the backend there reads as the heuristics and the calibrated judge rule, while what a "term" is
(identifier parts weighted `CODE_WEIGHT`, stopwords out, plural `s` stripped) and how an answer is cut into units
is defined once here, for the backend and for anything that scores text the same way.
"""

from __future__ import annotations

import re
from collections import Counter
from itertools import pairwise

CODE_WEIGHT = 2.0  # a term that came from an identifier (`dispatchSync`, `queue:work`) counts double

# fmt: off
_STOPWORD_TEXT = """
a about above after again against all also am an and any are as at be because been before being below between
both but by can could did do does doing done down during each either else etc even ever every few for from
further get gets getting got had has have having he her here hers him his how however i if in into is it its
itself just let like make may me might more most much must my need needs no nor not now of off on once one only
or other our ours out over own per please quite rather really same see seem she should since so some still such
sure than that the their theirs them then there these they thing things this those though through thus to too
try trying under until up upon us use used uses using very via want wants was way we well were what when where
whether which while who whom why will with within without would yes yet you your yours
"""
# fmt: on
STOPWORDS = frozenset(_STOPWORD_TEXT.split())
FENCE = re.compile(r"^[ \t]*(```|~~~)[^\n]*\n(.*?)^[ \t]*\1[ \t]*$", re.DOTALL | re.MULTILINE)
INLINE_CODE = re.compile(r"`([^`\n]+)`")
LIST_MARKER = re.compile(r"^\s*(?:[-*+>]|\d+[.)])\s+")
SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z`\[(\"'])")
WORD = re.compile(r"[A-Za-z_$@][\w$]*(?:(?:::|->|[.:/-])[A-Za-z_$][\w$]*)*|\d+(?:\.\d+)+|\d+")
PIECE = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|\d+(?:\.\d+)*")
CODEISH = re.compile(r"(::|->|\(\)|[a-z][A-Z]|_|\.[a-z]|^[A-Z][A-Z0-9_]{2,}$|^--?[a-z]|:[a-z])")
COMMENT = re.compile(r"^\s*(//|#(?!!)|/\*|\*|<\?php|\"\"\"|'''|<!--|--\s)")
URL = re.compile(r"\s*\(?\bhttps?://[^\s)]+\)?|\benter image description here\b", re.IGNORECASE)
SHELL = re.compile(r"^\s*(\$\s+|>\s+)?(php artisan|composer|npm|npx|yarn|pnpm|pip|python|git|docker|sudo|apt|brew|ng )")


def _norm(word: str) -> str:
    """Lowercase and strip a plural `s`, so `jobs` meets `job` on either side."""
    word = word.lower()
    return word[:-1] if len(word) > 3 and word.endswith("s") and not word.endswith("ss") else word


def terms(text: str) -> Counter[str]:
    """Distinctive content terms with weights: identifier parts (camelCase, snake_case, dotted), no stopwords.

    An identifier also counts whole (`dispatchsync`), and its terms weigh `CODE_WEIGHT`, since a shared
    identifier says more about support than a shared English word.
    """
    out: Counter[str] = Counter()
    for raw in WORD.findall(text):
        code = bool(CODEISH.search(raw))
        weight = CODE_WEIGHT if code else 1.0
        pieces = [_norm(p) for p in PIECE.findall(raw)]
        if code and len(pieces) > 1:
            out[re.sub(r"\W", "", raw.lower())] = max(out[re.sub(r"\W", "", raw.lower())], weight)
        for piece in pieces:
            if len(piece) > 1 and piece not in STOPWORDS:
                out[piece] = max(out[piece], weight)
    return out


def lexical_share(nugget: Counter[str], doc: set[str]) -> float:
    """Weighted share of the nugget's terms present in the document (0 for a nugget with no content terms)."""
    total = sum(nugget.values())
    return sum(w for t, w in nugget.items() if t in doc) / total if total else 0.0


def split_markdown(text: str) -> list[tuple[str, str]]:
    """("prose", sentence) and ("code", block) units in order; list markers and quote marks stripped."""
    units: list[tuple[str, str]] = []
    pos = 0
    for match in [*FENCE.finditer(text), None]:
        prose = text[pos : match.start() if match else len(text)]
        for para in re.split(r"\n\s*\n|\n(?=\s*(?:[-*+>]|\d+[.)])\s)", prose):
            para = " ".join(LIST_MARKER.sub("", line).strip() for line in para.splitlines()).strip()
            units += [("prose", s.strip()) for s in _sentences(para) if s.strip()]
        if match:
            units.append(("code", match.group(2).strip("\n")))
            pos = match.end()
    return units


def _sentences(para: str) -> list[str]:
    """Split at sentence ends, but never inside inline code: `print("Done. Exit")` stays one piece."""
    spans = [m.span() for m in INLINE_CODE.finditer(para)]
    cuts = [m.start() for m in SENTENCE_END.finditer(para) if not any(a < m.start() < b for a, b in spans)]
    bounds = [0, *cuts, len(para)]
    return [para[a:b].strip() for a, b in pairwise(bounds)]


def summarize_code(block: str) -> str:
    """A code block as a nugget: its first meaningful line(s), introduced as a command or as code to use."""
    lines = [ln.strip() for ln in block.splitlines() if ln.strip() and not COMMENT.match(ln)]
    if not lines:
        return ""
    if SHELL.match(lines[0]):
        commands = [re.sub(r"^\s*[$>]\s+", "", ln) for ln in lines[:2] if SHELL.match(ln)]
        return "Run: " + ", then ".join(commands)[:160]
    head = lines[0] if len(lines[0]) >= 40 or len(lines) == 1 else f"{lines[0]} {lines[1]}"
    return "Use the following code: " + head[:160]


def drop_links(text: str) -> str:
    """Text without URLs and image captions: a link is where a fact is, not the fact, and it fakes "technical"."""
    return re.sub(r"\s+([.,;:])(?=\s|$)", r"\1", URL.sub("", text)).strip()
