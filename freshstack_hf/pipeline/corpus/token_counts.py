"""Token counts for chunking: how many tokens a text has and where they start, offline and fast.

The chunker's limit is in tokens, and counting is its inner loop. The tokenizer is named in the manifest: `regex`
(GPT-like pre-tokenizer pieces, the default), `whitespace`, or `hf:PATH` to a local tokenizer.json. Run-based
tokenizers tokenize a file once and count any span of it with two bisections; ASCII text is classified with numpy.
"""

from __future__ import annotations

import re
from bisect import bisect_left, bisect_right
from collections.abc import Callable
from itertools import accumulate
from pathlib import Path

from freshstack_hf.errors import FreshStackError

# Words, 1-3 digit groups, underscore runs, punctuation runs, whitespace runs: every character is in one token.
# Joining two texts can only merge the tokens at the seam, so counts are sub-additive and packing can sum them.
TOKEN_RE = re.compile(r"[^\W\d_]+|\s+|[^\w\s]+|\d{1,3}|_+")  # (this order of the disjoint classes is fastest)
_WORD_RE = re.compile(r"\S+")


class Tokenizer:
    """Counts tokens, says where they start (the last-resort cut points), and counts spans of one file."""

    name = "tokenizer"
    subadditive = False  # True when count(a + b) <= count(a) + count(b) always holds

    def count(self, text: str) -> int:
        raise NotImplementedError

    def starts(self, text: str) -> list[int]:
        raise NotImplementedError

    def spans(self, text: str) -> SpanCounter:
        """A counter for spans of `text` (a file that needs cutting)."""
        return SpanCounter(self, text)

    def measure(self, text: str, limit: int) -> tuple[int, SpanCounter | None]:
        """The count of `text`, and a span counter only when it is over `limit` (most files are not)."""
        n = self.count(text)
        return n, (self.spans(text) if n > limit else None)


class SpanCounter:
    """Counts `text[s:e]` by tokenizing the slice: right for any tokenizer, and the cost of each count."""

    def __init__(self, tok: Tokenizer, text: str) -> None:
        self.tok, self.text = tok, text

    def count(self, s: int, e: int) -> int:
        return self.tok.count(self.text[s:e])

    def starts(self, s: int, e: int) -> list[int]:
        return [s + p for p in self.tok.starts(self.text[s:e])]


class IndexedSpanCounter(SpanCounter):
    """For run-based tokenizers: the file is tokenized once, a span's count is two bisections.

    A slice has the tokens that start inside it plus the one it opens with (a partial token when the cut falls
    inside one): an exact count, or one too many where a cut splits a digit group, so never too few.
    """

    def __init__(self, tok: Tokenizer, text: str, index: list[int], opens: Callable[[int], bool]) -> None:
        super().__init__(tok, text)
        self.index, self.opens = index, opens

    def count(self, s: int, e: int) -> int:
        if s >= e:
            return 0
        return bisect_left(self.index, e) - bisect_right(self.index, s) + self.opens(s)

    def starts(self, s: int, e: int) -> list[int]:
        return self.index[bisect_left(self.index, s) : bisect_left(self.index, e)]


class RegexTokenizer(Tokenizer):
    """TOKEN_RE's pieces; ASCII text (most code) is classified with numpy instead, to the same tokens, faster."""

    name = "regex"
    subadditive = True

    def count(self, text: str) -> int:
        if len(text) >= _NUMPY_FROM and text.isascii():
            return int(_ascii_runs(text)[1].sum())
        return len(TOKEN_RE.findall(text))

    def starts(self, text: str) -> list[int]:
        if len(text) >= _NUMPY_FROM and text.isascii():
            return _ascii_starts(*_ascii_runs(text))
        return _running_starts(TOKEN_RE.findall(text))

    def spans(self, text: str) -> SpanCounter:
        return IndexedSpanCounter(self, text, self.starts(text), lambda s: True)  # every character is in a token

    def measure(self, text: str, limit: int) -> tuple[int, SpanCounter | None]:
        if len(text) <= limit:  # every token holds at least one character
            return self.count(text), None
        if text.isascii():
            runs, pieces = _ascii_runs(text)
            n = int(pieces.sum())
            index = _ascii_starts(runs, pieces) if n > limit else None
        else:
            tokens = TOKEN_RE.findall(text)  # one pass serves the count and, when needed, the index
            n = len(tokens)
            index = _running_starts(tokens) if n > limit else None
        return n, (None if index is None else IndexedSpanCounter(self, text, index, lambda s: True))


