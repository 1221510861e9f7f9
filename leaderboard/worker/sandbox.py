"""Sealing a job process: once a submitted model is loaded, the process that runs it reaches no network and reads
only what ranking needs (Linux: Landlock and a seccomp filter, set up through ctypes; no dependency).

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

Only a job process seals itself (`mark_job_process`, called by `worker.job_process` in the spawned child): a job
run in a thread of the worker (`isolate=False`) must never seal the worker, so `seal_job` there only says why not.
"""

from __future__ import annotations

import ctypes
import errno
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

log = logging.getLogger(__name__)

MIN_LANDLOCK_ABI = 4  # the first ABI that also handles TCP: with less, the network is left to seccomp alone

# ---- Landlock (include/uapi/linux/landlock.h) -----------------------------------------------------------------------
_CREATE_RULESET, _ADD_RULE, _RESTRICT_SELF = 444, 445, 446  # the same numbers on x86_64 and aarch64
_CREATE_RULESET_VERSION = 1
_RULE_PATH_BENEATH = 1
# filesystem rights: (bit, the ABI that introduced it)
_FS = {
    "execute": (1 << 0, 1), "write_file": (1 << 1, 1), "read_file": (1 << 2, 1), "read_dir": (1 << 3, 1),
    "remove_dir": (1 << 4, 1), "remove_file": (1 << 5, 1), "make_char": (1 << 6, 1), "make_dir": (1 << 7, 1),
    "make_reg": (1 << 8, 1), "make_sock": (1 << 9, 1), "make_fifo": (1 << 10, 1), "make_block": (1 << 11, 1),
    "make_sym": (1 << 12, 1), "refer": (1 << 13, 2), "truncate": (1 << 14, 3), "ioctl_dev": (1 << 15, 5),
}  # fmt: skip
_FILE_RIGHTS = ("execute", "write_file", "read_file", "truncate", "ioctl_dev")  # all a rule on a file may carry
_READ = ("execute", "read_file", "read_dir")
_WRITE = (*_READ, "write_file", "remove_dir", "remove_file", "make_dir", "make_reg", "make_sym", "refer", "truncate")
_DEVICE = ("read_file", "write_file", "truncate", "ioctl_dev")
_NET_BIND_TCP, _NET_CONNECT_TCP = 1 << 0, 1 << 1  # ABI 4
_SCOPE_ABSTRACT_UNIX_SOCKET, _SCOPE_SIGNAL = 1 << 0, 1 << 1  # ABI 6

# ---- seccomp (include/uapi/linux/seccomp.h, filter.h, audit.h) ------------------------------------------------------
_PR_SET_NO_NEW_PRIVS, _PR_GET_SECCOMP = 38, 21
_SECCOMP_SET_MODE_FILTER, _SECCOMP_FILTER_FLAG_TSYNC = 1, 1
_RET_ALLOW, _RET_ERRNO = 0x7FFF0000, 0x00050000
_LD_ABS, _JEQ, _JGE, _AND, _RET = 0x20, 0x15, 0x35, 0x54, 0x06  # BPF_LD|W|ABS, JMP|JEQ|K, JMP|JGE|K, ALU|AND|K, RET|K
_SOCK_TYPE_MASK = 0xF
_X32_SYSCALL_BIT = 0x40000000


class _Arch:
    """One architecture's audit id and the numbers of the system calls the filter names."""

    def __init__(self, audit: int, seccomp: int, calls: Mapping[str, int], x32: bool = False) -> None:
        self.audit, self.seccomp, self.calls, self.x32 = audit, seccomp, dict(calls), x32


_ARCHES = {
    "x86_64": _Arch(
        0xC000003E,
        317,
        {"socket": 41, "connect": 42, "listen": 50, "ptrace": 101, "open_by_handle_at": 304, "process_vm_readv": 310,
         "process_vm_writev": 311, "io_uring_setup": 425, "io_uring_enter": 426, "io_uring_register": 427,
         "pidfd_getfd": 438},
        x32=True,
    ),
    "aarch64": _Arch(
        0xC00000B7,
        277,
        {"socket": 198, "listen": 201, "connect": 203, "ptrace": 117, "open_by_handle_at": 265, "process_vm_readv": 270,
         "process_vm_writev": 271, "io_uring_setup": 425, "io_uring_enter": 426, "io_uring_register": 427,
         "pidfd_getfd": 438},
    ),
}  # fmt: skip
_DENIED = tuple(name for name in _ARCHES["x86_64"].calls if name != "socket")

