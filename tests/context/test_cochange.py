"""Co-change: the files a best-ranked file changed with in the history are lifted."""

from __future__ import annotations

import subprocess
from pathlib import Path

from tooldeck.context import cochange
from tooldeck.context.builder import ContextBuilder
from tooldeck.context.cochange import CoChange, History, lift_cochanged, parse_name_only
from tooldeck.context.retrieve import FileInfo
from tooldeck.runtime import Runtime


def _git(root: Path, *args: str) -> str:
    return subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@example.com", "-c", "commit.gpgsign=false", *args],
        cwd=root,
        capture_output=True,
        text=True,
        check=True,
    ).stdout


def _commit(root: Path, files: dict[str, str], message: str) -> None:
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    _git(root, "add", "-A")
    _git(root, "commit", "-q", "-m", message)


def test_partners_are_shares_of_the_files_commits_plus_one():
    h = History([["a.py", "test_a.py"], ["a.py", "test_a.py", "doc.md"], ["a.py"], ["b.py", "doc.md"]])
    assert h.partners("a.py") == {"test_a.py": 2 / 4, "doc.md": 1 / 4}
    assert h.partners("b.py") == {"doc.md": 1 / 2}  # one shared commit is a hint, not a certainty
    assert h.partners("never.py") == {}


def test_broad_commits_pair_nothing():
    wide = [f"f{i}.py" for i in range(cochange.MAX_FILES + 1)]
    h = History([wide, ["f0.py", "f1.py"]])
    assert h.partners("f0.py") == {"f1.py": 1 / 2}  # the reformatting commit is not counted


def test_lift_adds_each_top_files_share_and_names_the_largest_giver():
    h = History([["a.py", "c.py"], ["a.py", "c.py"], ["b.py", "c.py"]])
    got = h.lift([("a.py", 1.0), ("b.py", 0.5), ("z.py", 0.1)], top=2, weight=1.0)
    assert got["c.py"] == (1.0 * 2 / 3 + 0.5 * 1 / 2, "a.py")
    assert set(got) == {"c.py"}  # a.py and b.py never changed together
    assert h.lift([("a.py", 1.0)], top=0) == {}


def test_parse_name_only_reads_git_log_z_output():
    data = "\x1e\nsrc/a.py\0tests/test_a.py\0\x1e\nREADME.md\0\x1e\n"
    assert parse_name_only(data) == [["src/a.py", "tests/test_a.py"], ["README.md"], []]


def test_history_is_read_again_when_head_moves(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    _git(repo, "init", "-q")
    _commit(repo, {"a.py": "1", "b.py": "1"}, "first")
    cc = CoChange()
    got = cc.history(str(repo))
    assert got is not None and got[1].partners("a.py") == {"b.py": 1 / 2}
    assert cc.history(str(repo)) is not None and cc.history(str(repo))[1] is got[1]  # same HEAD: kept
    _commit(repo, {"a.py": "2", "c.py": "2"}, "second")
    again = cc.history(str(repo))
    assert again is not None and again[1].partners("a.py") == {"b.py": 1 / 3, "c.py": 1 / 3}


def test_a_folder_outside_any_checkout_has_no_history(tmp_path: Path) -> None:
    (tmp_path / "plain").mkdir()
    assert not cochange.in_checkout(str(tmp_path / "plain"))
    (tmp_path / "repo" / "sub").mkdir(parents=True)
    _git(tmp_path / "repo", "init", "-q")
    assert cochange.in_checkout(str(tmp_path / "repo" / "sub"))
    assert CoChange().history(str(tmp_path / "plain")) is None
    files = [FileInfo(str(tmp_path / "plain" / "a.py"), "r", "a.py", "a.py", 1)]
    ranked = [(files[0].abs, 1.0)]
    assert lift_cochanged(CoChange(), ranked, [str(tmp_path / "plain")], files, 80) == (ranked, {})


def test_builder_brings_in_the_doc_page_that_always_changes_with_the_code(runtime: Runtime, root: Path) -> None:
    """The doc page shares no word with the task and no reference with the
    code: neither lexical ranking, nor the graph, nor test pairing find it.
    It changed with the code in every earlier commit; the history does."""
    _git(root, "init", "-q")
    code = "def render_invoice_total(lines):\n    return round(sum(lines), {n})\n"
    for n in range(3):
        _commit(root, {"src/billing.py": code.format(n=n), "docs/guide.md": f"# Guide\n\nSee chapter {n}.\n"}, "m")
    for i in range(12):  # decoys that share the task's words, more than a small budget holds
        text = f"def ledger_{i}(invoice):\n    # the invoice total, rounded\n    return invoice\n" * 3
        _commit(root, {f"src/ledger{i}.py": text}, f"ledger {i}")
    task = "render_invoice_total rounds the invoice total wrongly"
    builder = ContextBuilder(runtime)
    lexical = builder.build(task, 400, strategy="lexical", apply=False)
    assert not any(c.candidate.shown.endswith("guide.md") for c in lexical.selected)
    assert any(c.candidate.shown.endswith("ledger11.py") for c in lexical.omitted)  # the budget is full
    ranked = [c.candidate.shown.rsplit("/", 1)[-1] for c in builder.build(task, 400, apply=False).selected]
    assert ranked[:2] == ["billing.py", "guide.md"]  # right below the file it changed with, above every decoy
    graph = builder.build(task, 400, apply=False)
    guide = next(c for c in graph.selected if c.candidate.shown.endswith("docs/guide.md"))
    assert any("changed together with billing.py" in r for r in guide.candidate.reasons)
