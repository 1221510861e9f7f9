"""Sealing a job process: once a submitted model is loaded, the process that runs it reaches no network and reads
only what ranking needs (Linux: Landlock and a seccomp filter, set up through ctypes in `seal_syscalls`; no
dependency). This module is the policy: what the job may read and write, and when it may seal.

A model job loads code it does not trust (a submitted model, its tokenizer, whatever its files make the libraries
do), and a live job is then handed the embargoed questions (`worker.live_pass`). The seal is what keeps those in:

* **seccomp** (`SECCOMP_FILTER_FLAG_TSYNC`: every thread of the process, and every process it starts): `socket()`
  makes only `AF_UNIX` stream sockets, `connect()` and `listen()` fail for every family (nothing out, nothing in),
  `io_uring_setup` (whose requests no socket filter sees) fails, and so do `ptrace`,
  `process_vm_readv`/`process_vm_writev`, `pidfd_getfd` and `open_by_handle_at`; a system call of another
  architecture (x32, i386 through `int 0x80`) fails too.
  `prctl(PR_SET_NO_NEW_PRIVS)` comes first: no set-uid program run later regains what the seal took away.
* **Landlock** (ABI >= 4): a ruleset that handles every filesystem access the kernel's ABI knows, and TCP bind and
  connect with no rule (so none is allowed), allowing reads (and execution) beneath the Python install and the
  folders of the modules already imported, /usr, /lib, /lib64, /bin, /sbin, /etc, /sys, /proc's own entries (the
  job's own /proc/PID, not the kernel's memory nor another process's folder), a few devices (null, random, the
  GPU's), the model's folder, the public dataset's folder and the job folder; reads and writes beneath the job's
  own temporary folder and the embedding cache it may write; removing (not reading) files in /dev/shm, where the
  process's own semaphores are named (all of /dev/shm for a pool of encoding processes). Nothing else: not the Hub
  token file, the Hub cache (but the model's and the public dataset's own files in it), the private repo, the
  store, another user's files. With ABI >= 6 the job cannot signal a process outside its domain, nor reach an
  abstract unix socket. Landlock's ptrace rule keeps the job out of every process outside it: /proc/WORKER/environ,
  mem and maps cannot be opened.

What it does not stop: anything done before the seal (a model's code runs while it is loaded: a connection made then
and kept, a file read then, stay with the process; network sockets found open at the seal are replaced with
/dev/null, unix ones are kept); threads started before the seal run outside Landlock (Landlock binds the calling
thread and the threads it starts later, not earlier ones: the seal refuses when a Python thread other than the
job's own is alive, tqdm's progress monitor being stopped first, but native threads that a library started, such
as torch's pools, are not checked; seccomp covers them all); whatever the job's ranking itself carries back (a
model can encode what it read into the order of its documents: the ranking is the one output a job has); files
the job may read that its user may read anyway (run the worker as an unprivileged user: for root, /etc/shadow is a
file under /etc); and a kernel without Landlock or seccomp (another OS, Linux before 6.7, a container that forbids
them), where `unavailable()` says why and the worker hands no embargoed input at all.

Only a job process seals itself (`mark_job_process`, called by `worker.job_process` in the job's own process): a job
run in a thread of the worker (`isolate=False`) must never seal the worker, so `seal_job` there only says why not.
"""

from __future__ import annotations

import functools
import logging
import os
import platform
import socket
import stat
import sys
import tempfile
import threading
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from leaderboard.live_scores import CANNOT_SEAL, status
from leaderboard.worker.seal_syscalls import (
    forbid_new_privileges,
    install_seccomp,
    landlock_abi,
    machine_arch,
    restrict_paths,
    seccomp_mode,
)

log = logging.getLogger(__name__)

MIN_LANDLOCK_ABI = 4  # the first ABI that also handles TCP: with less, the network is left to seccomp alone


_PROC_KEPT_OUT = {
    "kcore", "kmsg", "kallsyms", "kpagecgroup", "kpagecount", "kpageflags", "keys", "key-users", "sysrq-trigger",
    "self", "thread-self",
}  # fmt: skip  # the kernel's memory and keys; self is granted as this process's own folder
_DEVICES = ("null", "zero", "full", "random", "urandom", "tty", "nvidiactl", "nvidia-uvm", "nvidia-uvm-tools",
            "nvidia-modeset", "nvidia-caps", "dri")  # fmt: skip
_SYSTEM = ("/usr", "/lib", "/lib64", "/lib32", "/bin", "/sbin", "/etc", "/sys")

_state: dict[str, Any] = {"job_process": False, "own": ()}  # `mark_job_process` sets both
_forbidden: list[Path] = []  # the Hub token file and caches, as the worker's environment names them


class SealError(Exception):
    """The job process could not be sealed (what failed, in words): it then gets no embargoed input."""


