#!/usr/bin/env bash
# The GPU check, for a machine with an NVIDIA GPU (run it whenever one is at
# hand; it needs nvcc and a C++ compiler, and LLVM/MLIR only to build collc,
# which a bundle makes unnecessary):
#
#   test/gpu/run.sh
#
# Emits the CUDA path of a sample of the e2e matrix afresh (test/gpu/
# generate.sh: kernels.sh's examples x each protocol forced in turn, and
# peer-window forms; collrt_check.cu's allreduces), or takes what
# scripts/gpu-bundle.sh emitted where this script runs from a bundle (its
# generated/ beside test/: no collc, LLVM or verbs headers needed there),
# deletes the harnesses of earlier runs and builds one per kernel
# file (test/gpu/harness.cu). Each runs every rank of every plan on one GPU
# in one launch: six cases of count, type and op, then a sweep of float sums
# over a rank's largest buffer from 8 B to 1 GiB. Every launch has new
# inputs, starts from poisoned outputs, scratch and FIFO slots and is
# checked bit-exactly. Prints one table (plan, result, time, bus bandwidth
# as nccl-tests defines it, the GPU's own device-to-device cudaMemcpy
# bandwidth at that size and busbw over it: with all ranks on one GPU every
# link is HBM) and ends with `N passed, N failed, N skipped`, a row each; a
# kernel that does not build, a harness that crashes or hangs and a
# requested plan with no row fail, as does a SKIP without a reason. Then
# collrt's own GPU path (section_collrt): an nvcc-built allreduce called
# through the runtime, by threads and by processes sharing the GPU, and by
# processes posing as machines of their own (section_machines).
#
# Knobs: ARCH=sm_90  RANKS=8  COLLRT_RANKS=2 (a bundle's are fixed)
# KERNELS=dir-of-.cu (made elsewhere by kernels.sh; used as they are)
# EXAMPLES=... PROTOCOLS=... (narrow kernels.sh's sample)
# OUT_DIR=build-gpu  JOBS=8  SWEEP=8:1G:4 (MIN:MAX:STEP bytes)
# TIMEOUT=300 (seconds per kernel file)  BUILD_ONLY=1 (no GPU needed: build
# the runtime, the harnesses and collrt_check, a row each, and check what
# the harnesses check without a GPU, --self-test; run nothing on a GPU)
set -uo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
out=${OUT_DIR:-$root/build-gpu}
arch=${ARCH:-sm_90}
ranks=${RANKS:-8}
jobs=${JOBS:-8}
sweep=${SWEEP:-8:1G:4}
limit=${TIMEOUT:-300}
nvcc=${NVCC:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}
cuda=${CUDA_HOME:-$(dirname "$(dirname "$nvcc")")}
export COLLC=${COLLC:-$root/build/bin/collc}
build_only=${BUILD_ONLY:-}
[ "$build_only" != 0 ] || build_only=""
bin=$out/bin logs=$out/logs
# collc's output (generate.sh's layout): a bundle's, or made by this run.
if [ -d "$root/generated" ]; then
  bundle=$root/generated gen=$root/generated
else
  bundle="" gen=$out/generated
fi
collrt_ranks=${COLLRT_RANKS:-2}
cases=(1000003:float:sum 7:int32:max 65537:bfloat16:sum 262144:half:min 1:double:prod
       4097:uint8:avg)

passed=0 failed=0 skipped=0
details=() # logs to show after the table

# A row of the table, in harness.cu's printRow widths; the harness prints
# its own.
row() { # PLAN RESULT NOTE
  printf '%-46s %-6s %-6s %-14s %7s %10s %8s %8s %8s %6s  %s\n' "$1" "$2" - - - - - - - - "$3"
}
fail() { # PLAN NOTE [LOG]
  row "$1" FAIL "$2"
  failed=$((failed + 1))
  if [ -n "${3:-}" ]; then details+=("$3"); fi
}

