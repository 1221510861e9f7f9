"""The Hub's reports on the benchmark: what others published for its dataset, read back and set beside the board's
verified values, as the Reference tab shows the paper's figures beside the board's.

`read_reports` asks the Hub's dataset leaderboard (`HfApi.get_dataset_leaderboard`) which model repos report results
on the benchmark, then reads each file it names (on the repo's main branch, or the pull request it came from) with
`huggingface_hub`'s own parser, so every entry keeps its task id and dataset revision (the leaderboard's answer has
neither). An entry of another dataset is not this benchmark's; one of this benchmark that cannot be read (no task
id of the dataset card's, a value that is no number, a file that is no list of entries, a file gone) is kept with
the reason, never dropped.

`compare` matches each readable report with the board's own value of the same model repo, task and dataset revision
(`verified.plan`, the values the board would propose: never a hidden row's, never a live value): the board's value
and the difference (reported minus verified). A report on a revision that is not one of the board's snapshots is
shown as reported, unmatched; one naming no revision too.

`ReportReader` reads them in the background, once at start and then hourly, so a board never waits for the Hub to
start or to answer a page; offline (`HF_HUB_OFFLINE`) it reads nothing and says so.
"""

from __future__ import annotations

import logging
import math
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from freshstack_hf.errors import FreshStackError
from freshstack_hf.repo.eval_results import Task, parse_task_id, read_entries
from freshstack_hf.retrieval.models import hub_offline
from leaderboard.model_pages.hub_files import OFFLINE, TIMEOUT_SECONDS, client, hub_errors, hub_problem, read_text
from leaderboard.model_pages.verified import SOURCE_NAME, Plan

log = logging.getLogger(__name__)

MAX_FILES = 100  # files read per refresh: the benchmark's leaderboard's first ones, in its order
REFRESH_SECONDS = 3600.0
READING = "reading the Hub's reports on the benchmark…"


@dataclass(frozen=True, slots=True)
class Report:
    """One value a model repo reports on the benchmark: as written, where it was read, and why it cannot be read
    (`problem`; empty when it can)."""

    model_id: str
    value: Any
    task_id: str
    dataset_revision: str | None
    source_url: str | None
    source_name: str | None
    where: str  # the file it was read from (and the pull request)
    problem: str = ""

    @property
    def task(self) -> Task | None:
        try:
            return parse_task_id(self.task_id) if self.task_id else None
        except FreshStackError:
            return None


@dataclass(frozen=True, slots=True)
class Reports:
    """What one reading found, and a line saying what was read (or why nothing was)."""

    reports: tuple[Report, ...]
    note: str


def read_reports(dataset_id: str, api: Any = None, *, max_files: int = MAX_FILES) -> Reports:
    """Every report on `dataset_id` the Hub's dataset leaderboard names (its first `max_files` files), read from
    the files themselves (see the module docstring)."""
    if hub_offline():
        return Reports((), f"none shown: {OFFLINE}")
    api = api or client()
    try:
        board = api.get_dataset_leaderboard(dataset_id, base_model_only=False, timeout=TIMEOUT_SECONDS)
    except hub_errors() as exc:
        status = getattr(getattr(exc, "response", None), "status_code", None)
        if status == 404:
            return Reports((), f"none: the Hub has no leaderboard of {dataset_id} (no model reports results on it yet)")
        return Reports((), f"none shown: {hub_problem(dataset_id, exc)}")
    except (KeyError, TypeError) as exc:  # an answer whose entries lack what `huggingface_hub` reads
        return Reports((), f"none shown: the Hub's leaderboard of {dataset_id} could not be read ({exc!r})")
    files: dict[tuple[str, str, int | None], Any] = {}
    for entry in board:
        files.setdefault((entry.model_id, entry.filename, entry.pull_request), entry)
    reports: list[Report] = []
    for (model_id, filename, pull), entry in list(files.items())[:max_files]:
        reports += _file_reports(api, dataset_id, model_id, filename, pull, entry)
    read = f"{len(files)} file" if len(files) <= max_files else f"the first {max_files} of {len(files)} file"
    when = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    values = f"{len(reports)} reported value{'' if len(reports) == 1 else 's'}"
    return Reports(tuple(reports), f"{values} from {read}{'' if len(files) == 1 else 's'} of model repos, read {when}")


