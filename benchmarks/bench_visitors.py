"""Fifty visitors and six submissions at once on the real board (`freshstack-hf leaderboard`, a SQLite store holding
26 systems: the BM25 baseline and 25 submitted runs, on five synthetic topics of the paper's query counts, 672
queries in all).

Every visitor, all 50 released together with the 6 submitters, does over HTTP what a browser's first visit does:

* **first paint**: from the visitor's start, `GET /` (the page's HTML, as Gradio serves it with the first paint's
  script) and then `GET /first-paint.json` (the rows that script draws before Gradio's JavaScript has started,
  `leaderboard.page.first_paint`), until that answer's last byte: what the browser needs before it can draw the
  table's first rows;
* **/table**: then the table's event through Gradio's queue, as the page's own script calls it: `POST
  /gradio_api/queue/join` (the `/table` event, page 1 of the default view) and the session's event stream
  (`GET /gradio_api/queue/data`) read until the event's `process_completed`: time from the join to the rows.

Each submitter uploads its own run file (distinct rankings, every query, 100 deep) through gradio_client's
`/submit_run`, which scores it at once and stores it. Afterwards the bench checks that every request was answered
without error, that each submission is stored exactly once, and that the table then lists all 32 systems.

The same load runs first against the board served as before, for the ratio (same run, a fresh copy of the same
store): `FRESHSTACK_READ_CONCURRENCY=8`, the reads 8 at a time (the `/table` event had 8 of its own), and
`FRESHSTACK_VIEW_CACHE=0`, every page, first paint and view rendered again for each request. Goals: `/table` p95
< 2 s, first paint p95 < 1 s (p95 by nearest rank: the third slowest of 50). The visitors are threads of this
process, on the same two cores as the board: what they cost is part of what they measure, as on a small server.
The topics, the seeded store and the submitted runs are written once under `bench-out/visitors/` and reused
(delete it to rebuild).
"""

from __future__ import annotations

import json
import math
import os
import shutil
import statistics
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from benchmarks.bench_leaderboard import free_port
from benchmarks.goals import judge

OUT = Path("bench-out") / "visitors"
REPO = OUT / "freshstack"
SEEDED_DB = OUT / "seeded.db"
TOPICS = {"langchain": 203, "yolo": 57, "laravel": 184, "angular": 129, "godot": 99}  # the paper's query counts
DOCS = 4_000  # per topic: enough for runs 100 deep of mostly unjudged documents
SEEDED = 25  # submitted runs stored before the visitors come; with the BM25 baseline, 26 systems
VISITORS = 50
SUBMISSIONS = 6
DEPTH = 100
TABLE_GOAL_S = 2.0
FIRST_PAINT_GOAL_S = 1.0
EXE = Path(sys.executable).parent / "freshstack-hf"
ENV = {**os.environ, "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1", "GRADIO_ANALYTICS_ENABLED": "False"}


def build_inputs() -> list[Path]:
    """The topics, the seeded store (BM25 + `SEEDED` runs, submitted as the board's submitter stores them) and the
    runs the bench submits; made once."""
    from freshstack_hf.repo.dataset import Dataset
    from freshstack_hf.repo.writer import write_topics
    from freshstack_hf.synth import SynthConfig, synth_topic
    from leaderboard.store.store import Store
    from leaderboard.tracks.retrieval.baseline_rows import compute_baselines
    from leaderboard.tracks.retrieval.run_submit import RunSubmitter

    submitted = [OUT / f"submitted-{i}.trec" for i in range(SUBMISSIONS)]
    done = OUT / "inputs.done"
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
                "--port", str(self.port)]  # fmt: skip
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


def queued_event(client: Any, url: str, fn_index: int, data: list[Any]) -> dict[str, Any]:
    """One event through Gradio's queue as the page's script sends it (join, then the session's event stream);
    returns the `process_completed` message."""
    session = uuid.uuid4().hex[:11]
    joined = client.post(url + "gradio_api/queue/join", json={"data": data, "fn_index": fn_index,
                         "session_hash": session, "event_data": None, "trigger_id": None})  # fmt: skip
    joined.raise_for_status()
    event_id = joined.json()["event_id"]
    with client.stream("GET", url + "gradio_api/queue/data", params={"session_hash": session}) as stream:
        for line in stream.iter_lines():
            if not line.startswith("data:"):
                continue
            message = json.loads(line[5:])
            if message.get("msg") == "process_completed" and message.get("event_id") == event_id:
                return message
    raise RuntimeError("the event stream closed before the event completed")


@dataclass
class Outcome:
    """What one crowd met: each visitor's two times, every failure (a request, a check afterwards) and what each
    submission answered; written by many threads."""

    first_paint: list[float] = field(default_factory=list)
    table: list[float] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    submitted: list[dict[str, Any]] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def record(self, what: Callable[[], None]) -> None:
        try:
            what()
        except Exception as exc:  # every failure is counted and shown, none stops the others
            with self.lock:
                self.errors.append(f"{type(exc).__name__}: {exc}"[:300])


