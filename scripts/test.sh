#!/usr/bin/env bash
# Set up (first run only) and run the whole test suite plus the linter.
# Extra arguments go to pytest.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
"$here/scripts/setup.sh" --dev
cd "$here"
.venv/bin/ruff check src tests bench
exec .venv/bin/python -m pytest "$@"
