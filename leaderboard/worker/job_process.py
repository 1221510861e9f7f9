"""How one job runs: in a spawned child process that drops secret-looking variables (killable), or in a thread.

The job itself runs in a child process (spawned, so no lock or CUDA state is inherited) while the worker only
supervises (`leaderboard.worker.worker`): killing is the only reliable way to stop a model stuck in native code, and
keeping the store out of the child means the code that touches a submitted model never sees the database URL.
The child drops secret-looking environment variables, except those its job kind keeps; if the supervisor dies,
the child notices and exits. A thread (`isolate=False`: tests, notebooks) cannot be killed.
"""

from __future__ import annotations

import logging
import multiprocessing
import os
import signal
import threading
import time
import traceback
from collections.abc import Callable
from typing import Any

from freshstack_hf.errors import FreshStackError
from leaderboard.store.records import JobRecord
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


def _child_main(evaluate: EvaluateJob, job: JobRecord, kept: tuple[str, ...], conn: Any, parent_pid: int) -> None:
    """Body of the job process: signals are the supervisor's business, secrets but `kept` are dropped, the answer is
    piped."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    for name in [n for n in os.environ if _is_secret(n) and n not in kept]:
        del os.environ[name]
    threading.Thread(target=_exit_with_parent, args=(parent_pid,), daemon=True).start()
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


class ProcessRun:
    """A job in a spawned child process, keeping only the secret variables `kept`; can be killed."""

    def __init__(self, evaluate: EvaluateJob, job: JobRecord, kept: tuple[str, ...] = ()) -> None:
        ctx = multiprocessing.get_context("spawn")
        self._recv, send = ctx.Pipe(duplex=False)
        args = (evaluate, job, kept, send, os.getpid())
        self._proc = ctx.Process(target=_child_main, args=args, name=f"job-{job.id}")
        self._proc.start()
        send.close()  # only the child holds the sending end, so its death reads as EOF here

    def wait(self, timeout: float) -> tuple[str, Any] | None:
        if self._recv.poll(timeout):
            try:
                return self._recv.recv()
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
        """Reap the child: it exits by itself once it has answered, unless it hangs in teardown."""
        self._proc.join(5)
        if self._proc.is_alive():
            self._proc.kill()
            self._proc.join(5)
        self._recv.close()


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
