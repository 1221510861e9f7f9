"""Fifty visitors and six submissions at once on the real board (`freshstack-hf leaderboard`, a SQLite store holding
61 systems: the BM25 baseline and 60 submitted runs, on five synthetic topics of the paper's query counts, 672
queries in all).

Every visitor, all 50 released together with the 6 submitters, does over HTTP what a browser's first visit does:

* **first paint**: from the visitor's start, `GET /` (the page's HTML, as Gradio serves it with the first paint's
  script) and then `GET /first-paint.json` (the rows that script draws before Gradio's JavaScript has started,
  `leaderboard.page.first_paint`), until that answer's last byte: what the browser needs before it can draw the
  table's first rows;
* **/table**: then the table's event through Gradio's queue, as the page's own script calls it: `POST
  /gradio_api/queue/join` (the `/table` event) and the session's event stream (`GET /gradio_api/queue/data`)
  read until the event's `process_completed`: time from the join to the rows. One crowd asks for page 1 of the
  default view, another for a view a visitor makes (the baselines unticked, sorted by Recall@50, page 2).

Each submitter does what the page's script does with a run file: uploads it (`POST /gradio_api/upload`, distinct
rankings, every query, 100 deep) and joins the `/submit_run` event, which scores it and stores it. Afterwards
the bench checks that every request was answered without error, that each submission is stored exactly once,
and that the table then lists every system.

The visitors and submitters are coroutines of one event loop in this process, each on its own kept connection
(`benchmarks.light_http`: as browsers on other machines, they should cost the board nothing; here they share its
two cores, and the CPU seconds each side used are printed). The load runs four times, each on a fresh copy of the
same store: against the board served as before (`FRESHSTACK_READ_CONCURRENCY=8`, the reads 8 at a time, and
`FRESHSTACK_VIEW_CACHE=0`, every page, first paint and view rendered again for each request), for the ratio;
against the board now with no submission, for what reads cost alone; and against the board now with the six
submissions, once per view, judged against the goals: first paint p95 < 0.5 s, `/table` p95 < 1 s (p95 by
nearest rank: the third slowest of 50). The topics, the seeded
store and the submitted runs are written once under `bench-out/visitors/` and reused (delete it to rebuild).
"""

from __future__ import annotations

import asyncio
import gc
import json
import math
import os
import shutil
import statistics
import subprocess
import sys
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from benchmarks.bench_leaderboard import free_port
from benchmarks.figures import figure
from benchmarks.goals import judge
from benchmarks.light_http import LightClient

OUT = Path("bench-out") / "visitors"
REPO = OUT / "freshstack"
SEEDED_DB = OUT / "seeded.db"
TOPICS = {"langchain": 203, "yolo": 57, "laravel": 184, "angular": 129, "godot": 99}  # the paper's query counts
DOCS = 4_000  # per topic: enough for runs 100 deep of mostly unjudged documents
SEEDED = 60  # submitted runs stored before the visitors come; with the BM25 baseline, 61 systems (two pages)
VISITORS = 50
SUBMISSIONS = 6
DEPTH = 100
TABLE_GOAL_S = 1.0
FIRST_PAINT_GOAL_S = 0.5
EXE = Path(sys.executable).parent / "freshstack-hf"
ENV = {**os.environ, "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1", "GRADIO_ANALYTICS_ENABLED": "False"}
FIGURES = ("first paint", "/table")


