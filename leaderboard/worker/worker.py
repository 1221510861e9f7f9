"""The evaluation worker: claims jobs from the store, runs each under a lease and a time cap, stores the outcome.

The job itself runs in a child process (`leaderboard.worker.job_process`, forked by the run's job launcher,
`job_launcher`, which imports the job code once) while this process only supervises: it renews the lease, enforces
the time cap by killing the child, and writes the outcome through the store. If this process dies, the child
notices and exits, the lease lapses and another worker takes the job; if it is only slow, its late result is
refused by the store.

The worker never computes a metric: `evaluate_job` (by default `leaderboard.worker.jobs.evaluate_job`, which runs the
handler a track registered for the job's kind) turns a job into a `JobOutput`; the one score it computes itself is
a live one, through the library, from the ranking a live-scored job returns of the embargoed questions
(`worker.live_pass`): the job process, which loads a submitted model, is handed their texts and the documents,
never the judgments. The store is the only thing a worker shares with the app: what a job needs from it (its kind's
`inputs`) is read here and handed to the job, and what a job leaves (the ranking behind its scores, a fill) is
stored with its results, in one transaction.
"""

from __future__ import annotations

import dataclasses
import logging
import os
import signal
import socket
import threading
import time
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from sqlalchemy.exc import SQLAlchemyError

from freshstack_hf.errors import FreshStackError
from leaderboard.scoring import ranking_blobs
from leaderboard.store.records import JobRecord
from leaderboard.store.store import Store
from leaderboard.worker.job_contract import INPUTS, JobOutput
from leaderboard.worker.job_launcher import JobLauncher
from leaderboard.worker.job_process import EvaluateJob, ProcessRun, ThreadRun, describe_error
from leaderboard.worker.jobs import JOB_KINDS, kept_secrets
from leaderboard.worker.jobs import evaluate_job as default_evaluate_job
from leaderboard.worker.live_pass import LivePass, live_pass
from leaderboard.worker.private_split import live_runs_folder

log = logging.getLogger(__name__)

# The secrets a job kind's process keeps, as its track registered them (`JobKind.keeps`): the RAG track's jobs
# send text to the operator's endpoint and load no submitted code, so they keep that endpoint's key, nothing else.
KIND_SECRETS: dict[str, tuple[str, ...]] = kept_secrets()


def default_worker_id() -> str:
    """Unique across machines and restarts: a lease must never be mistaken for another worker's."""
    return f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"


@dataclass
class WorkerStats:
    done: int = 0
    failed: int = 0
    released: int = 0
    lost: int = 0

    def record(self, outcome: str) -> None:
        setattr(self, outcome, getattr(self, outcome) + 1)


@dataclass
class _Flags:
    stop: threading.Event  # finish the current job, then exit
    abort: threading.Event  # give the current job back now


def _install_signal_handlers(flags: _Flags) -> Callable[[], None]:
    """First SIGTERM/SIGINT: stop after the current job. Second: abort it and hand it back to the queue."""
    if threading.current_thread() is not threading.main_thread():
        return lambda: None

    def handle(signum: int, _frame: Any) -> None:
        if flags.stop.is_set():
            log.warning("signal %d again: aborting the current job and returning it to the queue", signum)
            flags.abort.set()
        else:
            log.warning("signal %d: stopping after the current job (send it again to abort the job)", signum)
            flags.stop.set()

    previous = {sig: signal.signal(sig, handle) for sig in (signal.SIGTERM, signal.SIGINT)}

    def restore() -> None:
        for sig, old in previous.items():
            signal.signal(sig, old)

    return restore


def _heartbeat(store: Store, job: JobRecord, worker_id: str, lease_seconds: float) -> bool:
    try:
        return store.queue.heartbeat(job.id, worker_id, lease_seconds)
    except SQLAlchemyError as exc:  # a database blip: keep working, the store refuses the result if the lease lapsed
        log.warning("heartbeat for job %d failed (%s); retrying", job.id, exc.__class__.__name__)
        return True


def with_inputs(store: Store, job: JobRecord) -> JobRecord:
    """`job` with the blobs its kind reads (`JobKind.inputs`) in its payload, verified: the job's system's, or those
    of the system its payload names as `inputs_from`; a role the system keeps no blob for is left out (the handler
    says what is missing)."""
    kind = JOB_KINDS.get(job.kind)
    if kind is None or not kind.inputs:
        return job
    owner = int(job.payload.get("inputs_from") or job.system_id)  # a re-scoring job reads the row it re-scores
    found = {role: data for role in kind.inputs if (data := store.blobs.system_blob(owner, role)) is not None}
    return dataclasses.replace(job, payload={**job.payload, INPUTS: found})


