"""The Leaderboard tab: the retrieval table with its search, filters, topic, sort and downloads, the page's first
rows (and the plain first paint of `leaderboard.first_paint`), and the load chain's first steps.

Every number and row comes from `leaderboard_table` (and `deep_links` for `?topic=&sort=&order=`); this module only
lays out the components and wires them. Its table and the event refreshing it are published for the other tabs
(`TABLE`, `REFRESH`): a click on a row opens the Detail tab, a submission refreshes the table.
"""

from __future__ import annotations

from typing import Any

import gradio as gr

from freshstack_hf.metrics import HEADLINE
from leaderboard import first_paint
from leaderboard.computing import StatusLine
from leaderboard.display import datatypes, display
from leaderboard.page import Page, PageTab
from leaderboard.tracks.retrieval import deep_links, detail, rank_column, retrieval_page
from leaderboard.tracks.retrieval import leaderboard_table as tbl

TYPE_CHOICES = [("baseline", "baseline"), ("submitted run", "run"), ("submitted model", "model")]
SIZE_CHOICES = [*tbl.SIZE_BUCKETS, tbl.UNKNOWN_SIZE]
TOPIC_ALL = "all topics"
# The page's first render shows the top rows at once; the rest follow in a second event. 25 rows fill the
# table's first screen; with 100 the browser took longer to draw them (median first rows 2.23 s vs 2.02 s,
# every row 3.32 s vs 3.09 s, 1,000 systems, `benchmarks/bench_leaderboard.py`'s store, 10 loads each).
FIRST_PAINT_ROWS = 25
TABLE, REFRESH = "leaderboard.table", "leaderboard.refresh"  # published parts: the table, (render, inputs, table)


def legend() -> str:
    """The headline measures and their meaning, under the table (and the Reference tab's)."""
    return " · ".join(f"**{m.name}**: {m.description}" for m in HEADLINE)


def rank_legend() -> str:
    """What the rank column means, under the table (the Detail tab says how it is computed)."""
    return f"{rank_column.EXPLAINED}; details in the Detail tab."


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
        status = StatusLine()  # what is still being computed (`leaderboard.computing`)
        table = gr.Dataframe(
            interactive=False, elem_id="leaderboard-table", max_height=640, wrap=False, pinned_columns=2
        )
        with gr.Row():
            csv_button = gr.DownloadButton("Download CSV", size="sm")
            json_button = gr.DownloadButton("Download JSON", size="sm")
        gr.Markdown(f"{legend()}. Bold: best value of each column among the rows shown. {rank_legend()}")

        def view(
            search: str, types: list[str] | None, sizes: list[str] | None, topic: str, sort: str, order: str
        ) -> Any:
            scope = None if topic in (None, "", TOPIC_ALL) else topic
            return tbl.shown_rows(
                board.frame(),
                search=search or "",
                types=types,
                sizes=sizes,
                topic=scope,
                sort=sort,
                descending=order != "asc",
                ranks=ranks.cells,
            )

        def render(
            search: str, types: list[str], sizes: list[str], topic: str, sort: str, order: str, limit: int | None = None
        ) -> Any:
            shown = view(search, types, sizes, topic, sort, order)
            return gr.update(value=display(shown, rows=limit), datatype=datatypes(shown))

        def exports(search: str, types: list[str], sizes: list[str], topic: str, sort: str, order: str) -> Any:
            csv_path, json_path = tbl.export_files(view(search, types, sizes, topic, sort, order))
            return str(csv_path), str(json_path)

        def topic_changed(topic: str, sort: str) -> Any:
            scope = None if topic in (None, "", TOPIC_ALL) else topic
            choices = tbl.sort_choices(ctx.topics, scope)
            return gr.update(choices=choices, value=sort if sort in choices else tbl.default_sort(scope))

        def on_load(request: gr.Request) -> Any:
            v = deep_links.parse_view(dict(request.query_params) if request else {}, ctx.topics, published_topics)
            topic = v.topic or TOPIC_ALL
            order = "desc" if v.descending else "asc"
            notice = f"Note: {v.notice}" if v.notice else ""
            sort_update = gr.update(choices=tbl.sort_choices(ctx.topics, v.topic), value=v.sort)
            first = render("", all_types, SIZE_CHOICES, topic, v.sort, order, limit=FIRST_PAINT_ROWS)
            return topic, sort_update, order, first, notice

        def first_paint_rows(params: dict[str, str]) -> dict[str, Any]:
            """The top rows of the view the address asks for, for the page's plain first paint."""
            v = deep_links.parse_view(params, ctx.topics, published_topics)
            frame = board.frame()
            shown = tbl.shown_rows(frame, topic=v.topic, sort=v.sort, descending=v.descending, ranks=ranks.cells)
            return first_paint.payload(shown, len(frame), FIRST_PAINT_ROWS)

        pickers = retrieval_page.pickers(page)

        def fill_choices() -> Any:
            """After the table: the system pickers (1,000 choices would only delay the first render)."""
            frame = board.frame()
            keys = detail.choices(frame)
            updates = [fill(frame, keys) for _, fill in pickers]
            return updates[0] if len(updates) == 1 else tuple(updates)

        filters, downloads = [search, types, sizes, topic, sort, order], [csv_button, json_button]
        page.on_load(on_load, None, [topic, sort, order, table, notice], api_name="load")
        page.on_load(render, filters, table, api_name=False)  # the top rows are up; now all of them
        page.on_load(fill_choices, None, lambda: [picker for picker, _ in pickers], api_name=False)
        page.on_load(exports, filters, downloads, api_name="export")
        page.first_paint_rows = first_paint_rows  # served by launch_app (see leaderboard.first_paint)
        page.publish(TABLE, table)
        page.publish(REFRESH, (render, filters, table))
        status.wire(page, *page.part(REFRESH))  # after the table's load steps; re-renders it when a row is done
        self.parts = search, types, sizes, topic, sort, order, table, filters, downloads
        self.events = render, exports, topic_changed

    def wire(self, page: Page) -> None:
        search, types, sizes, topic, sort, order, table, filters, downloads = self.parts
        render, exports, topic_changed = self.events
        for control in (types, sizes, sort, order):
            control.input(render, filters, table, api_name=False).then(exports, filters, downloads, api_name=False)
        search.change(render, filters, table, api_name="table", trigger_mode="always_last", concurrency_limit=8)
        search.submit(exports, filters, downloads, api_name=False)
        topic.input(topic_changed, [topic, sort], sort, api_name=False).then(render, filters, table, api_name=False)