def build_inputs() -> list[Path]:
    """The topics, the seeded store (BM25 + `SEEDED` runs, submitted as the board's submitter stores them) and the
    runs the bench submits; made once."""
    from freshstack_hf.repo.dataset import Dataset
    from freshstack_hf.repo.writer import write_topics
    from freshstack_hf.samples.synth import SynthConfig, synth_topic
    from leaderboard.store.store import Store
    from leaderboard.tracks.retrieval.jobs.baseline_rows import compute_baselines
    from leaderboard.tracks.retrieval.submissions.run_submit import RunSubmitter

    submitted = [OUT / f"submitted-{i}.trec" for i in range(SUBMISSIONS)]
    done = OUT / f"inputs-{SEEDED}.done"
    if done.exists():
        return submitted
    shutil.rmtree(OUT, ignore_errors=True)
    start = time.perf_counter()
    configs = {name: SynthConfig(queries=n, docs=DOCS, seed=i) for i, (name, n) in enumerate(TOPICS.items())}
    topics = [synth_topic(name, config) for name, config in configs.items()]
    write_topics(REPO, topics, source={"kind": "synthetic", "bench": "visitors"})
    dataset = Dataset(REPO)
    runs = [OUT / f"seeded-{i}.trec" for i in range(SEEDED)]
    write_runs(dataset, [*runs, *submitted])
    with Store(f"sqlite:///{SEEDED_DB}") as store:
        store.create_all()
        compute_baselines(store, dataset, methods=["bm25"])
        submitter = RunSubmitter(store, dataset, rate_limit=None)
        for i, path in enumerate(runs):
            outcome = submitter.submit(path, name=f"seeded run {i:02d}")
            if outcome.status != "scored":
                raise RuntimeError(f"seeding {path}: {outcome.message}")
            path.unlink()  # stored: the store keeps what the board needs of it
    done.write_text("ok\n")
    print(f"  inputs written in {time.perf_counter() - start:.0f} s ({OUT})")
    return submitted


def write_runs(dataset: Any, paths: list[Path]) -> None:
    """One run per path, each of its own quality: per query, its relevant documents kept with a probability that
    grows with the run's index, among random documents of the topic, `DEPTH` deep."""
    import numpy as np
    import pyarrow.parquet as pq

    from freshstack_hf.repo import layout
    from freshstack_hf.runs import write_run

    runs: list[dict[str, dict[str, float]]] = [{} for _ in paths]
    for name in dataset.topics:
        ids = pq.read_table(layout.config_path(dataset.folder, name, "corpus"), columns=["_id"]).column("_id")
        corpus = np.array(ids.to_pylist())
        qrels = pq.read_table(layout.config_path(dataset.folder, name, "qrels")).to_pylist()
        relevant: dict[str, list[str]] = {}
        for row in qrels:
            if row["score"] >= 1:
                relevant.setdefault(row["query-id"], []).append(row["corpus-id"])
        for r, run in enumerate(runs):
            rng = np.random.default_rng([r, len(name)])
            keep = 0.2 + 0.7 * r / max(1, len(paths) - 1)
            for query, docs in relevant.items():
                found = [d for d in docs if rng.random() < keep]
                ranked = list(dict.fromkeys(found + corpus[rng.choice(len(corpus), DEPTH, replace=False)].tolist()))
                order = rng.permutation(len(ranked))[:DEPTH]
                run[query] = {ranked[j]: float(DEPTH - k) for k, j in enumerate(order)}
    for run, path in zip(runs, paths, strict=True):
        write_run(run, path, tag=path.stem)


@dataclass
class Board:
    """A `freshstack-hf leaderboard` process on a copy of the seeded store."""

    db: Path
    env: dict[str, str]
    port: int = field(default_factory=free_port)
    proc: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/"

    def __enter__(self) -> Board:
        import httpx

        shutil.copyfile(SEEDED_DB, self.db)
        args = [str(EXE), "leaderboard", "--dataset", str(REPO), "--store", f"sqlite:///{self.db}", "--no-baselines",
                "--no-worker", "--port", str(self.port)]  # fmt: skip
        self.proc = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=self.env)
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and self.proc.poll() is None:
            try:
                if httpx.get(self.url + "first-paint.json", timeout=5).status_code == 200:
                    return self
            except httpx.HTTPError:
                pass
            time.sleep(0.2)
        self.__exit__()
        raise RuntimeError(f"the board did not start (exit code {self.proc.poll()})")

    def __exit__(self, *exc: object) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            self.proc.wait(30)

    def fn_index(self, api_name: str) -> int:
        """The queue's index of the event the page's API calls `api_name`."""
        import httpx

        config = httpx.get(self.url + "config", timeout=30).json()
        return next(d["id"] for d in config["dependencies"] if d.get("api_name") == api_name)


