"""The Leaderboard tab: the retrieval table, one page at a time, with its snapshot, search, filters, topic, sort,
pager and downloads, the page's first rows (and the plain first paint of `leaderboard.page.first_paint`), and the load
chain's first step.

Every number and row comes from `leaderboard_table` (`leaderboard.page.paging` for the page, `deep_links` for
`?snapshot=&topic=&sort=&order=&page=`); this module only lays out the components and wires them. Sorting,
filtering, search and the rank column run on the server over every row, then one page is sent; the downloads hold
every row of the current filter. Changing a filter, the search, the sort or the snapshot goes back to page 1; the
address follows the view. Its table and the event refreshing it are published for the other tabs (`TABLE`,
`REFRESH`): a click on a row opens the Detail tab, a submission refreshes the table.

One running board serves every published snapshot's table (`retrieval_page.snapshot_boards`): the selector (shown
when there are two or more) picks one, the newest by default; its topics are the table's topic columns, the
caption names it, and so do the downloads (a `snapshot` column, and the JSON's top). Each snapshot has its own
board, and every cached view's key names the snapshot too. The other tabs, and submissions, stay on the served one.

API: `/table` (search, types, sizes, topic, sort, order[, page[, snapshot]]) answers one page (page 1 when left
out; a page beyond the end is the last) of one snapshot (the newest when left out; an unknown one is an error naming
the board's snapshots, where the address falls back to the newest with a notice), its caption (`rows 51–100 of 1,001
· page 2 of 21`, then `· snapshot 2025-10-31` on a board of several) in the table's label; `/export` (the
filters[, snapshot]) answers the CSV and JSON of every row.
"""

from __future__ import annotations

from typing import Any

import gradio as gr

from freshstack_hf.metrics import HEADLINE
from leaderboard.fault_points import POINTS
from leaderboard.page import first_paint
from leaderboard.page.computing import StatusLine
from leaderboard.page.display import datatypes, display
from leaderboard.page.page import READ, REFRESH, Page, PageTab
from leaderboard.page.paging import PAGE_ROWS, page_number, page_slice
from leaderboard.tracks.retrieval import deep_links, detail, rank_column, retrieval_page
from leaderboard.tracks.retrieval import leaderboard_table as tbl
from leaderboard.tracks.retrieval.retrieval_page import SnapshotBoard

TYPE_CHOICES = [("baseline", "baseline"), ("submitted run", "run"), ("submitted model", "model")]
SIZE_CHOICES = [*tbl.SIZE_BUCKETS, tbl.UNKNOWN_SIZE]
TOPIC_ALL = "all topics"
TABLE = "leaderboard.table"  # published part: the table (`REFRESH`, the event rendering it, is the page's)


def _view_key(
    search: str, types: list[str] | None, sizes: list[str] | None, topic: str, sort: str, order: str, snapshot: str
) -> tuple[Any, ...]:
    """One state of the table's controls as a cache key (`StoreFrame.view`): the same view, however it was asked.
    The snapshot is part of it: each snapshot's board keeps its own views, and a key never leaves it out, so no
    view of one snapshot can ever answer for another."""
    chosen = [None if picked is None else tuple(picked) for picked in (types, sizes)]
    return (snapshot, search or "", *chosen, topic or "", sort, order)


