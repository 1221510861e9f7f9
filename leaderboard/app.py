"""The Gradio page: lays out the components and wires each event to a plain function of this package.

Nothing here computes, filters or formats a number: `table`, `reference`, `detail`, `plots` and `submit` do,
and are tested without Gradio. The published figures (`--reported`) get a tab of their own, never rows of
the main table. Every event has an `api_name`, so the page's API (`/table`, `/detail`, `/plots`,
`/submit_run`, `/submit_model`, and for the Answers tab `/answers_table`, `/submit_answers`) is what the tests
and `gradio_client` users drive. The upload cap is enforced twice: by Gradio's server
(`launch(max_file_size=...)`, before the file reaches us) and by the submitter.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import gradio as gr

from freshstack_hf.defaults import RESAMPLES
from freshstack_hf.metrics import HEADLINE, MEASURES
from freshstack_hf.repo.dataset import Dataset
from leaderboard import first_paint
from leaderboard.archive import RunArchive, runs_dir
from leaderboard.display import datatypes, display
from leaderboard.store import Store
from leaderboard.submission import identity_of
from leaderboard.tracks.answers import answers_table as answers_view
from leaderboard.tracks.answers.answer_submit import AnswerSubmitter
from leaderboard.tracks.answers.judge_endpoint import JudgeEndpoint
from leaderboard.tracks.retrieval import deep_links, plots
from leaderboard.tracks.retrieval import detail as detail_view
from leaderboard.tracks.retrieval import leaderboard_table as tbl
from leaderboard.tracks.retrieval import published as reference
from leaderboard.tracks.retrieval.run_submit import Submitter

TYPE_CHOICES = [("baseline", "baseline"), ("submitted run", "run"), ("submitted model", "model")]
SIZE_CHOICES = [*tbl.SIZE_BUCKETS, tbl.UNKNOWN_SIZE]
TOPIC_ALL = "all topics"
SANS = ["system-ui", "-apple-system", "Segoe UI", "Roboto", "Ubuntu", "Cantarell", "DejaVu Sans", "sans-serif"]
MONO = ["ui-monospace", "SFMono-Regular", "Menlo", "Consolas", "DejaVu Sans Mono", "monospace"]
# The page's first render shows the top rows at once; the rest follow in a second event. 25 rows fill the
# table's first screen; with 100 the browser took longer to draw them (median first rows 2.23 s vs 2.02 s,
# every row 3.32 s vs 3.09 s, 1,000 systems, `benchmarks/bench_leaderboard.py`'s store, 10 loads each).
FIRST_PAINT_ROWS = 25
Profile = gr.OAuthProfile | None  # Gradio passes the signed-in profile to a parameter annotated so
Path_ = str | None  # an uploaded file's path, or None


def theme() -> gr.themes.Base:
    """Gradio's default look with the visitor's own fonts: the page fetches no font file, from anywhere.

    The default theme's Source Sans Pro files arrive after the first paint, so a bold heading could show
    its first letter in the fallback font; plain family names (`SANS`, `MONO`) have no file to fetch.
    """
    return gr.themes.Default(font=SANS, font_mono=MONO)


def _about(
    topics: Sequence[str], max_file_mb: float, rate_limit: int | None, revision: str, published: bool = False
) -> str:
    measures = "\n".join(f"| {m.name} | {m.description} |" for m in MEASURES)
    limit = f"{rate_limit} per hour per identity" if rate_limit else "off"
    elsewhere = (
        f" Figures published elsewhere are in the **{reference.REFERENCE_TAB}** tab only (source: {reference.SOURCE}):"
        " they were not computed here and come from another dataset release."
        if published
        else ""
    )
    return f"""
FreshStack scores retrieval on niche, recent Stack Overflow questions with nugget-aware measures.
Topics of this dataset: {", ".join(topics)} (dataset revision `{revision}`).