_PROC_KEPT_OUT = {
    "kcore", "kmsg", "kallsyms", "kpagecgroup", "kpagecount", "kpageflags", "keys", "key-users", "sysrq-trigger",
    "self", "thread-self",
}  # fmt: skip  # the kernel's memory and keys; self is granted as this process's own folder
_DEVICES = ("null", "zero", "full", "random", "urandom", "tty", "nvidiactl", "nvidia-uvm", "nvidia-uvm-tools",
            "nvidia-modeset", "nvidia-caps", "dri")  # fmt: skip
_SYSTEM = ("/usr", "/lib", "/lib64", "/lib32", "/bin", "/sbin", "/etc", "/sys")

_state: dict[str, Any] = {"job_process": False, "own": ()}  # `mark_job_process` sets both
_forbidden: list[Path] = []  # the Hub token file and caches, as the job process's environment named them first


class SealError(Exception):
    """The job process could not be sealed (what failed, in words): it then gets no embargoed input."""


class _SockFilter(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint16), ("jt", ctypes.c_uint8), ("jf", ctypes.c_uint8), ("k", ctypes.c_uint32)]


class _SockFprog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.POINTER(_SockFilter))]


class _RulesetAttr(ctypes.Structure):
    _fields_ = [("fs", ctypes.c_uint64), ("net", ctypes.c_uint64), ("scoped", ctypes.c_uint64)]


class _PathBeneath(ctypes.Structure):
    _pack_ = 1
    _fields_ = [("allowed_access", ctypes.c_uint64), ("parent_fd", ctypes.c_int32)]


@functools.cache
def _libc() -> Any:
    libc = ctypes.CDLL(None, use_errno=True)
    libc.syscall.restype = ctypes.c_long
    libc.prctl.restype = ctypes.c_int
    return libc


def _syscall(number: int, *args: Any) -> int:
    result = _libc().syscall(ctypes.c_long(number), *args)
    if result < 0:
        code = ctypes.get_errno()
        raise OSError(code, os.strerror(code))
    return int(result)


def _arch() -> _Arch | None:
    return _ARCHES.get(platform.machine()) if sys.platform == "linux" else None


def landlock_abi() -> int:
    """The Landlock ABI this kernel offers (0: none, or forbidden here)."""
    if _arch() is None:
        return 0
    try:
        return _syscall(_CREATE_RULESET, None, ctypes.c_size_t(0), ctypes.c_uint32(_CREATE_RULESET_VERSION))
    except OSError:
        return 0


@functools.cache
def unavailable() -> str | None:
    """Why this machine cannot seal a job process (None: it can): what the worker checks before it hands a job any
    embargoed input."""
    if _arch() is None:
        return f"{sys.platform} on {platform.machine()} has no Landlock and seccomp filter this worker can use"
    abi = landlock_abi()
    if abi < MIN_LANDLOCK_ABI:
        found = f"Landlock ABI {abi}" if abi else "no Landlock"
        return f"this kernel ({platform.release()}) offers {found}; ABI {MIN_LANDLOCK_ABI} (Linux 6.7) is needed"
    if _libc().prctl(_PR_GET_SECCOMP, 0, 0, 0, 0) != 0:
        return "seccomp filters are not available to this process"
    return None


def mark_job_process(*own: threading.Thread) -> None:
    """Called once by the job process (`job_process._child_main`), before it drops secret variables: from now on this
    process may seal itself (`own` are its own threads, started before the seal on purpose), and the Hub's token
    file and caches it must never read are noted while their variables are still set (HF_TOKEN_PATH is a
    secret-looking name the job process drops)."""
    _state["job_process"], _state["own"] = True, own
    _forbidden[:] = _hub_secrets(os.environ)


def _hub_secrets(env: Mapping[str, str]) -> list[Path]:
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


def _rights(names: Iterable[str], abi: int) -> int:
    return sum(_FS[name][0] for name in set(names) if _FS[name][1] <= abi)


