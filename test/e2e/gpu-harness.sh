#!/usr/bin/env bash
# test/gpu/harness.cu stays buildable without a GPU: nvcc builds it with a
# generated ring allreduce (compile, ptxas and link; nothing runs).
# Usage: gpu-harness.sh COLLC NVCC SOURCE_ROOT LIBDIR
set -euo pipefail
collc=$1 nvcc=$2 root=$3 libdir=$4
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"$collc" "$root/examples/ring_allreduce.coll" -D ranks=8 --emit=cuda -o "$work/ring.cu"
"$nvcc" -std=c++17 -O3 -arch=sm_90 -I"$root/runtime" -I"$root/runtime/include" \
  -I"$root/runtime/device" -I"$root/tools" -DCOLLC_ALGORITHM=collc_algorithm_ring \
  "$work/ring.cu" "$root/test/gpu/harness.cu" -o "$work/harness" -L"$libdir" -lcollrt
test -x "$work/harness"