async def queued_event(client: LightClient, fn_index: int, data: list[Any]) -> dict[str, Any]:
    """One event through Gradio's queue as the page's script sends it (join, then the session's event stream);
    returns the `process_completed` message."""
    session = uuid.uuid4().hex[:11]
    joined = await client.post_json("gradio_api/queue/join", {"data": data, "fn_index": fn_index,
                                    "session_hash": session, "event_data": None, "trigger_id": None})  # fmt: skip
    joined.raise_for_status()
    event_id = joined.json()["event_id"]
    stream = client.lines("gradio_api/queue/data", {"session_hash": session})
    try:
        async for line in stream:
            if not line.startswith("data:"):
                continue
            message = json.loads(line[5:])
            if message.get("msg") == "process_completed" and message.get("event_id") == event_id:
                return message
    finally:
        await stream.aclose()
    raise RuntimeError("the event stream closed before the event completed")


@dataclass
class Outcome:
    """What one crowd met: each visitor's times, every failure (a request, a check afterwards), what each
    submission answered, and the CPU seconds the board (with its children) and the crowd used."""

    times: dict[str, list[float]] = field(default_factory=lambda: {name: [] for name in FIGURES})
    errors: list[str] = field(default_factory=list)
    submitted: list[dict[str, Any]] = field(default_factory=list)
    board_cpu: float = 0.0
    crowd_cpu: float = 0.0

    async def record(self, what: Any) -> None:
        try:
            await what
        except Exception as exc:  # every failure is counted and shown, none stops the others
            self.errors.append(f"{type(exc).__name__}: {exc}"[:300])


def views() -> tuple[list[Any], list[Any]]:
    """The `/table` event's inputs as the page sends them (the filters, the page, the snapshot; "" is the newest):
    the default view, and a visitor's own (the baselines unticked, sorted by Recall@50, page 2)."""
    from freshstack_hf.metrics import HEADLINE
    from leaderboard.tracks.retrieval.tables import table_columns, table_filters

    sizes = [*table_filters.SIZE_BUCKETS, table_filters.UNKNOWN_SIZE]
    default = ["", list(table_columns.TYPES), sizes, "all topics", table_columns.default_sort(), "desc", 1, ""]
    recall = next(m for m in HEADLINE if m.name.startswith("Recall"))
    types = [t for t in table_columns.TYPES if t != "baseline"]
    filtered = ["", types, sizes, "all topics", table_columns.column(table_columns.AVERAGE, recall), "desc", 2, ""]
    return default, filtered


async def visit(client: LightClient, table_fn: int, view: list[Any], outcome: Outcome, start: asyncio.Event) -> None:
    """One visitor's first visit (the module docstring says what each time covers), on connections of its own."""
    try:
        await start.wait()
        times = await first_visit(client, table_fn, view)
    finally:
        client.close()
    for name, took in zip(FIGURES, times, strict=True):
        outcome.times[name].append(took)


async def first_visit(client: LightClient, table_fn: int, view: list[Any]) -> list[float]:
    """(first paint, /table) of one visit."""
    began = time.perf_counter()
    page = await client.get("")
    page.raise_for_status()
    rows = await client.get("first-paint.json")
    rows.raise_for_status()
    if not rows.json()["rows"]:
        raise RuntimeError("the first paint has no rows")
    painted = time.perf_counter()
    done = await queued_event(client, table_fn, view)
    finished = time.perf_counter()
    if not done.get("success") or not done["output"]["data"][0]["value"]["data"]:
        raise RuntimeError(f"/table failed: {str(done.get('output'))[:200]}")
    return [painted - began, finished - painted]


async def submit(client: LightClient, submit_fn: int, path: Path, outcome: Outcome, start: asyncio.Event) -> None:
    """One submission as the page's script sends it: the file uploaded, then the `/submit_run` event; anything
    but a scored row is a failure."""
    try:
        await start.wait()
        outcome.submitted.append(await submitted_run(client, submit_fn, path))
    finally:
        client.close()


