"""What the Leaderboard tab's events answer, as plain functions of the filters (`SnapshotTables`): which snapshot a
request names, every row of one view of it, one page of that view as Gradio sends it (`as_sent`), its downloads,
the topic and sort boxes a snapshot or topic calls for, the view an address asks for, and the rows of the page's
plain first paint.

The six filters are one `table_filters.Filters` in every answer; `takes_filters` turns an answer into an event
function taking the six controls' values positionally, the signature the `/table` API's parameters come from.
Each answer reads the snapshots as the board lists them at that moment (`retrieval_page.SnapshotList`), and every
cached view's key names the snapshot.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any

import gradio as gr
import pandas as pd

from freshstack_hf.repo.dataset import Dataset
from leaderboard.fault_points import POINTS
from leaderboard.page import first_paint
from leaderboard.page.display import datatypes, display
from leaderboard.page.paging import page_number, page_slice
from leaderboard.tracks.retrieval.tables import (
    deep_links,
    table_columns,
    table_exports,
    table_filters,
)
from leaderboard.tracks.retrieval.tables.table_columns import TOPIC_ALL
from leaderboard.tracks.retrieval.tables.table_filters import Filters
from leaderboard.tracks.retrieval.tabs.retrieval_page import Listing, SnapshotBoard, SnapshotList

# The type and size boxes' choices; every one ticked is the unfiltered table an address opens on (`on_load`).
TYPE_CHOICES = [("baseline", "baseline"), ("submitted run", "run"), ("submitted model", "model")]
ALL_TYPES = [key for _, key in TYPE_CHOICES]
SIZE_CHOICES = [*table_filters.SIZE_BUCKETS, table_filters.UNKNOWN_SIZE]


def snapshot_note(labels: list[str], served: str, as_of: str = "") -> str:
    """What the selector means, beside it: which snapshot the other tabs (and submissions) read, and when the board
    last looked for snapshots (`as_of`: a new one shows after a reload)."""
    looked = f" Snapshots {as_of}." if as_of else ""
    return (
        f"**Snapshot**: which published revision this table shows ({len(labels)} here, the newest by default). "
        f"The other tabs, and submissions, use the served snapshot, **{served}**.{looked}"
    )


def takes_filters(answer: Callable[..., Any]) -> Callable[..., Any]:
    """`answer(filters, *rest)` as an event function of the page: Gradio calls it with the six filter controls'
    values (`FilterControls.inputs`, in `Filters.names()` order), then `rest`. Its signature says so, the names of
    the filters then `answer`'s own parameters with their defaults: Gradio reads an API's parameters from it, so
    `/table` takes (search, types, sizes, topic, sort, order, page=1, snapshot=None) positionally, as before."""
    names = Filters.names()

    def event(*values: Any) -> Any:
        return answer(Filters.of(*values[: len(names)]), *values[len(names) :])

    given = [inspect.Parameter(name, inspect.Parameter.POSITIONAL_OR_KEYWORD) for name in names]
    rest = [
        p.replace(annotation=inspect.Parameter.empty) for p in list(inspect.signature(answer).parameters.values())[1:]
    ]
    event.__signature__ = inspect.Signature([*given, *rest])  # type: ignore[attr-defined]
    event.__name__, event.__doc__ = answer.__name__, answer.__doc__
    return event


class SnapshotTables:
    """What the tab's events answer, as plain functions of the filters: which snapshot a request names, every row
    of one view of it (computed once per store state, `StoreFrame.view`), one page of that view, its downloads,
    the topic and sort boxes a snapshot or topic calls for, and the view an address asks for. Each answer reads
    the snapshots as the board lists them at that moment (`SnapshotList.current`); `first` is the listing the
    page was laid out with."""

    def __init__(self, snapshots: SnapshotList, served: Dataset, published_topics: list[str]) -> None:
        self.snapshots, self.published_topics = snapshots, published_topics
        self.first = snapshots.current()
        self.served = next(snap.label for snap in self.first.snapshots if snap.dataset is served)

    def listed(self) -> tuple[Listing, dict[str, SnapshotBoard]]:
        """The snapshots listed now and their boards."""
        listing = self.snapshots.current()
        return listing, self.snapshots.boards(listing)

    def every_topic(self) -> list[str]:
        """Every snapshot's topics: the topic box's first choices (the load chain puts the snapshot's own in it)."""
        return list(dict.fromkeys(t for snap in self.first.snapshots for t in snap.dataset.topics))

    def chosen(self, snapshot: str | None, topic: str | None = None) -> SnapshotBoard:
        """The board of the snapshot asked for (the newest when none is named). An unknown snapshot, or a topic
        the snapshot does not have, is the caller's error, named: answering with another snapshot's rows (or
        all topics) would hand an API caller numbers it did not ask for."""
        listing, boards = self.listed()
        if snapshot in (None, ""):
            snapshot = listing.newest
        if snapshot not in boards:
            raise gr.Error(f"unknown snapshot {str(snapshot)[:40]!r}: this board has {', '.join(listing.labels)}")
        at = boards[snapshot]
        if topic not in (None, "", TOPIC_ALL) and topic not in at.dataset.topics:
            topics = ", ".join(at.dataset.topics)
            raise gr.Error(f"snapshot {at.label} has no topic {str(topic)[:40]!r} (its topics: {topics})")
        return at

    def view(self, filters: Filters, at: SnapshotBoard) -> pd.DataFrame:
        """Every row of one state of the filters on one snapshot, sorted, with the rank column."""
        return at.board.view(("rows", at.label, *filters.key()), lambda frame: filters.rows(frame, at.ranks.cells))

    def turn(self, filters: Filters, page: Any = 1, snapshot: str | None = None) -> tuple[Any, int]:
        """(the table's update, the page shown): a page beyond the end shows, and puts in the box, the last.
        Each page is formatted once per store state; every visitor asking for it gets the same value."""
        at = self.chosen(snapshot, filters.topic)
        many = len(self.snapshots.current().snapshots) > 1

        def formatted(_frame: Any) -> tuple[dict[str, Any], list[str], str, int]:
            shown = self.view(filters, at)
            part = page_slice(len(shown), page)
            caption = part.caption() + (f" · snapshot {at.label}" if many else "")
            return as_sent(display(shown, rows=part.rows, start=part.start)), datatypes(shown), caption, part.page

        key = ("page", at.label, many, *filters.key(), page_number(page))
        table, kinds, caption, shown_page = at.board.view(key, formatted)
        return gr.update(value=table, datatype=kinds, label=caption), shown_page

    def render(self, filters: Filters, page: Any = 1, snapshot: str | None = None) -> Any:
        """One page of the view (the `/table` API): the rows, their types and the caption as the label."""
        POINTS.pause("table")  # tests only: holds this read, to see others run beside it
        return self.turn(filters, page, snapshot)[0]

    def first_page(self, filters: Filters, snapshot: str | None) -> tuple[Any, int]:
        """After a filter, the search, the sort or the snapshot changed: page 1 of the new view."""
        return self.turn(filters, 1, snapshot)

    def previous_page(self, filters: Filters, page: Any, snapshot: str | None) -> tuple[Any, int]:
        return self.turn(filters, max(1, page_number(page) - 1), snapshot)

    def next_page(self, filters: Filters, page: Any, snapshot: str | None) -> tuple[Any, int]:
        return self.turn(filters, page_number(page) + 1, snapshot)

    def exports(self, filters: Filters, snapshot: str | None = None) -> tuple[str, str]:
        """The CSV and JSON of every row of the view, naming its snapshot, written once per store state (every
        page load asks)."""
        at = self.chosen(snapshot, filters.topic)

        def written(_frame: Any) -> tuple[str, str]:
            named = {"snapshot": at.label, "dataset_revision": at.dataset.revision}
            csv_path, json_path = table_exports.export_files(self.view(filters, at), **named)
            return str(csv_path), str(json_path)

        return at.board.view(("export", at.label, *filters.key()), written)

    def topic_changed(self, topic: str, sort: str, snapshot: str) -> Any:
        """The sort box for the topic picked: its columns, the sort kept when it has it."""
        scope = None if topic in (None, "", TOPIC_ALL) else topic
        choices = table_filters.sort_choices(self.chosen(snapshot).dataset.topics, scope)
        return gr.update(choices=choices, value=sort if sort in choices else table_columns.default_sort(scope))

    def snapshot_changed(self, snapshot: str, topic: str, sort: str) -> tuple[Any, Any]:
        """The topic and sort boxes for the snapshot picked: its topics; the topic and sort kept when it has
        them, else all topics and the default sort."""
        topics = self.chosen(snapshot).dataset.topics
        topic = topic if topic in topics else TOPIC_ALL
        scope = None if topic == TOPIC_ALL else topic
        choices = table_filters.sort_choices(topics, scope)
        kept = sort if sort in choices else table_columns.default_sort(scope)
        return gr.update(choices=[TOPIC_ALL, *topics], value=topic), gr.update(choices=choices, value=kept)

    def on_load(self, request: gr.Request) -> tuple[Any, ...]:
        """The snapshot, view and page the address asks for, in one step: the page's rows are its first event's
        answer. The selector (its choices, its row shown from two snapshots on, the note with when the board last
        looked, the newest for the address) follows the snapshots listed now."""
        params = dict(request.query_params) if request else {}
        listing, boards = self.listed()
        label, missing = deep_links.parse_snapshot(params, listing.labels)
        topics = boards[label].dataset.topics
        v = deep_links.parse_view(params, topics, self.published_topics)
        filters = v.filters(ALL_TYPES, SIZE_CHOICES)
        notes = [note for note in (missing, v.notice) if note]
        notice = f"Note: {'; '.join(notes)}" if notes else ""
        topic_update = gr.update(choices=[TOPIC_ALL, *topics], value=filters.topic)
        sort_update = gr.update(choices=table_filters.sort_choices(topics, v.topic), value=v.sort)
        rows, shown_page = self.turn(filters, v.page, label)
        labels = listing.labels
        picker, row = gr.update(choices=labels, value=label), gr.update(visible=len(labels) > 1)
        note = snapshot_note(labels, self.served, listing.as_of())
        return topic_update, sort_update, filters.order, rows, shown_page, notice, picker, row, note, listing.newest

    def first_paint_rows(self, params: dict[str, str]) -> dict[str, Any]:
        """The rows of the snapshot, view and page the address asks for, for the page's plain first paint (once
        per store state and address: the page's warm-up computes them, its script's request reads them)."""
        listing, boards = self.listed()
        at = boards[deep_links.parse_snapshot(params, listing.labels)[0]]
        v = deep_links.parse_view(params, at.dataset.topics, self.published_topics)

        def rows(frame: Any) -> dict[str, Any]:
            shown = v.filters().rows(frame, at.ranks.cells)
            part = page_slice(len(shown), v.page)
            return first_paint.payload(shown, len(frame), part.rows, part.start)

        key = ("first paint", at.label, v.topic, v.sort, v.descending, page_number(v.page))
        return at.board.view(key, rows)


_SENDER: list[Any] = []  # the `gr.Dataframe` `as_sent` formats with, made on first use


def as_sent(value: dict[str, Any]) -> dict[str, Any]:
    """A page of the table as Gradio sends it (`Dataframe.postprocess` of `display`'s value, which depends on the
    value alone): made once per page and store state with the page, and sent as it is by the events that show
    pages (`AS_SENT`), instead of checked anew for each visitor on the server's one event loop (3.5 ms for a page of
    50 rows, fifty visitors one after the other)."""
    if not _SENDER:
        _SENDER.append(gr.Dataframe(render=False, interactive=False))
    return _SENDER[0].postprocess(value).model_dump()


AS_SENT: dict[str, Any] = {"postprocess": False}  # the events whose outputs are a page (`as_sent`) and its number
