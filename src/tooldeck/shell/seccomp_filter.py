"""The seccomp filter every sandboxed command runs under (``bwrap --seccomp FD``).

Why a filter on top of ``--cap-drop ALL``: the capabilities say what the
kernel lets a process do with a call; the filter says which calls exist at
all. A sandboxed command has no business mounting, unsharing, tracing,
loading keys, BPF programs or modules, or faking terminal input, so those
calls fail with EPERM whatever privileges a kernel bug or a forgotten
namespace might have left. It is a deny-list (default allow): ordinary
development programs (git, python, make, gcc, node, rg, shells) never call
these.

* ``clone`` with any ``CLONE_NEW*`` flag fails with EPERM (no new user, mount,
  pid... namespace); ``clone3`` takes its flags in a struct the filter cannot
  read, so it fails with ENOSYS and libc falls back to ``clone``.
* ``io_uring_*`` fail with ENOSYS (runtimes fall back to plain calls):
  io_uring's operations are not seen by seccomp at all.
* ``ioctl(TIOCSTI)`` / ``ioctl(TIOCLINUX)`` fail with EPERM (no keystrokes
  pushed into a terminal); the request is compared on its low 32 bits, the
  ones the kernel reads.
* Calls of another architecture (a 32-bit ``int 0x80`` on x86-64) kill the
  process: the filter is written for the native table only.

The program is built by libseccomp (PyPI ``pyseccomp``, the ctypes binding
with libseccomp's own ``seccomp`` API) once per process; each bwrap gets it
through a fresh memfd of its own (two stages of a pipeline must not share a
file offset).
"""

from __future__ import annotations

import errno
import os
import threading

# An argv word that stands for the filter's descriptor until spawn time. It
# holds a NUL byte: no model-supplied argument can contain one (refused as
# invalid_arguments) and an argv that still holds it cannot be executed.
FD_SLOT = "\x00seccomp-fd"

EPERM_CALLS: tuple[str, ...] = (
    # mounts, old and new API, and leaving the mount namespace
    "mount", "umount", "umount2", "pivot_root", "chroot", "fsopen", "fsconfig", "fsmount", "fspick",
    "move_mount", "open_tree", "mount_setattr",
    # namespaces
    "unshare", "setns",
    # other processes' memory
    "ptrace", "process_vm_readv", "process_vm_writev", "process_madvise", "pidfd_getfd",
    # kernel keyring, BPF, perf, userfaultfd
    "keyctl", "add_key", "request_key", "bpf", "perf_event_open", "userfaultfd",
    # the kernel itself
    "kexec_load", "kexec_file_load", "init_module", "finit_module", "delete_module", "reboot", "acct",
    "swapon", "swapoff", "quotactl", "quotactl_fd", "iopl", "ioperm", "syslog", "lookup_dcookie",
    "vhangup", "uselib", "nfsservctl", "fanotify_init",
    # files by handle (escapes any bind mount)
    "open_by_handle_at", "name_to_handle_at",
)  # fmt: skip
ENOSYS_CALLS: tuple[str, ...] = ("clone3", "io_uring_setup", "io_uring_enter", "io_uring_register")

CLONE_NS_FLAGS: tuple[int, ...] = (
    0x00020000,  # CLONE_NEWNS
    0x02000000,  # CLONE_NEWCGROUP
    0x04000000,  # CLONE_NEWUTS
    0x08000000,  # CLONE_NEWIPC
    0x10000000,  # CLONE_NEWUSER
    0x20000000,  # CLONE_NEWPID
    0x40000000,  # CLONE_NEWNET
)
TIOCSTI, TIOCLINUX = 0x5412, 0x541C

_lock = threading.Lock()
_program: list[bytes] = []


class SeccompUnavailable(RuntimeError):
    """libseccomp (or its Python binding) is missing: no filter can be built."""


def _build() -> bytes:
    try:
        import pyseccomp as sc
    except (ImportError, RuntimeError) as exc:  # RuntimeError: the binding found no libseccomp.so
        raise SeccompUnavailable(
            f"the seccomp filter cannot be built ({exc}); install the Debian package libseccomp2 and the "
            "Python package pyseccomp (scripts/setup.sh does both)"
        ) from exc
    flt = sc.SyscallFilter(sc.ALLOW)
    flt.set_attr(sc.Attr.ACT_BADARCH, sc.KILL_PROCESS)

    def deny(action: int, name: str, *args: object) -> None:
        if sc.resolve_syscall(sc.Arch.NATIVE, name) < 0:
            return  # not a call of this architecture (iopl on arm64, umount on x86-64)
        flt.add_rule(action, name, *args)

    for name in EPERM_CALLS:
        deny(sc.ERRNO(errno.EPERM), name)
    for name in ENOSYS_CALLS:
        deny(sc.ERRNO(errno.ENOSYS), name)
    flags_arg = 1 if sc.system_arch() in (sc.Arch.S390, sc.Arch.S390X) else 0  # s390 swaps clone's first two
    for flag in CLONE_NS_FLAGS:
        deny(sc.ERRNO(errno.EPERM), "clone", sc.Arg(flags_arg, sc.MASKED_EQ, flag, flag))
    for request in (TIOCSTI, TIOCLINUX):
        deny(sc.ERRNO(errno.EPERM), "ioctl", sc.Arg(1, sc.MASKED_EQ, 0xFFFFFFFF, request))
    fd = os.memfd_create("tooldeck-seccomp-build", os.MFD_CLOEXEC)
    try:
        with open(fd, "wb", closefd=False) as fh:
            flt.export_bpf(fh)
        size = os.lseek(fd, 0, os.SEEK_END)
        return os.pread(fd, size, 0)
    finally:
        os.close(fd)


def program() -> bytes:
    """The BPF program (built on first use, then shared by every run of the process)."""
    with _lock:
        if not _program:
            _program.append(_build())
        return _program[0]


def program_fd(data: bytes) -> int:
    """A new descriptor holding ``data`` at offset 0, for one bwrap to read (close it after the spawn)."""
    fd = os.memfd_create("tooldeck-seccomp", os.MFD_CLOEXEC)
    try:
        os.write(fd, data)
        os.lseek(fd, 0, os.SEEK_SET)
    except OSError:
        os.close(fd)
        raise
    return fd


def fill_slot(argv: list[str], data: bytes) -> tuple[list[str], int | None]:
    """``argv`` with its :data:`FD_SLOT` replaced by a fresh descriptor of ``data``;
    the descriptor (the caller passes it to the child, then closes it), or None
    when the argv has no slot."""
    try:
        at = argv.index(FD_SLOT)
    except ValueError:
        return argv, None
    fd = program_fd(data)
    return [*argv[:at], str(fd), *argv[at + 1 :]], fd