**Average** = plain mean of the topics; a system missing a topic has no average. Rows scored on another
dataset revision are not shown. Every row of the Leaderboard tab was computed on this dataset.{elsewhere}

| measure | meaning |
|---|---|
{measures}

**Submissions.** Run files (TREC 6 columns or JSON `{{query: {{doc: score}}}}`, `.gz` allowed, at most
{max_file_mb:g} MB) are validated strictly (bad lines are listed with their line numbers; unknown query or doc
ids are refused) and scored at once. Models (sentence-transformers, safetensors only, no custom code) are queued
and scored by an evaluation worker. The same file, or the same model and revision, is never scored twice.
Rate limit: {limit}.
"""


def build_app(
    dataset: str | Path | Dataset,
    store: Store,
    *,
    reported_path: str | Path | None = None,
    max_file_mb: float = 20.0,
    rate_limit: int | None = 10,
    archive_dir: str | Path | None = None,
    model_roots: Sequence[str | Path] = (),
    oauth: bool = False,
    resamples: int = RESAMPLES,
    title: str = "FreshStack leaderboard",
) -> gr.Blocks:
    """The whole app for one dataset and one store (tables are created if missing)."""
    ctx = dataset if isinstance(dataset, Dataset) else Dataset(dataset)
    store.create_all()
    ctx.warm()
    published = reference.load_reference(reported_path) if reported_path else None
    published_topics = published.attrs["topics"] if published is not None else []
    archive = RunArchive(runs_dir(archive_dir))
    board = tbl.BoardSource(store, ctx.topics, ctx.revision)
    board.frame()  # built now, so the first visitor does not wait for it
    submitter = Submitter(
        store,
        ctx,
        max_file_bytes=int(max_file_mb * 2**20),
        rate_limit=rate_limit,
        archive=archive,
        model_roots=tuple(Path(p) for p in model_roots),
        resamples=resamples,
    )
    all_types = [key for _, key in TYPE_CHOICES]
    answers_board = answers_view.AnswersSource(store, ctx.topics, ctx.revision)
    answer_submitter = AnswerSubmitter(
        store,
        ctx,
        judge=JudgeEndpoint.from_env(),  # FRESHSTACK_JUDGE_BASE_URL / _MODEL; the key stays with the workers
        max_file_bytes=int(max_file_mb * 2**20),
        rate_limit=rate_limit,
        archive=archive,
        resamples=resamples,
    )

    def answers_table() -> Any:
        return gr.update(value=answers_board.display(), datatype=answers_board.datatypes())

    def submit_answers(file: Path_, name: str, desc: str, link: str, request: gr.Request, profile: Profile) -> Any:
        shown = os.path.basename(file) if file else None
        options = {"name": name, "description": desc, "link": link, "display_name": shown}
        return signed(
            request, profile, answers_board, lambda who: answer_submitter.submit_answers(file, identity=who, **options)
        )

    def view(search: str, types: list[str] | None, sizes: list[str] | None, topic: str, sort: str, order: str) -> Any:
        scope = None if topic in (None, "", TOPIC_ALL) else topic
        return tbl.shown_rows(
            board.frame(),
            search=search or "",
            types=types,
            sizes=sizes,
            topic=scope,
            sort=sort,
            descending=order != "asc",
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
        shown = tbl.shown_rows(frame, topic=v.topic, sort=v.sort, descending=v.descending)
        return first_paint.payload(shown, len(frame), FIRST_PAINT_ROWS)

    def fill_choices() -> Any:
        """After the table: the system pickers (1,000 choices would only delay the first render)."""
        frame = board.frame()
        keys = detail_view.choices(frame)
        return gr.update(choices=keys), gr.update(choices=keys, value=plots.default_selection(frame))

    def show_detail(key: str | None) -> Any:
        """The header, then each table and the parameters, shown only when they have something to show."""
        if not key:
            return detail_view.HINT, *[gr.update(value=None, visible=False)] * (len(detail_tables) + 1)
        frame = board.frame()
        d = detail_view.system_detail(key, frame, store=store, dataset=ctx, archive=archive, resamples=resamples)
        shown = [gr.update(value=detail_view.shown(t), visible=not t.empty) for t in d.tables()]
        return d.header, *shown, gr.update(value=d.parameters, visible=bool(d.parameters))

    def pick_row(evt: gr.SelectData) -> Any:
        row = evt.row_value or []
        return (row[0] if row else None), gr.Tabs(selected="detail")

    def draw(measure: str, keys: list[str] | None) -> Any:
        frame = board.frame()
        points, caption = plots.size_scatter(frame, measure)
        bars = plots.topic_bars(frame, keys or [], measure)
        title = plots.axis_title(measure)
        scatter_update = gr.update(value=points, caption=caption, sort=plots.size_order(points), y_title=title)
        return scatter_update, gr.update(value=bars, sort=bars["bar"].tolist(), y_title=plots.measure_name(measure))

    def identity(request: gr.Request | None, profile: gr.OAuthProfile | None) -> str | None:
        if oauth and profile is None:
            return None
        host = request.client.host if request is not None and request.client else None
        return identity_of(profile.username if profile else None, host)

    def signed(request: gr.Request | None, profile: Profile, source: Any, submit: Callable[[str], Any]) -> Any:
        """Submit as the caller's identity (refused unsigned under OAuth); a stored row refreshes `source`."""
        who = identity(request, profile)
        if who is None:
            return "Sign in with Hugging Face to submit.", {"status": "refused", "message": "sign in to submit"}
        outcome = submit(who)
        if outcome.accepted:
            source.invalidate()
        return outcome.markdown(), outcome.as_json()

    def submit_run(
        file: Path_, scope: str, name: str, desc: str, link: str, request: gr.Request, profile: Profile
    ) -> Any:
        shown = os.path.basename(file) if file else None
        options = {"name": name, "description": desc, "link": link, "scope": scope, "display_name": shown}
        return signed(request, profile, board, lambda who: submitter.submit_run(file, identity=who, **options))

    def submit_model(
        model: str, revision: str, track: str, name: str, desc: str, link: str, request: gr.Request, profile: Profile
    ) -> Any:
        options = {"revision": revision, "track": track, "name": name, "description": desc, "link": link}
        return signed(request, profile, board, lambda who: submitter.submit_model(model, identity=who, **options))

    with gr.Blocks(title=title, analytics_enabled=False) as demo:
        gr.Markdown(f"# {title}\nNugget-aware retrieval on FreshStack: {', '.join(ctx.topics)}.")
        if oauth:
            gr.LoginButton()
        with gr.Tabs() as tabs:
            with gr.Tab("Leaderboard", id="leaderboard"):
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
                table = gr.Dataframe(
                    interactive=False, elem_id="leaderboard-table", max_height=640, wrap=False, pinned_columns=2
                )
                with gr.Row():
                    csv_button = gr.DownloadButton("Download CSV", size="sm")
                    json_button = gr.DownloadButton("Download JSON", size="sm")
                legend = " · ".join(f"**{m.name}**: {m.description}" for m in HEADLINE)
                gr.Markdown(f"{legend}. Bold: best value of each column among the rows shown.")
            with gr.Tab("Answers", id="answers"):
                judged_by = (
                    f"All/Vital by the judge {answer_submitter.judge.name} (blank until a worker has judged)"
                    if answer_submitter.judge
                    else "All/Vital stay blank: this server has no judge endpoint configured"
                )
                gr.Markdown(
                    "Generated answers (RAG) scored against the nuggets: citations exactly, from the judgments; "
                    f"{judged_by}. {answers_view.legend()}. Bold: best of each column."
                )
                answers_tbl = gr.Dataframe(interactive=False, elem_id="answers-table", max_height=480, wrap=False)
                with gr.Row():
                    answers_file = gr.File(
                        label="Answers (TREC RAG JSONL or JSON)", type="filepath", elem_id="answers-file"
                    )
                    with gr.Column():
                        answers_name = gr.Textbox(label="Name", elem_id="answers-name")
                        answers_desc = gr.Textbox(label="Description", lines=2)
                        answers_link = gr.Textbox(label="Link (http/https)")
                        answers_button = gr.Button("Submit answers", variant="primary", elem_id="answers-submit")
                answers_outcome = gr.Markdown(elem_id="answers-outcome")
                answers_status = gr.JSON(visible=False)  # the full-precision outcome, for API clients only
            if published is not None:
                with gr.Tab(reference.REFERENCE_TAB, id="reference"):
                    gr.Markdown(reference.heading(), elem_id="reference-heading")
                    gr.Dataframe(
                        value=display(published),
                        datatype=datatypes(published),
                        interactive=False,
                        elem_id="reference-table",
                        max_height=640,
                        wrap=False,
                        pinned_columns=1,
                    )
                    gr.Markdown(
                        f"{legend}. Average: {reference.PUBLISHED} = the file's own figure; {reference.MEAN_OF_TOPICS}"
                        " = plain mean of its topics. Bold: best value of each column."
                    )
            with gr.Tab("Detail", id="detail"):
                system = gr.Dropdown(label="System", choices=[], elem_id="detail-system", allow_custom_value=True)
                header = gr.Markdown(detail_view.HINT, elem_id="detail-header")
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
                    label=f"Nuggets never covered in the top {detail_view.COVERAGE.k}",
                    elem_id="detail-uncovered",
                    max_height=400,
                    **hidden,
                )
                per_query = gr.Dataframe(label="Per-query scores", elem_id="detail-per-query", max_height=400, **hidden)
                parameters = gr.JSON(label="How these numbers were made", elem_id="detail-parameters", visible=False)
                detail_tables = [metrics, per_query, holes, uncovered, tests]  # the order of `Detail.tables()`
            with gr.Tab("Plots", id="plots"):
                measure = gr.Dropdown(plots.measure_choices(), value=HEADLINE[0].id, label="Measure")
                scatter = gr.ScatterPlot(
                    x="parameters",
                    y="value",
                    color="type",
                    x_title="parameters (smallest first)",  # a longer title is cut off by the plot
                    y_title=plots.axis_title(HEADLINE[0]),
                    y_axis_format=plots.AXIS_FORMAT,
                    label="Average vs model size",
                    tooltip=["system", "parameters", "value"],
                    elem_id="size-scatter",
                )
                chosen = gr.Dropdown(label="Systems to compare", multiselect=True, choices=[], allow_custom_value=True)
                bars = gr.BarPlot(
                    x="bar",
                    y="value",
                    color="system",
                    label="Per topic",
                    x_label_angle=-40,
                    x_title="topic | system",
                    y_title=HEADLINE[0].name,
                    y_axis_format=plots.AXIS_FORMAT,
                    tooltip=["topic", "system", "value"],
                )
            with gr.Tab("Submit", id="submit"):
                with gr.Row():
                    with gr.Column():
                        gr.Markdown("### A run file\nScored at once against this dataset's judgments.")
                        run_file = gr.File(label="Run (TREC or JSON)", type="filepath", elem_id="run-file")
                        scope = gr.Dropdown(
                            submitter.scopes(), value="auto", label="Topics (auto: those the run covers)"
                        )
                        run_name = gr.Textbox(label="Name", elem_id="run-name")
                        run_desc = gr.Textbox(label="Description", lines=2)
                        run_link = gr.Textbox(label="Link (http/https)")
                        run_button = gr.Button("Submit run", variant="primary", elem_id="run-submit")
                    with gr.Column():
                        gr.Markdown("### A sentence-transformers model\nQueued; an evaluation worker scores it.")
                        model = gr.Textbox(label="Model (Hub id org/name)")
                        revision = gr.Textbox(label="Revision (branch, tag or commit; default main)")
                        track = gr.Radio(["full", "nano"], value="full", label="Track (full corpora or nano pools)")
                        model_name = gr.Textbox(label="Name (default: the model id)")
                        model_desc = gr.Textbox(label="Description", lines=2)
                        model_link = gr.Textbox(label="Link (http/https)")
                        model_button = gr.Button("Submit model", variant="primary")
                outcome = gr.Markdown(elem_id="submit-outcome")
                status = gr.JSON(visible=False)  # the full-precision outcome, for API clients only
            with gr.Tab("About", id="about"):
                gr.Markdown(_about(ctx.topics, max_file_mb, rate_limit, ctx.revision, published is not None))

        filters = [search, types, sizes, topic, sort, order]
        downloads = [csv_button, json_button]
        rendered = demo.load(on_load, None, [topic, sort, order, table, notice], api_name="load")
        rendered = rendered.then(render, filters, table, api_name=False)  # the top rows are up; now all of them
        rendered = rendered.then(fill_choices, None, [system, chosen], api_name=False)
        rendered.then(exports, filters, downloads, api_name="export").then(draw, [measure, chosen], [scatter, bars])
        for control in (types, sizes, sort, order):
            control.input(render, filters, table, api_name=False).then(exports, filters, downloads, api_name=False)
        search.change(render, filters, table, api_name="table", trigger_mode="always_last", concurrency_limit=8)
        search.submit(exports, filters, downloads, api_name=False)
        topic.input(topic_changed, [topic, sort], sort, api_name=False).then(render, filters, table, api_name=False)
        table.select(pick_row, None, [system, tabs], api_name=False)
        system.change(show_detail, system, [header, *detail_tables, parameters], api_name="detail")
        measure.input(draw, [measure, chosen], [scatter, bars], api_name="plots")
        chosen.input(draw, [measure, chosen], [scatter, bars], api_name=False)
        run_inputs = [run_file, scope, run_name, run_desc, run_link]
        run_button.click(submit_run, run_inputs, [outcome, status], api_name="submit_run", concurrency_limit=4).then(
            render, filters, table, api_name=False
        )
        model_inputs = [model, revision, track, model_name, model_desc, model_link]
        model_button.click(submit_model, model_inputs, [outcome, status], api_name="submit_model").then(
            render, filters, table, api_name=False
        )
        demo.load(answers_table, None, answers_tbl, api_name="answers_table")
        answers_inputs = [answers_file, answers_name, answers_desc, answers_link]
        answers_button.click(
            submit_answers, answers_inputs, [answers_outcome, answers_status], api_name="submit_answers"
        ).then(answers_table, None, answers_tbl, api_name=False)
    demo.queue(default_concurrency_limit=4)
    demo.first_paint_rows = first_paint_rows  # served by launch_app (see leaderboard.first_paint)
    return demo


def launch_app(
    demo: gr.Blocks,
    *,
    host: str = "127.0.0.1",
    port: int | None = None,
    max_file_mb: float = 20.0,
    prevent_thread_lock: bool = False,
    quiet: bool = False,
) -> Any:
    """Serve `demo` in `theme()`; the upload cap is Gradio's own (`max_file_size`), checked before a file is kept."""
    os.environ.setdefault("GRADIO_ANALYTICS_ENABLED", "False")
    launched = demo.launch(
        theme=theme(),
        server_name=host,
        server_port=port,
        max_file_size=int(max_file_mb * 2**20),
        prevent_thread_lock=True,  # the first paint is installed on the started app, then we block if asked
        quiet=quiet,
        show_error=True,
        ssr_mode=False,
        share=False,
    )
    rows = getattr(demo, "first_paint_rows", None)
    if rows is not None:
        first_paint.install(demo.server_app, rows)
    if not prevent_thread_lock:
        demo.block_thread()
    return launched
