"""The chunks `freshstack` 0.0.6's repository chunker makes of one file: the same ids, offsets and texts.

A corpus built here must contain the released corpus's ids, so this module follows the official chunker
(`freshstack.chunking`, which the release was cut with) decision by decision, quirks included, each listed in the
docs page docs/chunking.md ("How a corpus is chunked"):

* The budget is 2,048 cl100k tokens counted over `OWNER/REPO/path + "\\n\\n" + chunk`, the name included.
* A file whose name pygments gives a language (other than "text only") is code: it is parsed with that
  language's tree-sitter-language-pack grammar, and dropped when there is none or the parse starts with an error.
  A node that fits is one chunk; a node that does not is replaced by its children's chunks, and neighbours are
  merged while their counts sum under `max - 50` and the merge fits. tree-sitter reports UTF-8 *byte* offsets,
  which the official uses as string indices: ids carry byte numbers and texts are the string sliced by them. A
  leaf too long to fit goes to the text splitter, whose offsets are relative to that leaf's text.
* Any other file goes to semchunk with a budget of `max - tokens(name + "\\n\\n")`; each chunk is located with
  `str.find` from the previous one's end, so the separators semchunk drops leave gaps between chunks.
* A notebook is converted to a Python script by nbconvert (raw cells left out, embedded media blanked, `pip`
  commented out) and chunked as code under the name `path.py`; its ids say `.ipynb` again.
* A file of 1,000,000 characters or more, or of more than 100 chunks, is dropped; whitespace-only chunks are
  dropped after that count; ids keep only the ASCII characters of the path.

Counting is where the official spends its time (it re-encodes every slice it considers). Here each file is
encoded once and every span is counted from that (`cl100k.SpanCounter`), a slice that plainly fits (no more bytes
than tokens allowed) is never counted, and pygments and parsers are looked up once per name. The result is the
same; `tests/test_release_chunker.py` checks it against the official package on real repositories.

Below the chunker, one file's token counts (`FileTokens`); which files are code is `release_lexers.lexer_name`'s, and
a notebook as the official sees it `release_notebooks.NotebookScript`'s.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from freshstack_hf import cl100k
from freshstack_hf.pipeline.corpus.release_lexers import lexer_name
from freshstack_hf.pipeline.corpus.release_notebooks import NotebookScript

logger = logging.getLogger(__name__)

MAX_TOKENS = 2048
MERGE_MARGIN = 50  # neighbours merge only while their counts sum below max - 50 (the official's margin)
MAX_CHUNKS_PER_FILE = 100
MAX_FILE_CHARS = 1_000_000
NOT_CODE = ("text only", "None")  # the official's list ("None" can never match a lowercased name)


@dataclass
class Chunk:
    """`base[start:end]`, where `base` is `text[lo:hi]` of the file being chunked (the whole file, or a leaf's
    text for the text splitter's pieces); `start`/`end` are the numbers the id records."""

    lo: int
    hi: int
    start: int
    end: int
    tokens: int | None = None

    def span(self) -> tuple[int, int]:
        """The absolute `[s, e)` of the text this chunk holds (Python slicing of the base, clamped)."""
        size = self.hi - self.lo
        s = min(max(self.start, 0), size)
        e = min(max(self.end, 0), size)
        return self.lo + s, self.lo + max(s, e)


@dataclass
class FileResult:
    """One file's chunks as `(id_path, start, end, text)` rows, or why it gave none."""

    rows: list[tuple[str, int, int, str]] = field(default_factory=list)
    skipped: str = ""


class ReleaseChunker:
    """Chunks the files of one repository (`repo_name` = `OWNER/REPO`, part of every counted name)."""

    def __init__(
        self,
        repo_name: str,
        max_tokens: int = MAX_TOKENS,
        max_chunks: int = MAX_CHUNKS_PER_FILE,
        max_chars: int = MAX_FILE_CHARS,
        notebooks: str = "script",
    ) -> None:
        self.repo_name = repo_name.strip("/")
        self.notebooks = notebooks  # "text": a notebook's raw JSON goes to the text splitter (pygments knows no .ipynb)
        self.max, self.max_chunks, self.max_chars = max_tokens, max_chunks, max_chars
        self._languages: dict[str, str | None] = {}
        self._parsers: dict[str, Any] = {}
        self._script = NotebookScript()

    # ---- one file ------------------------------------------------------------------------------------------

    def chunk_file(self, rel: str, text: str) -> FileResult:
        """`text` is the file as the official reads it (text mode: UTF-8, newlines made `\\n`)."""
        if len(text) >= self.max_chars:
            return FileResult(skipped="over_max_chars")
        name = f"{self.repo_name}/{rel}"
        if rel.lower().endswith(".ipynb") and self.notebooks == "script":
            return self._notebook(name, text)
        language = self.language(name)
        if language is not None:
            chunks, reason = self._code(name, text, language)
            return self._rows(name, text, chunks, reason)
        counter = FileTokens(text)
        chunks = self._split_text(name, counter, 0, len(text))
        return self._rows(name, text, chunks, "" if chunks else "empty")

    def _rows(
        self,
        name: str,
        text: str,
        chunks: list[Chunk],
        reason: str,
        id_of: Callable[[str], str] | None = None,
    ) -> FileResult:
        if not chunks:
            return FileResult(skipped=reason or "empty")
        if len(chunks) > self.max_chunks:
            return FileResult(skipped="over_max_chunks")
        ascii_name = name.encode("ascii", "ignore").decode("ascii")
        rows = []
        for c in chunks:
            s, e = c.span()
            piece = text[s:e]
            if not piece.strip():
                continue
            full_id = f"{ascii_name}_{c.start}_{c.end}"
            if id_of is not None:
                full_id = id_of(full_id)
            rows.append((full_id.replace(self.repo_name + "/", ""), c.start, c.end, piece))
        return FileResult(rows=rows, skipped="" if rows else "empty")

    # ---- which files are code ------------------------------------------------------------------------------

    def language(self, name: str) -> str | None:
        """pygments' lexer name for the file, lowercased; None when it is not code (pygments matches on the
        file's base name only, so the answer is cached per base name)."""
        base = name.rsplit("/", 1)[-1]
        if base not in self._languages:
            lang = lexer_name(base)
            self._languages[base] = lang.lower() if lang and lang.lower() not in NOT_CODE else None
        return self._languages[base]

    def _parser(self, language: str) -> Any:
        if language not in self._parsers:
            from tree_sitter_language_pack import get_parser

            try:
                self._parsers[language] = get_parser(language)  # type: ignore[arg-type]
            except LookupError:
                self._parsers[language] = None
        return self._parsers[language]

    # ---- code: syntax nodes --------------------------------------------------------------------------------

    def _code(self, name: str, text: str, language: str) -> tuple[list[Chunk], str]:
        if not text.strip():
            return [], "empty"
        parser = self._parser(language)
        if parser is None:
            return [], "no_grammar"
        tree = parser.parse(text.encode("utf-8"))
        root = tree.root_node
        if not root.children or root.children[0].type == "ERROR":
            return [], "parse_error"
        counter = FileTokens(text)
        try:
            return self._node(name, counter, root), ""
        except RecursionError:
            return [], "too_deep"

    def _node(self, name: str, counter: FileTokens, node: Any) -> list[Chunk]:
        whole = len(counter.text)
        chunk = Chunk(0, whole, node.start_byte, node.end_byte)
        if self._fits(name, counter, chunk):
            return [chunk]
        children = node.children
        if not children:
            lo, hi = chunk.span()
            return self._split_text(name, counter, lo, hi)
        pieces = [c for child in children for c in self._node(name, counter, child)]
        merged: list[Chunk] = []
        limit = self.max - MERGE_MARGIN
        for piece in pieces:
            if merged and self._sum_below(name, counter, merged[-1], piece, limit):
                joined = Chunk(0, whole, merged[-1].start, piece.end)
                if self._fits(name, counter, joined):
                    merged[-1] = joined
                    continue
            merged.append(piece)
        return merged

    def _fits(self, name: str, counter: FileTokens, chunk: Chunk) -> bool:
        s, e = chunk.span()
        if chunk.tokens is None and counter.bytes_between(s, e) + counter.prefix_bytes(name) <= self.max:
            return True  # every token holds at least one byte
        return self._tokens(name, counter, chunk) <= self.max

    def _sum_below(self, name: str, counter: FileTokens, a: Chunk, b: Chunk, limit: int) -> bool:
        if a.tokens is None or b.tokens is None:
            (sa, ea), (sb, eb) = a.span(), b.span()
            bound = counter.bytes_between(sa, ea) + counter.bytes_between(sb, eb) + 2 * counter.prefix_bytes(name)
            if bound < limit:
                return True
        return self._tokens(name, counter, a) + self._tokens(name, counter, b) < limit

    def _tokens(self, name: str, counter: FileTokens, chunk: Chunk) -> int:
        if chunk.tokens is None:
            s, e = chunk.span()
            chunk.tokens = counter.spans.count(s, e, name + "\n\n")
        return chunk.tokens

    # ---- text: semchunk ------------------------------------------------------------------------------------

    def _split_text(self, name: str, counter: FileTokens, lo: int, hi: int) -> list[Chunk]:
        """semchunk over `text[lo:hi]`, each chunk found with `find` as the official does (offsets relative)."""
        import semchunk

        base = counter.text[lo:hi]
        budget = self.max - cl100k.count(name + "\n\n")
        pieces = semchunk.chunk(base, budget, counter.plain_counter(lo), memoize=False)
        out: list[Chunk] = []
        start = end = 0
        for piece in pieces:
            start = base.find(piece, start)
            if start == -1:  # cannot happen for semchunk's slices; the official then restarts the search at 0
                start = 0
                continue
            end = start + len(piece)
            out.append(Chunk(lo, hi, start, end))
            start = end
        return out

    # ---- notebooks -----------------------------------------------------------------------------------------

    def _notebook(self, name: str, raw: str) -> FileResult:
        try:
            script = self._script.convert(raw)
        except ImportError:
            return FileResult(skipped="notebook_needs_nbconvert")
        except Exception as exc:  # the official stops the whole run on a notebook it cannot read
            logger.debug("%s: not a readable notebook (%s)", name, exc)
            return FileResult(skipped="bad_notebook")
        py_name = name.replace(".ipynb", ".py")
        language = self.language(py_name)
        if language is None:
            return FileResult(skipped="no_grammar")
        chunks, reason = self._code(py_name, script, language)
        return self._rows(py_name, script, chunks, reason, id_of=lambda full_id: full_id.replace(".py", ".ipynb"))


# ---- one file's token counts -------------------------------------------------------------------------------------
# One file's cl100k token counts as the release chunker asks for them: any span, from one encoding of the file. The
# official re-encodes every slice it considers; here the file is encoded once (`cl100k.SpanCounter`) and the byte
# sizes give a cheap upper bound, so a slice that plainly fits (no more bytes than tokens allowed) is never counted
# at all.


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