def _file_reports(
    api: Any, dataset_id: str, model_id: str, filename: str, pull: int | None, entry: Any
) -> list[Report]:
    """The reports of one file the leaderboard names; a file that cannot be read is one report saying why, with
    the value the leaderboard gave."""
    revision = f"refs/pr/{pull}" if pull else None
    where = f"{filename}" + (f" (pull request #{pull})" if pull else "")
    source = entry.source or {}

    def unread(problem: str) -> list[Report]:
        return [Report(model_id, entry.value, "", None, source.get("url"), source.get("name"), where, problem)]

    try:
        text = read_text(api, model_id, filename, revision)
    except hub_errors() as exc:
        return unread(f"its file could not be read: {hub_problem(model_id, exc)}")
    if text is None:
        return unread(f"its file {filename} is not in the repo any more")
    try:
        entries = read_entries(text, f"{model_id} {where}")
    except FreshStackError as exc:
        return unread(str(exc))
    found = []
    for e in entries:
        if e.dataset_id != dataset_id:
            continue  # another benchmark's entry in the same file
        found.append(
            Report(model_id, e.value, str(e.task_id), e.dataset_revision, e.source_url, e.source_name, where, _why(e))
        )
    return found or unread(f"its file {filename} holds no entry of {dataset_id}")


def _why(entry: Any) -> str:
    """Why a reported entry cannot be compared: its task id is none of the card's, or its value is no number."""
    try:
        parse_task_id(str(entry.task_id))
    except FreshStackError as exc:
        return str(exc)
    value = entry.value
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        return f"value {str(value)[:40]!r} is not a number"
    return ""


@dataclass(frozen=True, slots=True)
class Compared:
    """A report beside the board's own value of it: `verified` and `system_id` None when the board has none,
    `snapshot` the board's name of its revision ("" when it knows none), `note` what the row means."""

    report: Report
    snapshot: str
    verified: float | None
    system_id: int | None
    note: str

    @property
    def difference(self) -> float | None:
        """Reported minus verified, where both are numbers."""
        if self.verified is None or self.report.problem:
            return None
        return float(self.report.value) - self.verified


def compare(reports: Reports, verified: Plan, snapshots: Mapping[str, str], board_url: str = "") -> list[Compared]:
    """Each report beside the board's value of the same repo, task and revision (see the module docstring);
    `snapshots`: the board's snapshots, {commit: name}; `board_url`: the board's address (a report linking it is
    the board's own, merged or proposed)."""
    values: dict[tuple[str, str | None, str], tuple[float, int]] = {}
    names = dict(snapshots)
    for row in verified.rows():
        names.setdefault(row.dataset_revision, row.snapshot)
        for e in row.entries:
            values[(row.repo_id, e.dataset_revision, e.task_id)] = (float(e.value), row.system_id)
    measured = {row.repo_id for row in verified.rows()}
    out = []
    for r in reports.reports:
        snapshot = names.get(r.dataset_revision or "", "")
        found = values.get((r.model_id, r.dataset_revision, r.task_id))
        if r.problem:
            note = f"cannot be read: {r.problem}"
        elif not r.dataset_revision:
            note = "names no dataset revision: not compared"
        elif not snapshot:
            note = f"revision {r.dataset_revision[:12]} is not a snapshot this board knows: unmatched"
        elif found is None:
            note = "not measured by this board" if r.model_id not in measured else "the board has no value of this task"
        else:
            note = "verified by this board"
        if board_url and (r.source_url or "").startswith(board_url.rstrip("/")):
            note += " (this board's own entry)"
        elif r.source_name == SOURCE_NAME:
            note += f" (an entry of a {SOURCE_NAME})"
        verified_value, system_id = found if found and not r.problem else (None, None)
        out.append(Compared(r, snapshot, verified_value, system_id, note))
    return out


class ReportReader:
    """The Hub's reports on `dataset_id`, read in a background thread at `start` and every `refresh_seconds` after
    (`current` answers at once with the last reading, or that it is under way)."""

    def __init__(
        self,
        dataset_id: str,
        read: Callable[[str], Reports] = read_reports,
        refresh_seconds: float = REFRESH_SECONDS,
    ) -> None:
        self.dataset_id, self._read, self.refresh_seconds = dataset_id, read, refresh_seconds
        self._found: Reports | None = None
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def current(self) -> Reports:
        return self._found or Reports((), READING)

    def read_now(self) -> Reports:
        """One reading, kept for `current`; never raises (a failure is the reading's note)."""
        try:
            found = self._read(self.dataset_id)
        except Exception as exc:  # a bug or an answer nobody foresaw must not stop the board's loop
            log.exception("reading the Hub's reports on %s", self.dataset_id)
            found = Reports((), f"none shown: reading the Hub's reports failed ({type(exc).__name__}: {exc})")
        self._found = found
        return found

    def start(self) -> ReportReader:
        if hub_offline():
            self._found = Reports((), f"none shown: {OFFLINE}")
            return self
        if self._thread is None:
            self._thread = threading.Thread(target=self._loop, name="hub-reports", daemon=True)
            self._thread.start()
        return self

    def _loop(self) -> None:
        while not self._stop.is_set():
            self.read_now()
            self._stop.wait(self.refresh_seconds)

    def stop(self) -> None:
        self._stop.set()
