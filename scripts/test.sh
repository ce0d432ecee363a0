#!/usr/bin/env bash
# Set up (first run only) and run the whole test suite plus the linter.
# The tests run in parallel, one worker per core plus one (pytest-xdist); a test file's tests
# that share an expensive fixture stay together (--dist loadgroup honours
# @pytest.mark.xdist_group). Extra arguments go to pytest, e.g.
#   scripts/test.sh tests/shell          one area
#   scripts/test.sh -n 0 -x              serially, stop at the first failure
#   TOOLDECK_SLOW=1 scripts/test.sh      with the soak variants
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
"$here/scripts/setup.sh" --dev
cd "$here"
.venv/bin/ruff check src tests bench scripts
.venv/bin/python scripts/check_layers.py   # the layer and no-cycle rules (docs/architecture.md)
# bytecode for the checkout, once: the suite spawns hundreds of `tooldeck`
# processes, and where PYTHONDONTWRITEBYTECODE is set each would compile its
# imports again (about 0.35 s a process here)
.venv/bin/python -m compileall -q -j 0 -x "tests/fixtures/" src tests >/dev/null || true
# one worker more than the cores: a quarter of a 2-worker run is spent waiting
# (spawned servers starting, timers, the TUI's frames), and a third worker
# fills it (12-06, idle, same commit: -n 2 323 s with 25 % of the CPU idle,
# -n 3 301 s with 11 %; docs/testing.md)
workers="${TOOLDECK_TEST_WORKERS:-$(( $(nproc) + 1 ))}"
exec .venv/bin/python -m pytest -n "$workers" --dist loadgroup "$@"
