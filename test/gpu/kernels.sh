#!/usr/bin/env bash
# Emits the CUDA kernels test/gpu/run.sh builds: a sample of the examples at
# RANKS ranks, each with every protocol forced in turn, and the peer-window
# forms (read_reduce, put, get) of a DGX A100 node (no multimem: the
# one-process harness has no multicast objects).
# Usage: test/gpu/kernels.sh DIR [RANKS]
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
dir=$1 ranks=${2:-8}
collc=${COLLC:-$root/build/bin/collc}
mkdir -p "$dir"
for example in ring_allreduce bidir_ring_allreduce twoshot_allreduce pairwise_alltoall \
               ring_allgather bruck_allgather ring_reducescatter tree_broadcast \
               binary_tree_reduce; do
  for proto in Simple LL LL128; do
    "$collc" "$root/examples/$example.coll" -D ranks="$ranks" --protocol="$proto" \
      --emit=cuda -o "$dir/${example}_${proto}.cu"
  done
done
for example in twoshot_allreduce pairwise_alltoall; do
  "$collc" "$root/examples/$example.coll" -D ranks="$ranks" --topology=dgx-a100 \
    --emit=cuda -o "$dir/${example}_peers.cu"
done
