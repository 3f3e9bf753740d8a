#!/usr/bin/env bash
# Emits the CUDA kernels test/gpu/run.sh builds: a sample of the examples at
# RANKS ranks, each with every protocol forced in turn, and the peer-window
# forms (read_reduce, put, get) of a DGX A100 node (no multimem: the
# one-process harness has no multicast objects). DIR starts empty: what an
# earlier run left is removed. A kernel collc cannot emit leaves NAME.failed
# (collc's messages) instead of NAME.cu, the others are still emitted, and
# the exit status is 1. EXAMPLES and PROTOCOLS (words) narrow the sample,
# e.g. EXAMPLES=ring_allreduce PROTOCOLS=Simple for one kernel file; the
# peer-window forms come with their examples.
# Usage: [EXAMPLES=...] [PROTOCOLS=...] test/gpu/kernels.sh DIR [RANKS]
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
dir=$1 ranks=${2:-8}
collc=${COLLC:-$root/build/bin/collc}
rm -rf "$dir"
mkdir -p "$dir"
status=0
emit() { # NAME EXAMPLE FLAGS...
  local name=$1 example=$2
  shift 2
  if ! "$collc" "$root/examples/$example.coll" -D ranks="$ranks" "$@" --emit=cuda \
      -o "$dir/$name.cu" > "$dir/$name.failed" 2>&1; then
    rm -f "$dir/$name.cu"
    status=1
    return
  fi
  rm -f "$dir/$name.failed"
}
examples=(ring_allreduce bidir_ring_allreduce twoshot_allreduce pairwise_alltoall ring_allgather
          bruck_allgather ring_reducescatter tree_broadcast binary_tree_reduce)
protocols=(Simple LL LL128)
if [ -n "${EXAMPLES:-}" ]; then read -r -a examples <<< "$EXAMPLES"; fi
if [ -n "${PROTOCOLS:-}" ]; then read -r -a protocols <<< "$PROTOCOLS"; fi
for example in "${examples[@]}"; do
  for proto in "${protocols[@]}"; do
    emit "${example}_$proto" "$example" --protocol="$proto"
  done
  case $example in
    twoshot_allreduce | pairwise_alltoall) emit "${example}_peers" "$example" --topology=dgx-a100 ;;
  esac
done
exit $status
