#!/usr/bin/env bash
# Every benchmark from a fresh clone, one command: set-up (venv + corpora from the
# package registries), then each benchmark printing its table. Tables go to stdout
# and to bench/results/<UTC date>.txt (ignored by git); bench/goals.py then prints every
# benchmark's goal lines as one table with a pass/fail column (<date>-goals.md).
# Usage: bench/run_all.sh [--quick]   (--quick: fewer files and repetitions)
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$here"
./scripts/setup.sh --dev
bench/setup_corpora.sh
py="$here/.venv/bin/python"
# the dev install leaves the packages uncompiled (scripts/setup.sh): start-up
# figures must be those of an installed tooldeck, so every file gets its bytecode
"$py" -m compileall -q -j 0 "$("$py" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')" src >/dev/null || true
mkdir -p bench/results
out="bench/results/$(date -u +%Y%m%dT%H%MZ).txt"
quick=0
[ "${1:-}" = "--quick" ] && quick=1
run() { echo; echo "\$ $*"; "$py" "$@"; }
{
  echo "tooldeck benchmarks — $(date -u '+%Y-%m-%d %H:%M UTC'), $(uname -n), $(nproc) CPUs, $(git rev-parse --short HEAD), load average $(cut -d' ' -f1-3 /proc/loadavg) at the start"
  if [ $quick = 1 ]; then
    run bench/codemap_bench.py --files 600 --per-language 120 --reps 1
    run bench/context_speed.py --files 3000
    run bench/context_speed.py --held-out --files 3000
    run bench/term_counts.py --files 3000
    run bench/context_eval.py --commits 10
    run bench/patch_bench.py --runs 2
    echo; echo "\$ bench/scratch_ext4.sh bench/patch_bench.py --runs 2 --dir {}"
    bench/scratch_ext4.sh "$py" bench/patch_bench.py --runs 2 --dir {}
    run bench/mcp_roundtrip.py --calls 100 --spawns 3
  else
    run bench/codemap_bench.py
    run bench/context_speed.py
    run bench/context_speed.py --held-out
    run bench/context_speed.py --gap 2
    run bench/context_speed.py --held-out --gap 2
    run bench/term_counts.py
    run bench/context_eval.py
    run bench/patch_bench.py
    echo; echo "\$ bench/scratch_ext4.sh bench/patch_bench.py --dir {}  (the same on a default, journaled ext4)"
    bench/scratch_ext4.sh "$py" bench/patch_bench.py --dir {}
    run bench/mcp_roundtrip.py
  fi
  for b in search_bench git_bench tree_walk selection_context web_convert shell_bench index_eval mcp_mount \
      large_read_bench large_edit_bench agents_load loop_stall tokenizer_warmup \
      client_ready serve_stop chat_start; do
    [ -f "bench/$b.py" ] && run "bench/$b.py"
  done
  echo; echo "load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
} 2>&1 | tee "$out"
echo >&2
"$py" bench/goals.py "$out" | tee "${out%.txt}-goals.md"
echo "tables saved to $out, goals to ${out%.txt}-goals.md" >&2
