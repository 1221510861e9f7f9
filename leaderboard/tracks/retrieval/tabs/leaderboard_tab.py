"""The Leaderboard tab: the retrieval table, one page at a time, with its snapshot, search, filters, topic, sort,
pager and downloads, the page's first rows (and the plain first paint of `leaderboard.page.first_paint`), and the load
chain's first step.

Every number and row comes from the track's `tables` (`leaderboard.page.paging` for the page, `deep_links` for
`?snapshot=&topic=&sort=&order=&page=`), every answer of an event from `snapshot_tables`; this module only lays out
the components and wires them. The six filters are one `table_filters.Filters` everywhere: laid out once
(`FilterControls`, whose `inputs` every event reads in the same order), passed to every answer as that one object
(`snapshot_tables.SnapshotTables`, plain functions of it), and turned into the events' positional parameters by
`snapshot_tables.takes_filters`, which the `/table` API's signature comes from too.
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

from dataclasses import dataclass
from typing import Any

import gradio as gr

from freshstack_hf.metrics import HEADLINE
from leaderboard.page.computing import StatusLine
from leaderboard.page.page import READ, REFRESH, Page, PageTab
from leaderboard.page.paging import PAGE_ROWS
from leaderboard.tracks.retrieval.tables import (
    deep_links,
    rank_column,
    table_columns,
    table_efficiency,
    table_filters,
    table_live,
)
from leaderboard.tracks.retrieval.tables.table_columns import TOPIC_ALL
from leaderboard.tracks.retrieval.tables.table_filters import Filters
from leaderboard.tracks.retrieval.tabs import retrieval_page
from leaderboard.tracks.retrieval.tabs.snapshot_tables import (
    ALL_TYPES,
    AS_SENT,
    SIZE_CHOICES,
    TYPE_CHOICES,
    SnapshotTables,
    snapshot_note,
    takes_filters,
)
from leaderboard.tracks.retrieval.views import detail

TABLE = "leaderboard.table"  # published part: the table (`REFRESH`, the event rendering it, is the page's)


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
                table_filters.sort_choices(first_topics),
                value=table_columns.default_sort(),
                label="Sort by",
                allow_custom_value=True,
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
        legends = [legend(), table_efficiency.EFFICIENCY_LEGEND, table_live.LIVE_LEGEND]
        gr.Markdown(f"{'. '.join(legends)}. {paging_legend()} {rank_legend()}")
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
