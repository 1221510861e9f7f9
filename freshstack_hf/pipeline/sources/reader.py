"""What a questions source is to the build: a layout that can be recognised, listed and scanned for posts.

A new layout (another dump format, a database export) is one `QuestionReader` subclass registered in
`freshstack_hf.pipeline.sources.registry`; the `questions` stage, `--dry-run` and the topic YAML's `format:` key
only see this class. Readers never build a record they will not keep: `scan` gets two cheap prechecks,
`want_question(raw_tags)` and `want_answer(answer_id)`, and decodes only the rows that pass them.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import ClassVar

from freshstack_hf.pipeline.sources.posts import Post, Progress, ScanStats, WantAnswer, WantQuestion

NO = 0  # `recognises`: not this layout
BY_EXTENSION = 1  # only the file name's extension says so (a weak hint, tried last)
BY_CONTENT = 2  # the first bytes look like it
BY_NAME = 3  # the name (or, for a folder, the files it holds) says so


class QuestionReader:
    """One source layout, opened on a path (a file or a folder). Subclasses set `format` and override `files`
    and `scan`; `recognises` lets `format: auto` pick them, and `answers_may_come_first` asks the stage for a
    second pass when the layout can list an accepted answer before its question."""

    format: ClassVar[str] = ""
    answers_may_come_first: ClassVar[bool] = False

    def __init__(self, path: Path, tmp_dir: Path | None = None) -> None:
        self.path = path
        self.tmp_dir = tmp_dir  # where a reader may unpack an archive (beside the work folder)

    @classmethod
    def recognises(cls, path: Path, names: list[str], head: bytes) -> int:
        """How surely `path` is this layout (`NO`, `BY_EXTENSION`, `BY_CONTENT` or `BY_NAME`): `names` are the
        lowercased file names of a folder (empty for a file), `head` a file's first bytes (empty for a folder).
        A folder is this layout's when it holds one of its files (`BY_NAME`)."""
        if names:
            return BY_NAME if any(cls.holds(name) for name in names) else NO
        return cls.file_score(path.name.lower().removesuffix(".gz"), head)

    @classmethod
    def holds(cls, name: str) -> bool:
        """Whether a folder holding a file of this lowercased name is a source of this layout."""
        return False

    @classmethod
    def file_score(cls, name: str, head: bytes) -> int:
        """How surely a file (lowercased name without `.gz`, first bytes) is this layout; see `recognises`."""
        return NO

    def files(self) -> list[Path]:
        """The files a scan reads, for `--dry-run` and the size on the progress bar."""
        raise NotImplementedError

    def scan(
        self,
        want_question: WantQuestion,
        want_answer: WantAnswer,
        stats: ScanStats,
        progress: Progress | None = None,
    ) -> Iterator[Post]:
        """Posts passing the prechecks, in the source's order; `progress(bytes)` as the reading advances."""
        raise NotImplementedError

    def size(self) -> int:
        return sum(p.stat().st_size for p in self.files())

    def stream_size(self) -> int | None:
        """The bytes a scan reads (for a compressed source, what it unpacks to), for the progress bar's total."""
        return self.size()