async def submitted_run(client: LightClient, submit_fn: int, path: Path) -> dict[str, Any]:
    """What the board answered a run file submitted through the page."""
    uploaded = await client.post_file("gradio_api/upload", "files", path.name, path.read_bytes())
    uploaded.raise_for_status()
    file = {"path": uploaded.json()[0], "orig_name": path.name, "meta": {"_type": "gradio.FileData"}}
    done = await queued_event(client, submit_fn, [file, "auto", path.stem, "bench run", "", ""])
    status = done["output"]["data"][1] if done.get("success") else done.get("output")
    if not isinstance(status, dict) or status.get("status") != "scored":
        raise RuntimeError(f"{path.name}: {str(status)[:200]}")
    return status


def cpu_seconds(pid: int) -> float:
    """User and system CPU seconds of process `pid` and its live children (the board's scoring child)."""
    tick = os.sysconf("SC_CLK_TCK")

    def own(p: int) -> float:
        fields = Path(f"/proc/{p}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / tick

    children = Path(f"/proc/{pid}/task/{pid}/children")
    kids = [int(k) for k in children.read_text().split()] if children.exists() else []
    return own(pid) + sum(own(k) for k in kids if Path(f"/proc/{k}").exists())


def crowd(board: Board, submitted: list[Path], view: list[Any]) -> Outcome:
    """`VISITORS` visitors asking for `view` and the submissions, released together; then what the store and the
    table hold."""
    table_fn, submit_fn = board.fn_index("table"), board.fn_index("submit_run")
    outcome = Outcome()

    async def everyone() -> None:
        start = asyncio.Event()
        tasks = [visit(LightClient(board.url), table_fn, view, outcome, start) for _ in range(VISITORS)]
        tasks += [submit(LightClient(board.url), submit_fn, path, outcome, start) for path in submitted]
        running = [asyncio.create_task(outcome.record(task)) for task in tasks]
        await asyncio.sleep(0.5)  # every visitor waiting at the start line
        start.set()
        await asyncio.gather(*running)

    assert board.proc is not None
    # The crowd's own collector stays out of the way while it runs: a pause of this process (its heap grows with
    # each crowd) would read as the board's slowness.
    gc.collect()
    gc.disable()
    try:
        board_before, crowd_before = cpu_seconds(board.proc.pid), time.process_time()
        asyncio.run(everyone())
        outcome.board_cpu = cpu_seconds(board.proc.pid) - board_before
        outcome.crowd_cpu = time.process_time() - crowd_before
    finally:
        gc.enable()
    check_stored(board, submitted, outcome)
    return outcome


def check_stored(board: Board, submitted: list[Path], outcome: Outcome) -> None:
    """Each submission stored exactly once, and the table listing every system afterwards."""
    import httpx

    from leaderboard.store.store import Store

    with Store(f"sqlite:///{board.db}") as store:
        names = [row.system.name for row in store.leaderboard_rows()]
    for path in submitted:
        if names.count(path.stem) != 1:
            outcome.errors.append(f"{path.stem} stored {names.count(path.stem)} times")
    rows = httpx.get(board.url + "first-paint.json", timeout=120).json()
    if f"of {len(names):,} systems" not in rows["caption"]:
        outcome.errors.append(f"the table afterwards says {rows['caption']!r}, the store holds {len(names)} systems")


def percentile(values: list[float], q: float) -> float:
    """The q-th percentile by nearest rank: of 50 requests, p95 is the 48th fastest (the third slowest)."""
    ordered = sorted(values)
    return ordered[max(0, math.ceil(q / 100 * len(ordered)) - 1)]


def report(
    label: str, outcome: Outcome, expected: int, reference: Outcome | None = None, view: str = "", key: str = ""
) -> None:
    """The outcome's figures; with a `reference` (the board as it was, same run) they are this board's and are
    judged against their goals (`benchmarks.goals`), `view` naming the table's view in the verdicts. With a `key`
    they are recorded for the docs (`benchmarks.figures`: `default_table_p95_s`, ...)."""
    stored = len(outcome.submitted)
    whole = not outcome.errors and stored == expected
    crowd_name = f"{VISITORS} visitors and {SUBMISSIONS} submissions at once{view}"
    outcome_text = f"{len(outcome.errors)} errors, {stored} of {expected} stored"
    if key:
        figure(f"{key}_outcome", outcome_text, what=f"what the crowd met: {label}")
    verdict = (
        judge(crowd_name, outcome_text, "no error, nothing lost", whole, f"{key}_outcome")
        if reference is not None else f"{'ok' if whole else 'MISSED'}"
    )  # fmt: skip
    print(f"  {label}: errors {len(outcome.errors)}, submissions stored {stored} of {expected}: {verdict}")
    cpu = f"the board {outcome.board_cpu:.1f} s (with its scoring child), the crowd {outcome.crowd_cpu:.1f} s"
    print(f"    CPU used: {cpu}")
    for error in outcome.errors[:5]:
        print(f"    error: {error}")
    for name in FIGURES:
        values = outcome.times[name]
        goal = FIRST_PAINT_GOAL_S if name == "first paint" else TABLE_GOAL_S
        if not values:
            print(f"    {name:<12} no answer")
            continue
        p50, p95 = statistics.median(values), percentile(values, 95)
        name_key = f"{key}_{name.strip('/').replace(' ', '_')}_p95_s"  # default_first_paint_p95_s, ..._table_p95_s
        if key:
            figure(name_key, p95, "s", ".2f", f"{name} p95: {label}")
        if reference is None:
            print(f"    {name:<12} p50 {p50:5.2f} s  p95 {p95:5.2f} s")
            continue
        old = reference.times[name]
        ratio = f"; {percentile(old, 95) / p95:.1f}x faster than before" if old else ""
        what = f"{name} p95, {VISITORS} visitors at once{view}"
        verdict = judge(what, f"{p95:.2f} s", f"< {goal:g} s", p95 < goal, name_key)
        print(f"    {name:<12} p50 {p50:5.2f} s  p95 {p95:5.2f} s  ({verdict}{ratio})")


def main() -> None:
    import tempfile

    from leaderboard.defaults import READ_CONCURRENCY_ENV, VIEW_CACHE_ENV

    OUT.mkdir(parents=True, exist_ok=True)
    submitted = build_inputs()
    print(f"  {len(TOPICS)} topics, {sum(TOPICS.values())} queries, {DOCS:,} docs each; {SEEDED + 1} systems stored; "
          f"{VISITORS} visitors and {SUBMISSIONS} submissions at once")  # fmt: skip
    default, filtered = views()
    old = {READ_CONCURRENCY_ENV: "8", VIEW_CACHE_ENV: "0"}
    crowds = {
        "before": (old, submitted, default),
        "alone": ({}, [], default),
        "default": ({}, submitted, default),
        "filtered": ({}, submitted, filtered),
    }
    results: dict[str, Outcome] = {}
    with tempfile.TemporaryDirectory(prefix="bench-visitors-") as tmp:
        served = {k: v for k, v in ENV.items() if k not in (READ_CONCURRENCY_ENV, VIEW_CACHE_ENV)}  # the defaults
        for label, (env, runs, view) in crowds.items():
            with Board(Path(tmp) / f"{label}.db", {**served, "FRESHSTACK_DATA_DIR": tmp, **env}) as board:
                results[label] = crowd(board, runs, view)
    report("before (reads 8 at a time, every request rendered), default view", results["before"], SUBMISSIONS)
    report("now, the visitors alone (no submission), default view", results["alone"], 0, key="alone")
    report("now, default view", results["default"], SUBMISSIONS, results["before"], key="default")
    report("now, filtered view (baselines unticked, sorted by Recall@50, page 2)", results["filtered"], SUBMISSIONS,
           results["before"], view=", filtered view", key="filtered")  # fmt: skip
    figure("systems", SEEDED + 1, "systems", ",d", "systems in the store the crowd reads")
    alone, beside = (percentile(results[k].times["/table"], 95) for k in ("alone", "default"))
    print(f"  /table p95 beside six submissions' scoring: {beside:.2f} s; with no submission: {alone:.2f} s")


if __name__ == "__main__":
    main()