def _landlock(
    read: Iterable[Path], write: Iterable[Path], devices: Iterable[Path], unlink: Iterable[Path], abi: int
) -> None:
    handled = _rights(_FS, abi)
    attr = _RulesetAttr(handled, _NET_BIND_TCP | _NET_CONNECT_TCP if abi >= 4 else 0, 0)
    if abi >= 6:
        attr.scoped = _SCOPE_ABSTRACT_UNIX_SOCKET | _SCOPE_SIGNAL
    size = 24 if abi >= 6 else 16 if abi >= 4 else 8
    ruleset = _syscall(_CREATE_RULESET, ctypes.byref(attr), ctypes.c_size_t(size), ctypes.c_uint32(0))
    try:
        file_rights = _rights(_FILE_RIGHTS, abi)
        grants = [(p, _rights(_READ, abi)) for p in read] + [(p, _rights(_WRITE, abi)) for p in write]
        grants += [(p, _rights(_DEVICE, abi)) for p in devices] + [(Path("/dev"), _rights(["read_dir"], abi))]
        grants += [(p, _rights(["remove_file"], abi)) for p in unlink]
        for path, rights in grants:
            try:
                fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
            except OSError:
                continue  # not on this machine (no /lib32, no GPU)
            try:
                if not stat.S_ISDIR(os.fstat(fd).st_mode):
                    rights &= file_rights
                rule = _PathBeneath(rights, fd)
                _syscall(_ADD_RULE, ctypes.c_int(ruleset), ctypes.c_int(_RULE_PATH_BENEATH), ctypes.byref(rule), 0)
            finally:
                os.close(fd)
        _syscall(_RESTRICT_SELF, ctypes.c_int(ruleset), ctypes.c_uint32(0))
    finally:
        os.close(ruleset)


def _filter(arch: _Arch) -> list[tuple[int, int, int, int]]:
    """The seccomp program: (code, jump if true, jump if false, k), as the kernel's BPF reads it."""
    deny = _RET_ERRNO | errno.EPERM
    calls = [arch.calls[name] for name in _DENIED]
    head = [(_LD_ABS, 0, 0, 4), (_JEQ, 1, 0, arch.audit), (_RET, 0, 0, deny), (_LD_ABS, 0, 0, 0)]
    if arch.x32:  # x32 calls carry this bit and the x86_64 audit id
        head += [(_JGE, 0, 1, _X32_SYSCALL_BIT), (_RET, 0, 0, deny)]
    checks = [(_JEQ, 0, 1, number) for number in calls]
    body = []
    for check in checks:
        body += [check, (_RET, 0, 0, deny)]
    # socket(): AF_UNIX stream or seqpacket only (connection-based: with connect() denied, nothing leaves by it)
    sockets = [
        (_JEQ, 1, 0, arch.calls["socket"]), (_RET, 0, 0, _RET_ALLOW),
        (_LD_ABS, 0, 0, 16), (_JEQ, 1, 0, socket.AF_UNIX), (_RET, 0, 0, deny),
        (_LD_ABS, 0, 0, 24), (_AND, 0, 0, _SOCK_TYPE_MASK),
        (_JEQ, 2, 0, socket.SOCK_STREAM), (_JEQ, 1, 0, socket.SOCK_SEQPACKET), (_RET, 0, 0, deny),
        (_RET, 0, 0, _RET_ALLOW),
    ]  # fmt: skip
    return head + body + sockets


def _seccomp(arch: _Arch) -> None:
    program = _filter(arch)
    filters = (_SockFilter * len(program))(*[_SockFilter(*line) for line in program])
    prog = _SockFprog(len(program), filters)
    flags = ctypes.c_uint(_SECCOMP_FILTER_FLAG_TSYNC)
    thread = _syscall(arch.seccomp, ctypes.c_uint(_SECCOMP_SET_MODE_FILTER), flags, ctypes.byref(prog))
    if thread:
        raise SealError(f"thread {thread} could not take the seccomp filter")


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
    arch = _arch()
    assert arch is not None  # `unavailable` said so
    try:
        if _libc().prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
            raise OSError(ctypes.get_errno(), "prctl(PR_SET_NO_NEW_PRIVS)")
        # /dev/shm names the semaphores this process made (tqdm's lock): it unlinks them when it exits; with a pool
        # of encoding processes, which make more, it is theirs to write
        shm = [Path("/dev/shm")]
        writable, unlink = ([*granted, *shm], []) if shared_memory else (granted, shm)
        _landlock([*system, *readable], writable, _device_paths(), unlink, landlock_abi())
        _seccomp(arch)
    except OSError as exc:
        raise SealError(f"the kernel refused the seal: {exc}") from exc


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
