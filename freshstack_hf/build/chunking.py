"""Files to chunks: which files of a repository are text worth indexing, and where to cut them.

The paper chunks each file to a token limit and skips images, videos, .bin, .csv, audio and unreadable formats.
Cuts fall on the largest boundary that keeps a chunk under the limit: syntax nodes for code (tree-sitter, where
the grammar is installed), headings then paragraphs for prose, then lines, whitespace, and finally token
boundaries for a single over-long line; adjacent pieces are packed greedily up to the limit. A chunk is always an
exact slice of the file's text, so `start`/`end` are character offsets (Python str indices), as in the released
corpus. The token count is offline and named in the manifest: `regex` (GPT-like pre-tokenizer pieces), `whitespace`,
or `hf:PATH` to a local tokenizer.json.
"""

from __future__ import annotations

import importlib
import json
import logging
import os
import re
from bisect import bisect_left, bisect_right
from collections.abc import Callable
from itertools import accumulate, pairwise
from pathlib import Path

logger = logging.getLogger(__name__)

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
    from freshstack_hf.errors import FreshStackError

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
            ext = _extension(path)
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


def _extension(path: str) -> str:
    name = path.rsplit("/", 1)[-1].lower()
    return name[name.rfind(".") :] if "." in name else ""


# ---- notebooks --------------------------------------------------------------------------------------------------

_DATA_URI_RE = re.compile(r"data:[\w/+.-]+;base64,[A-Za-z0-9+/=\s]{64,}")


def render_notebook(raw: str) -> str:
    """Markdown cells as text, code cells fenced, outputs (and embedded images) dropped; raises ValueError."""
    nb = json.loads(raw)
    if not isinstance(nb, dict):
        raise ValueError("not a notebook")
    cells = nb.get("cells") or [c for ws in nb.get("worksheets", []) for c in ws.get("cells", [])]
    meta = nb.get("metadata") or {}
    lang = (meta.get("kernelspec") or {}).get("language") or (meta.get("language_info") or {}).get("name") or "python"
    parts: list[str] = []
    for cell in cells:
        source = cell.get("source", cell.get("input", ""))
        source = "".join(source) if isinstance(source, list) else str(source)
        source = _DATA_URI_RE.sub("data:,", source).strip("\n")
        if not source.strip():
            continue
        if cell.get("cell_type") == "markdown":
            parts.append(source)
        elif cell.get("cell_type") == "code":
            parts.append(f"```{lang}\n{source}\n```")
    return "\n\n".join(parts) + "\n" if parts else ""


# ---- which files ------------------------------------------------------------------------------------------------

_SKIP_BY_EXTENSION = {
    "image": "png jpg jpeg gif bmp ico icns svg webp tif tiff psd avif heic eps ai xcf",
    "video": "mp4 m4v mov avi mkv webm wmv flv mpg mpeg 3gp",
    "audio": "mp3 wav ogg oga flac m4a aac opus wma mid midi aiff",
    "archive": "zip tar gz tgz bz2 xz 7z rar jar war whl egg zst lz4 gem nupkg deb rpm dmg iso apk",
    "font": "ttf otf woff woff2 eot fon pfb",
    "data": "bin csv tsv parquet feather arrow npy npz pkl pickle h5 hdf5 db sqlite sqlite3 json jsonl ndjson "
    "pt pth ckpt safetensors onnx pb tflite xls xlsx ods avro orc dat mat rds map",
    "binary": "pdf doc docx ppt pptx odt epub exe dll so dylib o a lib class pyc pyo wasm",
}
SKIP_EXTENSIONS = {f".{ext}": reason for reason, exts in _SKIP_BY_EXTENSION.items() for ext in exts.split()}
_LOCKS = """package-lock.json npm-shrinkwrap.json yarn.lock pnpm-lock.yaml bun.lockb poetry.lock uv.lock pipfile.lock
cargo.lock composer.lock gemfile.lock go.sum mix.lock pubspec.lock flake.lock packages.lock.json podfile.lock"""
LOCK_FILES = frozenset(_LOCKS.split())
VCS_DIRS = {".git", ".hg", ".svn"}


def glob_matcher(patterns: tuple[str, ...]) -> Callable[[str], bool]:
    """Glob patterns on a `/` path: `*` within a folder, `**` across folders; a pattern without `/` also matches
    the file name alone (as in .gitignore), so `*.md` means Markdown anywhere."""
    if not patterns:
        return lambda path: False
    regexes = []
    for pattern in patterns:
        out, i = "", 0
        while i < len(pattern):
            if pattern.startswith("**/", i):
                out, i = out + "(?:.*/)?", i + 3
            elif pattern.startswith("**", i):
                out, i = out + ".*", i + 2
            else:
                out += {"*": "[^/]*", "?": "[^/]"}.get(pattern[i], re.escape(pattern[i]))
                i += 1
        regexes.append((re.compile(out + r"\Z"), "/" not in pattern.rstrip("/")))
    return lambda path: any(rx.match(path) or (base and rx.match(path.rsplit("/", 1)[-1])) for rx, base in regexes)


def walk_files(root: Path, subdir: str = "", include: tuple[str, ...] = (), exclude: tuple[str, ...] = ()):
    """([(repo-relative path, file), ...] sorted by path, {skip reason: count}) for the files worth reading."""
    included, excluded = glob_matcher(include), glob_matcher(exclude)
    skipped: dict[str, int] = {}
    files: list[tuple[str, Path]] = []
    top = root / subdir if subdir else root
    for folder, dirs, names in os.walk(top):
        dirs[:] = [d for d in dirs if d not in VCS_DIRS]
        rel_folder = Path(folder).relative_to(root).as_posix()
        for name in names:
            rel = name if rel_folder == "." else f"{rel_folder}/{name}"
            path = Path(folder, name)
            reason = _skip_reason(rel, path, included if include else None, excluded)
            if reason:
                skipped[reason] = skipped.get(reason, 0) + 1
            else:
                files.append((rel, path))
    files.sort()
    return files, skipped


def _skip_reason(rel: str, path: Path, included, excluded) -> str:
    if (included is not None and not included(rel)) or excluded(rel):
        return "excluded"
    if included is None and any(part.startswith(".") for part in rel.split("/")):
        return "hidden"  # .github/, .env, .eslintrc: left out of the released corpus too; `include:` brings them back
    if path.is_symlink():
        return "symlink"
    name = rel.rsplit("/", 1)[-1].lower()
    if name in LOCK_FILES or name.endswith(".lock"):
        return "lock"
    if re.search(r"[.-]min\.(?:js|mjs|css)$", name):
        return "minified"
    return SKIP_EXTENSIONS.get(_extension(name), "")


def load_text(path: Path, rel: str, max_file_bytes: int) -> tuple[str | None, str]:
    """(the text to chunk, "") or (None, skip reason); notebooks come back rendered (cells, no outputs)."""
    try:
        size = path.stat().st_size
        if size > max_file_bytes:
            return None, "too_large"
        if size == 0:
            return None, "empty"
        data = path.read_bytes()
    except OSError:
        return None, "unreadable"
    if b"\x00" in data[:8192]:
        return None, "binary"
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return None, "not_utf8"
    ext = _extension(rel)
    if ext == ".ipynb":
        try:
            text = render_notebook(text)
        except (ValueError, AttributeError, TypeError):
            return None, "bad_notebook"
    elif ext in (".js", ".mjs", ".cjs", ".css") and len(text) > 2000 and text.count("\n") < len(text) / 500:
        return None, "minified"  # mean line over 500 characters: bundled or generated
    if not text.strip():
        return None, "empty"
    return text, ""
