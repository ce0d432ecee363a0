"""CodemapService: the content-hash cache, its parse counter, skipped files,
the worker pool, and two processes sharing one state directory."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from tests.support.require import require
from tooldeck.codemap import pool
from tooldeck.codemap.model import Codemap, Skipped
from tooldeck.codemap.service import MAX_FILE_BYTES, CodemapService, codemap_service
from tooldeck.runtime import Runtime

OLD = time.time() - 3600  # an mtime old enough for the stat cache to trust


def write(root: Path, rel: str, text: str | bytes, *, old: bool = True) -> Path:
    p = root / rel
    p.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(text, bytes):
        p.write_bytes(text)
    else:
        p.write_text(text, encoding="utf-8")
    if old:
        os.utime(p, (OLD, OLD))
    return p


def module(i: int) -> str:
    return (
        f"import os\n\n\nclass Thing{i}:\n    def run(self, n: int) -> int:\n        return n * {i}\n\n\n"
        f"def make{i}():\n    return Thing{i}()\n"
    )


def fresh(root: Path, state_dir: Path) -> CodemapService:
    """A new service (as in a new process) on the same state directory."""
    return CodemapService(Runtime.for_dirs([root], state_dir=state_dir))


def test_service_is_one_per_runtime(runtime: Runtime):
    assert codemap_service(runtime) is codemap_service(runtime)


def test_codemap_of_a_file(runtime: Runtime, root: Path):
    write(root, "pkg/app.py", module(1))
    cm = codemap_service(runtime).codemap(runtime.workspace.primary, "pkg/app.py")
    assert isinstance(cm, Codemap)
    assert cm.path == "pkg/app.py" and cm.language == "python" and cm.imports == ["os"]
    assert [(s.name, s.kind, s.line) for s in cm.symbols] == [
        ("Thing1", "class", 4),
        ("run", "method", 5),
        ("make1", "function", 9),
    ]
    assert {"Thing1", "os"} <= cm.references
    assert len(cm.content_hash) == 16


def test_unchanged_files_are_never_parsed_twice(root: Path, state_dir: Path):
    rels = [f"m{i}.py" for i in range(12)]
    for i, rel in enumerate(rels):
        write(root, rel, module(i))
    svc = fresh(root, state_dir)
    first = svc.codemaps(svc.rt.workspace.primary, rels)
    assert svc.parse_count == 12
    assert svc.codemaps(svc.rt.workspace.primary, rels) == first
    assert svc.parse_count == 12
    # a new process on the same state directory: no parse, and no read either (stat cache)
    again = fresh(root, state_dir)
    assert again.codemaps(again.rt.workspace.primary, rels) == first
    assert again.parse_count == 0
    assert again.read_count == 0


def test_a_changed_file_is_parsed_again(root: Path, state_dir: Path):
    write(root, "a.py", "def alpha():\n    pass\n")
    svc = fresh(root, state_dir)
    r = svc.rt.workspace.primary
    assert [s.name for s in svc.codemap(r, "a.py").symbols] == ["alpha"]
    write(root, "a.py", "def gamma():\n    pass\n", old=False)  # same size, new content
    assert [s.name for s in svc.codemap(r, "a.py").symbols] == ["gamma"]
    assert svc.parse_count == 2
    later = fresh(root, state_dir)
    assert [s.name for s in later.codemap(r, "a.py").symbols] == ["gamma"]
    assert later.parse_count == 0


def test_a_recently_written_file_is_rehashed_not_trusted(root: Path, state_dir: Path):
    """Within the racy window the stat cache is not trusted: an in-place rewrite
    with the same size and mtime is still seen."""
    p = write(root, "b.py", "def one():\n    pass\n", old=False)
    svc = fresh(root, state_dir)
    r = svc.rt.workspace.primary
    svc.codemap(r, "b.py")
    st = p.stat()
    p.write_text("def two():\n    pass\n", encoding="utf-8")
    os.utime(p, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert [s.name for s in fresh(root, state_dir).codemap(r, "b.py").symbols] == ["two"]


def test_identical_content_is_parsed_once(root: Path, state_dir: Path):
    write(root, "x/one.py", module(7))
    write(root, "y/two.py", module(7))
    svc = fresh(root, state_dir)
    a, b = svc.codemaps(svc.rt.workspace.primary, ["x/one.py", "y/two.py"])
    assert isinstance(a, Codemap) and isinstance(b, Codemap)
    assert (a.path, b.path) == ("x/one.py", "y/two.py") and a.symbols == b.symbols
    assert svc.parse_count == 1


def test_files_without_a_codemap_say_why(root: Path, state_dir: Path):
    write(root, "notes.txt", "plain text\n")
    write(root, "blob.py", b"\x00\x01\x02binary")
    write(root, "latin.py", "x = 'caf\xe9'\n".encode("latin-1"))
    write(root, "utf8.py", "x = 'caf\xe9'\n".encode())  # not ASCII, but UTF-8: mapped
    write(root, "bundle.min.js", "function a(){return 1}\n")
    write(root, "long.js", "var a=1;" * 2000)  # one very long line: minified
    write(root, "huge.py", b"x = 1\n" * (MAX_FILE_BYTES // 6 + 10))
    svc = fresh(root, state_dir)
    rels = ["notes.txt", "blob.py", "latin.py", "utf8.py", "bundle.min.js", "long.js", "huge.py", "missing.py"]
    results = dict(zip(rels, svc.codemaps(svc.rt.workspace.primary, rels), strict=True))
    reasons = {rel: res.reason for rel, res in results.items() if isinstance(res, Skipped)}
    assert reasons["notes.txt"] == "no grammar"
    assert reasons["blob.py"] == "binary"
    assert reasons["latin.py"] == "not UTF-8 text"
    assert isinstance(results["utf8.py"], Codemap)
    assert reasons["bundle.min.js"] == "minified"
    assert reasons["long.js"].startswith("minified")
    assert reasons["huge.py"].startswith("too large")
    assert reasons["missing.py"] == "missing or unreadable"
    assert svc.parse_count == 1  # utf8.py alone
    assert svc.codemap(svc.rt.workspace.primary, "blob.py") is None


def test_a_symlink_leaving_the_workspace_is_not_read(root: Path, state_dir: Path, tmp_path: Path):
    outside = tmp_path / "outside.py"
    outside.write_text("SECRET = 1\n", encoding="utf-8")
    (root / "link.py").symlink_to(outside)
    svc = fresh(root, state_dir)
    [res] = svc.codemaps(svc.rt.workspace.primary, ["link.py"])
    assert isinstance(res, Skipped) and "leaving the workspace" in res.reason


def test_render_format(runtime: Runtime, root: Path):
    write(
        root,
        "src/app.py",
        "import os\n\nPORT = 80\n\nclass Server:\n    timeout: float = 1.0\n\n"
        "    def start(self) -> None:\n        pass\n",
    )
    svc = codemap_service(runtime)
    text = svc.render(svc.codemap(runtime.workspace.primary, "src/app.py"))
    assert text == textwrap.dedent(
        """\
        src/app.py
        3 PORT=80
        5 class Server
        6\ttimeout:float
        8\tstart()->None"""
    )


def test_worker_pool_gives_the_same_codemaps(root: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    rels = [f"pkg/m{i}.py" for i in range(20)]
    for i, rel in enumerate(rels):
        write(root, rel, module(i))
    inline = fresh(root, tmp_path / "s1")
    monkeypatch.setattr(pool, "POOL_MIN_FILES", 10**9)
    expected = inline.codemaps(inline.rt.workspace.primary, rels)
    monkeypatch.setattr(pool, "POOL_MIN_FILES", 4)
    monkeypatch.setenv("TOOLDECK_CODEMAP_WORKERS", "2")
    require("codemap worker processes", present=pool.get_pool() is not None,
            how="a machine where multiprocessing can start workers (a writable /dev/shm)")  # fmt: skip
    pooled = fresh(root, tmp_path / "s2")
    assert pooled.codemaps(pooled.rt.workspace.primary, rels) == expected
    assert pooled.parse_count == 20


def test_a_pooled_batch_sends_its_small_last_chunk_to_the_workers_too(
    root: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    """20 files in chunks of 8, 8, 4: the last chunk is below the pool's
    minimum, but the batch already uses the workers, so it goes to them
    (no grammar loaded and no file parsed in this process)."""
    from tooldeck.codemap import service

    rels = [f"pkg/m{i}.py" for i in range(20)]
    for i, rel in enumerate(rels):
        write(root, rel, module(i))
    inline = fresh(root, tmp_path / "s1")
    monkeypatch.setattr(pool, "POOL_MIN_FILES", 10**9)
    expected = inline.codemaps(inline.rt.workspace.primary, rels)
    monkeypatch.setattr(pool, "POOL_MIN_FILES", 6)
    monkeypatch.setattr(service, "CHUNK_FILES", 8)
    monkeypatch.setenv("TOOLDECK_CODEMAP_WORKERS", "2")
    require("codemap worker processes", present=pool.get_pool() is not None,
            how="a machine where multiprocessing can start workers (a writable /dev/shm)")  # fmt: skip
    in_process: list[str] = []
    real = pool.extract_one
    monkeypatch.setattr(pool, "extract_one", lambda lang, data: in_process.append(lang) or real(lang, data))
    pooled = fresh(root, tmp_path / "s2")
    assert pooled.codemaps(pooled.rt.workspace.primary, rels) == expected
    assert pooled.parse_count == 20
    assert in_process == []
    # a batch that starts small stays in this process (no worker round trip for a few files)
    few = fresh(root, tmp_path / "s3")
    assert few.codemaps(few.rt.workspace.primary, rels[:4]) == expected[:4]
    assert len(in_process) == 4


def test_idle_workers_are_released_and_come_back_for_the_next_batch(
    root: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    rels = [f"pkg/m{i}.py" for i in range(12)]
    for i, rel in enumerate(rels):
        write(root, rel, module(i))
    monkeypatch.setattr(pool, "POOL_MIN_FILES", 4)
    monkeypatch.setenv("TOOLDECK_CODEMAP_WORKERS", "2")
    require("codemap worker processes", present=pool.get_pool() is not None,
            how="a machine where multiprocessing can start workers (a writable /dev/shm)")  # fmt: skip
    first = fresh(root, tmp_path / "s1")
    assert all(not isinstance(cm, Skipped) for cm in first.codemaps(first.rt.workspace.primary, rels))
    assert pool.release_if_idle() is True
    assert pool._pool is None and not pool._broken
    assert pool.release_if_idle() is False  # nothing left to release
    second = fresh(root, tmp_path / "s2")  # a new cache: every file parsed again, by new workers
    assert second.codemaps(second.rt.workspace.primary, rels) == first.codemaps(first.rt.workspace.primary, rels)
    assert second.parse_count == 12 and pool._pool is not None and not pool._broken


def test_two_processes_on_one_state_directory(root: Path, state_dir: Path):
    rels = [f"m{i}.py" for i in range(40)]
    for i, rel in enumerate(rels):
        write(root, rel, module(i))
    script = textwrap.dedent(
        f"""
        import sys
        from tooldeck.codemap.service import CodemapService
        from tooldeck.runtime import Runtime
        svc = CodemapService(Runtime.for_dirs([{str(root)!r}], state_dir={str(state_dir)!r}))
        rels = {rels!r}
        for _ in range(3):
            out = svc.codemaps(svc.rt.workspace.primary, rels)
        assert all(len(cm.symbols) == 3 for cm in out), out
        print("ok", svc.parse_count)
        """
    )
    env = {**os.environ, "TOOLDECK_CODEMAP_WORKERS": "0"}
    procs = [
        subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
        for _ in range(2)
    ]
    for p in procs:
        out, err = p.communicate(timeout=120)
        assert p.returncode == 0, err.decode()
        assert out.decode().startswith("ok")
    svc = fresh(root, state_dir)
    assert all(isinstance(cm, Codemap) for cm in svc.codemaps(svc.rt.workspace.primary, rels))
    assert svc.parse_count == 0
