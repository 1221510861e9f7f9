"""How one job runs: in a child process of its own that holds no secret (killable), or in a thread.

The job itself runs in a child process while the worker only supervises (`leaderboard.worker.worker`): killing is
the only reliable way to stop a model stuck in native code, and keeping the store out of the child means the code
that touches a submitted model never sees the database URL. On Linux the child is forked by the worker's job
launcher (`job_launcher`: started without any secret-looking variable, it imports the job code once per worker
run); elsewhere it is spawned. Either way its environment is the worker's without secret-looking variables,
except those its job kind keeps, and if its parent dies, the child notices and exits. It is a job process
(`sandbox.mark_job_process`): a model job seals it once its model is loaded (`sandbox.seal_job`), with a temporary
folder of its own (TMPDIR) as the one place it may write besides the embedding cache, removed when the job ends.
What it sends back is read as data only: a pickle that names anything but plain values, the job contract's records
and numpy's arrays is refused (`_ResultReader`), so a model that takes over its process cannot take over the worker
through its answer.

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
from collections.abc import Callable, Iterable
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

from freshstack_hf.errors import FreshStackError
from leaderboard.store.records import JobRecord
from leaderboard.worker import sandbox
from leaderboard.worker.job_contract import JobOutput
from leaderboard.worker.job_launcher import FORKS, JobLauncher, LaunchedJob, without_secrets

log = logging.getLogger(__name__)

EvaluateJob = Callable[[JobRecord], JobOutput]


def describe_error(exc: BaseException) -> str:
    """A user-facing message for a failed job: our own errors as written, anything else with its type."""
    return str(exc) if isinstance(exc, FreshStackError) else f"{type(exc).__name__}: {exc}"


def _child_main(
    evaluate: EvaluateJob,
    job: JobRecord,
    env: dict[str, str],
    hub_secrets: list[Path],
    scratch: str,
    parent_pid: int | None,
    conn: Connection | int,
) -> None:
    """Body of the job process: signals are the supervisor's business, the environment is `env` (the worker's
    without secrets), temporary files go to `scratch`, the process may seal itself, the answer is piped (`conn`, or
    the file descriptor of its pipe)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    parent_pid = parent_pid or os.getppid()  # the launcher forked this process
    if isinstance(conn, int):
        conn = Connection(conn, readable=False)
    watch = threading.Thread(target=_exit_with_parent, args=(parent_pid,), name="exit-with-parent", daemon=True)
    watch.start()
    sandbox.mark_job_process(watch, hub_secrets=hub_secrets)
    os.environ.clear()
    os.environ.update(env)
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
    """A job in a child process (forked by `launcher`, else by a launcher of its own, or spawned where forking is
    not safe), keeping only the secret variables `kept`, writing its temporary files in a folder of its own
    (removed by `close`); can be killed. `imports` are modules a launcher imports before it forks the job."""

    def __init__(
        self,
        evaluate: EvaluateJob,
        job: JobRecord,
        kept: tuple[str, ...] = (),
        *,
        imports: Iterable[str] = (),
        launcher: JobLauncher | None = None,
    ) -> None:
        self._scratch = tempfile.mkdtemp(prefix=f"freshstack-job-{job.id}-")  # 0700
        env, hub_secrets = without_secrets(os.environ, kept), sandbox.hub_secrets(os.environ)
        self._own_launcher = launcher is None and FORKS
        self._recv, send = multiprocessing.Pipe(duplex=False)
        self._proc: multiprocessing.process.BaseProcess | LaunchedJob
        try:
            if FORKS:
                self._launcher = launcher or JobLauncher()
                call = pickle.dumps((_child_main, (evaluate, job, env, hub_secrets, self._scratch, None)))
                self._proc = self._launcher.launch(call, [_module_of(evaluate), *imports], send.fileno())
            else:
                ctx = multiprocessing.get_context("spawn")
                args = (evaluate, job, env, hub_secrets, self._scratch, os.getpid(), send)
                self._proc = ctx.Process(target=_child_main, args=args, name=f"job-{job.id}")
                self._proc.start()
        except BaseException:
            self._recv.close()
            shutil.rmtree(self._scratch, ignore_errors=True)
            raise
        finally:
            send.close()  # only the child holds the sending end, so its death reads as EOF here

    @property
    def pid(self) -> int | None:
        """The job process's id (None until a launcher has forked it)."""
        self._proc.is_alive()  # a launched job's pid is read as it comes
        return self._proc.pid

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
        if isinstance(self._proc, LaunchedJob):
            self._proc.close()
        if self._own_launcher:
            self._launcher.close()
        shutil.rmtree(self._scratch, ignore_errors=True)


def _module_of(evaluate: EvaluateJob) -> str:
    """The module an evaluate function (or the function a `functools.partial` wraps) is defined in: imported by the
    launcher, so each job's process finds it there."""
    module = getattr(getattr(evaluate, "func", evaluate), "__module__", None) or ""
    return "" if module == "__main__" else module


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
