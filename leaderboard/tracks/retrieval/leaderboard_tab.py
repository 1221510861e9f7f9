"""The Leaderboard tab: the retrieval table, one page at a time, with its search, filters, topic, sort, pager and
downloads, the page's first rows (and the plain first paint of `leaderboard.page.first_paint`), and the load chain's
first step.

Every number and row comes from `leaderboard_table` (`leaderboard.page.paging` for the page, `deep_links` for
`?topic=&sort=&order=&page=`); this module only lays out the components and wires them. Sorting, filtering, search
and the rank column run on the server over every row, then one page is sent; the downloads hold every row of the
current filter. Changing a filter, the search or the sort goes back to page 1; the address follows the view.
Its table and the event refreshing it are published for the other tabs (`TABLE`, `REFRESH`): a click on a row
opens the Detail tab, a submission refreshes the table.

API: `/table` (search, types, sizes, topic, sort, order[, page]) answers one page (page 1 when left out; a page
beyond the end is the last), its caption (`rows 51–100 of 1,001 · page 2 of 21`) in the table's label;
`/export` answers the CSV and JSON of every row.
"""

from __future__ import annotations

from typing import Any

import gradio as gr

from freshstack_hf.metrics import HEADLINE
from leaderboard.holds import pause_for_tests
from leaderboard.page import first_paint
from leaderboard.page.computing import StatusLine
from leaderboard.page.display import datatypes, display
from leaderboard.page.page import READ, REFRESH, Page, PageTab
from leaderboard.page.paging import PAGE_ROWS, page_number, page_slice
from leaderboard.tracks.retrieval import deep_links, detail, rank_column, retrieval_page
from leaderboard.tracks.retrieval import leaderboard_table as tbl

TYPE_CHOICES = [("baseline", "baseline"), ("submitted run", "run"), ("submitted model", "model")]
SIZE_CHOICES = [*tbl.SIZE_BUCKETS, tbl.UNKNOWN_SIZE]
TOPIC_ALL = "all topics"
TABLE = "leaderboard.table"  # published part: the table (`REFRESH`, the event rendering it, is the page's)


