"""Break-out attempts at the sandbox's privileges: capabilities, mounts, namespaces,
the seccomp-blocked calls, tracing, terminal injection.

Every attempt runs a real program inside the sandbox (``python3`` with ctypes,
``mount``, ``umount``, ``unshare``, ``sh``) under a runtime whose policy allows
everything, so what stops it is the sandbox. What is asserted is seen from the
host: the file the attempt would write never appears, the host's
``/proc/PID/status`` of the sandboxed process shows no capability.
The module runs as root and (tests/shell/test_breakout_unprivileged.py) again
as an unprivileged user.
"""

from __future__ import annotations

import errno
import os
from pathlib import Path

import pyseccomp
import pytest

from tests.shell.sandbox_kit import open_shell, py, status_while_running
from tests.shell.shell_harness import Shell, needs_bwrap
from tooldeck.shell.seccomp_filter import ENOSYS_CALLS, EPERM_CALLS

pytestmark = needs_bwrap


@pytest.fixture
def box(root: Path, state_dir: Path) -> Shell:
    return open_shell(root, state_dir)


def _raw(box: Shell, tool: str, code: str) -> dict:
    return box.structured(tool, {"code": code})


# --- capabilities and no-new-privileges, read from the host ----------------------------------


@pytest.mark.parametrize("tool", ["sh", "ro"])
def test_sandboxed_process_has_no_capability(box: Shell, root: Path, tool: str) -> None:
    status, result = status_while_running(box, tool, root)
    assert not result.is_error, result.text
    for field in ("CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb"):
        assert int(status[field], 16) == 0, f"{field}={status[field]}"
    assert status["NoNewPrivs"] == "1"
    assert status["Seccomp"] == "2"  # a filter is loaded


# --- mounts: remount, umount, new mounts ------------------------------------------------------


def test_remount_of_a_read_only_root_fails(box: Shell, root: Path) -> None:
    (root / "README.md").write_text("hi\n")
    out = _raw(box, "rawro", f"mount -o remount,rw,bind {root} {root}; echo x > {root}/PWNED; echo done")
    assert "done" in out["stdout"]
    assert not (root / "PWNED").exists()


def test_issue_27_sed_e_remount_in_the_builtin_read_only_runtime(root: Path, state_dir: Path) -> None:
    """The issue's own reproduction: `sed` is allowed there and its `e` command runs a shell."""
    from tooldeck.shell.profiles import BUILTIN
    from tooldeck.shell.spec import ShellToolSpec

    rt = BUILTIN["builtin:workspace-readonly@1"]
    s = Shell(root, state_dir).add(ShellToolSpec(name="shell", mode="structured", runtime=rt.id), rt)
    (root / "README.md").write_text("hi\n")
    cmd = f"mount -o remount,rw,bind {root} && echo x>{root}/PWNED"
    s.call("shell", {"program": "sed", "arguments": ["-n", f"1e {cmd}", "README.md"]})
    assert not (root / "PWNED").exists()


def test_remount_of_etc_read_write_fails(box: Shell) -> None:
    marker = f"/etc/tooldeck-pwned-{os.getpid()}"
    _raw(box, "raw", f"mount -o remount,rw,bind /etc /etc; touch {marker}; echo done")
    assert not os.path.exists(marker)


@pytest.mark.parametrize("undo", ["umount ROOT/.git; umount -l ROOT/.git", "mount -o remount,rw,bind ROOT/.git"])
def test_the_git_bind_cannot_be_undone(box: Shell, root: Path, undo: str) -> None:
    (root / ".git" / "hooks").mkdir(parents=True)
    (root / ".git" / "config").write_text("[core]\n")
    _raw(box, "raw", f"{undo.replace('ROOT', str(root))}; echo '[core] fsmonitor = x' >> {root}/.git/config; "
         f"touch {root}/.git/hooks/pre-commit; echo done")  # fmt: skip
    assert (root / ".git" / "config").read_text() == "[core]\n"
    assert not (root / ".git" / "hooks" / "pre-commit").exists()


