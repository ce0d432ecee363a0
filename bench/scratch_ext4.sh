#!/usr/bin/env bash
# Run a command with a fresh ext4 filesystem made with mkfs's defaults (so with
# a journal) mounted from a sparse image file; every "{}" in the command is
# replaced by the mount point. Why: what creating a file costs depends on the
# filesystem (see bench/patch_bench.py's docstring): ext4 without a journal,
# the root disk of this project's VM, makes each create scan the inodes freed
# in the last minutes. This gives the benchmark the usual kind of disk beside
# the machine's own. Needs root, mkfs.ext4 (e2fsprogs) and a loop device; says
# why and exits 0 without running the command when one is missing.
# Usage: bench/scratch_ext4.sh CMD... (e.g. .venv/bin/python bench/patch_bench.py --dir {})
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
if [ "$(id -u)" != 0 ] || ! command -v mkfs.ext4 >/dev/null || [ ! -e /dev/loop-control ]; then
  echo "scratch_ext4: skipped (needs root, mkfs.ext4 and /dev/loop-control)" >&2
  exit 0
fi
scratch="$here/bench/.scratch"
mkdir -p "$scratch"
image="$scratch/ext4.img"
mnt="$scratch/mnt"
cleanup() {
  mountpoint -q "$mnt" && umount "$mnt"
  rm -f "$image"
}
trap cleanup EXIT
cleanup
truncate -s 4G "$image"
mkfs.ext4 -q -F "$image"
mkdir -p "$mnt"
mount -o loop "$image" "$mnt"
args=()
for a in "$@"; do args+=("${a//\{\}/$mnt}"); done
"${args[@]}"
