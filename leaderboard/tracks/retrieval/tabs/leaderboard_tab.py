"""The Leaderboard tab: the retrieval table, one page at a time, with its snapshot, search, filters, topic, sort,
pager and downloads, the page's first rows (and the plain first paint of `leaderboard.page.first_paint`), and the load
chain's first step.

Every number and row comes from `leaderboard_table` (`leaderboard.page.paging` for the page, `deep_links` for
`?snapshot=&topic=&sort=&order=&page=`); this module only lays out the components and wires them. The six filters
are one `leaderboard_table.Filters` everywhere: laid out once (`FilterControls`, whose `inputs` every event reads in
the same order), passed to every answer as that one object (`SnapshotTables`, plain functions of it), and turned
into the events' positional parameters by `takes_filters`, which the `/table` API's signature comes from too.
Sorting, filtering, search and the rank column run on the server over every row, then one page is sent; the
downloads hold every row of the current filter. Changing a filter, the search, the sort or the snapshot goes back to
page 1; the address follows the view. Its table and the event refreshing it are published for the other tabs
(`TABLE`, `REFRESH`): a click on a row opens the Detail tab, a submission refreshes the table.

One running board serves every published snapshot's table (`retrieval_page.SnapshotList`): the selector (shown
when there are two or more) picks one, the newest by default; its topics are the table's topic columns, the
caption names it, and so do the downloads (a `snapshot` column, and the JSON's top). Each snapshot has its own
board, and every cached view's key names the snapshot too. The other tabs, and submissions, stay on the served one.
Every request reads the snapshots as the board lists them now, so one published while the board is up is in the
selector (filled in the load chain, with when the board last looked), the address and `/table` after a reload.

API: `/table` (search, types, sizes, topic, sort, order[, page[, snapshot]]) answers one page (page 1 when left
out; a page beyond the end is the last) of one snapshot (the newest when left out; an unknown one is an error naming
the board's snapshots, where the address falls back to the newest with a notice), its caption (`rows 51–100 of 1,001
· page 2 of 21`, then `· snapshot 2025-10-31` on a board of several) in the table's label; `/export` (the
filters[, snapshot]) answers the CSV and JSON of every row.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import gradio as gr
import pandas as pd

from freshstack_hf.metrics import HEADLINE
from freshstack_hf.repo.dataset import Dataset
from leaderboard.fault_points import POINTS
from leaderboard.page import first_paint
from leaderboard.page.computing import StatusLine
from leaderboard.page.display import datatypes, display
from leaderboard.page.page import READ, REFRESH, Page, PageTab
from leaderboard.page.paging import PAGE_ROWS, page_number, page_slice
from leaderboard.tracks.retrieval.tables import deep_links, rank_column
from leaderboard.tracks.retrieval.tables import leaderboard_table as tbl
from leaderboard.tracks.retrieval.tables.leaderboard_table import TOPIC_ALL, Filters
from leaderboard.tracks.retrieval.tabs import retrieval_page
from leaderboard.tracks.retrieval.tabs.retrieval_page import Listing, SnapshotBoard, SnapshotList
from leaderboard.tracks.retrieval.views import detail

TYPE_CHOICES = [("baseline", "baseline"), ("submitted run", "run"), ("submitted model", "model")]
ALL_TYPES = [key for _, key in TYPE_CHOICES]
SIZE_CHOICES = [*tbl.SIZE_BUCKETS, tbl.UNKNOWN_SIZE]
TABLE = "leaderboard.table"  # published part: the table (`REFRESH`, the event rendering it, is the page's)


def snapshot_note(labels: list[str], served: str, as_of: str = "") -> str:
    """What the selector means, beside it: which snapshot the other tabs (and submissions) read, and when the board
    last looked for snapshots (`as_of`: a new one shows after a reload)."""
    looked = f" Snapshots {as_of}." if as_of else ""
    return (
        f"**Snapshot**: which published revision this table shows ({len(labels)} here, the newest by default). "
        f"The other tabs, and submissions, use the served snapshot, **{served}**.{looked}"
    )


def legend() -> str:
    """The headline measures and their meaning, under the table (and the Reference tab's)."""
    return " · ".join(f"**{m.name}**: {m.description}" for m in HEADLINE)


def rank_legend() -> str:
    """What the rank column means, under the table (the Detail tab says how it is computed)."""
    return f"{rank_column.EXPLAINED}; details in the Detail tab."


def paging_legend() -> str:
    """How the pages read: the server sorts every row; a column's own menu only reorders the page on screen."""
    return (
        f"{PAGE_ROWS} rows a page; *Sort by* orders every row, a column's own menu only the rows of this page. "
        "Bold: best value of each column among every row of the current filter; downloads hold every row."
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
            csv_path, json_path = tbl.export_files(self.view(filters, at), **named)
            return str(csv_path), str(json_path)

        return at.board.view(("export", at.label, *filters.key()), written)

    def topic_changed(self, topic: str, sort: str, snapshot: str) -> Any:
        """The sort box for the topic picked: its columns, the sort kept when it has it."""
        scope = None if topic in (None, "", TOPIC_ALL) else topic
        choices = tbl.sort_choices(self.chosen(snapshot).dataset.topics, scope)
        return gr.update(choices=choices, value=sort if sort in choices else tbl.default_sort(scope))

    def snapshot_changed(self, snapshot: str, topic: str, sort: str) -> tuple[Any, Any]:
        """The topic and sort boxes for the snapshot picked: its topics; the topic and sort kept when it has
        them, else all topics and the default sort."""
        topics = self.chosen(snapshot).dataset.topics
        topic = topic if topic in topics else TOPIC_ALL
        scope = None if topic == TOPIC_ALL else topic
        choices = tbl.sort_choices(topics, scope)
        kept = sort if sort in choices else tbl.default_sort(scope)
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
        sort_update = gr.update(choices=tbl.sort_choices(topics, v.topic), value=v.sort)
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


@dataclass(frozen=True)
class FilterControls:
    """The six filter components, laid out once, in two rows; `inputs` lists them in `Filters.names()` order, the
    order every event of the tab reads them in."""

    search: Any
    types: Any
    sizes: Any
    topic: Any
    sort: Any
    order: Any

    @classmethod
    def laid_out(cls, tables: SnapshotTables) -> FilterControls:
        first_topics = tables.first.snapshots[-1].dataset.topics
        with gr.Row():
            search = gr.Textbox(label="Search systems", placeholder="name contains…", elem_id="search")
            topic = gr.Dropdown([TOPIC_ALL, *tables.every_topic()], value=TOPIC_ALL, label="Topic")
            sort = gr.Dropdown(
                tbl.sort_choices(first_topics), value=tbl.default_sort(), label="Sort by", allow_custom_value=True
            )
            order = gr.Radio(["desc", "asc"], value="desc", label="Order")
        with gr.Row():
            types = gr.CheckboxGroup(TYPE_CHOICES, value=ALL_TYPES, label="Type (untick to hide a group)")
            sizes = gr.CheckboxGroup(SIZE_CHOICES, value=SIZE_CHOICES, label="Size (parameters)")
        return cls(search, types, sizes, topic, sort, order)

    @property
    def inputs(self) -> list[Any]:
        return [getattr(self, name) for name in Filters.names()]


@dataclass(frozen=True)
class Pager:
    """The pager under the table (previous, the page box, next) and the downloads beside it."""

    previous: Any
    number: Any
    following: Any
    downloads: list[Any]

    @classmethod
    def laid_out(cls) -> Pager:
        with gr.Row():
            previous = gr.Button("◀ Previous", size="sm", elem_id="page-previous", scale=0, min_width=110)
            number = gr.Number(
                1, precision=0, label="Page", elem_id="page-number", scale=0, min_width=80, container=False
            )
            following = gr.Button("Next ▶", size="sm", elem_id="page-next", scale=0, min_width=110)
            csv_button = gr.DownloadButton("Download CSV", size="sm", scale=0, min_width=140)
            json_button = gr.DownloadButton("Download JSON", size="sm", scale=0, min_width=140)
        return cls(previous, number, following, [csv_button, json_button])


@dataclass(frozen=True)
class SnapshotPicker:
    """The snapshot selector, the row holding it and its note (shown on a board of two snapshots or more), and the
    newest snapshot's name, which the address script leaves out of the address (hidden: the load chain sets it)."""

    selector: Any
    row: Any
    note: Any
    newest: Any

    @classmethod
    def laid_out(cls, tables: SnapshotTables) -> SnapshotPicker:
        first = tables.first
        with gr.Row(visible=len(first.labels) > 1) as row:
            # No value until the load chain names one: the value a page is laid out with is also the API's default,
            # and `/table` without a snapshot means the newest as the board lists it then, not when it started.
            selector = gr.Dropdown(
                first.labels, value=None, label="Snapshot", elem_id="snapshot", allow_custom_value=True, scale=0,
                min_width=180,
            )  # fmt: skip
            note = gr.Markdown(snapshot_note(first.labels, tables.served, first.as_of()), elem_id="snapshot-note")
        newest = gr.Textbox(first.newest, visible=False)
        return cls(selector, row, note, newest)


class LeaderboardTab(PageTab):
    label, id = "Leaderboard", "leaderboard"

    def layout(self, page: Page) -> None:
        published = retrieval_page.published(page)
        published_topics = published.attrs["topics"] if published is not None else []
        tables = SnapshotTables(retrieval_page.snapshot_list(page), page.dataset, published_topics)
        tables.chosen(None).board.frame()  # the default view's frame, built now like the served board's
        picker = SnapshotPicker.laid_out(tables)
        snapshot = picker.selector
        controls = FilterControls.laid_out(tables)
        notice = gr.Markdown()
        status = StatusLine()  # what is still being computed (`leaderboard.page.computing`)
        table = gr.Dataframe(
            interactive=False, elem_id="leaderboard-table", max_height=640, wrap=False, pinned_columns=2, label=" "
        )
        pager = Pager.laid_out()
        gr.Markdown(f"{legend()}. {tbl.EFFICIENCY_LEGEND}. {tbl.LIVE_LEGEND}. {paging_legend()} {rank_legend()}")
        self.tables, self.controls, self.pager, self.table, self.snapshot = tables, controls, pager, table, snapshot
        self.picker = picker
        self.render = takes_filters(tables.render)  # the `/table` API, and what refreshes the table
        self._load(page, notice)
        page.publish(TABLE, table)
        page.publish(REFRESH, (self.render, [*controls.inputs, pager.number, snapshot], table))
        status.wire(page, *page.part(REFRESH))  # after the table's load steps; re-renders it when a row is done
        self.address = deep_links.address_script(TOPIC_ALL)

    def _load(self, page: Page, notice: Any) -> None:
        """The page's load steps: the view the address asks for, then the system pickers, then the downloads."""
        tables, controls = self.tables, self.controls
        pickers = retrieval_page.pickers(page)
        board = retrieval_page.board(page)

        def fill_choices() -> Any:
            """After the table: the system pickers (1,000 choices would only delay the first render)."""
            frame, keys = board.view(("choices",), lambda frame: (frame, detail.choices(frame)))
            updates = [fill(frame, keys) for _, fill in pickers]
            return updates[0] if len(updates) == 1 else tuple(updates)

        picker = self.picker
        loaded = [controls.topic, controls.sort, controls.order, self.table, self.pager.number, notice]
        loaded += [picker.selector, picker.row, picker.note, picker.newest]
        page.on_load(tables.on_load, None, loaded, api_name="load")
        page.on_load(fill_choices, None, lambda: [picker for picker, _ in pickers], api_name=False)
        page.on_load(
            takes_filters(tables.exports), [*controls.inputs, self.snapshot], self.pager.downloads, api_name="export"
        )
        page.first_paint_rows = tables.first_paint_rows  # served by launch_app (see leaderboard.page.first_paint)

    def wire(self, page: Page) -> None:
        tables, controls, pager, snapshot = self.tables, self.controls, self.pager, self.snapshot
        shown, picked = [self.table, pager.number], [*controls.inputs, snapshot]
        state = [*controls.inputs, pager.number, snapshot]
        first_page, exports = takes_filters(tables.first_page), takes_filters(tables.exports)

        def follow(event: Any) -> Any:
            """After the table changed: the address names its view (browser only, no server round trip)."""
            views = [controls.topic, controls.sort, controls.order, pager.number, snapshot, self.picker.newest]
            return event.then(None, views, None, js=self.address, api_name=False)

        for control in (controls.types, controls.sizes, controls.sort, controls.order):
            follow(control.input(first_page, picked, shown, api_name=False, **READ, **AS_SENT)).then(
                exports, picked, pager.downloads, api_name=False, **READ
            )
        follow(
            controls.search.change(
                first_page, picked, shown, api_name=False, trigger_mode="always_last", **READ, **AS_SENT
            )
        )
        # The `/table` API: one page of any view (Enter in the search box draws the page the box names).
        controls.search.submit(self.render, state, self.table, api_name="table", **READ, **AS_SENT).then(
            exports, picked, pager.downloads, api_name=False, **READ
        )
        topic_inputs = [controls.topic, controls.sort, snapshot]
        follow(
            controls.topic.input(tables.topic_changed, topic_inputs, controls.sort, api_name=False, **READ).then(
                first_page, picked, shown, api_name=False, **READ, **AS_SENT
            )
        )
        # A snapshot picked: its topics in the boxes, then its page 1, the address and the downloads.
        boxes = [controls.topic, controls.sort]
        follow(
            snapshot.input(tables.snapshot_changed, [snapshot, *boxes], boxes, api_name=False, **READ).then(
                first_page, picked, shown, api_name=False, **READ, **AS_SENT
            )
        ).then(exports, picked, pager.downloads, api_name=False, **READ)
        pages = {"api_name": False, **READ, **AS_SENT}
        follow(pager.previous.click(takes_filters(tables.previous_page), state, shown, **pages))
        follow(pager.following.click(takes_filters(tables.next_page), state, shown, **pages))
        follow(pager.number.submit(takes_filters(tables.turn), state, shown, **pages))