def test_umount_of_the_state_directory_tmpfs_exposes_nothing(root: Path) -> None:
    state = root / ".state"
    state.mkdir()
    secret = state / "secret.txt"
    secret.write_text("TOPSECRET")
    box = open_shell(root, state)
    out = _raw(box, "raw", f"umount {state}; umount -l {state}; cat {secret}; echo gone > {secret}; "
               f"rm -f {state}/shell-audit.jsonl; echo done")  # fmt: skip
    assert "done" in out["stdout"] and "TOPSECRET" not in out["stdout"]
    assert secret.read_text() == "TOPSECRET"
    assert (state / "shell-audit.jsonl").stat().st_size > 0


def test_writes_into_the_state_directory_inside_a_write_root_do_not_land(root: Path) -> None:
    state = root / ".state"
    state.mkdir()
    box = open_shell(root, state)
    box.structured("sh", {"program": "true"})  # the audit log exists now
    before = (state / "shell-audit.jsonl").read_bytes()
    _raw(box, "raw", f"echo forged >> {state}/shell-audit.jsonl; echo x > {state}/planted; echo done")
    assert not (state / "planted").exists()
    assert (state / "shell-audit.jsonl").read_bytes().startswith(before)
    lines = (state / "shell-audit.jsonl").read_text().splitlines()
    assert "forged" not in lines and all(line.startswith("{") for line in lines)  # only tooldeck's records


def test_mount_of_a_tmpfs_over_the_root_fails(box: Shell, root: Path) -> None:
    (root / "keep.txt").write_text("keep")
    out = _raw(box, "raw", f"mount -t tmpfs none {root} && echo MOUNTED; ls {root}")
    assert "MOUNTED" not in out["stdout"] and "keep.txt" in out["stdout"]


def test_appending_to_an_etc_file_as_root_fails(box: Shell) -> None:
    before = os.stat("/etc/hostname").st_mtime_ns
    code = "import os\ntry:\n    os.open('/etc/hostname', os.O_WRONLY | os.O_APPEND)\n    print('OPENED')\nexcept OSError as e:\n    print('refused', e.errno)"  # noqa: E501
    out = box.structured("sh", py(code))
    assert "OPENED" not in out["stdout"] and "refused" in out["stdout"]
    assert os.stat("/etc/hostname").st_mtime_ns == before


# --- namespaces ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "argv",
    [
        ["unshare", "-U", "-r", "-m", "sh", "-c", "mount -t tmpfs x /tmp && touch ROOT/PWNED"],
        ["unshare", "-U", "-m", "sh", "-c", "touch ROOT/PWNED"],
        ["unshare", "-m", "sh", "-c", "touch ROOT/PWNED"],
        ["unshare", "-n", "sh", "-c", "touch ROOT/PWNED"],
        ["unshare", "-p", "-f", "sh", "-c", "touch ROOT/PWNED"],
    ],
)
def test_unshare_fails(box: Shell, root: Path, argv: list[str]) -> None:
    argv = [a.replace("ROOT", str(root)) for a in argv]
    out = box.structured("sh", {"program": argv[0], "arguments": argv[1:]})
    assert out["exit_code"] != 0
    assert not (root / "PWNED").exists()


CLONE = """
import ctypes, os, sys
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
r = libc.syscall(ctypes.c_long({nr}), ctypes.c_long({flags} | 17), ctypes.c_long(0), ctypes.c_long(0),
                 ctypes.c_long(0), ctypes.c_long(0))
if r == 0:
    os._exit(0)  # the child of a clone that worked
e = ctypes.get_errno()
if r > 0:
    open('ESCAPED', 'w').write('x')
    os.waitpid(r, 0)
print('rc', r, 'errno', e)
"""


@pytest.mark.parametrize("flag", [0x10000000, 0x00020000, 0x20000000, 0x40000000, 0x04000000, 0x08000000, 0x02000000])
def test_clone_into_a_new_namespace_fails(box: Shell, root: Path, flag: int) -> None:
    nr = pyseccomp.resolve_syscall(pyseccomp.Arch.NATIVE, "clone")
    out = box.structured("sh", py(CLONE.format(nr=nr, flags=flag)))
    assert f"errno {errno.EPERM}" in out["stdout"], out
    assert not (root / "ESCAPED").exists()