def snapshot_note(labels: list[str], served: str) -> str:
    """What the selector means, beside it: which snapshot the other tabs (and submissions) read."""
    return (
        f"**Snapshot**: which published revision this table shows ({len(labels)} here, the newest by default). "
        f"The other tabs, and submissions, use the served snapshot, **{served}**."
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


class LeaderboardTab(PageTab):
    label, id = "Leaderboard", "leaderboard"

    def layout(self, page: Page) -> None:
        board, published = retrieval_page.board(page), retrieval_page.published(page)
        boards = retrieval_page.snapshot_boards(page)
        labels = list(boards)
        newest, many = labels[-1], len(labels) > 1
        served = next(label for label, at in boards.items() if at.dataset is page.dataset)
        # The topic box takes every snapshot's topics (Gradio refuses a value outside its first choices); each
        # snapshot's view narrows it to its own.
        every_topic = list(dict.fromkeys(t for at in boards.values() for t in at.dataset.topics))
        first_topics = boards[newest].dataset.topics
        published_topics = published.attrs["topics"] if published is not None else []
        all_types = [key for _, key in TYPE_CHOICES]
        with gr.Row(visible=many):
            snapshot = gr.Dropdown(
                labels, value=newest, label="Snapshot", elem_id="snapshot", allow_custom_value=True, scale=0,
                min_width=180,
            )  # fmt: skip
            gr.Markdown(snapshot_note(labels, served), elem_id="snapshot-note")
        with gr.Row():
            search = gr.Textbox(label="Search systems", placeholder="name contains…", elem_id="search")
            topic = gr.Dropdown([TOPIC_ALL, *every_topic], value=TOPIC_ALL, label="Topic")
            sort = gr.Dropdown(
                tbl.sort_choices(first_topics), value=tbl.default_sort(), label="Sort by", allow_custom_value=True
            )
            order = gr.Radio(["desc", "asc"], value="desc", label="Order")
        with gr.Row():
            types = gr.CheckboxGroup(TYPE_CHOICES, value=all_types, label="Type (untick to hide a group)")
            sizes = gr.CheckboxGroup(SIZE_CHOICES, value=SIZE_CHOICES, label="Size (parameters)")
        notice = gr.Markdown()
        status = StatusLine()  # what is still being computed (`leaderboard.page.computing`)
        table = gr.Dataframe(
            interactive=False, elem_id="leaderboard-table", max_height=640, wrap=False, pinned_columns=2, label=" "
        )
        with gr.Row():
            previous = gr.Button("◀ Previous", size="sm", elem_id="page-previous", scale=0, min_width=110)
            number = gr.Number(
                1, precision=0, label="Page", elem_id="page-number", scale=0, min_width=80, container=False
            )
            following = gr.Button("Next ▶", size="sm", elem_id="page-next", scale=0, min_width=110)
            csv_button = gr.DownloadButton("Download CSV", size="sm", scale=0, min_width=140)
            json_button = gr.DownloadButton("Download JSON", size="sm", scale=0, min_width=140)
        gr.Markdown(f"{legend()}. {tbl.EFFICIENCY_LEGEND}. {paging_legend()} {rank_legend()}")

        def chosen(snapshot: str | None, topic: str | None = None) -> SnapshotBoard:
            """The board of the snapshot asked for (the newest when none is named). An unknown snapshot, or a topic
            the snapshot does not have, is the caller's error, named: answering with another snapshot's rows (or
            all topics) would hand an API caller numbers it did not ask for."""
            if snapshot in (None, ""):
                snapshot = newest
            if snapshot not in boards:
                raise gr.Error(f"unknown snapshot {str(snapshot)[:40]!r}: this board has {', '.join(labels)}")
            at = boards[snapshot]
            if topic not in (None, "", TOPIC_ALL) and topic not in at.dataset.topics:
                topics = ", ".join(at.dataset.topics)
                raise gr.Error(f"snapshot {at.label} has no topic {str(topic)[:40]!r} (its topics: {topics})")
            return at

        def view(
            search: str,
            types: list[str] | None,
            sizes: list[str] | None,
            topic: str,
            sort: str,
            order: str,
            snapshot: str | None = None,
        ) -> Any:
            """Every row of one state of the controls, sorted: computed once per store state (`StoreFrame.view`)."""
            at = chosen(snapshot, topic)
            scope = None if topic in (None, "", TOPIC_ALL) else topic

            def rows(frame: Any) -> Any:
                options = {"search": search or "", "types": types, "sizes": sizes, "topic": scope, "sort": sort}
                return tbl.shown_rows(frame, **options, descending=order != "asc", ranks=at.ranks.cells)

            return at.board.view(("rows", *_view_key(search, types, sizes, topic, sort, order, at.label)), rows)

        def render(
            search: str,
            types: list[str],
            sizes: list[str],
            topic: str,
            sort: str,
            order: str,
            page: Any = 1,
            snapshot: str | None = None,
        ) -> Any:
            """One page of the view (the `/table` API): the rows, their types and the caption as the label."""
            POINTS.pause("table")  # tests only: holds this read, to see others run beside it
            return turn(search, types, sizes, topic, sort, order, page, snapshot)[0]

        def turn(
            search: str,
            types: list[str],
            sizes: list[str],
            topic: str,
            sort: str,
            order: str,
            page: Any = 1,
            snapshot: str | None = None,
        ) -> tuple[Any, int]:
            """(the table's update, the page shown): a page beyond the end shows, and puts in the box, the last.
            Each page is formatted once per store state; every visitor asking for it gets the same value."""
            at = chosen(snapshot, topic)
            filters = (search, types, sizes, topic, sort, order)

            def formatted(_frame: Any) -> tuple[dict[str, Any], list[str], str, int]:
                shown = view(*filters, at.label)
                part = page_slice(len(shown), page)
                caption = part.caption() + (f" · snapshot {at.label}" if many else "")
                return display(shown, rows=part.rows, start=part.start), datatypes(shown), caption, part.page

            key = ("page", *_view_key(*filters, at.label), page_number(page))
            table, kinds, caption, shown_page = at.board.view(key, formatted)
            return gr.update(value=table, datatype=kinds, label=caption), shown_page

        def first_page(
            search: str, types: list[str], sizes: list[str], topic: str, sort: str, order: str, snapshot: str
        ) -> Any:
            """After a filter, the search, the sort or the snapshot changed: page 1 of the new view."""
            return turn(search, types, sizes, topic, sort, order, 1, snapshot)

        def previous_page(*state: Any) -> Any:
            *filters, page, snapshot = state
            return turn(*filters, max(1, page_number(page) - 1), snapshot)

        def next_page(*state: Any) -> Any:
            *filters, page, snapshot = state
            return turn(*filters, page_number(page) + 1, snapshot)

        def exports(
            search: str,
            types: list[str],
            sizes: list[str],
            topic: str,
            sort: str,
            order: str,
            snapshot: str | None = None,
        ) -> Any:
            """The CSV and JSON of every row of the view, naming its snapshot, written once per store state (every
            page load asks)."""
            at = chosen(snapshot, topic)
            filters = (search, types, sizes, topic, sort, order)

            def written(_frame: Any) -> tuple[str, str]:
                named = {"snapshot": at.label, "dataset_revision": at.dataset.revision}
                csv_path, json_path = tbl.export_files(view(*filters, at.label), **named)
                return str(csv_path), str(json_path)

            return at.board.view(("export", *_view_key(*filters, at.label)), written)

        def topic_changed(topic: str, sort: str, snapshot: str) -> Any:
            scope = None if topic in (None, "", TOPIC_ALL) else topic
            choices = tbl.sort_choices(chosen(snapshot).dataset.topics, scope)
            return gr.update(choices=choices, value=sort if sort in choices else tbl.default_sort(scope))

        def snapshot_changed(snapshot: str, topic: str, sort: str) -> tuple[Any, Any]:
            """The topic and sort boxes for the snapshot picked: its topics; the topic and sort kept when it has
            them, else all topics and the default sort."""
            topics = chosen(snapshot).dataset.topics
            topic = topic if topic in topics else TOPIC_ALL
            scope = None if topic == TOPIC_ALL else topic
            choices = tbl.sort_choices(topics, scope)
            kept = sort if sort in choices else tbl.default_sort(scope)
            return gr.update(choices=[TOPIC_ALL, *topics], value=topic), gr.update(choices=choices, value=kept)

        def on_load(request: gr.Request) -> Any:
            """The snapshot, view and page the address asks for, in one step: the page's rows are its first event's
            answer."""
            params = dict(request.query_params) if request else {}
            label, missing = deep_links.parse_snapshot(params, labels)
            topics = boards[label].dataset.topics
            v = deep_links.parse_view(params, topics, published_topics)
            topic = v.topic or TOPIC_ALL
            order = "desc" if v.descending else "asc"
            notes = [note for note in (missing, v.notice) if note]
            notice = f"Note: {'; '.join(notes)}" if notes else ""
            topic_update = gr.update(choices=[TOPIC_ALL, *topics], value=topic)
            sort_update = gr.update(choices=tbl.sort_choices(topics, v.topic), value=v.sort)
            rows, shown_page = turn("", all_types, SIZE_CHOICES, topic, v.sort, order, v.page, label)
            return topic_update, sort_update, order, rows, shown_page, notice, label

        def first_paint_rows(params: dict[str, str]) -> dict[str, Any]:
            """The rows of the snapshot, view and page the address asks for, for the page's plain first paint (once
            per store state and address: the page's warm-up computes them, its script's request reads them)."""
            at = boards[deep_links.parse_snapshot(params, labels)[0]]
            v = deep_links.parse_view(params, at.dataset.topics, published_topics)

            def rows(frame: Any) -> dict[str, Any]:
                shown = tbl.shown_rows(frame, topic=v.topic, sort=v.sort, descending=v.descending, ranks=at.ranks.cells)
                part = page_slice(len(shown), v.page)
                return first_paint.payload(shown, len(frame), part.rows, part.start)

            key = ("first paint", at.label, v.topic, v.sort, v.descending, page_number(v.page))
            return at.board.view(key, rows)

        pickers = retrieval_page.pickers(page)

        def fill_choices() -> Any:
            """After the table: the system pickers (1,000 choices would only delay the first render)."""
            frame, keys = board.view(("choices",), lambda frame: (frame, detail.choices(frame)))
            updates = [fill(frame, keys) for _, fill in pickers]
            return updates[0] if len(updates) == 1 else tuple(updates)

        filters, downloads = [search, types, sizes, topic, sort, order], [csv_button, json_button]
        loaded = [topic, sort, order, table, number, notice, snapshot]
        page.on_load(on_load, None, loaded, api_name="load")
        page.on_load(fill_choices, None, lambda: [picker for picker, _ in pickers], api_name=False)
        page.on_load(exports, [*filters, snapshot], downloads, api_name="export")
        page.first_paint_rows = first_paint_rows  # served by launch_app (see leaderboard.page.first_paint)
        page.publish(TABLE, table)
        page.publish(REFRESH, (render, [*filters, number, snapshot], table))
        status.wire(page, *page.part(REFRESH))  # after the table's load steps; re-renders it when a row is done
        self.parts = (
            search, types, sizes, topic, sort, order, table, number, previous, following, filters, downloads, snapshot
        )  # fmt: skip
        self.events = render, first_page, previous_page, next_page, turn, exports, topic_changed, snapshot_changed
        self.address = deep_links.address_script(TOPIC_ALL, newest)

    def wire(self, page: Page) -> None:
        search, types, sizes, topic, sort, order, table, number, previous, following, filters, downloads, snapshot = (
            self.parts
        )
        render, first_page, previous_page, next_page, turn, exports, topic_changed, snapshot_changed = self.events
        shown, state, picked = [table, number], [*filters, number, snapshot], [*filters, snapshot]

        def follow(event: Any) -> Any:
            """After the table changed: the address names its view (browser only, no server round trip)."""
            return event.then(None, [topic, sort, order, number, snapshot], None, js=self.address, api_name=False)

        for control in (types, sizes, sort, order):
            follow(control.input(first_page, picked, shown, api_name=False, **READ)).then(
                exports, picked, downloads, api_name=False, **READ
            )
        follow(search.change(first_page, picked, shown, api_name=False, trigger_mode="always_last", **READ))
        # The `/table` API: one page of any view (Enter in the search box draws the page the box names).
        search.submit(render, state, table, api_name="table", **READ).then(
            exports, picked, downloads, api_name=False, **READ
        )
        follow(
            topic.input(topic_changed, [topic, sort, snapshot], sort, api_name=False, **READ).then(
                first_page, picked, shown, api_name=False, **READ
            )
        )
        # A snapshot picked: its topics in the boxes, then its page 1, the address and the downloads.
        follow(
            snapshot.input(snapshot_changed, [snapshot, topic, sort], [topic, sort], api_name=False, **READ).then(
                first_page, picked, shown, api_name=False, **READ
            )
        ).then(exports, picked, downloads, api_name=False, **READ)
        follow(previous.click(previous_page, state, shown, api_name=False, **READ))
        follow(following.click(next_page, state, shown, api_name=False, **READ))
        follow(number.submit(turn, state, shown, api_name=False, **READ))