def _view_key(
    search: str, types: list[str] | None, sizes: list[str] | None, topic: str, sort: str, order: str
) -> tuple[Any, ...]:
    """One state of the table's controls as a cache key (`StoreFrame.view`): the same view, however it was asked."""
    chosen = [None if picked is None else tuple(picked) for picked in (types, sizes)]
    return (search or "", *chosen, topic or "", sort, order)


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
        ctx, board, published = page.dataset, retrieval_page.board(page), retrieval_page.published(page)
        ranks = retrieval_page.ranks(page)
        published_topics = published.attrs["topics"] if published is not None else []
        all_types = [key for _, key in TYPE_CHOICES]
        with gr.Row():
            search = gr.Textbox(label="Search systems", placeholder="name contains…", elem_id="search")
            topic = gr.Dropdown([TOPIC_ALL, *ctx.topics], value=TOPIC_ALL, label="Topic")
            sort = gr.Dropdown(
                tbl.sort_choices(ctx.topics), value=tbl.default_sort(), label="Sort by", allow_custom_value=True
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

        def view(
            search: str, types: list[str] | None, sizes: list[str] | None, topic: str, sort: str, order: str
        ) -> Any:
            """Every row of one state of the controls, sorted: computed once per store state (`StoreFrame.view`)."""
            scope = None if topic in (None, "", TOPIC_ALL) else topic

            def rows(frame: Any) -> Any:
                options = {"search": search or "", "types": types, "sizes": sizes, "topic": scope, "sort": sort}
                return tbl.shown_rows(frame, **options, descending=order != "asc", ranks=ranks.cells)

            return board.view(("rows", *_view_key(search, types, sizes, topic, sort, order)), rows)

        def render(
            search: str, types: list[str], sizes: list[str], topic: str, sort: str, order: str, page: Any = 1
        ) -> Any:
            """One page of the view (the `/table` API): the rows, their types and the caption as the label."""
            pause_for_tests("table")  # tests only: holds this read, to see others run beside it
            return turn(search, types, sizes, topic, sort, order, page)[0]

        def turn(
            search: str, types: list[str], sizes: list[str], topic: str, sort: str, order: str, page: Any = 1
        ) -> tuple[Any, int]:
            """(the table's update, the page shown): a page beyond the end shows, and puts in the box, the last.
            Each page is formatted once per store state; every visitor asking for it gets the same value."""
            filters = (search, types, sizes, topic, sort, order)

            def formatted(_frame: Any) -> tuple[dict[str, Any], list[str], str, int]:
                shown = view(*filters)
                part = page_slice(len(shown), page)
                return display(shown, rows=part.rows, start=part.start), datatypes(shown), part.caption(), part.page

            key = ("page", *_view_key(*filters), page_number(page))
            table, kinds, caption, shown_page = board.view(key, formatted)
            return gr.update(value=table, datatype=kinds, label=caption), shown_page

        def first_page(search: str, types: list[str], sizes: list[str], topic: str, sort: str, order: str) -> Any:
            """After a filter, the search or the sort changed: page 1 of the new view."""
            return turn(search, types, sizes, topic, sort, order, 1)

        def previous_page(*state: Any) -> Any:
            *filters, page = state
            return turn(*filters, max(1, page_number(page) - 1))

        def next_page(*state: Any) -> Any:
            *filters, page = state
            return turn(*filters, page_number(page) + 1)

        def exports(search: str, types: list[str], sizes: list[str], topic: str, sort: str, order: str) -> Any:
            """The CSV and JSON of every row of the view, written once per store state (every page load asks)."""
            filters = (search, types, sizes, topic, sort, order)

            def written(_frame: Any) -> tuple[str, str]:
                csv_path, json_path = tbl.export_files(view(*filters))
                return str(csv_path), str(json_path)

            return board.view(("export", *_view_key(*filters)), written)

        def topic_changed(topic: str, sort: str) -> Any:
            scope = None if topic in (None, "", TOPIC_ALL) else topic
            choices = tbl.sort_choices(ctx.topics, scope)
            return gr.update(choices=choices, value=sort if sort in choices else tbl.default_sort(scope))

        def on_load(request: gr.Request) -> Any:
            """The view and page the address asks for, in one step: the page's rows are its first event's answer."""
            v = deep_links.parse_view(dict(request.query_params) if request else {}, ctx.topics, published_topics)
            topic = v.topic or TOPIC_ALL
            order = "desc" if v.descending else "asc"
            notice = f"Note: {v.notice}" if v.notice else ""
            sort_update = gr.update(choices=tbl.sort_choices(ctx.topics, v.topic), value=v.sort)
            rows, shown_page = turn("", all_types, SIZE_CHOICES, topic, v.sort, order, v.page)
            return topic, sort_update, order, rows, shown_page, notice

        def first_paint_rows(params: dict[str, str]) -> dict[str, Any]:
            """The rows of the view and page the address asks for, for the page's plain first paint (once per
            store state and address: the page's warm-up computes them, its script's request reads them)."""
            v = deep_links.parse_view(params, ctx.topics, published_topics)

            def rows(frame: Any) -> dict[str, Any]:
                shown = tbl.shown_rows(frame, topic=v.topic, sort=v.sort, descending=v.descending, ranks=ranks.cells)
                part = page_slice(len(shown), v.page)
                return first_paint.payload(shown, len(frame), part.rows, part.start)

            return board.view(("first paint", v.topic, v.sort, v.descending, page_number(v.page)), rows)

        pickers = retrieval_page.pickers(page)

        def fill_choices() -> Any:
            """After the table: the system pickers (1,000 choices would only delay the first render)."""
            frame, keys = board.view(("choices",), lambda frame: (frame, detail.choices(frame)))
            updates = [fill(frame, keys) for _, fill in pickers]
            return updates[0] if len(updates) == 1 else tuple(updates)

        filters, downloads = [search, types, sizes, topic, sort, order], [csv_button, json_button]
        page.on_load(on_load, None, [topic, sort, order, table, number, notice], api_name="load")
        page.on_load(fill_choices, None, lambda: [picker for picker, _ in pickers], api_name=False)
        page.on_load(exports, filters, downloads, api_name="export")
        page.first_paint_rows = first_paint_rows  # served by launch_app (see leaderboard.page.first_paint)
        page.publish(TABLE, table)
        page.publish(REFRESH, (render, [*filters, number], table))
        status.wire(page, *page.part(REFRESH))  # after the table's load steps; re-renders it when a row is done
        self.parts = search, types, sizes, topic, sort, order, table, number, previous, following, filters, downloads
        self.events = render, first_page, previous_page, next_page, turn, exports, topic_changed
        self.address = deep_links.address_script(TOPIC_ALL)

    def wire(self, page: Page) -> None:
        search, types, sizes, topic, sort, order, table, number, previous, following, filters, downloads = self.parts
        render, first_page, previous_page, next_page, turn, exports, topic_changed = self.events
        shown, state = [table, number], [*filters, number]

        def follow(event: Any) -> Any:
            """After the table changed: the address names its view (browser only, no server round trip)."""
            return event.then(None, [topic, sort, order, number], None, js=self.address, api_name=False)

        for control in (types, sizes, sort, order):
            follow(control.input(first_page, filters, shown, api_name=False, **READ)).then(
                exports, filters, downloads, api_name=False, **READ
            )
        follow(search.change(first_page, filters, shown, api_name=False, trigger_mode="always_last", **READ))
        # The `/table` API: one page of any view (Enter in the search box draws the page the box names).
        search.submit(render, state, table, api_name="table", **READ).then(
            exports, filters, downloads, api_name=False, **READ
        )
        follow(
            topic.input(topic_changed, [topic, sort], sort, api_name=False, **READ).then(
                first_page, filters, shown, api_name=False, **READ
            )
        )
        follow(previous.click(previous_page, state, shown, api_name=False, **READ))
        follow(following.click(next_page, state, shown, api_name=False, **READ))
        follow(number.submit(turn, state, shown, api_name=False, **READ))
