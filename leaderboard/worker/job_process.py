"""How one job runs: in a spawned child process that drops secret-looking variables (killable), or in a thread.

The job itself runs in a child process (spawned, so no lock or CUDA state is inherited) while the worker only
supervises (`leaderboard.worker.worker`): killing is the only reliable way to stop a model stuck in native code, and
keeping the store out of the child means the code that touches a submitted model never sees the database URL.
The child drops secret-looking environment variables, except those its job kind keeps; if the supervisor dies,
the child notices and exits. It is a job process (`sandbox.mark_job_process`): a model job seals it once its model
is loaded (`sandbox.seal_job`), with a temporary folder of its own (TMPDIR) as the one place it may write besides
the embedding cache, removed when the job ends. What it sends back is read as data only: a pickle that names
anything but plain values, the job contract's records and numpy's arrays is refused (`_ResultReader`), so a model
that takes over its process cannot take over the worker through its answer.

A thread (`isolate=False`: tests, notebooks) cannot be killed, and is never sealed: it runs in the worker's own
process.
"""

from __future__ import annotations

import dataclasses
import io
import logging
import multiprocessing
import os
import pickle
import shutil
import signal
import tempfile
import threading
import time
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Any

from freshstack_hf.errors import FreshStackError
from leaderboard.store.records import JobRecord
from leaderboard.worker import sandbox
from leaderboard.worker.job_contract import JobOutput

log = logging.getLogger(__name__)

EvaluateJob = Callable[[JobRecord], JobOutput]
_SECRET_WORDS = {"TOKEN", "SECRET", "PASSWORD", "PASSWD", "APIKEY", "CREDENTIAL", "CREDENTIALS", "KEY"}
_SECRET_NAMES = {"FRESHSTACK_STORE", "DATABASE_URL", "PGPASSWORD", "PGPASSFILE", "SSH_AUTH_SOCK"}


def _is_secret(name: str) -> bool:
    """HF_TOKEN, OPENAI_API_KEY, AWS_SECRET_ACCESS_KEY, ... but not TOKENIZERS_PARALLELISM."""
    upper = name.upper()
    return upper in _SECRET_NAMES or not _SECRET_WORDS.isdisjoint(upper.split("_"))


def describe_error(exc: BaseException) -> str:
    """A user-facing message for a failed job: our own errors as written, anything else with its type."""
    return str(exc) if isinstance(exc, FreshStackError) else f"{type(exc).__name__}: {exc}"


def _child_main(
    evaluate: EvaluateJob, job: JobRecord, kept: tuple[str, ...], conn: Any, parent_pid: int, scratch: str
) -> None:
    """Body of the job process: signals are the supervisor's business, secrets but `kept` are dropped, temporary
    files go to `scratch`, the process may seal itself, the answer is piped."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    watch = threading.Thread(target=_exit_with_parent, args=(parent_pid,), name="exit-with-parent", daemon=True)
    watch.start()
    sandbox.mark_job_process(watch)
    for name in [n for n in os.environ if _is_secret(n) and n not in kept]:
        del os.environ[name]
    os.environ["TMPDIR"] = tempfile.tempdir = scratch
    try:
        answer: tuple[str, Any] = ("ok", evaluate(job))
    except BaseException as exc:
        if not isinstance(exc, FreshStackError):
            traceback.print_exc()
        answer = ("error", describe_error(exc))
    try:
        conn.send(answer)
    except Exception as exc:  # e.g. results that cannot be pickled
        conn.send(("error", f"results could not be sent to the worker: {describe_error(exc)}"))
    conn.close()


def _exit_with_parent(parent_pid: int) -> None:
    """A supervisor killed with SIGKILL cannot stop its child; the child stops itself instead."""
    while os.getppid() == parent_pid:
        time.sleep(0.5)
    os._exit(3)


# What a job's answer may be made of besides plain values: numpy's arrays and scalars (and its dtypes), a few
# builtins pickle names, and the dataclasses (records) of the project's own modules (`_ResultReader`).
_PLAIN = {
    ("builtins", "set"), ("builtins", "frozenset"), ("builtins", "bytearray"), ("builtins", "complex"),
    ("collections", "OrderedDict"), ("datetime", "date"), ("datetime", "datetime"), ("datetime", "timedelta"),
    ("numpy", "ndarray"), ("numpy", "dtype"), ("numpy.core.multiarray", "_reconstruct"),
    ("numpy.core.multiarray", "scalar"), ("numpy._core.multiarray", "_reconstruct"),
    ("numpy._core.multiarray", "scalar"),
}  # fmt: skip


class _ResultReader(pickle.Unpickler):
    """Unpickles a job's answer as data: a class or function it names must be one of `_PLAIN` or a dataclass of
    `freshstack_hf` or `leaderboard` (a record, built without running its `__init__`); anything else (`os.system`,
    a class whose reduction runs code) is refused before it is called."""

    def find_class(self, module: str, name: str) -> Any:
        if (module, name) in _PLAIN:
            return super().find_class(module, name)
        if module.split(".")[0] in ("freshstack_hf", "leaderboard") and "." not in name:
            found = super().find_class(module, name)
            if isinstance(found, type) and dataclasses.is_dataclass(found) and found.__module__ == module:
                return found
        raise pickle.UnpicklingError(f"a job's answer may not name {module}.{name}")


def read_answer(raw: bytes) -> tuple[str, Any]:
    """A job's answer from the bytes its process sent; one it could not have sent honestly is an error."""
    try:
        answer = _ResultReader(io.BytesIO(raw)).load()
    except Exception as exc:
        return "error", f"the evaluation process sent an answer that cannot be read ({describe_error(exc)})"
    if not (isinstance(answer, tuple) and len(answer) == 2 and answer[0] in ("ok", "error")):
        return "error", "the evaluation process sent an answer that is not one"
    if answer[0] == "error" and not isinstance(answer[1], str):
        return "error", "the evaluation process failed without saying why"
    return answer