def visit(board: Board, table_fn: int, outcome: Outcome, start: threading.Barrier) -> None:
    """One visitor's first visit (the module docstring says what each time covers), on its own connection."""
    import httpx

    from leaderboard.tracks.retrieval import leaderboard_table as tbl

    # The render event's inputs as the page sends them: the filters, page 1, the snapshot ("": the newest).
    view = ["", list(tbl.TYPES), [*tbl.SIZE_BUCKETS, tbl.UNKNOWN_SIZE], "all topics", tbl.default_sort(), "desc", 1, ""]
    with httpx.Client(timeout=120) as client:
        start.wait()
        began = time.perf_counter()
        page = client.get(board.url)
        page.raise_for_status()
        rows = client.get(board.url + "first-paint.json")
        rows.raise_for_status()
        if not rows.json()["rows"]:
            raise RuntimeError("the first paint has no rows")
        painted = time.perf_counter()
        done = queued_event(client, board.url, table_fn, view)
        finished = time.perf_counter()
    if not done.get("success") or not done["output"]["data"][0]["value"]["data"]:
        raise RuntimeError(f"/table failed: {str(done.get('output'))[:200]}")
    with outcome.lock:
        outcome.first_paint.append(painted - began)
        outcome.table.append(finished - painted)


def submit(client: Any, path: Path, outcome: Outcome, start: threading.Barrier) -> None:
    """One submission, as a submitter's `gradio_client` sends it; anything but a scored row is a failure."""
    from gradio_client import handle_file

    start.wait()
    _, status = client.predict(handle_file(str(path)), "auto", path.stem, "bench run", "", api_name="/submit_run")
    if status.get("status") != "scored":
        raise RuntimeError(f"{path.name}: {status}")
    with outcome.lock:
        outcome.submitted.append(status)


def crowd(board: Board, submitted: list[Path]) -> Outcome:
    """`VISITORS` visitors and the submissions, released together; then what the store and the table hold."""
    from gradio_client import Client

    table_fn = board.fn_index("table")
    clients = [Client(board.url, verbose=False) for _ in submitted]  # connected before the clock starts
    outcome = Outcome()
    start = threading.Barrier(VISITORS + len(submitted))
    threads = [
        threading.Thread(target=outcome.record, args=(lambda: visit(board, table_fn, outcome, start),))
        for _ in range(VISITORS)
    ]
    threads += [
        threading.Thread(target=outcome.record, args=(lambda c=c, p=p: submit(c, p, outcome, start),))
        for c, p in zip(clients, submitted, strict=True)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    for client in clients:
        client.close()
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
    with httpx.Client(timeout=120) as client:
        rows = client.get(board.url + "first-paint.json").json()
    if f"of {len(names):,} systems" not in rows["caption"]:
        outcome.errors.append(f"the table afterwards says {rows['caption']!r}, the store holds {len(names)} systems")


def percentile(values: list[float], q: float) -> float:
    """The q-th percentile by nearest rank: of 50 requests, p95 is the 48th fastest (the third slowest)."""
    ordered = sorted(values)
    return ordered[max(0, math.ceil(q / 100 * len(ordered)) - 1)]


def report(label: str, outcome: Outcome, reference: Outcome | None = None) -> None:
    """The outcome's figures; with a `reference` (the board as it was, same run) they are this board's and are
    judged against their goals (`benchmarks.goals`)."""
    stored = len(outcome.submitted)
    whole = not outcome.errors and stored == SUBMISSIONS
    verdict = (
        judge(f"{VISITORS} visitors and {SUBMISSIONS} submissions at once", f"{len(outcome.errors)} errors, "
              f"{stored} of {SUBMISSIONS} stored", "no error, nothing lost", whole)
        if reference is not None else f"{'ok' if whole else 'MISSED'}"
    )  # fmt: skip
    print(f"  {label}: errors {len(outcome.errors)}, submissions stored {stored} of {SUBMISSIONS}: {verdict}")
    for error in outcome.errors[:5]:
        print(f"    error: {error}")
    for name, values, goal, old in (
        ("first paint", outcome.first_paint, FIRST_PAINT_GOAL_S, reference and reference.first_paint),
        ("/table", outcome.table, TABLE_GOAL_S, reference and reference.table),
    ):
        if not values:
            print(f"    {name}: no answer")
            continue
        p50, p95 = statistics.median(values), percentile(values, 95)
        if reference is None:
            print(f"    {name:<12} p50 {p50:5.2f} s  p95 {p95:5.2f} s")
            continue
        ratio = f"; before: p95 {percentile(old, 95):.2f} s, {percentile(old, 95) / p95:.1f}x" if old else ""
        verdict = judge(f"{name} p95, {VISITORS} visitors at once", f"{p95:.2f} s", f"< {goal:g} s", p95 < goal)
        print(f"    {name:<12} p50 {p50:5.2f} s  p95 {p95:5.2f} s  ({verdict}{ratio})")


def main() -> None:
    import tempfile

    from leaderboard.defaults import READ_CONCURRENCY_ENV, VIEW_CACHE_ENV

    OUT.mkdir(parents=True, exist_ok=True)
    submitted = build_inputs()
    print(f"  {len(TOPICS)} topics, {sum(TOPICS.values())} queries, {DOCS:,} docs each; {SEEDED + 1} systems stored; "
          f"{VISITORS} visitors and {SUBMISSIONS} submissions at once")  # fmt: skip
    results: dict[str, Outcome] = {}
    with tempfile.TemporaryDirectory(prefix="bench-visitors-") as tmp:
        served = {k: v for k, v in ENV.items() if k not in (READ_CONCURRENCY_ENV, VIEW_CACHE_ENV)}  # the defaults
        for label, env in (("before", {READ_CONCURRENCY_ENV: "8", VIEW_CACHE_ENV: "0"}), ("now", {})):
            with Board(Path(tmp) / f"{len(results)}.db", {**served, "FRESHSTACK_DATA_DIR": tmp, **env}) as board:
                results[label] = crowd(board, submitted)
    report("before (reads 8 at a time, every request rendered)", results["before"])
    report("now (reads at once, each view rendered once per store state)", results["now"], results["before"])


if __name__ == "__main__":
    main()
