"""The kernel's side of a job process's seal (`worker.sandbox` decides what is granted): Landlock's ruleset and a
seccomp filter, through ctypes and the system call numbers of each architecture (no dependency).

The numbers and bits are the kernel's own (include/uapi/linux/landlock.h, seccomp.h, filter.h, audit.h); what each
function does is what one system call or one BPF program does, so the sandbox reads as the policy it is.
"""

from __future__ import annotations

import ctypes
import errno
import functools
import os
import platform
import socket
import stat
import sys
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

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


class Arch:
    """One architecture's audit id and the numbers of the system calls the filter names."""

    def __init__(self, audit: int, seccomp: int, calls: Mapping[str, int], x32: bool = False) -> None:
        self.audit, self.seccomp, self.calls, self.x32 = audit, seccomp, dict(calls), x32


ARCHES = {
    "x86_64": Arch(
        0xC000003E,
        317,
        {"socket": 41, "connect": 42, "listen": 50, "ptrace": 101, "open_by_handle_at": 304, "process_vm_readv": 310,
         "process_vm_writev": 311, "io_uring_setup": 425, "io_uring_enter": 426, "io_uring_register": 427,
         "pidfd_getfd": 438},
        x32=True,
    ),
    "aarch64": Arch(
        0xC00000B7,
        277,
        {"socket": 198, "listen": 201, "connect": 203, "ptrace": 117, "open_by_handle_at": 265, "process_vm_readv": 270,
         "process_vm_writev": 271, "io_uring_setup": 425, "io_uring_enter": 426, "io_uring_register": 427,
         "pidfd_getfd": 438},
    ),
}  # fmt: skip
_DENIED = tuple(name for name in ARCHES["x86_64"].calls if name != "socket")


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
def libc() -> Any:
    libc = ctypes.CDLL(None, use_errno=True)
    libc.syscall.restype = ctypes.c_long
    libc.prctl.restype = ctypes.c_int
    return libc


def syscall(number: int, *args: Any) -> int:
    result = libc().syscall(ctypes.c_long(number), *args)
    if result < 0:
        code = ctypes.get_errno()
        raise OSError(code, os.strerror(code))
    return int(result)


def machine_arch() -> Arch | None:
    return ARCHES.get(platform.machine()) if sys.platform == "linux" else None


def landlock_abi() -> int:
    """The Landlock ABI this kernel offers (0: none, or forbidden here)."""
    if machine_arch() is None:
        return 0
    try:
        return syscall(_CREATE_RULESET, None, ctypes.c_size_t(0), ctypes.c_uint32(_CREATE_RULESET_VERSION))
    except OSError:
        return 0


def _rights(names: Iterable[str], abi: int) -> int:
    return sum(_FS[name][0] for name in set(names) if _FS[name][1] <= abi)


def restrict_paths(
    read: Iterable[Path], write: Iterable[Path], devices: Iterable[Path], unlink: Iterable[Path], abi: int
) -> None:
    """Restrict this thread and those it starts to a Landlock ruleset that handles every right `abi` knows (and TCP
    bind and connect, with no rule: none allowed) and grants only these: reading `read`, writing `write`, using
    `devices`, removing files in `unlink`. A path not on this machine is left out."""
    handled = _rights(_FS, abi)
    attr = _RulesetAttr(handled, _NET_BIND_TCP | _NET_CONNECT_TCP if abi >= 4 else 0, 0)
    if abi >= 6:
        attr.scoped = _SCOPE_ABSTRACT_UNIX_SOCKET | _SCOPE_SIGNAL
    size = 24 if abi >= 6 else 16 if abi >= 4 else 8
    ruleset = syscall(_CREATE_RULESET, ctypes.byref(attr), ctypes.c_size_t(size), ctypes.c_uint32(0))
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
                syscall(_ADD_RULE, ctypes.c_int(ruleset), ctypes.c_int(_RULE_PATH_BENEATH), ctypes.byref(rule), 0)
            finally:
                os.close(fd)
        syscall(_RESTRICT_SELF, ctypes.c_int(ruleset), ctypes.c_uint32(0))
    finally:
        os.close(ruleset)


def filter_program(arch: Arch) -> list[tuple[int, int, int, int]]:
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


def install_seccomp(arch: Arch) -> int:
    """Bind every thread of this process, and every process it starts, to `filter_program` (TSYNC); returns 0, or
    the id of a thread that could not take the filter."""
    program = filter_program(arch)
    filters = (_SockFilter * len(program))(*[_SockFilter(*line) for line in program])
    prog = _SockFprog(len(program), filters)
    flags = ctypes.c_uint(_SECCOMP_FILTER_FLAG_TSYNC)
    return syscall(arch.seccomp, ctypes.c_uint(_SECCOMP_SET_MODE_FILTER), flags, ctypes.byref(prog))


def seccomp_mode() -> int:
    """This process's seccomp mode (`prctl(PR_GET_SECCOMP)`): 0 when no filter binds it yet, so one can be installed."""
    return int(libc().prctl(_PR_GET_SECCOMP, 0, 0, 0, 0))


def forbid_new_privileges() -> None:
    """`prctl(PR_SET_NO_NEW_PRIVS)`: no set-uid program run later regains what the seal takes away."""
    if libc().prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_NO_NEW_PRIVS)")