class ProcessRun:
    """A job in a spawned child process, keeping only the secret variables `kept`, writing its temporary files in a
    folder of its own (removed by `close`); can be killed."""

    def __init__(self, evaluate: EvaluateJob, job: JobRecord, kept: tuple[str, ...] = ()) -> None:
        ctx = multiprocessing.get_context("spawn")
        self._scratch = tempfile.mkdtemp(prefix=f"freshstack-job-{job.id}-")  # 0700
        self._recv, send = ctx.Pipe(duplex=False)
        args = (evaluate, job, kept, send, os.getpid(), self._scratch)
        self._proc = ctx.Process(target=_child_main, args=args, name=f"job-{job.id}")
        self._proc.start()
        send.close()  # only the child holds the sending end, so its death reads as EOF here

    @property
    def scratch(self) -> Path:
        """The job process's temporary folder (its TMPDIR)."""
        return Path(self._scratch)

    def wait(self, timeout: float) -> tuple[str, Any] | None:
        if self._recv.poll(timeout):
            try:
                return read_answer(self._recv.recv_bytes())
            except EOFError:
                pass
        elif self._proc.is_alive():
            return None
        self._proc.join(5)
        code = self._proc.exitcode
        how = f"was killed by signal {-code} (out of memory?)" if code is not None and code < 0 else f"exited ({code})"
        return "crash", f"the evaluation process {how} before returning results"

    def kill(self) -> None:
        if self._proc.is_alive():
            self._proc.kill()

    def close(self) -> None:
        """Reap the child: it exits by itself once it has answered, unless it hangs in teardown; then remove its
        temporary folder."""
        self._proc.join(5)
        if self._proc.is_alive():
            self._proc.kill()
            self._proc.join(5)
        self._recv.close()
        shutil.rmtree(self._scratch, ignore_errors=True)


class ThreadRun:
    """A job in a thread of this process (isolate=False: tests, notebooks). A thread cannot be killed."""

    def __init__(self, evaluate: EvaluateJob, job: JobRecord) -> None:
        self._answer: list[tuple[str, Any]] = []
        self._thread = threading.Thread(target=self._body, args=(evaluate, job), name=f"job-{job.id}", daemon=True)
        self._thread.start()

    def _body(self, evaluate: EvaluateJob, job: JobRecord) -> None:
        try:
            self._answer.append(("ok", evaluate(job)))
        except Exception as exc:
            if not isinstance(exc, FreshStackError):
                log.exception("job %d failed", job.id)
            self._answer.append(("error", describe_error(exc)))

    def wait(self, timeout: float) -> tuple[str, Any] | None:
        self._thread.join(timeout)
        if self._answer:
            return self._answer[0]
        return None if self._thread.is_alive() else ("crash", "the evaluation thread ended without results")

    def kill(self) -> None:
        if self._thread.is_alive():
            log.warning("%s keeps running until it returns: only isolate=True can stop a job", self._thread.name)

    def close(self) -> None:
        pass