def _claim(
    store: Store, worker_id: str, lease_seconds: float, kinds: tuple[str, ...] | None, poll_seconds: float
) -> JobRecord | None:
    """The next job this worker may run, or None (none queued, or the store could not be reached this time)."""
    try:
        return store.queue.claim_job(worker_id, lease_seconds, kinds)
    except SQLAlchemyError as exc:
        log.warning("claiming failed (%s); retrying in %g s", exc.__class__.__name__, poll_seconds)
        return None


STOP_CHECK_SECONDS = 0.25  # how soon an idle worker that waits on its store's queue notices it was stopped


def _wait_for_work(stop: threading.Event, queued: threading.Event, seconds: float) -> None:
    """Wait `seconds` between claims, less when stopped or when this process queued a job (the board's own worker:
    its submissions start at once; a worker elsewhere learns of a job at its next poll)."""
    deadline = time.monotonic() + seconds
    while not stop.is_set() and (left := deadline - time.monotonic()) > 0:
        if queued.wait(min(left, STOP_CHECK_SECONDS)):
            return


def run_job(
    store: Store,
    job: JobRecord,
    evaluate_job: EvaluateJob,
    worker_id: str,
    *,
    lease_seconds: float = 300.0,
    time_cap_seconds: float = 3600.0,
    isolate: bool = True,
    abort: threading.Event | None = None,
    private_repo: str | None = None,
    live_runs: str | None = None,
    launcher: JobLauncher | None = None,
) -> str:
    """Run one claimed job to its end; returns the outcome: done, failed, released or lost.

    The run a job returns (`JobOutput.runs`) is stored with its results, as the system's ranking blob. A kind scored
    live is first handed its live pass (`worker.live_pass`: the embargoed questions of `private_repo`, else
    $FRESHSTACK_PRIVATE_REPO, in a job folder removed when the job ends; reading them may download a revision,
    after which the lease is renewed), and the ranking it returns is scored here. With `live_runs` that ranking is
    kept there. `launcher` forks the job's process (`run_worker` keeps one for its jobs); by default a new one.
    """
    try:
        job = with_inputs(store, job)
    except FreshStackError as exc:
        store.queue.fail_job(job.id, worker_id, str(exc))
        return "failed"
    live = live_pass(job, private_repo, live_runs, isolate=isolate)
    try:
        handed = live.job(job)
        if live.read and not _heartbeat(store, job, worker_id, lease_seconds):
            log.warning("job %d: lease lost while reading the private split; dropping it", job.id)
            return "lost"
        try:
            runner = (
                ProcessRun(
                    evaluate_job,
                    handed,
                    KIND_SECRETS.get(job.kind, ()),
                    imports=_imports(job, evaluate_job),
                    launcher=launcher,
                )
                if isolate
                else ThreadRun(evaluate_job, handed)
            )
        except FreshStackError as exc:  # no process could be started for it: another worker may
            store.queue.release_job(job.id, worker_id, str(exc))
            return "released"
        try:
            answer = _supervise(store, job, runner, worker_id, lease_seconds, time_cap_seconds, abort)
        finally:
            runner.close()
    finally:
        live.close()  # the job process is gone: its folder goes too
    return answer if isinstance(answer, str) else _stored(store, job, worker_id, live, answer)


def _imports(job: JobRecord, evaluate_job: EvaluateJob) -> tuple[str, ...]:
    """What the job launcher imports before it forks the job: what the job's kind declares (`JobKind.imports`),
    when the kind's handler is what runs it (the registry's `evaluate_job`, not a caller's own function)."""
    kind = JOB_KINDS.get(job.kind)
    runs_handler = getattr(evaluate_job, "func", evaluate_job) is default_evaluate_job
    return kind.imports_for(job.payload) if kind is not None and runs_handler else ()


def _stored(store: Store, job: JobRecord, worker_id: str, live: LivePass, answer: tuple[str, Any]) -> str:
    """The outcome of a job that answered: its scores (and its live pass's) stored, or why not."""
    status, value = answer
    if status == "crash":
        store.queue.release_job(job.id, worker_id, value)
        return "released"
    if status == "ok" and not isinstance(value, JobOutput):
        status, value = "error", f"the evaluate function returned {type(value).__name__}, not a JobOutput"
    if status == "error":
        store.queue.fail_job(job.id, worker_id, value)
        return "failed"
    try:
        value = live.finish(job.payload, value)
        blobs = {**(value.blobs or {}), **ranking_blobs(value.runs)}
        extra = {"size": value.size, "cutoff": value.cutoff, "follow_up": value.follow_up, "blobs": blobs}
        stored = store.queue.finish_job(job.id, worker_id, value.results, value.meta, **extra)
    except (ValueError, TypeError, FreshStackError, SQLAlchemyError) as exc:
        store.queue.fail_job(job.id, worker_id, f"results could not be stored: {describe_error(exc)}")
        return "failed"
    return "done" if stored else "lost"


