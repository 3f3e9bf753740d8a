#!/usr/bin/env bash
# The GPU check, for a machine with an NVIDIA GPU (run it whenever one is at
# hand; it needs nvcc and a C++ compiler, not LLVM/MLIR):
#
#   test/gpu/run.sh                 # kernels from build/bin/collc, or from $KERNELS
#
# Builds the CUDA path of a sample of the e2e matrix (examples x each protocol
# forced in turn) and runs every rank of each algorithm on one GPU in one
# process (test/gpu/harness.cu), then checks every output bit-exactly and
# prints per-plan time and bandwidth. Ends with `N passed, N failed`.
#
# Knobs: ARCH=sm_90  RANKS=8  KERNELS=dir-of-.cu  OUT_DIR=build-gpu  JOBS=8
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
out=${OUT_DIR:-$root/build-gpu}
arch=${ARCH:-sm_90}
ranks=${RANKS:-8}
jobs=${JOBS:-8}
nvcc=${NVCC:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}
kernels=${KERNELS:-$out/kernels}
mkdir -p "$out"

# 1. Kernels: generated here when collc is built, else taken from $KERNELS
#    (make them elsewhere with test/gpu/kernels.sh DIR).
if [ ! -d "$kernels" ] || [ -z "$(ls -A "$kernels" 2>/dev/null)" ]; then
  "$root/test/gpu/kernels.sh" "$kernels" "$ranks"
fi

# 2. The runtime the generated entry points link against (plain C++).
c++ -std=c++17 -O2 -fPIC -shared -I"$root/runtime" -I"$root/runtime/include" \
  -I"$root/runtime/device" "$root"/runtime/src/*.cpp "$root"/runtime/transport/*.cpp \
  -o "$out/libcollrt.so" -pthread

# 3. One harness per kernel file, in parallel.
build_one() {
  local cu=$1 base name
  base=$(basename "$cu" .cu)
  name=$(sed -n 's/^extern "C" const collc::AlgorithmDesc collc_algorithm_\([A-Za-z0-9_]*\) = {$/\1/p' "$cu" | head -1)
  "$nvcc" -std=c++17 -O3 -arch="$arch" -lineinfo -I"$root/runtime" -I"$root/runtime/include" \
    -I"$root/runtime/device" -I"$root/tools" \
    -DCOLLC_ALGORITHM="collc_algorithm_$name" "$cu" "$root/test/gpu/harness.cu" \
    -o "$out/$base" -L"$out" -lcollrt -Xlinker -rpath="$out" \
    > "$out/$base.log" 2>&1 || { echo "BUILD FAIL $base"; cat "$out/$base.log"; }
}
export -f build_one
export root out arch nvcc
ls "$kernels"/*.cu | xargs -P "$jobs" -I{} bash -c 'build_one {}'

# 4. Run: every plan of each file at a few counts, types and ops.
passed=0 failed=0
cases=("1000003 float sum" "7 int32 max" "65537 bfloat16 sum" "262144 half min"
       "1 double prod" "4097 uint8 avg")
i=0
for cu in "$kernels"/*.cu; do
  base=$(basename "$cu" .cu)
  if [ ! -x "$out/$base" ]; then failed=$((failed + 1)); continue; fi
  for k in 0 1; do
    read -r count dtype op <<<"${cases[$(( (i + k) % ${#cases[@]} ))]}"
    if timeout 120 "$out/$base" --count "$count" --dtype "$dtype" --op "$op" --iters 5; then
      passed=$((passed + 1))
    else
      failed=$((failed + 1))
    fi
  done
  i=$((i + 1))
done
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
