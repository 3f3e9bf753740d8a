#!/usr/bin/env bash
# test/gpu/harness.cu stays buildable without a GPU: nvcc builds it with a
# generated ring allreduce (compile, ptxas and link) with no warning from
# the harness itself, and the harness checks what needs no GPU (its inputs
# and poison against Expected.h's reference, busbw factors, the sweep).
# Usage: gpu-harness.sh COLLC NVCC SOURCE_ROOT LIBDIR
set -euo pipefail
collc=$1 nvcc=$2 root=$3 libdir=$4
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"$collc" "$root/examples/ring_allreduce.coll" -D ranks=8 --emit=cuda -o "$work/ring.cu"
"$nvcc" -std=c++17 -O3 -arch=sm_90 -Xcompiler -Wall,-Wextra -I"$root/runtime" \
  -I"$root/runtime/include" -I"$root/runtime/device" -I"$root/tools" \
  -DCOLLC_ALGORITHM=collc_algorithm_ring "$work/ring.cu" "$root/test/gpu/harness.cu" \
  -o "$work/harness" -L"$libdir" -lcollrt -Xlinker -rpath="$libdir" 2>&1 | tee "$work/log"
test -x "$work/harness"
if grep -q 'harness\.cu.*warning' "$work/log"; then
  echo "harness.cu compiles with warnings"
  exit 1
fi
"$work/harness" --self-test

# collrt_check: the ring and the two-shot allreduce of 2 ranks through collrt.
"$collc" "$root/examples/ring_allreduce.coll" -D ranks=2 --emit=cuda -o "$work/ring_allreduce.cu"
"$collc" "$root/examples/ring_allreduce.coll" -D ranks=2 --emit=header -o "$work/ring_allreduce.h"
"$collc" "$root/examples/twoshot_allreduce.coll" -D ranks=2 --topology=hgx-h100 --emit=cuda \
  -o "$work/twoshot_allreduce.cu"
"$collc" "$root/examples/twoshot_allreduce.coll" -D ranks=2 --topology=hgx-h100 --emit=header \
  -o "$work/twoshot_allreduce.h"
"$nvcc" -std=c++17 -O2 -arch=sm_90 -Xcompiler -Wall,-Wextra -I"$root/runtime/include" \
  -I"$root/runtime/device" -I"$work" "$root/test/gpu/collrt_check.cu" "$work/ring_allreduce.cu" \
  "$work/twoshot_allreduce.cu" \
  -o "$work/collrt_check" -L"$libdir" -lcollrt -Xlinker -rpath="$libdir" 2>&1 | tee "$work/log"
if grep -q 'collrt_check\.cu.*warning' "$work/log"; then
  echo "collrt_check.cu compiles with warnings"
  exit 1
fi
# Its variant for ranks on machines of their own: the ring alone, compiled
# for one GPU per node (LL and Simple).
echo '{"nodes": 2, "gpusPerNode": 1}' > "$work/machines.json"
mkdir "$work/machines"
"$collc" "$root/examples/ring_allreduce.coll" -D ranks=2 --topology="$work/machines.json" \
  --emit=cuda -o "$work/machines/ring_allreduce.cu"
"$collc" "$root/examples/ring_allreduce.coll" -D ranks=2 --topology="$work/machines.json" \
  --emit=header -o "$work/machines/ring_allreduce.h"
if grep -q LL128 "$work/machines/ring_allreduce.cu"; then
  echo "the ring for two machines has an LL128 plan, which collrt refuses there"
  exit 1
fi
"$nvcc" -std=c++17 -O2 -arch=sm_90 -Xcompiler -Wall,-Wextra -DCOLLRT_CHECK_MACHINES \
  -I"$root/runtime/include" -I"$root/runtime/device" -I"$work/machines" \
  "$root/test/gpu/collrt_check.cu" "$work/machines/ring_allreduce.cu" \
  -o "$work/collrt_machines" -L"$libdir" -lcollrt -Xlinker -rpath="$libdir" 2>&1 | tee "$work/log"
if grep -q 'collrt_check\.cu.*warning' "$work/log"; then
  echo "collrt_check.cu (COLLRT_CHECK_MACHINES) compiles with warnings"
  exit 1
fi
# Where there is a GPU, test/gpu/run.sh runs them.
if ! command -v nvidia-smi > /dev/null &&
   { "$work/collrt_check" --threads 2 > "$work/out" 2>&1 || ! grep -q "no usable GPU" "$work/out"; }; then
  echo "collrt_check did not stop at the missing GPU:"
  cat "$work/out"
  exit 1
fi