def _supervise(
    store: Store,
    job: JobRecord,
    runner: ProcessRun | ThreadRun,
    worker_id: str,
    lease_seconds: float,
    time_cap_seconds: float,
    abort: threading.Event | None,
) -> tuple[str, Any] | str:
    """Wait for the job's answer, renewing its lease and killing it at the time cap or on `abort`: the answer, or the
    outcome (released, failed, lost) when there is none."""
    started = time.monotonic()
    beat_every = max(lease_seconds / 3.0, 0.05)
    next_beat = started + beat_every
    try:
        while True:
            now = time.monotonic()
            answer = runner.wait(max(0.0, min(next_beat, started + time_cap_seconds, now + 0.5) - now))
            if answer is not None:
                return answer
            now = time.monotonic()
            if abort is not None and abort.is_set():
                runner.kill()
                store.queue.release_job(job.id, worker_id)
                return "released"
            if now - started >= time_cap_seconds:
                runner.kill()
                store.queue.fail_job(job.id, worker_id, f"time cap: the evaluation ran past {time_cap_seconds:g} s")
                return "failed"
            if now >= next_beat:
                next_beat = now + beat_every
                if not _heartbeat(store, job, worker_id, lease_seconds):
                    log.warning("job %d: lease lost to another worker; dropping it", job.id)
                    runner.kill()
                    return "lost"
    except BaseException:
        runner.kill()
        raise


def run_worker(
    store: Store,
    evaluate_job: EvaluateJob | None = None,
    *,
    worker_id: str | None = None,
    once: bool = False,
    poll_seconds: float = 5.0,
    lease_seconds: float = 300.0,
    time_cap_seconds: float = 3600.0,
    isolate: bool = True,
    max_idle_seconds: float | None = None,
    stop: threading.Event | None = None,
    kinds: tuple[str, ...] | None = None,
    kind_time_caps: Mapping[str, float] | None = None,
    private_repo: str | None = None,
    live_runs: str | None = None,
) -> WorkerStats:
    """Claim and run jobs until stopped (signal or `stop`), after one job with `once`, or when idle too long.

    `kinds` limits the worker to those job kinds (the leaderboard's own baseline worker); default: every kind.
    `kind_time_caps` gives some kinds a time cap of their own (the app's baselines, which encode whole corpora).
    `private_repo` (else $FRESHSTACK_PRIVATE_REPO) is the private repo live-scored jobs read (`private_split`);
    `live_runs` (else $FRESHSTACK_LIVE_RUNS) the folder they keep their live rankings in (`live_runs_folder`: made
    and checked here, before any job is claimed; none kept by default)."""
    evaluate_job = evaluate_job or default_evaluate_job
    kept = live_runs_folder(live_runs)
    worker_id = worker_id or default_worker_id()
    flags = _Flags(stop or threading.Event(), threading.Event())
    restore = _install_signal_handlers(flags)
    stats = WorkerStats()
    idle_since = time.monotonic()
    log.info("worker %s polling %r", worker_id, store)
    launcher = JobLauncher()  # started with the first isolated job: its imports serve every job of the run
    each_job: dict[str, Any] = {"lease_seconds": lease_seconds, "isolate": isolate, "abort": flags.abort}
    each_job |= {"private_repo": private_repo, "live_runs": str(kept) if kept else None, "launcher": launcher}
    try:
        while not flags.stop.is_set():
            store.queue.queued.clear()  # before claiming: a job queued from now on wakes the wait below
            job = _claim(store, worker_id, lease_seconds, kinds, poll_seconds)
            if job is None:
                if max_idle_seconds is not None and time.monotonic() - idle_since >= max_idle_seconds:
                    break
                _wait_for_work(flags.stop, store.queue.queued, poll_seconds)
                continue
            time_cap = (kind_time_caps or {}).get(job.kind, time_cap_seconds)
            outcome = run_job(store, job, evaluate_job, worker_id, time_cap_seconds=time_cap, **each_job)
            log.info("job %d: %s", job.id, outcome)
            stats.record(outcome)
            idle_since = time.monotonic()
            if once:
                break
    finally:
        launcher.close()
        restore()
    return stats
