#!/usr/bin/env bash
# Set up (first run only) and run the whole test suite plus the linter.
# The tests run in parallel, one worker per core (pytest-xdist); a test file's tests
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
# bytecode, once: the suite spawns hundreds of `tooldeck` processes, and where
# PYTHONDONTWRITEBYTECODE is set each would compile its imports again (about
# 0.35 s a process here). The checkout is compiled now; the installed packages
# as the tests first import them (the dev install compiles none: scripts/setup.sh)
.venv/bin/python -m compileall -q -j 0 -x "tests/fixtures/" src tests >/dev/null || true
unset PYTHONDONTWRITEBYTECODE
# one worker per core. A third worker on 2 cores fills the quarter of a
# 2-worker run spent waiting (idle, same commit: -n 2 323 s, -n 3 301 s), but
# its extra contention showed a timing race in 3 of 7 full runs
# (docs/testing.md): TOOLDECK_TEST_WORKERS=3 opts in
workers="${TOOLDECK_TEST_WORKERS:-$(nproc)}"
exec .venv/bin/python -m pytest -n "$workers" --dist loadgroup "$@"
