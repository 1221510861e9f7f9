"""A test-only evaluate function for the worker: the real model job (`model_job.evaluate_model`, through the worker's
`evaluate_job`), which tries, from inside its own process and right where its live ranking starts (after the seal),
what a submitted model could try: a TCP connection to a server listening on this machine, a UDP socket, an
io_uring, reading the Hub token file, a file of the Hub cache, the private repo, the store, the worker's
/proc/PID/environ; and lists every file and parquet column of the job folder it was handed. What it found goes back
in its results' parameters (`probe`), where the test reads it from the store.

`probe(targets, folder)` is the same probe on its own, for the control: run in a process nobody sealed, each
attempt succeeds."""

from __future__ import annotations

import ctypes
import dataclasses
import os
import socket
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq

from leaderboard.store.records import JobRecord
from leaderboard.tracks.retrieval.jobs import model_job
from leaderboard.worker.job_contract import JobOutput
from leaderboard.worker.jobs import evaluate_job

PROBE = "probe"  # the payload key of the targets, and the results' parameter of what was found


def _tried(attempt: Any) -> str:
    """ "ok", or how the attempt was refused (the error's type and number)."""
    try:
        attempt()
    except OSError as exc:
        return f"refused: {type(exc).__name__} {exc.errno}"
    return "ok"


def _tcp(port: int) -> None:
    with socket.create_connection(("127.0.0.1", port), timeout=5):
        pass


def _udp() -> None:
    socket.socket(socket.AF_INET, socket.SOCK_DGRAM).close()


def _io_uring() -> None:
    libc = ctypes.CDLL(None, use_errno=True)
    params = ctypes.create_string_buffer(120)  # struct io_uring_params, zeroed
    fd = libc.syscall(425, 4, params)
    if fd < 0:
        code = ctypes.get_errno()
        raise OSError(code, os.strerror(code))
    os.close(fd)


def _read(path: str) -> None:
    Path(path).read_bytes()


def listing(folder: str) -> dict[str, list[str]]:
    """Every file under `folder` (its path inside it), with the columns of each parquet file ([] for another)."""
    found = {}
    for path in sorted(Path(folder).rglob("*")):
        if path.is_file():
            columns = pq.read_schema(path).names if path.suffix == ".parquet" else []
            found[path.relative_to(folder).as_posix()] = columns
    return found


def probe(targets: dict[str, Any], folder: str | None) -> dict[str, Any]:
    """Each attempt's outcome, and the listing of `folder` (the job folder handed, if any)."""
    return {
        "tcp": _tried(lambda: _tcp(int(targets["port"]))),
        "udp": _tried(_udp),
        "io_uring": _tried(_io_uring),
        "token": _tried(lambda: _read(targets["token"])),
        "hub_cache": _tried(lambda: _read(targets["hub_file"])),
        "private_repo": _tried(lambda: _read(targets["private_file"])),
        "store": _tried(lambda: _read(targets["store"])),
        "worker_environ": _tried(lambda: _read(f"/proc/{int(targets['worker_pid'])}/environ")),
        "folder": listing(folder) if folder else None,
    }


def evaluate_probing(job: JobRecord, **options: Any) -> JobOutput:
    """The worker's `evaluate_job` on a model job, probing where its live ranking starts (see the module docstring)."""
    found: dict[str, Any] = {}
    real = model_job.rank_embargoed

    def probing(split: Any, topics: list[str], rank: Any) -> Any:
        found.update(probe(job.payload[PROBE], (split or {}).get("folder")))
        found["handed"] = {k: v for k, v in (split or {}).items() if k != "folder"}
        return real(split, topics, rank)

    model_job.rank_embargoed = probing  # this process's module only: the job process is the test's
    try:
        output = evaluate_job(job, **options)
    finally:
        model_job.rank_embargoed = real
    meta = dataclasses.replace(output.meta, parameters={**output.meta.parameters, PROBE: found})
    return dataclasses.replace(output, meta=meta)
