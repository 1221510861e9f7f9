"""The Gradio page: the tabs registered in `leaderboard.page.tabs`, each laid out and wired by its own module.

Nothing here lays out a component of a tab nor computes, filters or formats a number: the tabs do, through their
track's plain functions (tested without Gradio). Every event has an `api_name` (`/table`, `/submit_model`, ...: the
page's API, which the tests and `gradio_client` users drive; `/gradio_api/info` lists them all). Gradio refuses a
file over `GZIP_RATIO` times the upload cap; the submitter applies the cap to what it keeps."""

from __future__ import annotations

import gc
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import gradio as gr

from freshstack_hf.defaults import RESAMPLES
from freshstack_hf.repo.dataset import Dataset
from leaderboard import defaults
from leaderboard.page import first_paint, gradio_costs, tabs
from leaderboard.page.page import Page, Settings
from leaderboard.page.sign_in import sign_in_row
from leaderboard.store.store import Store

SANS = ["system-ui", "-apple-system", "Segoe UI", "Roboto", "Ubuntu", "Cantarell", "DejaVu Sans", "sans-serif"]
MONO = ["ui-monospace", "SFMono-Regular", "Menlo", "Consolas", "DejaVu Sans Mono", "monospace"]


def theme() -> gr.themes.Base:
    """Gradio's default look with the visitor's own fonts: the page fetches no font file, from anywhere (the
    default's Source Sans Pro files arrive after the first paint; plain family names have no file to fetch)."""
    return gr.themes.Default(font=SANS, font_mono=MONO)


def build_app(
    dataset: str | Path | Dataset,
    store: Store,
    *,
    reported_path: str | Path | None = None,
    max_file_mb: float = defaults.MAX_UPLOAD_MB,
    rate_limit: int | None = defaults.RATE_LIMIT_PER_HOUR,
    live_per_week: int = defaults.LIVE_SCORES_PER_WEEK,
    live_release: str = defaults.LIVE_RELEASE,
    model_roots: Sequence[str | Path] = (),
    oauth: bool = False,
    resamples: int = RESAMPLES,
    title: str = "FreshStack leaderboard",
    drift_reports: Sequence[str | Path] = (),
    admins: Sequence[str] = (),
    notice: str = "",
    score_apart: bool = False,
    board_url: str = "",
    dataset_id: str = "",
    worker_here: bool = False,
) -> gr.Blocks:
    """The whole app for one dataset and one store (tables are created if missing).

    With `oauth` the page shows the Hugging Face sign-in and takes submissions from signed-in users only; `admins`
    (Hugging Face user names) see the Admin tab, hidden from everyone else. A `notice` (plain text, e.g. that the
    store is ephemeral) heads every tab and the served HTML. One identity may have `live_per_week` models scored live
    in 7 days, shown by `live_release`; `worker_here`: the About tab says a worker in this process scores them."""
    ctx = dataset if isinstance(dataset, Dataset) else Dataset(dataset)
    store.create_all()
    ctx.warm()
    given = (reported_path, max_file_mb, rate_limit, model_roots, oauth, resamples, drift_reports, admins, score_apart)
    settings = Settings(*given, live_per_week, live_release, worker_here, board_url, dataset_id)
    with gr.Blocks(title=title, analytics_enabled=False) as demo:
        if notice:
            gr.HTML(first_paint.notice_markup(notice), elem_id=first_paint.NOTICE_ID)
        gr.Markdown(f"# {title}\nNugget-aware retrieval on FreshStack: {', '.join(ctx.topics)}.")
        if oauth:
            sign_in_row(demo)
        with gr.Tabs() as tab_row:
            page = Page(demo, tab_row, ctx, store, settings)
            shown = [tab for tab in (kind() for kind in tabs.TABS) if tab.shown(page)]
            for tab in shown:
                with gr.Tab(tab.label, id=tab.id, visible=not tab.private) as item:
                    page.publish(f"tab.{tab.id}", item)  # a private tab shows itself to whom it may
                    tab.layout(page)
        page.chain_load()
        for tab in shown:
            tab.wire(page)
    gradio_costs.queue(demo, default_concurrency_limit=defaults.WRITE_CONCURRENCY)  # each event names its own
    demo.first_paint_rows = page.first_paint_rows  # served by launch_app (see leaderboard.page.first_paint)
    demo.first_paint_notice = notice
    return demo


def launch_app(
    demo: gr.Blocks,
    *,
    host: str = "127.0.0.1",
    port: int | None = None,
    max_file_mb: float = defaults.MAX_UPLOAD_MB,
    prevent_thread_lock: bool = False,
    quiet: bool = False,
) -> Any:
    """Serve `demo` in `theme()`, events in threads of their own; Gradio checks `transfer_bytes` on each upload."""
    os.environ.setdefault("GRADIO_ANALYTICS_ENABLED", "False")
    gradio_costs.install()
    launched = demo.launch(
        max_threads=defaults.EVENT_THREADS,
        theme=theme(),
        server_name=host,
        server_port=port,
        max_file_size=defaults.transfer_bytes(max_file_mb),
        prevent_thread_lock=True,  # the first paint is installed on the started app, then we block if asked
        quiet=quiet,
        show_error=True,
        ssr_mode=False,
        share=False,
    )
    if (rows := getattr(demo, "first_paint_rows", None)) is not None:
        first_paint.install(demo.server_app, rows, getattr(demo, "first_paint_notice", ""))
    gc.freeze()  # what the board built lives as long as it serves: out of the collector's full passes (100 ms each)
    if not prevent_thread_lock:
        demo.block_thread()
    return launched
