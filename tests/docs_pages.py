"""The docs' code blocks as the tests read them: a Sybil parser for the pages (README.md and docs/**/*.md), the
notes that mark a block in the page, and the rule an output block is compared by.

A page's blocks, in order (docs/writing-docs.md says the same for the people who write pages):

* a ```` ```bash ```` block is a shell block and a ```` ```python ```` block a Python block: both are run, in that
  order, in a sandbox folder holding what the pages say they need (the demo's repo `freshstack`, its run
  `demo-out/runs/bm25.trec`, and this project's `scripts/` and `tests/`); the Python blocks of one page share one
  namespace;
* a ```` ```text ```` block right after a shell or Python block (nothing but blank lines between them) is its output:
  what the block prints on stdout, compared by `output_matches`;
* a one-line italic note right above a block marks it: `*Needs ...*` (a network, a Hugging Face token, a GPU, an
  LLM endpoint, ...) says why it cannot run here, and the tests do not run it (they parse each `freshstack-hf`
  command of it with the real parser and compile its Python instead); `*Serves ...*` says that it serves until
  stopped, and the tests run it until the address it prints answers (its output compared up to that line), then
  stop it when the page is done;
* any other block (YAML, BibTeX, a text block elsewhere) is shown, not run.
"""

from __future__ import annotations

import difflib
import re
import shlex
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

from sybil import Document, Region
from sybil.parsers.markdown.lexers import RawFencedCodeBlockLexer

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
RUNNABLE = ("bash", "python")
# Pages whose blocks run in an empty sandbox; every other page runs in a copy of the demo build.
NEEDS_NOTHING_BUILT = {"docs/extend.md", "docs/concepts.md"}
NOTE = re.compile(r"^\*(?P<kind>Needs|Serves)\b(?P<text>[^\n]*)\*$")

# The comparison rule (docs/writing-docs.md, "Output blocks"): what truly varies between two runs of a command.
ANY_LINES = "..."  # a line of its own: any number of lines, none included
ANY_TEXT = "[...]"  # inside a line: any text on that line
DURATION = re.compile(r"\b\d+(?:\.\d+)? (?:s|ms)\b")  # `done in 0.3 s`, `ready in 73 s`: a timing


def pages() -> list[Path]:
    """Every page whose blocks the tests run: the README and the docs site's pages."""
    return [ROOT / "README.md", *sorted(DOCS.rglob("*.md"))]


def page_name(path: Path) -> str:
    return path.relative_to(ROOT).as_posix()


@dataclass
class Block:
    """One fenced block of a page, with its note and, for a shell or Python block, the output block after it."""

    page: str
    line: int  # of the opening fence, 1-based
    lang: str
    source: str
    note: str = ""  # "Needs ..." or "Serves ..." (the italic line above it), else ""
    output: str | None = None  # the text block right after it, when there is one
    output_line: int = 0

    @property
    def runnable(self) -> bool:
        return self.lang in RUNNABLE

    @property
    def needs(self) -> str | None:
        """Why the block cannot run here (its `*Needs ...*` note), or None."""
        return self.note if self.note.startswith("Needs") else None

    @property
    def serves(self) -> bool:
        return self.note.startswith("Serves")

    @property
    def where(self) -> str:
        return f"{self.page}:{self.line}"


_LEXER = RawFencedCodeBlockLexer(info_pattern=re.compile(r"(?P<language>[\w-]*)[^\n]*$\n", re.M))


def _note_above(text: str, start: int) -> str:
    before = text[:start].rstrip("\n").rsplit("\n", 1)[-1].strip()
    match = NOTE.match(before)
    return f"{match['kind']}{match['text']}".strip() if match else ""


def parse_blocks(document: Document) -> Iterator[Region]:
    """The Sybil parser: one region per runnable block (its output block folded into it), evaluated by the
    evaluator the tests attach to the document (`document.namespace["__evaluate__"]`)."""
    regions = [r for r in _LEXER(document) if r is not None]
    name = page_name(Path(document.path))
    pending: tuple[Region, Block] | None = None
    for region in regions:
        lang, source = region.lexemes["language"], str(region.lexemes["source"])
        line = document.text.count("\n", 0, region.start) + 1
        if pending is not None:
            previous, block = pending
            between = document.text[previous.end : region.start]
            if lang == "text" and not between.strip():
                block.output, block.output_line = source, line
                previous.end = region.end
                continue
        block = Block(name, line, lang, source, _note_above(document.text, region.start))
        if pending is not None:
            yield pending[0]
            pending = None
        if block.runnable:
            pending = (Region(region.start, region.end, block, _evaluate), block)
    if pending is not None:
        yield pending[0]


def _evaluate(example) -> str | None:
    return example.namespace["__evaluate__"](example.parsed)


def read_page(path: Path) -> Document:
    return Document.parse(str(path), parse_blocks)


def blocks(path: Path) -> list[Block]:
    """The runnable blocks of a page (shell and Python), in order."""
    return [example.parsed for example in read_page(path).examples()]


def all_blocks(path: Path) -> list[tuple[str, str, int]]:
    """(language, source, line) of every fenced block of a page, runnable or not."""
    document = Document(path.read_text(encoding="utf-8"), str(path))
    found = []
    for region in _LEXER(document):
        if region is not None:
            line = document.text.count("\n", 0, region.start) + 1
            found.append((region.lexemes["language"], str(region.lexemes["source"]), line))
    return found


# ---- commands ----------------------------------------------------------------------------------------------------


def shell_commands(source: str) -> Iterable[list[str]]:
    """The words of each `freshstack-hf` command of a shell block, after it (continuation lines joined, comments,
    pipes, `&&`, `&`, redirections and leading VAR=value assignments dropped)."""
    joined = source.replace("\\\n", " ")
    for line in joined.splitlines():
        for part in re.split(r"&&|\|\||;|\||&", line):
            try:
                words = shlex.split(part, comments=True)
            except ValueError:
                continue
            while words and re.match(r"^[A-Za-z_][A-Za-z0-9_]*=", words[0]):
                words = words[1:]
            if words and Path(words[0]).name == "freshstack-hf":
                kept = []
                for word in words[1:]:
                    if word.startswith((">", "2>", "<")):
                        break
                    kept.append(word)
                yield kept


# ---- output blocks -----------------------------------------------------------------------------------------------


def normalize(text: str) -> list[str]:
    """Lines with trailing blanks, leading and trailing empty lines removed, and every duration made the same."""
    lines = [DURATION.sub("<duration>", line.rstrip()) for line in text.splitlines()]
    while lines and not lines[0]:
        lines.pop(0)
    while lines and not lines[-1]:
        lines.pop()
    return lines


def _pattern(expected: list[str]) -> re.Pattern[str]:
    parts = []
    for line in expected:
        if line.strip() == ANY_LINES:
            parts.append(r"(?:[^\n]*\n)*?")
        else:
            parts.append(r"[^\n]*".join(re.escape(piece) for piece in line.split(ANY_TEXT)) + r"\n")
    return re.compile("".join(parts))


def output_matches(expected: str, actual: str) -> str | None:
    """None when `actual` is what `expected` shows under the rule above, else a diff saying where it differs."""
    want, got = normalize(expected), normalize(actual)
    if _pattern(want).fullmatch("".join(f"{line}\n" for line in got)):
        return None
    diff = difflib.unified_diff(want, got, "the page shows", "the block printed", lineterm="", n=2)
    return "\n".join(diff)
