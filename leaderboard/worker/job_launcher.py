"""The job launcher: one process per worker run that imports the job code once and forks every job's process from
itself (Linux), instead of starting a new interpreter for each job.

Why: a job process started afresh imports the worker's job kinds (2 s of CPU) and, for a model, sentence-transformers
and torch (5 s more) before it does any work, which is more than most jobs then spend working. The launcher pays it
once per `run_worker`: it imports the module of the worker's evaluate function and what a job's kind declares
(`JobKind.imports`) the first time a job asks for them, then forks. What a job process gets is what a spawned one
got, and less:

* **Its environment.** The launcher is started with the worker's environment without any secret-looking variable
  (`is_secret`), so not even the process's first environment block (/proc/self/environ, which deleting a
  variable later does not change) holds one. Each job is sent the worker's environment at its start, again
  without secrets but for those its kind keeps, through a pipe only the job reads. A launcher whose environment no
  longer matches the worker's is replaced: a module imported in it may have read a variable at import.
* **Nothing of another job.** The launcher never reads a job: it receives module names and file descriptors, and
  the job's own message (its record, options, the secrets it keeps) goes from the worker straight to the job's
  process through that pipe. So a job forked later cannot find an earlier job's data in memory it inherited.
* **One thread, no lock held, no CUDA context.** The launcher runs a single thread and only imports; a fork copies
  the calling thread alone, so a job process starts with no other thread (the seal checks that), and a GPU is first
  touched in the job's own process.
* **It ends with the worker.** The worker holds the launcher's socket; when it goes (even killed), the launcher
  kills its jobs and exits, and each job stops itself once its parent, the launcher, is gone.

Where `fork` is not safe after importing torch (macOS) or absent, `job_process.ProcessRun` spawns each job as
before (`FORKS`).
"""

from __future__ import annotations

import contextlib
import importlib
import multiprocessing.process
import multiprocessing.spawn
import os
import pickle
import selectors
import signal
import socket
import struct
import subprocess
import sys
import threading
import time
from collections.abc import Iterable, Mapping
from typing import Any

from freshstack_hf.errors import FreshStackError

FORKS = sys.platform == "linux"  # fork after importing torch is safe here; macOS' system libraries are not
_HEADER = struct.Struct("!I")  # the length of what follows (module names, the preparation data), in bytes
_CODE = struct.Struct("!i")  # what the status pipe carries: the job's pid, then its exit code
_FORK = multiprocessing.get_context("fork" if FORKS else None)  # the launcher's: the worker itself never forks
_SECRET_WORDS = {"TOKEN", "SECRET", "PASSWORD", "PASSWD", "APIKEY", "CREDENTIAL", "CREDENTIALS", "KEY"}
_SECRET_NAMES = {"FRESHSTACK_STORE", "DATABASE_URL", "PGPASSWORD", "PGPASSFILE", "SSH_AUTH_SOCK"}


def is_secret(name: str) -> bool:
    """HF_TOKEN, OPENAI_API_KEY, AWS_SECRET_ACCESS_KEY, ... but not TOKENIZERS_PARALLELISM."""
    upper = name.upper()
    return upper in _SECRET_NAMES or not _SECRET_WORDS.isdisjoint(upper.split("_"))


def without_secrets(env: Mapping[str, str], kept: Iterable[str] = ()) -> dict[str, str]:
    """`env` without its secret-looking variables, but for those named in `kept`."""
    keep = set(kept)
    return {name: value for name, value in env.items() if name in keep or not is_secret(name)}