@functools.cache
def unavailable() -> str | None:
    """Why this machine cannot seal a job process (None: it can): what the worker checks before it hands a job any
    embargoed input."""
    if machine_arch() is None:
        return f"{sys.platform} on {platform.machine()} has no Landlock and seccomp filter this worker can use"
    abi = landlock_abi()
    if abi < MIN_LANDLOCK_ABI:
        found = f"Landlock ABI {abi}" if abi else "no Landlock"
        return f"this kernel ({platform.release()}) offers {found}; ABI {MIN_LANDLOCK_ABI} (Linux 6.7) is needed"
    if seccomp_mode() != 0:
        return "seccomp filters are not available to this process"
    return None


def mark_job_process(*own: threading.Thread, hub_secrets: list[Path]) -> None:
    """Called once by the job process (`job_process._child_main`), before anything else runs in it: from now on
    this process may seal itself (`own` are its own threads, started before the seal on purpose), and
    `hub_secrets` (the Hub's token file and caches it must never read, as the worker's environment names them:
    `hub_secrets`; the job's own environment has no HF_TOKEN_PATH, a secret-looking name) are noted."""
    _state["job_process"], _state["own"] = True, own
    _forbidden[:] = hub_secrets


def hub_secrets(env: Mapping[str, str]) -> list[Path]:
    """The Hub token file and the Hub caches (the private revisions a worker downloaded sit in them)."""
    home = Path(env.get("HF_HOME") or Path(env.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "huggingface")
    found = [Path(env.get("HF_TOKEN_PATH") or home / "token"), home]
    found += [Path(env[name]) for name in ("HF_HUB_CACHE", "HUGGINGFACE_HUB_CACHE") if env.get(name)]
    return [_resolved(p) for p in found]


def _resolved(path: str | os.PathLike[str]) -> Path:
    return Path(os.path.realpath(os.path.expanduser(os.fspath(path))))


def _holds_secret(path: Path) -> Path | None:
    """The secret (token file, Hub cache) that granting `path` would expose, if any: `path` is it or holds it."""
    return next((secret for secret in _forbidden if secret == path or path in secret.parents), None)


def _python_paths() -> set[Path]:
    """What imports may read after the seal: the Python install, and the folder of every package already imported
    (an editable install maps them from anywhere); a `sys.path` entry outside the install only for its packages
    and modules, never whole (the current folder would give away whatever sits beside the code)."""
    found = {_resolved(p) for p in (sys.prefix, sys.base_prefix, sys.exec_prefix)}
    for module in list(sys.modules.values()):
        where = getattr(module, "__file__", None)
        if where and "." not in module.__name__:
            path = _resolved(where)
            found.add(path.parent if path.name.startswith("__init__.") else path)
        where = getattr(module, "__path__", None)
        if isinstance(where, list | tuple) or type(where).__name__ == "_NamespacePath":  # not torch's stand-ins
            found.update(_resolved(p) for p in where if isinstance(p, str))
    for entry in sys.path:
        path = _resolved(entry or ".")
        if not path.is_dir() or any(path == p or p in path.parents for p in found):
            continue
        for child in path.iterdir():
            if (child / "__init__.py").is_file() or child.suffix in (".py", ".so", ".pth", ".pyc"):
                found.add(_resolved(child))
    return found


def _proc_paths() -> list[Path]:
    """This process's own /proc folder and /proc's entries that are no process's (cpuinfo, meminfo, driver/...),
    without the kernel's memory and keys."""
    entries = [
        Path("/proc") / name for name in os.listdir("/proc") if not name.isdigit() and name not in _PROC_KEPT_OUT
    ]
    return [Path(f"/proc/{os.getpid()}"), *entries]


def _device_paths() -> list[Path]:
    """The devices a model needs (null, random, the GPU's)."""
    found = [Path("/dev") / name for name in _DEVICES]
    return found + [
        Path("/dev") / name for name in os.listdir("/dev") if name.startswith("nvidia") and name[6:].isdigit()
    ]


def _close_network_sockets() -> int:
    """Replace every open socket of another family than AF_UNIX with /dev/null (a connection a model's code made
    while it was loaded); returns how many."""
    closed = 0
    null = os.open(os.devnull, os.O_RDWR | os.O_CLOEXEC)
    try:
        for name in os.listdir("/proc/self/fd"):
            fd = int(name)
            try:
                if fd == null or not stat.S_ISSOCK(os.fstat(fd).st_mode):
                    continue
            except OSError:
                continue  # closed since it was listed
            try:
                with socket.socket(fileno=os.dup(fd)) as probe:
                    if probe.family == socket.AF_UNIX:
                        continue
            except OSError:
                pass  # a family Python does not know: closed as well
            os.dup2(null, fd)
            closed += 1
    finally:
        os.close(null)
    return closed


def _stop_progress_monitor() -> None:
    """tqdm's monitor threads (started by the first progress bar: a model's download or load) are stopped, and none
    started again: a thread alive at the seal would run outside Landlock."""
    progress, monitors = sys.modules.get("tqdm.std"), sys.modules.get("tqdm._monitor")
    if progress is None or monitors is None:
        return
    progress.tqdm.monitor_interval = 0
    for thread in threading.enumerate():
        if isinstance(thread, monitors.TMonitor):
            thread.exit()


def _foreign_threads() -> list[str]:
    """Python threads alive besides the caller and the job process's own (they would run outside Landlock)."""
    _stop_progress_monitor()
    me = threading.current_thread()
    return [t.name for t in threading.enumerate() if t is not me and t not in _state["own"]]


def seal(
    read: Iterable[str | os.PathLike[str]], write: Iterable[str | os.PathLike[str]], *, shared_memory: bool = False
) -> None:
    """Seal this job process now (see the module docstring): `read` and `write` are the job's own folders, added to
    the Python install, the system's folders and devices. Raises `SealError` saying what failed; a half-made seal
    only ever takes away more."""
    if not _state["job_process"]:
        raise SealError("this is not a job process (the worker's own process is never sealed)")
    reason = unavailable()
    if reason is not None:
        raise SealError(reason)
    foreign = _foreign_threads()
    if foreign:
        raise SealError(f"Python threads started before the seal would run outside it: {', '.join(foreign)}")
    granted = [_resolved(p) for p in write]
    for path in granted:
        if (secret := _holds_secret(path)) is not None:
            raise SealError(f"{path} holds the Hub's {secret.name}: the job cannot be given it to write")
    readable = [_resolved(p) for p in read]
    for path in readable:
        if (secret := _holds_secret(path)) is not None:
            raise SealError(f"{path} holds the Hub's {secret.name}: the job cannot be given it to read")
    system = [*_python_paths(), *[_resolved(p) for p in _SYSTEM]]
    kept_out = [p for p in system if _holds_secret(p) is not None]
    if kept_out:
        log.warning(
            "sealing: %s not readable by the job (it holds the Hub's token or cache)", ", ".join(map(str, kept_out))
        )
    system = [p for p in system if p not in kept_out] + _proc_paths()
    closed = _close_network_sockets()
    if closed:
        log.warning("sealing: %d network socket(s) opened before the seal were closed", closed)
    arch = machine_arch()
    assert arch is not None  # `unavailable` said so
    try:
        forbid_new_privileges()
        # /dev/shm names the semaphores this process made (tqdm's lock): it unlinks them when it exits; with a pool
        # of encoding processes, which make more, it is theirs to write
        shm = [Path("/dev/shm")]
        writable, unlink = ([*granted, *shm], []) if shared_memory else (granted, shm)
        restrict_paths([*system, *readable], writable, _device_paths(), unlink, landlock_abi())
        thread = install_seccomp(arch)
    except OSError as exc:
        raise SealError(f"the kernel refused the seal: {exc}") from exc
    if thread:
        raise SealError(f"thread {thread} could not take the seccomp filter")


def seal_job(
    split: Mapping[str, Any] | None,
    *,
    read: Iterable[str | os.PathLike[str] | None],
    write: Iterable[str | os.PathLike[str] | None] = (),
    shared_memory: bool = False,
) -> Mapping[str, Any] | None:
    """What a model or reranker job calls once its model is loaded and its public dataset opened, before it ranks
    anything: seals this process (`seal`: `read` the model's, the dataset's folders; `write` the embedding cache,
    besides the job process's own temporary folder) and returns the live split the job may rank, `split` itself.
    Unsealed (a job run in the worker's thread, a machine that cannot seal, a seal that failed) the job still scores
    the public questions, with a warning, and a split that holds embargoed input comes back as the `CANNOT_SEAL`
    status instead: a live pass happens only in a sealed process."""
    reads = [Path(p) for p in read if p]
    readable = [*reads, Path(split["folder"])] if split and "folder" in split else reads
    for path in reads:  # a Hub snapshot's files are links into the repo's blobs folder: those are read too
        if path.is_dir():
            readable += {_resolved(f).parent for f in path.rglob("*") if f.is_symlink()}
    writable = [Path(tempfile.gettempdir()), *(Path(p) for p in write if p)]  # the job process's own TMPDIR
    try:
        seal(readable, writable, shared_memory=shared_memory)
    except Exception as exc:  # whatever failed, this process is not known to be sealed
        why = str(exc) if isinstance(exc, SealError) else f"{type(exc).__name__}: {exc}"
        log.warning("the job process is not sealed (%s): it scores the public questions only", why)
        if split and "folder" in split:
            return status(CANNOT_SEAL, str(split.get("snapshot") or ""))
        return split
    return split
