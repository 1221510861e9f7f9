"""Where to cut one file's text into chunks of at most a token limit.

The paper chunks each file to a token limit. Cuts fall on the largest boundary that keeps a chunk under the limit:
syntax nodes for code (tree-sitter, where the grammar is installed), headings then paragraphs for prose, then lines,
whitespace, and finally token boundaries for a single over-long line; adjacent pieces are packed greedily up to the
limit. A chunk is always an exact slice of the file's text, so `start`/`end` are character offsets (Python str
indices), as in the released corpus. Token counts come from `tokenizers`; which files are chunked, from `files`.
"""

from __future__ import annotations

import importlib
import logging
import re
from bisect import bisect_right
from collections.abc import Callable
from itertools import pairwise

from freshstack_hf.pipeline.corpus.file_selection import extension
from freshstack_hf.pipeline.corpus.token_counts import SpanCounter, Tokenizer

logger = logging.getLogger(__name__)


# ---- what kind of text a file is -------------------------------------------------------------------------------

_C_FAMILY = (".c", ".h", ".cc", ".cpp", ".cxx", ".hh", ".hpp", ".hxx", ".ino")
GRAMMARS = {  # extension -> (grammar package, its language function)
    **dict.fromkeys((".py", ".pyi"), ("tree_sitter_python", "language")),
    **dict.fromkeys((".js", ".mjs", ".cjs", ".jsx"), ("tree_sitter_javascript", "language")),
    **dict.fromkeys((".ts", ".mts", ".cts"), ("tree_sitter_typescript", "language_typescript")),
    ".tsx": ("tree_sitter_typescript", "language_tsx"),
    ".php": ("tree_sitter_php", "language_php"),
    ".cs": ("tree_sitter_c_sharp", "language"),
    **dict.fromkeys(_C_FAMILY, ("tree_sitter_cpp", "language")),
    ".gd": ("tree_sitter_gdscript", "language"),
}
PROSE = {  # extension -> heading style
    **dict.fromkeys((".md", ".markdown", ".mdx", ".qmd", ".rmd", ".ipynb"), "md"),
    ".rst": "rst",
    **dict.fromkeys((".html", ".htm", ".xhtml"), "html"),
    **dict.fromkeys((".adoc", ".asciidoc"), "adoc"),
    **dict.fromkeys((".txt", ".text"), "txt"),
}

# Candidate lines only (a heading, or a code fence that hides the headings inside it), found in one regex pass.
_HEADING_RE = {
    "md": re.compile(r"^[ \t]{0,3}(?:(?P<fence>```|~~~)|#{1,6}(?:[ \t]|$))", re.MULTILINE),
    "html": re.compile(r"^[ \t]*<h[1-6][\s>]", re.MULTILINE | re.IGNORECASE),
    "adoc": re.compile(r"^={1,6}[ \t]+\S", re.MULTILINE),
    "rst": re.compile(r"^([=\-~^\"'`#*+:.])\1{2,}[ \t]*\r?$", re.MULTILINE),  # a title's underline
}
_PARAGRAPH_RE = re.compile(r"\n(?:[ \t\r]*\n)+")
_NEWLINE_RE = re.compile(r"\n")
_SPACE_RE = re.compile(r"\s+")


def _heading_cuts(style: str) -> Callable[[str, int, int], list[int]]:
    """Line starts of headings (outside fenced code); an rst title starts the line above its underline."""
    pattern = _HEADING_RE[style]

    def cuts(text: str, s: int, e: int) -> list[int]:
        out: list[int] = []
        fenced = False
        for m in pattern.finditer(text, s, e):
            at = m.start()
            if style == "md" and m["fence"]:
                fenced = not fenced
            elif style == "rst":
                above = text.rfind("\n", s, max(s, at - 1)) + 1
                if above > s and text[above : at - 1].strip() and (not out or above > out[-1]):
                    out.append(above)
            elif not fenced and at > s:
                out.append(at)
        return out

    return cuts


def _regex_cuts(pattern: re.Pattern) -> Callable[[str, int, int], list[int]]:
    """Cut after each match (blank-line runs, newlines, whitespace stay with the piece before them)."""
    return lambda text, s, e: [m.end() for m in pattern.finditer(text, s, e) if s < m.end() < e]


PARAGRAPHS, LINES, SPACES = _regex_cuts(_PARAGRAPH_RE), _regex_cuts(_NEWLINE_RE), _regex_cuts(_SPACE_RE)
CODE_LEVELS = (PARAGRAPHS, LINES, SPACES)


def prose_levels(style: str) -> tuple:
    return ((_heading_cuts(style),) if style in ("md", "rst", "html", "adoc") else ()) + CODE_LEVELS


# ---- the chunker ----------------------------------------------------------------------------------------------

Span = tuple[int, int, int]  # start, end (character offsets), tokens (an upper bound)