class JobLauncher:
    """The worker's side of one launcher process (started on the first `launch`, replaced when the worker's
    environment changed or the launcher died, ended by `close`)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._proc: subprocess.Popen[bytes] | None = None
        self._sock: socket.socket | None = None
        self._env: dict[str, str] = {}

    def launch(self, call: bytes, imports: Iterable[str], passed: int) -> LaunchedJob:
        """A new job process, forked after the launcher imported `imports`. It reads `call` from a pipe of its own
        (a pickled `(function, args)`) and runs `function(*args, passed)`: `passed` is a file descriptor of the
        worker's it receives (the end of a pipe its answer goes to)."""
        job_r, job_w = os.pipe()
        status_r, status_w = os.pipe()
        names = _framed("\n".join(imports).encode())
        try:
            with self._lock:
                try:
                    socket.send_fds(self._running(), [names], [job_r, status_w, passed])
                except OSError:  # the launcher died since it was last seen: once more, with a new one
                    self._stop()
                    socket.send_fds(self._running(), [names], [job_r, status_w, passed])
                launcher = self._proc
        except OSError as exc:
            for fd in (job_r, job_w, status_r, status_w):
                os.close(fd)
            raise FreshStackError(f"the job launcher could not start a job process: {exc}") from exc
        os.close(job_r)
        os.close(status_w)
        # Written by a thread: the job reads it once the launcher has forked it, after the imports it was asked
        # for, and the worker keeps renewing the lease meanwhile.
        threading.Thread(target=_write_all, args=(job_w, call), name="job-call", daemon=True).start()
        assert launcher is not None
        return LaunchedJob(status_r, launcher)

    def _running(self) -> socket.socket:
        env = without_secrets(os.environ)
        if self._proc is not None and (self._proc.poll() is not None or env != self._env):
            self._stop()
        if self._proc is None or self._sock is None:
            ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
            with theirs:
                command = [sys.executable, "-m", __name__, str(theirs.fileno())]
                self._proc = subprocess.Popen(command, env=env, pass_fds=[theirs.fileno()], stdin=subprocess.DEVNULL)
            prepared = multiprocessing.spawn.get_preparation_data("job-launcher")
            prepared.pop("authkey", None)  # the worker's multiprocessing key stays with the worker
            ours.sendall(_framed(pickle.dumps(prepared)))
            self._sock, self._env = ours, env
        return self._sock

    def _stop(self) -> None:
        if self._sock is not None:
            self._sock.close()  # the launcher reads EOF: it kills its jobs and exits
        if self._proc is not None:
            try:
                self._proc.wait(10)
            except subprocess.TimeoutExpired:
                self._proc.kill()
                self._proc.wait(5)
        self._proc, self._sock = None, None

    def close(self) -> None:
        with self._lock:
            self._stop()


class LaunchedJob:
    """A job process the launcher forks, as `job_process.ProcessRun` watches it: alive, killed, its exit code. The
    launcher says its pid once it has forked it (after the imports it was asked for), then its exit code."""

    def __init__(self, status_r: int, launcher: subprocess.Popen[bytes]) -> None:
        self._status = os.fdopen(status_r, "rb", buffering=0)
        self._launcher = launcher
        self.pid: int | None = None
        self.exitcode: int | None = None

    def is_alive(self) -> bool:
        self.join(0)
        return self.exitcode is None

    def join(self, timeout: float | None = None) -> None:
        deadline = None if timeout is None else time.monotonic() + timeout
        while self.exitcode is None and not self._status.closed:
            left = None if deadline is None else max(0.0, deadline - time.monotonic())
            with selectors.DefaultSelector() as ready:
                ready.register(self._status, selectors.EVENT_READ)
                if not ready.select(left):
                    return
            code = _read_code(self._status)
            if code is None:  # the launcher ended without a word more: it killed its jobs, or was killed
                self.exitcode = -signal.SIGKILL
            elif self.pid is None:
                self.pid = code
            else:
                self.exitcode = code
        self.close()

    def kill(self) -> None:
        """Kill the job; one not yet forked (its launcher still importing) is stopped with its launcher, which the
        next job replaces."""
        if not self.is_alive():
            return
        with contextlib.suppress(ProcessLookupError):
            if self.pid is not None:
                os.kill(self.pid, signal.SIGKILL)
            else:
                self._launcher.kill()

    def close(self) -> None:
        if not self._status.closed:
            self._status.close()


def _write_all(fd: int, data: bytes) -> None:
    try:
        left = memoryview(data)
        with contextlib.suppress(BrokenPipeError):  # a job that died before reading it all is a crash
            while left:
                left = left[os.write(fd, left) :]
    finally:
        os.close(fd)


def _framed(data: bytes) -> bytes:
    return _HEADER.pack(len(data)) + data