_NUMPY_FROM = 512  # below this many characters the regex is quicker than numpy's set-up
_ASCII_CLASSES: list = []


def _running_starts(tokens: list[str]) -> list[int]:
    """Tokens that tile a text start at the running sum of their lengths (C speed, no Match objects)."""
    starts = list(accumulate(map(len, tokens), initial=0))
    starts.pop()
    return starts


def _ascii_runs(text: str):
    """(start of each run of one character class, tokens in each run): digit runs count in groups of three."""
    import numpy as np

    if not _ASCII_CLASSES:  # TOKEN_RE's classes: other, letter, digit, whitespace, underscore
        chars = map(chr, range(128))
        table = [1 if c.isalpha() else 2 if c.isdigit() else 3 if c.isspace() else 4 if c == "_" else 0 for c in chars]
        _ASCII_CLASSES.append(np.array(table, dtype=np.int8))
    cls = _ASCII_CLASSES[0][np.frombuffer(text.encode("ascii"), dtype=np.uint8)]
    runs = np.concatenate(([0], np.flatnonzero(cls[1:] != cls[:-1]) + 1))
    lengths = np.diff(runs, append=len(cls))
    return runs, np.where(cls[runs] == 2, (lengths + 2) // 3, 1)


def _ascii_starts(runs, pieces) -> list[int]:
    import numpy as np

    if int(pieces.max(initial=1)) == 1:
        return runs.tolist()
    first = np.repeat(np.cumsum(pieces) - pieces, pieces)
    return (np.repeat(runs, pieces) + 3 * (np.arange(int(pieces.sum())) - first)).tolist()


class WhitespaceTokenizer(Tokenizer):
    name = "whitespace"
    subadditive = True

    def count(self, text: str) -> int:
        return len(text.split())

    def starts(self, text: str) -> list[int]:
        return [m.start() for m in _WORD_RE.finditer(text)]

    def spans(self, text: str) -> SpanCounter:
        return IndexedSpanCounter(self, text, self.starts(text), lambda s: not text[s].isspace())


class HFTokenizer(Tokenizer):
    """A local `tokenizer.json` (e.g. the packaged MiniLM's), without special tokens, truncation or padding."""

    def __init__(self, path: str) -> None:
        from tokenizers import Tokenizer as _HF

        self.name = f"hf:{path}"
        self._tok = _HF.from_file(path)
        self._tok.no_truncation()
        self._tok.no_padding()

    def count(self, text: str) -> int:
        return len(self._tok.encode(text, add_special_tokens=False).ids)

    def starts(self, text: str) -> list[int]:
        return sorted({start for start, _ in self._tok.encode(text, add_special_tokens=False).offsets})


def get_tokenizer(name: str) -> Tokenizer:
    """`regex` (default), `whitespace`, or `hf:PATH` to a local tokenizer.json; never downloads anything."""
    if name == "regex":
        return RegexTokenizer()
    if name == "whitespace":
        return WhitespaceTokenizer()
    if name.startswith("hf:"):
        path = Path(name[3:]).expanduser()
        if path.is_dir():
            path = path / "tokenizer.json"
        if not path.is_file():
            raise FreshStackError(f"corpus.tokenizer: {path} is not a tokenizer.json (give hf:/path/to/tokenizer.json)")
        return HFTokenizer(str(path))
    raise FreshStackError(f"corpus.tokenizer: unknown tokenizer {name!r} (use regex, whitespace or hf:PATH)")
