#!/usr/bin/env bash
# What collc emits for the GPU check, into DIR (emptied first), so that
# test/gpu/run.sh can build and run it where collc cannot be built (a
# bundle: scripts/gpu-bundle.sh):
#   kernels/   the sample of plans at RANKS ranks (kernels.sh: EXAMPLES and
#              PROTOCOLS narrow it)
#   collrt/    the ring and the two-shot allreduce of COLLRT_RANKS ranks on
#              an H100 node, .cu and .h, for collrt_check.cu
#   machines/  the ring for one GPU per node (LL and Simple, never LL128),
#              for collrt_check.cu's COLLRT_CHECK_MACHINES variant
#   manifest   key=value lines: what made them (run.sh reads the ranks)
# PARTs (kernels collrt machines, all by default) choose. A part collc
# cannot emit leaves PART.failed with collc's messages (kernels: one per
# kernel, in kernels/), the others are still emitted, and the exit status
# is 1.
# Usage: [COLLC=...] [RANKS=8] [COLLRT_RANKS=2] test/gpu/generate.sh DIR [PART...]
set -uo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
dir=$1
shift
parts=("$@")
[ ${#parts[@]} -gt 0 ] || parts=(kernels collrt machines)
export COLLC=${COLLC:-$root/build/bin/collc}
ranks=${RANKS:-8} n=${COLLRT_RANKS:-2}
rm -rf "$dir"
mkdir -p "$dir"
status=0

# shellcheck disable=SC2317 # called as "$part"
collrt() {
  mkdir -p "$dir/collrt"
  "$COLLC" "$root/examples/ring_allreduce.coll" -D ranks="$n" --emit=cuda \
    -o "$dir/collrt/ring_allreduce.cu" &&
    "$COLLC" "$root/examples/ring_allreduce.coll" -D ranks="$n" --emit=header \
      -o "$dir/collrt/ring_allreduce.h" &&
    "$COLLC" "$root/examples/twoshot_allreduce.coll" -D ranks="$n" --topology=hgx-h100 \
      --emit=cuda -o "$dir/collrt/twoshot_allreduce.cu" &&
    "$COLLC" "$root/examples/twoshot_allreduce.coll" -D ranks="$n" --topology=hgx-h100 \
      --emit=header -o "$dir/collrt/twoshot_allreduce.h"
}
# shellcheck disable=SC2317 # called as "$part"
machines() {
  mkdir -p "$dir/machines"
  echo "{\"nodes\": $n, \"gpusPerNode\": 1}" > "$dir/machines/topology.json"
  "$COLLC" "$root/examples/ring_allreduce.coll" -D ranks="$n" \
    --topology="$dir/machines/topology.json" --emit=cuda -o "$dir/machines/ring_allreduce.cu" &&
    "$COLLC" "$root/examples/ring_allreduce.coll" -D ranks="$n" \
      --topology="$dir/machines/topology.json" --emit=header -o "$dir/machines/ring_allreduce.h"
}

for part in "${parts[@]}"; do
  case $part in
    kernels) "$root/test/gpu/kernels.sh" "$dir/kernels" "$ranks" || status=1 ;;
    collrt | machines)
      if ! "$part" > "$dir/$part.failed" 2>&1; then
        rm -rf "${dir:?}/$part"
        status=1
      else
        rm -f "$dir/$part.failed"
      fi
      ;;
    *)
      echo "generate.sh: no part '$part' (kernels collrt machines)" >&2
      exit 2
      ;;
  esac
done

{
  echo "parts=${parts[*]}"
  echo "ranks=$ranks"
  echo "collrt_ranks=$n"
  echo "examples=${EXAMPLES:-all}"
  echo "protocols=${PROTOCOLS:-all}"
  echo "source=$(git -C "$root" describe --always --dirty 2> /dev/null)"
} > "$dir/manifest"
exit $status