# Kernels and the collrt check's sources: emitted afresh by collc, or a
# bundle's; kernels as they are where $KERNELS names some made elsewhere.
# One that collc could not emit fails here.
section_kernels() {
  local parts=(collrt machines)
  kernels=${KERNELS:-$gen/kernels}
  if [ -n "$bundle" ]; then
    echo "generated: $bundle, from a bundle ($(paste -sd ' ' "$bundle/manifest" 2> /dev/null))"
    collrt_ranks=$(sed -n 's/^collrt_ranks=//p' "$bundle/manifest" 2> /dev/null)
  else
    [ -n "${KERNELS:-}" ] || parts+=(kernels)
    echo "generated: afresh into $gen by $COLLC (${parts[*]})"
    [ -x "$COLLC" ] || echo "collc is not built: build it, or run from a bundle (scripts/gpu-bundle.sh)"
    RANKS=$ranks COLLRT_RANKS=$collrt_ranks "$root/test/gpu/generate.sh" "$gen" "${parts[@]}" \
      > "$logs/generate.log" 2>&1
  fi
  if [ -n "${KERNELS:-}" ]; then
    echo "kernels: $kernels, as given"
  fi
}
# A bundle is made for its rank counts; asking for others fails.
report_bundle() {
  local made
  [ -n "$bundle" ] || return 0
  made=$(sed -n 's/^ranks=//p' "$bundle/manifest" 2> /dev/null)
  if [ -z "$made" ] || [ -z "$collrt_ranks" ]; then
    fail bundle "no manifest with ranks in $bundle"
    collrt_ranks=${COLLRT_RANKS:-2}
  fi
  if [ -n "${RANKS:-}" ] && [ -z "${KERNELS:-}" ] && [ "$RANKS" != "$made" ]; then
    fail bundle "its kernels are for RANKS=$made, not $RANKS: make it again"
  fi
  if [ -n "${COLLRT_RANKS:-}" ] && [ "$COLLRT_RANKS" != "$collrt_ranks" ]; then
    fail bundle "its collrt check is for COLLRT_RANKS=$collrt_ranks, not $COLLRT_RANKS: make it again"
  fi
}
built() { # PLAN NOTE: a build that succeeded, in BUILD_ONLY's rows
  row "$1" PASS "$2"
  passed=$((passed + 1))
}
report_kernels() {
  local f
  for f in "$kernels"/*.failed; do
    [ -e "$f" ] && fail "$(basename "$f" .failed)" "collc failed to emit it" "$f"
  done
  if ! ls "$kernels"/*.cu > /dev/null 2>&1; then
    fail kernels "no kernel files in $kernels" "$logs/generate.log"
  fi
}

# The runtime the generated entry points link against (plain C++), and one
# harness per kernel file, in parallel, where no earlier run's remain.
section_build() {
  rm -rf "$bin"
  mkdir -p "$bin"
  if ! c++ -std=c++17 -O2 -fPIC -shared -I"$root/runtime" -I"$root/runtime/include" \
      -I"$root/runtime/device" -isystem "$cuda/include" "$root"/runtime/src/*.cpp \
      "$root"/runtime/support/*.cpp \
      "$root"/runtime/transport/*.cpp -o "$bin/libcollrt.so" -pthread -ldl \
      > "$logs/libcollrt.log" 2>&1; then
    fail libcollrt "the runtime does not build" "$logs/libcollrt.log"
    return
  fi
  [ -z "$build_only" ] || built libcollrt "built"
  build_one() {
    local cu=$1 base name
    base=$(basename "$cu" .cu)
    name=$(sed -n 's/^extern "C" const collc::AlgorithmDesc collc_algorithm_\([A-Za-z0-9_]*\) = {$/\1/p' "$cu" | head -1)
    "$nvcc" -std=c++17 -O3 -arch="$arch" -lineinfo -Xcompiler -Wall,-Wextra \
      -I"$root/runtime" -I"$root/runtime/include" -I"$root/runtime/device" -I"$root/tools" \
      -DCOLLC_ALGORITHM="collc_algorithm_$name" "$cu" "$root/test/gpu/harness.cu" \
      -o "$bin/$base" -L"$bin" -lcollrt -Xlinker -rpath="$bin" > "$logs/$base.build.log" 2>&1 ||
      rm -f "$bin/$base"
    return 0
  }
  export -f build_one
  export root bin logs arch nvcc
  # shellcheck disable=SC2016 # $1 is the child shell's
  find "$kernels" -maxdepth 1 -name '*.cu' -print0 |
    xargs -0 -r -n 1 -P "$jobs" bash -c 'build_one "$1"' _
}

# BUILD_ONLY: a row per harness, built and past its --self-test (what it
# checks without a GPU).
section_harnesses_built() {
  local cu base
  for cu in "$kernels"/*.cu; do
    [ -e "$cu" ] || continue
    base=$(basename "$cu" .cu)
    if [ ! -x "$bin/$base" ]; then
      fail "$base" "does not build" "$logs/$base.build.log"
    elif ! "$bin/$base" --self-test > "$logs/$base.log" 2>&1; then
      fail "$base" "built, --self-test fails" "$logs/$base.log"
    else
      built "$base" "built, --self-test passed"
    fi
  done
}

# All ranks in one process and one launch (harness.cu): every case, then
# the sweep, in one process per kernel file.
section_one_launch() {
  local cu base plans plan args rows rc counts p f s u
  for cu in "$kernels"/*.cu; do
    [ -e "$cu" ] || continue
    base=$(basename "$cu" .cu)
    if [ ! -x "$bin/$base" ]; then
      fail "$base" "does not build" "$logs/$base.build.log"
      continue
    fi
    plans=$(sed -n 's/^    {"\([A-Za-z0-9_]*\)", collc::k.*/\1/p' "$cu")
    if [ -z "$plans" ]; then
      fail "$base" "no plan found in $cu"
      continue
    fi
    args=(--label "$base")
    for plan in $plans; do args+=(--plan "$plan"); done
    for c in "${cases[@]}"; do args+=(--case "$c"); done
    args+=(--sweep "$sweep")
    rows=$logs/$base.rows
    timeout -k 10 "$limit" "$bin/$base" "${args[@]}" > "$rows" 2> "$logs/$base.log"
    rc=$?
    cat "$rows"
    # A SKIP row without a reason has no field after the ratio.
    counts=$(awk '$2 == "PASS" { p++ } $2 == "FAIL" { f++ }
                  $2 == "SKIP" { if (NF > 10) s++; else u++ }
                  END { print p + 0, f + 0, s + 0, u + 0 }' "$rows")
    read -r p f s u <<< "$counts"
    passed=$((passed + p)) failed=$((failed + f)) skipped=$((skipped + s))
    [ "$u" -eq 0 ] || fail "$base" "$u skipped without a reason"
    for plan in $plans; do
      grep -q "^$base/$plan " "$rows" || fail "$base/$plan" "requested, no row reported" "$logs/$base.log"
    done
    # Exit 1 goes with FAIL rows; anything else but 0 is a failure of its own.
    if [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then
      fail "$base" "killed after ${limit}s" "$logs/$base.log"
    elif [ "$rc" -ne 0 ] && { [ "$rc" -ne 1 ] || [ "$f" -eq 0 ]; }; then
      fail "$base" "exit $rc" "$logs/$base.log"
    elif [ -s "$logs/$base.log" ]; then
      details+=("$logs/$base.log")
    fi
  done
}

# collrt's GPU path: test/gpu/collrt_check.cu calls collc_ring (the ring
# allreduce of COLLRT_RANKS ranks, 2 by default, FIFO steps only) and
# collc_twoshot (peer windows; multimem falls back to unicast, as a GPU
# without NVSwitch has no multicast: the line "multicast:" says what collrt
# decided and why) through collrt on this GPU, (a) every
# rank a thread of one process, (b) a process per rank over CUDA VMM
# handles, under MPS where this machine has it; each also checks (d) a
# CUDA graph capture, replayed between plain launches, and (e)
# collCommAbort of a launch waiting for ranks that never launch.
collrt_rows() { # LOG NAME EXIT
  local p f
  # The result is the column after the 46 of the plan, whose name has spaces.
  read -r p f < <(awk '/^collrt\// { r = substr($0, 48, 4) } r == "PASS" { p++ } r == "FAIL" { f++ }
                       { r = "" } END { print p + 0, f + 0 }' "$1")
  grep -E '^collrt/' "$1"
  passed=$((passed + p)) failed=$((failed + f))
  if [ "$((p + f))" -eq 0 ]; then
    fail "$2" "exit $3, no row" "$1"
  elif [ "$f" -gt 0 ]; then
    details+=("$1")
  fi
}
# run_processes BIN N LOG NAME [machines]: N processes of BIN as the ranks of
# one job (collCommInitEnv), each on a machine of its own (COLL_HOSTID) with
# `machines`; rows for rank 0 and for any rank that failed.
run_processes() {
  local port=$((20000 + RANDOM % 20000)) rc=0 r
  for ((r = 0; r < $2; r++)); do
    env RANK=$r WORLD_SIZE="$2" MASTER_ADDR=127.0.0.1 MASTER_PORT=$port COLL_DEBUG=INFO \
      COLL_SHARED_GPU=1 \
      ${5:+COLL_HOSTID=machine-$r} timeout -k 10 120 "$1" > "$3.rank$r.log" 2>&1 &
  done
  for ((r = 0; r < $2; r++)); do
    wait -n
    rc=$?
  done
  for ((r = 0; r < $2; r++)); do
    if [ "$r" -eq 0 ] || grep -q FAIL "$3.rank$r.log"; then
      collrt_rows "$3.rank$r.log" "$4 rank $r" "$rc"
    fi
  done
}
section_collrt() {
  local src=$gen/collrt n=$collrt_ranks mps=""
  if [ ! -d "$src" ]; then
    fail collrt "collc failed to emit it" "$gen/collrt.failed"
    return
  fi
  if ! "$nvcc" -std=c++17 -O3 -arch="$arch" -I"$root/runtime/include" -I"$root/runtime/device" \
         -I"$src" "$root/test/gpu/collrt_check.cu" "$src/ring_allreduce.cu" \
         "$src/twoshot_allreduce.cu" \
         -o "$bin/collrt_check" -L"$bin" -lcollrt -Xlinker -rpath="$bin" \
       > "$logs/collrt.build.log" 2>&1; then
    fail collrt "does not build" "$logs/collrt.build.log"
    return
  fi
  if [ -n "$build_only" ]; then
    built collrt "built"
    section_machines
    return
  fi
  # Every rank on the one GPU, which collrt allows only when asked.
  COLL_DEBUG=INFO COLL_SHARED_GPU=1 timeout -k 10 120 "$bin/collrt_check" --threads "$n" \
    > "$logs/collrt.threads.log" 2>&1
  collrt_rows "$logs/collrt.threads.log" "collrt/threads" $?
  echo "multicast (threads): $(grep -m1 -o 'multimem steps run.*' "$logs/collrt.threads.log")"
  if command -v nvidia-cuda-mps-control > /dev/null && nvidia-cuda-mps-control -d 2> /dev/null; then
    mps=started
  fi
  echo "MPS: ${mps:-not available}"
  run_processes "$bin/collrt_check" "$n" "$logs/collrt" collrt/processes
  echo "multicast (processes): $(grep -m1 -o 'multimem steps run.*' "$logs/collrt.rank0.log")"
  section_machines
  [ -z "$mps" ] || echo quit | nvidia-cuda-mps-control
}

# The ring again, each rank a process on a machine of its own (COLL_HOSTID):
# FIFOs in pinned host memory, shipped by socket's proxy threads. Compiled
# for one GPU per node, so that collc picks LL and Simple, never LL128.
section_machines() {
  local src=$gen/machines n=$collrt_ranks
  if [ ! -d "$src" ]; then
    fail collrt/machines "collc failed to emit it" "$gen/machines.failed"
    return
  fi
  if ! "$nvcc" -std=c++17 -O3 -arch="$arch" -DCOLLRT_CHECK_MACHINES -I"$root/runtime/include" \
         -I"$root/runtime/device" -I"$src" "$root/test/gpu/collrt_check.cu" \
         "$src/ring_allreduce.cu" -o "$bin/collrt_machines" -L"$bin" -lcollrt \
         -Xlinker -rpath="$bin" > "$logs/machines.build.log" 2>&1; then
    fail collrt/machines "does not build" "$logs/machines.build.log"
    return
  fi
  if [ -n "$build_only" ]; then
    built collrt/machines "built"
    return
  fi
  run_processes "$bin/collrt_machines" "$n" "$logs/machines" collrt/machines machines
  echo "transports (machines): $(grep -m1 -o 'rank 0 of .*' "$logs/machines.rank0.log")"
}

rm -rf "$logs"
mkdir -p "$logs"
if command -v nvidia-smi > /dev/null; then
  echo "gpu: $(nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader | head -1)"
fi
section_kernels
echo "times: best launch after the first, in us; bandwidths in GB/s; memcpy: a"
echo "device-to-device cudaMemcpy of the same bytes; ratio: busbw / memcpy"
printf '%-46s %-6s %-6s %-14s %7s %10s %8s %8s %8s %6s  %s\n' plan result proto type/op bytes \
  time algbw busbw memcpy ratio note
report_bundle
report_kernels
section_build
if [ -n "$build_only" ]; then
  section_harnesses_built
else
  section_one_launch
fi
section_collrt
declare -A shown
for log in ${details[@]+"${details[@]}"}; do
  if [ -f "$log" ] && [ -z "${shown[$log]:-}" ]; then
    shown[$log]=1
    echo "--- $log"
    head -n 40 "$log"
  fi
done
echo "$passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ]
