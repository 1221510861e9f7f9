"""The Reference tab's second table: what model repos report on the benchmark on the Hub, beside the board's own
verified value of the same model, task and snapshot, and how far apart the two are (`leaderboard.model_pages.reports`
reads and matches them; this module makes the table, plain pandas tested without Gradio).

One row per reported value: the model repo, the task (its measure and topic, as the dataset card lists them), the
value reported, the board's value and the difference (reported minus the board's), the snapshot the board knows the
reported revision as, the board's row (its Detail view), the source the report links, and a note saying what the row
means (verified by this board, not measured here, a revision the board does not know, or why it cannot be read).
Report text is the Hub's, anyone's: every cell is plain text (the names sanitised, links checked) but the source
link. Read in the background (`ReportReader`, one per page): a board that cannot reach the Hub shows none and says
why; its start never waits for it.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import pandas as pd

from freshstack_hf.errors import FreshStackError
from leaderboard.model_pages.reports import Compared, ReportReader, compare
from leaderboard.model_pages.verified import Target, plan
from leaderboard.page.display import link_cell
from leaderboard.page.page import Page
from leaderboard.sanitize import MAX_NAME, sanitize_link, sanitize_text

HEADING = "### Reported on the Hub"
COLUMNS = ["model", "task", "reported", "board", "difference", "snapshot", "board row", "link", "note"]
FORMATS = {"reported": "{:.3f}", "board": "{:.3f}", "difference": "{:+.3f}"}


def explained(dataset_id: str) -> str:
    """What the table is, under its heading."""
    return (
        f"{HEADING}\nValues model repos publish for [{dataset_id}](https://huggingface.co/datasets/{dataset_id}) "
        "in their `.eval_results` files (the Hub's dataset leaderboard names them), beside this board's own value of "
        "the same model, task and snapshot: **board** is what its worker measured, **difference** the reported "
        "value minus the board's. Reported values were not computed here; a report on a revision that is not one of "
        "this board's snapshots is shown as reported, unmatched."
    )


def reader(page: Page) -> ReportReader:
    """The page's one reader of the Hub's reports on the benchmark, reading in the background from the start."""
    return page.shared("retrieval.hub_reports", lambda: ReportReader(page.settings.dataset_id).start())


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        return None
    return float(value)


def _link(url: str | None) -> str:
    try:
        return link_cell(sanitize_link(url))
    except FreshStackError:  # a source that is no http(s) address is not linked
        return ""


def reported_frame(rows: list[Compared]) -> pd.DataFrame:
    """One row per report (see the module docstring), in the order the Hub's leaderboard lists them."""
    records = []
    for c in rows:
        r, task = c.report, c.report.task
        shown_task = task.label.replace("`", "") if task else r.task_id or "(none given)"
        reported = None if r.problem else _number(r.value)  # an unreadable value: the note quotes it
        records.append(
            {
                "model": sanitize_text(r.model_id, MAX_NAME),
                "task": sanitize_text(shown_task, 120),
                "reported": reported,
                "board": c.verified,
                "difference": c.difference,
                "snapshot": sanitize_text(c.snapshot or (r.dataset_revision or "")[:12], 60),
                "board row": f"#{c.system_id}" if c.system_id is not None else "",
                "link": _link(r.source_url),
                "note": sanitize_text(c.note, 600),
            }
        )
    frame = pd.DataFrame.from_records(records, columns=COLUMNS)
    for name in FORMATS:
        frame[name] = frame[name].astype("float64")
    frame.attrs["formats"] = FORMATS
    return frame


def reported_view(page: Page, snapshots: Callable[[], dict[str, str]]) -> tuple[str, pd.DataFrame]:
    """(the line on what was read, the table) as the page shows them now: the reader's last reading matched with
    the board's values, computed once per reading and store state. `snapshots` gives {revision: snapshot name} of
    the snapshots the board lists now (the tab reads the page's snapshot list; this layer knows no tab)."""
    found = reader(page).current()
    key = (id(found), page.store.change_marker())
    memo = page.shared("retrieval.hub_reported", dict)
    if key not in memo:
        settings = page.settings
        verified = plan(page.store, Target(settings.dataset_id, settings.board_url))
        memo.clear()
        memo[key] = (found.note, reported_frame(compare(found, verified, snapshots(), settings.board_url)))
    return memo[key]
