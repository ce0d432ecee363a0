#!/usr/bin/env bash
# Set up (first run only) and serve the current directory over MCP stdio.
# Extra arguments go to `tooldeck serve` (e.g. --http 127.0.0.1:8765).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
"$here/scripts/setup.sh"
exec "$here/.venv/bin/tooldeck" serve "$@"
