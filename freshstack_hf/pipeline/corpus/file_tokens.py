"""One file's cl100k token counts as the release chunker asks for them: any span, from one encoding of the file.

The official re-encodes every slice it considers; here the file is encoded once (`cl100k.SpanCounter`) and the
byte sizes give a cheap upper bound, so a slice that plainly fits (no more bytes than tokens allowed) is never
counted at all.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from freshstack_hf import cl100k


class FileTokens:
    """One file's text with its exact span counter and the byte sizes the cheap upper bounds use."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.spans = cl100k.SpanCounter(text)
        self._ascii = text.isascii()
        self._byte_starts: Any = None
        self._prefix: dict[str, int] = {}

    def bytes_between(self, s: int, e: int) -> int:
        if self._ascii:
            return e - s
        if self._byte_starts is None:
            self._byte_starts = cl100k.byte_starts(self.text)
        return int(self._byte_starts[e] - self._byte_starts[s])

    def prefix_bytes(self, name: str) -> int:
        if name not in self._prefix:
            self._prefix[name] = len(name.encode("utf-8")) + 2
        return self._prefix[name]

    def plain_counter(self, lo: int) -> Callable[[str], int]:
        """A semchunk token counter for pieces of `text[lo:...]`: short strings are encoded (and remembered);
        long ones are located in the file and counted from its one encoding. Any place where the same string
        occurs gives the same count, so `find` needs no more than a hint."""
        memo: dict[str, int] = {}
        text, spans = self.text, self.spans
        hint = [lo]

        def count(piece: str) -> int:
            n = memo.get(piece)
            if n is None:
                if len(piece) <= cl100k.SHORT:
                    n = cl100k.count(piece)
                else:
                    at = text.find(piece, hint[0])
                    if at < 0:
                        at = text.find(piece, lo)
                    if at < 0:
                        n = cl100k.count(piece)
                    else:
                        hint[0] = at
                        n = spans.count(at, at + len(piece))
                memo[piece] = n
            return n

        return count