# --- every call the seccomp filter refuses, tried from inside ------------------------------------

SYSCALL = """
import ctypes, os, sys
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
args = [os.getpid() if a == 'PID' else int(a) for a in sys.argv[2:]]
r = libc.syscall(ctypes.c_long(int(sys.argv[1])), *[ctypes.c_long(a) for a in args])
e = ctypes.get_errno()
if r >= 0:
    open('ESCAPED-' + sys.argv[1], 'w').write('x')
print('rc', r, 'errno', e)
"""
# Arguments that do nothing harmful even where a call is allowed (NULL pointers, bad
# descriptors, zero counts); several would succeed without the filter (unshare(0),
# ptrace(TRACEME), process_vm_readv of itself, userfaultfd(USER_MODE_ONLY),
# fanotify_init(FAN_REPORT_FID)) and most others fail with another errno (EFAULT,
# EBADF, ENOSYS...): EPERM is the filter's answer.
ARGS: dict[str, tuple[str, ...]] = {
    "unshare": ("0",), "setns": ("-1", "0"), "ptrace": ("0", "0", "0", "0"),
    "process_vm_readv": ("PID", "0", "0", "0", "0", "0"), "process_vm_writev": ("PID", "0", "0", "0", "0", "0"),
    "keyctl": ("0", "-2", "0"), "userfaultfd": ("1",), "iopl": ("0",), "syslog": ("10", "0", "0"),
    "name_to_handle_at": ("-100", "0", "0", "0", "0"), "fanotify_init": ("512", "0"),  # FAN_REPORT_FID: unprivileged
}  # fmt: skip
# the calls this architecture has (umount is i386's, iopl x86's...): none is skipped
CALLS = [(name, errno.EPERM) for name in EPERM_CALLS] + [(name, errno.ENOSYS) for name in ENOSYS_CALLS]
CALLS = [(name, code) for name, code in CALLS if pyseccomp.resolve_syscall(pyseccomp.Arch.NATIVE, name) >= 0]


@pytest.mark.parametrize(("name", "expect"), CALLS, ids=[c[0] for c in CALLS])
def test_seccomp_refuses(box: Shell, root: Path, name: str, expect: int) -> None:
    nr = pyseccomp.resolve_syscall(pyseccomp.Arch.NATIVE, name)
    out = box.structured("sh", py(SYSCALL, str(nr), *ARGS.get(name, ("0", "0", "0", "0", "0"))))
    assert f"errno {expect}" in out["stdout"], out
    assert not list(root.glob("ESCAPED-*"))


def test_ioctl_tiocsti_cannot_inject_input(box: Shell, root: Path) -> None:
    code = """
import ctypes, fcntl, os, termios
libc = ctypes.CDLL(None, use_errno=True)
master, slave = os.openpty()
try:
    os.setsid()
except OSError:
    pass
fcntl.ioctl(slave, termios.TIOCSCTTY, 0)
for request in (termios.TIOCSTI, termios.TIOCSTI | (1 << 32)):  # the high bits are ignored by the kernel
    r = libc.ioctl(slave, ctypes.c_ulong(request), ctypes.c_char_p(b"X"))
    e = ctypes.get_errno()
    if r == 0:
        open('INJECTED', 'w').write('x')
    print('rc', r, 'errno', e)
"""
    out = box.structured("sh", py(code))
    assert out["stdout"].count(f"errno {errno.EPERM}") == 2, out
    assert not (root / "INJECTED").exists()


def test_ptrace_of_a_sibling_cannot_change_it(box: Shell, root: Path) -> None:
    code = """
import ctypes, os, subprocess, sys, time
libc = ctypes.CDLL(None, use_errno=True)
libc.ptrace.restype = ctypes.c_long
child = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(5)'])
time.sleep(0.2)
r = libc.ptrace(16, child.pid, 0, 0)  # PTRACE_ATTACH
e = ctypes.get_errno()
if r == 0:
    open('TRACED', 'w').write('x')
child.kill()
print('rc', r, 'errno', e)
"""
    out = box.structured("sh", py(code))
    assert f"errno {errno.EPERM}" in out["stdout"], out
    assert not (root / "TRACED").exists()
