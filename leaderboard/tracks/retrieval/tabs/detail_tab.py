"""The Detail tab: one system's measures with intervals, per-query scores, holes, nuggets never covered, paired
tests, the parameters behind its numbers (all from `detail`), its board rank interval and how rank intervals are
made (`rank_column`); opened by a click on a Leaderboard row, or by an address naming a row (`?system=ID`,
`leaderboard.page.detail_link`: the source an entry on a model's Hub page links). Below it, the nugget views
(`nugget_views`): one query's nuggets against every system, and the nuggets no system covers."""

from __future__ import annotations

from typing import Any

import gradio as gr

from leaderboard.page.detail_link import asked_system
from leaderboard.page.page import READ, Page, PageTab
from leaderboard.tracks.retrieval.tables.table_columns import default_sort
from leaderboard.tracks.retrieval.tabs import retrieval_page
from leaderboard.tracks.retrieval.tabs.leaderboard_tab import TABLE
from leaderboard.tracks.retrieval.views import detail, nugget_views


class DetailTab(PageTab):
    label, id = "Detail", "detail"

    def layout(self, page: Page) -> None:
        board, ranks = retrieval_page.board(page), retrieval_page.ranks(page)
        system = gr.Dropdown(label="System", choices=[], elem_id="detail-system", allow_custom_value=True)
        header = gr.Markdown(detail.HINT, elem_id="detail-header")
        hidden = {"interactive": False, "visible": False, "wrap": True}  # until a system is picked
        metrics = gr.Dataframe(
            label="Per-topic measures with 95% bootstrap intervals", elem_id="detail-metrics", **hidden
        )
        tests = gr.Dataframe(
            label="Paired randomization tests (this − other)",
            column_widths=["26%", "9%", "11%", "8%", "8%", "10%", "9%", "9%", "10%"],
            elem_id="detail-tests",
            max_height=520,
            **hidden,
        )
        holes = gr.Dataframe(
            label="Judged@10: unjudged documents in the top 10 (holes)", elem_id="detail-holes", **hidden
        )
        uncovered = gr.Dataframe(
            label=f"Nuggets never covered in the top {detail.COVERAGE.k}",
            elem_id="detail-uncovered",
            max_height=400,
            **hidden,
        )
        per_query = gr.Dataframe(label="Per-query scores", elem_id="detail-per-query", max_height=400, **hidden)
        parameters = gr.JSON(label="How these numbers were made", elem_id="detail-parameters", visible=False)
        gr.Markdown(detail.RANKS_HELP, elem_id="detail-ranks")
        tables = [metrics, per_query, holes, uncovered, tests]  # the order of `Detail.tables()`
        retrieval_page.pickers(page).append((system, lambda _frame, keys: gr.update(choices=keys)))

        def show_detail(key: str | None) -> Any:
            """The header, then each table and the parameters, shown only when they have something to show."""
            if not key:
                return detail.HINT, *[gr.update(value=None, visible=False)] * (len(tables) + 1)
            where = {"store": page.store, "dataset": page.dataset}
            d = detail.system_detail(key, board.frame(), **where, resamples=page.settings.resamples)
            shown = [gr.update(value=detail.shown(t), visible=not t.empty) for t in d.tables()]
            text = d.header + detail.rank_line(ranks.intervals(default_sort()).get(str(key)))
            return text, *shown, gr.update(value=d.parameters, visible=bool(d.parameters))

        def asked(request: gr.Request) -> tuple[Any, Any]:
            """The row the address names, picked, and this tab open (nothing changes for an address naming none)."""
            key = asked_system(dict(request.query_params) if request else {})
            return (key, gr.Tabs(selected=self.id)) if key else (gr.update(), gr.update())

        page.on_load(asked, None, [system, page.tabs], api_name=False)
        self.outputs = [header, *tables, parameters]
        self.system, self.show_detail = system, show_detail
        self.nugget_views(page)

    def nugget_views(self, page: Page) -> None:
        """One query's nuggets against every system, and the topic's nuggets no system covers (`nugget_views`)."""
        views = page.shared("retrieval.nuggets", lambda: nugget_views.NuggetViews(page.store, page.dataset))
        with gr.Accordion(f"Nuggets: which system covers which, in its top {nugget_views.K}", open=False):
            topics = page.dataset.topics
            topic = gr.Dropdown(label="Topic", choices=topics, value=topics[0], elem_id="nuggets-topic")
            query = gr.Dropdown(label="Query", choices=[], elem_id="nuggets-query", allow_custom_value=True)
            matrix = gr.Dataframe(label="Its nuggets (rows) against the systems", elem_id="nuggets-matrix", wrap=True)
            missed = gr.Dataframe(
                label="Nuggets no system covers (the topic's hardest)", elem_id="nuggets-uncovered", wrap=True
            )

        def pick_topic(name: str) -> tuple[Any, Any]:
            return gr.update(choices=views.queries(name), value=None), views.uncovered_by_all(name)

        def pick_query(name: str, qid: str | None) -> Any:
            return views.query_matrix(name, qid) if qid else None

        topic.change(pick_topic, topic, [query, missed], api_name="nuggets_uncovered", **READ)
        query.change(pick_query, [topic, query], matrix, api_name="nuggets_by_query", **READ)

    def wire(self, page: Page) -> None:
        def pick_row(evt: gr.SelectData) -> Any:
            row = evt.row_value or []
            return (row[0] if row else None), gr.Tabs(selected="detail")

        page.part(TABLE).select(pick_row, None, [self.system, page.tabs], api_name=False, **READ)
        self.system.change(self.show_detail, self.system, self.outputs, api_name="detail", **READ)
