"""Leaderboard page with 1,000 systems in the store: time to the first table rows (goal: under 1 s) and to every row
(goal: under 2 s) in a real browser; the `/table` API's render (goal: under 2 s). The store (SQLite, in a temp folder)
gets 1,000 submitted runs scored on the five FreshStack topics, every measure of `MEASURES` with per-query values for
50 queries, i.e. 50,000 result rows, plus the BM25 baseline. The app is started on a free loopback port and timed
three ways: the plain functions (store read, frame build, formatting), the `/table` API through gradio_client and,
where Debian's chromium is installed, a real headless browser from navigation to the first rows visible (the plain
first paint of `leaderboard.first_paint` or the interactive table, whichever shows first), to the interactive table's
first rows, and to every row drawn (the table's row count, which Gradio keeps in `aria-rowcount`, reaches the
store's). "Cold" means a system was stored just before, so the app must re-read the whole store; "warm" is the usual
page load, with the board unchanged since the last. The browser figures are medians of `VISITS` page loads each (cold
and warm alternate), since one load on a shared 2-core machine varies by a second.
"""

from __future__ import annotations

import os
import random
import re
import socket
import tempfile
import time
from pathlib import Path
from typing import Any

SYSTEMS = 1_000
TOPICS = ["langchain", "yolo", "laravel", "angular", "godot"]
QUERIES = 50
GOAL_S = 2.0
FIRST_ROWS_GOAL_S = 1.0
EVERY_ROW_GOAL_S = 2.0
VISITS = 5
CHROMIUM = Path("/usr/bin/chromium")


def fill_store(store: Any, revision: str) -> None:
    from freshstack_hf.metrics import MEASURES
    from leaderboard.schema import ResultMeta

    rng = random.Random(0)
    meta = ResultMeta(revision, parameters={"job": "run", "bench": True})
    for i in range(SYSTEMS):
        results = {}
        for topic in TOPICS:
            per_query = {f"{topic}-{q}": {m.id: rng.random() for m in MEASURES} for q in range(QUERIES)}
            metrics = {m.id: sum(s[m.id] for s in per_query.values()) / QUERIES for m in MEASURES}
            ci = {m.id: (metrics[m.id] - 0.05, metrics[m.id] + 0.05) for m in MEASURES[:3]}
            results[topic] = {"metrics": metrics, "per_query": per_query, "ci": ci}
        size = rng.choice([None, 22_000_000, 335_000_000, 1_500_000_000, 7_000_000_000])
        store.add_system(
            name=f"system {i:04d}", kind="run", content_hash=f"bench-{i}", size=size, results=results, meta=meta
        )


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _verdict(seconds: float, goal: float = GOAL_S) -> str:
    return f"{seconds:6.3f} s  (goal < {goal:g} s: {'ok' if seconds < goal else 'MISSED'})"


def main() -> None:
    os.environ.setdefault("GRADIO_ANALYTICS_ENABLED", "False")
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    import gradio as gr

    from freshstack_hf.metrics import HEADLINE
    from freshstack_hf.repo.dataset import Dataset
    from freshstack_hf.repo.writer import write_topics
    from freshstack_hf.synth import SynthConfig, synth_topic
    from leaderboard.app import build_app, launch_app
    from leaderboard.archive import RunArchive
    from leaderboard.display import display, sort_frame
    from leaderboard.store import Store
    from leaderboard.tracks.retrieval import leaderboard_table as tbl
    from leaderboard.tracks.retrieval.baseline_rows import compute_baselines

    with tempfile.TemporaryDirectory(prefix="bench-leaderboard-") as tmp:
        root = Path(tmp)
        topics = [synth_topic(name, SynthConfig(queries=QUERIES, docs=400, seed=i)) for i, name in enumerate(TOPICS)]
        write_topics(root / "freshstack", topics, source={"kind": "synthetic", "bench": "leaderboard"})
        ctx = Dataset(root / "freshstack")
        store = Store(f"sqlite:///{root / 'lb.db'}")
        store.create_all()
        start = time.perf_counter()
        compute_baselines(store, ctx, methods=["bm25"], archive=RunArchive(root / "runs"), resamples=1000)
        fill_store(store, ctx.revision)
        print(f"store: {SYSTEMS + 1:,} systems x {len(TOPICS)} topics, built in {time.perf_counter() - start:.1f} s")

        start = time.perf_counter()
        rows = store.leaderboard_rows(measures=tuple(m.id for m in HEADLINE))  # what the app's table reads
        read = time.perf_counter()
        frame = tbl.build_frame(rows, ctx.topics, revision=ctx.revision)
        built = time.perf_counter()
        view = sort_frame(tbl.view_frame(frame), tbl.default_sort())
        gr.Dataframe(interactive=False).postprocess(display(view))
        done = time.perf_counter()
        print(
            f"plain functions: store read {read - start:.3f} s, frame {built - read:.3f} s, "
            f"sort+format+postprocess {done - built:.3f} s"
        )

        demo = build_app(ctx, store, archive_dir=root / "runs")
        port = _free_port()
        launch_app(demo, port=port, prevent_thread_lock=True, quiet=True)
        url = f"http://127.0.0.1:{port}/"
        try:
            from gradio_client import Client

            client = Client(url, verbose=False)
            args = (
                "",
                list(tbl.TYPES),
                [*tbl.SIZE_BUCKETS, tbl.UNKNOWN_SIZE],
                "all topics",
                tbl.default_sort(),
                "desc",
            )
            for state in ("cold", "warm"):
                if state == "cold":
                    touch(store, ctx.revision)
                start = time.perf_counter()
                value = client.predict(*args, api_name="/table")
                seconds = time.perf_counter() - start
                rows = len(value["value"]["data"])
                print(f"/table render via the API, {state} ({rows:,} rows): {_verdict(seconds)}")
            if CHROMIUM.is_file():
                stored_rows = lambda: len(store.leaderboard_rows(measures=(HEADLINE[0].id,)))  # noqa: E731
                _browser(url, lambda: touch(store, ctx.revision), stored_rows)
            else:
                print(f"browser time-to-table: skipped ({CHROMIUM} not installed)")
        finally:
            demo.close()
            store.close()


