"""A runtime on a clean state directory does not load the write path (the
package ``tooldeck.workspace`` imports none of its modules)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path


def test_a_clean_start_loads_no_write_path_and_a_left_batch_is_still_recovered(tmp_path: Path) -> None:
    (tmp_path / "root").mkdir()
    code = (
        "import sys; from tooldeck.runtime import Runtime\n"
        f"Runtime.for_dirs([{str(tmp_path / 'root')!r}], state_dir={str(tmp_path / 'state')!r}).start()\n"
        "print(sorted(m for m in sys.modules if m in ('tooldeck.workspace.atomic', 'tooldeck.workspace.journal')))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
    # a batch folder left in the journal (its process died): the journal loads and recovers it
    (tmp_path / "state" / "journal" / "999999999-deadbeef").mkdir(parents=True)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert "'tooldeck.workspace.journal'" in out.stdout
    assert not (tmp_path / "state" / "journal" / "999999999-deadbeef").exists()