class Chunker:
    """Cuts one file's text into spans of at most `max_tokens`; drops near-empty ones (counted in `dropped`)."""

    def __init__(self, tokenizer: Tokenizer, max_tokens: int, min_tokens: int = 1) -> None:
        self.tok, self.max, self.min = tokenizer, max_tokens, min_tokens
        self._parsers: dict[str, object] = {}

    def chunk(self, path: str, text: str) -> tuple[list[tuple[int, int]], int]:
        """([(start, end), ...] in order, number of near-empty chunks dropped)."""
        if not text:
            return [], 0
        n, c = self.tok.measure(text, self.max)
        if c is None:  # most files: one count, no parse
            spans: list[Span] | None = [(0, len(text), n)]
        else:
            ext = extension(path)
            spans = self._code(c, ext, n) if ext in GRAMMARS else None
            if spans is None:
                levels = prose_levels(PROSE[ext]) if ext in PROSE else CODE_LEVELS
                spans = self._split(c, 0, len(text), levels, n)
        kept = [(s, e) for s, e, k in spans if not self._near_empty(text, s, e, k)]
        return kept, len(spans) - len(kept)

    def _near_empty(self, text: str, s: int, e: int, k: int) -> bool:
        piece = text[s:e]
        if piece.isspace():
            return True
        return k < 4 * self.min and self.tok.count(piece) < self.min  # k is an upper bound: re-count small ones

    def _split(self, c: SpanCounter, s: int, e: int, levels: tuple, n: int | None = None) -> list[Span]:
        """Spans tiling [s, e): the whole range if it fits, else its pieces at the first level that cuts it."""
        n = c.count(s, e) if n is None else n
        if n <= self.max:
            return [(s, e, n)]
        for i, level in enumerate(levels):
            cuts = level(c.text, s, e)
            if cuts:
                units: list[Span] = []
                for a, b in pairwise([s, *cuts, e]):
                    units.extend(self._split(c, a, b, levels[i + 1 :]))
                return self._pack(c, units)
        return self._cut_tokens(c, s, e)

    def _cut_tokens(self, c: SpanCounter, s: int, e: int) -> list[Span]:
        """A piece with no whitespace left to cut at: every `max` tokens, checked (a cut may re-tokenize)."""
        starts = c.starts(s, e)
        out: list[Span] = []
        pos, i = s, 0
        while pos < e:
            j = i + self.max
            end = starts[j] if j < len(starts) else e
            n = c.count(pos, end)
            while n > self.max and j - i > 1:
                j -= max(1, (j - i) // 10)
                end = starts[j]
                n = c.count(pos, end)
            out.append((pos, end, n))
            pos, i = end, j
        return out

    def _pack(self, c: SpanCounter, units: list[Span]) -> list[Span]:
        """Greedy: extend the current chunk with the next unit while the summed counts stay within the limit."""
        out: list[Span] = []
        first = 0
        total = units[0][2]
        for k in range(1, len(units) + 1):
            if k < len(units) and total + units[k][2] <= self.max:
                total += units[k][2]
                continue
            group = units[first:k]
            if len(group) == 1 or self.tok.subadditive:
                out.append((group[0][0], group[-1][1], total))
            else:
                out.extend(self._pack_checked(c, group))
            if k < len(units):
                first, total = k, units[k][2]
        return out

    def _pack_checked(self, c: SpanCounter, group: list[Span]) -> list[Span]:
        """Packing for tokenizers whose counts may grow when pieces are joined: every merge is re-counted."""
        out: list[Span] = [group[0]]
        for s, e, n in group[1:]:
            merged = c.count(out[-1][0], e)
            if merged <= self.max:
                out[-1] = (out[-1][0], e, merged)
            else:
                out.append((s, e, n))
        return out

    # -- code, on syntax boundaries --

    def _code(self, c: SpanCounter, ext: str, n: int) -> list[Span] | None:
        """None where there is no grammar or the parse has errors: the caller falls back to lines."""
        parser = self._parser(ext)
        if parser is None:
            return None
        data = c.text.encode("utf-8")
        try:
            tree = parser.parse(data)
        except Exception as exc:  # a grammar bug must not stop the build
            logger.debug("tree-sitter failed on a %s file: %s", ext, exc)
            return None
        if tree.root_node.has_error:
            return None
        to_char = _byte_to_char(c.text, data)
        try:
            return self._node(c, tree.root_node, 0, len(c.text), to_char, n)
        except RecursionError:
            return None

    def _node(self, c: SpanCounter, node, s: int, e: int, to_char, n: int | None = None) -> list[Span]:
        """[s, e) holds `node`: fits whole, or is cut at its children's starts (a gap joins the piece before it)."""
        n = c.count(s, e) if n is None else n
        if n <= self.max:
            return [(s, e, n)]
        kids = node.children
        bounds: list[int] = [s]
        owners = [kids[0]] if kids else []
        for kid in kids[1:]:
            p = to_char(kid.start_byte)
            if bounds[-1] < p < e:
                bounds.append(p)
                owners.append(kid)
        if len(bounds) == 1:
            if len(kids) == 1:
                return self._node(c, kids[0], s, e, to_char, n)
            return self._split(c, s, e, CODE_LEVELS, n)
        units: list[Span] = []
        for (a, b), owner in zip(pairwise([*bounds, e]), owners, strict=True):
            units.extend(self._node(c, owner, a, b, to_char))
        return self._pack(c, units)

    def _parser(self, ext: str):
        package, function = GRAMMARS[ext]
        key = f"{package}.{function}"
        if key not in self._parsers:
            try:
                import tree_sitter

                lang = tree_sitter.Language(getattr(importlib.import_module(package), function)())
                self._parsers[key] = tree_sitter.Parser(lang)
            except (ImportError, AttributeError, ValueError) as exc:
                logger.info("no tree-sitter grammar for %s (%s): chunking on lines", ext, exc)
                self._parsers[key] = None
        return self._parsers[key]


def _byte_to_char(text: str, data: bytes) -> Callable[[int], int]:
    """tree-sitter reports UTF-8 byte offsets; chunks use character offsets."""
    if len(data) == len(text):
        return lambda b: b
    offsets: list[int] = []
    pos = 0
    for ch in text:
        offsets.append(pos)
        pos += len(ch.encode("utf-8"))
    return lambda b: bisect_right(offsets, b) - 1