def touch(store: Any, revision: str) -> None:
    """A write (a new system) so the app's next render must re-read the store: a cold render."""
    from leaderboard.schema import ResultMeta

    scores = {t: {"metrics": {"alpha_ndcg@10": 0.1}} for t in TOPICS}
    store.add_system(
        name="late arrival",
        kind="run",
        content_hash=f"late-{time.time_ns()}",
        results=scores,
        meta=ResultMeta(revision),
    )


# True once the leaderboard table holds `n` rows (Gradio counts the header row in `aria-rowcount`).
EVERY_ROW = """(n) => {
    const grid = document.querySelector('#leaderboard-table [role=grid]');
    return grid !== null && Number(grid.getAttribute('aria-rowcount')) >= n + 1;
}"""


def _browser(url: str, touch_store: Any, stored_rows: Any) -> None:
    import statistics

    from playwright.sync_api import sync_playwright

    args = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--no-first-run"]
    times: dict[str, list[tuple[float, float, float]]] = {"cold": [], "warm": []}
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), headless=True, args=args)
        for state in ("cold", "warm") * VISITS:
            page = browser.new_page(viewport={"width": 1400, "height": 900})
            if state == "cold":
                touch_store()
            rows = stored_rows()
            start = time.perf_counter()
            page.goto(url, wait_until="commit")  # the clock runs from the navigation, not from the load event
            seen = page.locator("#first-paint, #leaderboard-table").get_by_text(re.compile(r"^system \d{4}$")).first
            seen.wait_for(state="visible", timeout=60_000)
            first = time.perf_counter() - start
            interactive = page.locator("#leaderboard-table").get_by_text(re.compile(r"^system \d{4}$")).first
            interactive.wait_for(state="attached", timeout=60_000)
            table_first = time.perf_counter() - start
            page.wait_for_function(EVERY_ROW, arg=rows, timeout=60_000, polling=20)
            times[state].append((first, table_first, time.perf_counter() - start))
            page.wait_for_timeout(1000)  # the page's later events (pickers, plots) finish before the next visit
            page.close()
        browser.close()
    for state, visits in times.items():
        first = statistics.median(f for f, _, _ in visits)
        table_first = statistics.median(t for _, t, _ in visits)
        every = statistics.median(e for _, _, e in visits)
        spread = ", ".join(f"{f:.2f}/{t:.2f}/{e:.2f}" for f, t, e in visits)
        label = f"browser ({state}, median of {len(visits)})"
        print(f"{label}: first table rows visible:  {_verdict(first, FIRST_ROWS_GOAL_S)}")
        print(f"{label}: interactive table's first rows: {table_first:.3f} s")
        print(f"{label}: every row drawn:           {_verdict(every, EVERY_ROW_GOAL_S)}")
        print(f"browser ({state}): each visit, visible/interactive/every (s): {spread}")


if __name__ == "__main__":
    main()