def _read_code(pipe: Any) -> int | None:
    raw = b""
    while len(raw) < _CODE.size:
        more = pipe.read(_CODE.size - len(raw))
        if not more:
            return None
        raw += more
    return _CODE.unpack(raw)[0]


def _recv_exactly(sock: socket.socket, size: int) -> bytes:
    chunks, left = [], size
    while left:
        chunk = sock.recv(left)
        if not chunk:
            raise EOFError
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)


# ---- the launcher process ------------------------------------------------------------------------------------------


def serve(sock: socket.socket) -> None:
    """The launcher's loop: prepare as a spawned child would (the worker's sys.path, folder and main module), then
    for each request import its modules and fork a job process; report each job's pid and exit code on its status
    pipe; on EOF (the worker is gone) kill the jobs still running and return."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # a Ctrl-C in the terminal is the worker's to handle
    size = _HEADER.unpack(_recv_exactly(sock, _HEADER.size))[0]
    multiprocessing.spawn.prepare(pickle.loads(_recv_exactly(sock, size)))
    woken_r, woken_w = os.pipe()
    os.set_blocking(woken_r, False)
    os.set_blocking(woken_w, False)
    signal.signal(signal.SIGCHLD, lambda *_: None)
    signal.set_wakeup_fd(woken_w)
    running: dict[int, tuple[multiprocessing.process.BaseProcess, int]] = {}  # pid -> (the job, its status pipe)
    with selectors.DefaultSelector() as ready:
        ready.register(sock, selectors.EVENT_READ)
        ready.register(woken_r, selectors.EVENT_READ)
        while True:
            events = {key.fileobj for key, _ in ready.select()}
            if woken_r in events:
                with contextlib.suppress(BlockingIOError):
                    while os.read(woken_r, 4096):
                        pass
            _report_ended(running)
            if sock in events and not _serve_one(sock, running, (sock.fileno(), woken_r, woken_w)):
                break
    for job, _status_w in running.values():
        job.kill()
        job.join()
    _report_ended(running)


def _serve_one(
    sock: socket.socket, running: dict[int, tuple[multiprocessing.process.BaseProcess, int]], own: tuple[int, ...]
) -> bool:
    """One request: import its modules, fork its job; False once the worker is gone."""
    try:
        header, fds, _flags, _address = socket.recv_fds(sock, _HEADER.size, 3)
    except OSError:
        return False
    if len(header) < _HEADER.size or len(fds) != 3:
        for fd in fds:
            os.close(fd)
        return False
    job_r, status_w, passed = fds
    names = _recv_exactly(sock, _HEADER.unpack(header)[0]).decode().split("\n")
    for name in filter(None, names):
        with contextlib.suppress(Exception):  # the job imports it again, and says why it failed
            importlib.import_module(name)
    closing = (*own, *(status for _, status in running.values()), status_w)
    job = _FORK.Process(target=_job_body, args=(job_r, passed, closing), name="job")
    job.start()  # multiprocessing's own fork: its bootstrap, and its cleanup on the way out
    os.close(job_r)
    os.close(passed)
    assert job.pid is not None
    os.write(status_w, _CODE.pack(job.pid))
    running[job.pid] = (job, status_w)
    return True


def _report_ended(running: dict[int, tuple[multiprocessing.process.BaseProcess, int]]) -> None:
    """Send the exit code of every job that ended on its status pipe, and close it."""
    for pid, (job, status_w) in list(running.items()):
        if job.exitcode is None:
            continue
        del running[pid]
        with contextlib.suppress(OSError):  # the worker stopped watching
            os.write(status_w, _CODE.pack(job.exitcode))
        os.close(status_w)


def _job_body(job_r: int, passed: int, closing: tuple[int, ...]) -> None:
    """The job process: the launcher's descriptors closed, the call the worker sent read whole, then run."""
    signal.set_wakeup_fd(-1)
    signal.signal(signal.SIGCHLD, signal.SIG_DFL)
    for fd in closing:
        os.close(fd)
    with os.fdopen(job_r, "rb") as pipe:
        call = pipe.read()
    function, args = pickle.loads(call)
    function(*args, passed)


if __name__ == "__main__":
    serve(socket.socket(fileno=int(sys.argv[1])))
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)  # nothing to clean up, and no thread a module imported for a job may start is waited for
