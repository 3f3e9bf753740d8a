#!/usr/bin/env bash
# libcollnccl under a program that knows only nccl.h (nccl/app.c, linked
# against a stub libnccl.so.2 that records calls): preloaded, the shim runs
# every collective on the plans of COLL_PLAN_PATH, checked by the program,
# and hands each call without a plan to the stub, which must record it;
# plan calls must not reach it. COLL_DEBUG=INFO names each choice. Without
# an NCCL underneath, a call without a plan fails saying so. All of it
# runs on the host build and again on collrt's GPU path over the fake
# CUDA driver (fakegpu.sh), where the plans are presented as nvcc's.
# The shim defines every function nccl.h declares, under both names.
# Usage: nccl.sh COLLC CXX RUNTIME_INCLUDE DEVICE_INCLUDE LIBDIR APP STUB
#                EXAMPLES NCCL_H [RUNTIME_DIR FAKE_DRIVER]
set -uo pipefail
collc=$1 cxx=$2 include=$3 device=$4 libdir=$5 app=$6 stub=$7 examples=$8 header=$9
runtime=${10:-} fake=${11:-}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
passed=0 failed=0

# plan DIR NAME FILE ARGS...: FILE.coll compiled as DIR/NAME.o, with
# $cxxflags
plan() {
  local dir=$1 name=$2 file=$3
  shift 3
  # shellcheck disable=SC2086 # cxxflags is a list of words
  "$collc" "$examples/$file.coll" --name="$name" "$@" --emit=cuda -o "$dir/$name.cpp" &&
    "$cxx" -std=c++17 -O1 -fPIC -c ${cxxflags:-} -I"$include" -I"$device" "$dir/$name.cpp" \
      -o "$dir/$name.o"
}
# plans DIR: six algorithms for 4 ranks in DIR/plans/libfour.so, the ring
# for 2 in DIR/plans/libtwo.so
plans() {
  local dir=$1
  mkdir -p "$dir/plans"
  plan "$dir" ring4 ring_allreduce -D ranks=4 && plan "$dir" rs4 ring_reducescatter -D ranks=4 &&
    plan "$dir" ag4 ring_allgather -D ranks=4 && plan "$dir" a2a4 pairwise_alltoall -D ranks=4 &&
    plan "$dir" bcast4 tree_broadcast -D ranks=4 -D root=2 &&
    plan "$dir" reduce4 binary_tree_reduce -D ranks=4 -D root=1 &&
    plan "$dir" ring2 ring_allreduce -D ranks=2 &&
    "$cxx" -shared "$dir"/{ring4,rs4,ag4,a2a4,bcast4,reduce4}.o -o "$dir/plans/libfour.so" \
      -L"$libdir" -lcollrt -Wl,-rpath,"$libdir" &&
    "$cxx" -shared "$dir/ring2.o" -o "$dir/plans/libtwo.so" -L"$libdir" -lcollrt \
      -Wl,-rpath,"$libdir" || { echo "FAIL: the plan libraries in $dir do not build"; exit 1; }
}

# check WHAT FILE TEXT: FILE has a line with TEXT
check() {
  if grep -qF -- "$3" "$2"; then
    passed=$((passed + 1))
  else
    echo "FAIL: $1: no line with '$3' in:"
    cat "$2"
    failed=$((failed + 1))
  fi
}
# absent WHAT FILE PATTERN: no line of FILE matches PATTERN
absent() {
  if grep -qE -- "$3" "$2"; then
    echo "FAIL: $1: a line matches '$3':"
    grep -E -- "$3" "$2"
    failed=$((failed + 1))
  else
    passed=$((passed + 1))
  fi
}

shim=$libdir/libcollnccl.so
# Every function of nccl.h, and every one the shim defines.
grep -oE '^(ncclResult_t|const char ?\*) +p?nccl[A-Za-z]+\(' "$header" |
  sed -E 's/.*[ *](p?nccl[A-Za-z]+)\($/\1/' | sort -u > "$work/declared"
nm -D --defined-only "$shim" | awk '$2 == "T" { print $3 }' | sort -u > "$work/defined"
missing=$(comm -23 "$work/declared" "$work/defined")
if [ "$(wc -l < "$work/declared")" -ge 80 ] && [ -z "$missing" ]; then
  passed=$((passed + 1))
else
  echo "FAIL: nccl.h declares what the shim lacks:" $missing
  failed=$((failed + 1))
fi

# scenario DIR [gpu]: the program on DIR's plans, then alone; fp8 runs on
# a plan on the GPU only
scenario() {
  local dir=$1 gpu=${2:-}
  COLL_PLAN_PATH=$dir/plans COLL_NCCL_LIBRARY=$stub STUB_NCCL_LOG=$dir/stub.log \
    COLL_DEBUG=INFO LD_PRELOAD=$shim "$app" > "$dir/out" 2>&1
  echo "exit $?" >> "$dir/out"
  check "the program" "$dir/out" "exit 0"
  check "the program" "$dir/out" PASS
  check "a plan" "$dir/out" "rank 3: ncclAllReduce of 10007 int32 sum: collc plan ring4 from $dir/plans/libfour.so"
  check "a plan" "$dir/out" "rank 1: ncclAlltoAll of 513 float64: collc plan a2a4"
  check "a plan" "$dir/out" "rank 0: ncclBcast of 1001 int32: collc plan bcast4"
  check "a plan" "$dir/out" "rank 1: ncclAllReduce of 1000 int32 sum: collc plan ring2 from $dir/plans/libtwo.so"
  check "a fallback" "$dir/out" "rank 2: ncclBroadcast of 17 int8: NCCL, as no plan library has broadcast on 4 ranks from root 0"
  check "a fallback" "$dir/out" "rank 0: ncclGather of 19 int8: NCCL, as collc compiles no such operation"
  if [ -n "$gpu" ]; then
    check "the GPU path" "$dir/out" "plan ring4_LL on the GPU: 2 threadblocks"
    check "fp8 on a GPU plan" "$dir/out" "ncclAllReduce of 64 float8e4m3 sum: collc plan ring4"
    absent "fp8 on a GPU plan" "$dir/stub.log" "ncclAllReduce count 64 type 10"
  else
    check "a fallback" "$dir/out" "ncclAllReduce of 64 float8e4m3 sum: NCCL, as no plan runs it; ring4: fp8 types need a GPU"
  fi
  check "a fallback" "$dir/out" "ncclAllReduce of 29 float32 a custom op: NCCL, as the op was made by NCCL's ncclRedOpCreatePreMulSum"
  for r in 0 1 2 3; do
    check "the stub" "$dir/stub.log" "rank $r: ncclCommInitRank of 4"
    check "the stub" "$dir/stub.log" "rank $r: ncclBroadcast count 17 type 0 root 0"
    check "the stub" "$dir/stub.log" "rank $r: ncclGather count 19 type 0 root 0"
    check "the stub" "$dir/stub.log" "rank $r: ncclSend count 23 type 1 peer $(((r + 1) % 4))"
    check "the stub" "$dir/stub.log" "rank $r: ncclRecv count 23 type 1 peer $(((r + 3) % 4))"
    [ -n "$gpu" ] || check "the stub" "$dir/stub.log" "rank $r: ncclAllReduce count 64 type 10 op 0"
    check "the stub" "$dir/stub.log" "rank $r: ncclAllReduce count 29 type 7 op 5"
    check "the stub" "$dir/stub.log" "rank $r: ncclCommSplit color $((r % 2)) key $((-r))"
    check "the stub" "$dir/stub.log" "rank $r: ncclCommWindowRegister 16384 bytes"
    check "the stub" "$dir/stub.log" "rank $r: ncclCommDestroy"
  done
  # What a plan ran must not have reached NCCL as well.
  absent "the stub" "$dir/stub.log" "ncclAllReduce count (10007|1000|4096) |ncclReduceScatter|ncclAllGather|ncclAlltoAll|ncclBcast|ncclReduce count|ncclBroadcast count 1001"

  # Entries of COLL_PLAN_PATH that hold no plans are named, and skipped.
  COLL_PLAN_PATH=$work/no-such-plans:$stub:$dir/plans COLL_NCCL_LIBRARY=$work/no-such-libnccl.so \
    COLL_DEBUG=INFO LD_PRELOAD=$shim "$app" alone > "$dir/alone" 2>&1
  echo "exit $?" >> "$dir/alone"
  check "without NCCL" "$dir/alone" "exit 0"
  check "without NCCL" "$dir/alone" PASS
  check "a bad plan path" "$dir/alone" "COLL_PLAN_PATH: $work/no-such-plans: No such file or directory"
  check "a bad plan path" "$dir/alone" "COLL_PLAN_PATH: $stub: no collc_algorithm_* symbol in it"
  check "without NCCL" "$dir/alone" "6 plan(s) for 4 ranks; no NCCL to fall back to"

}

mkdir -p "$work/host" && plans "$work/host" && scenario "$work/host"
if [ -n "$fake" ]; then
  mkdir -p "$work/gpu"
  cxxflags="-include $(dirname "$0")/fakecuda/FakeGpu.h -I$runtime" plans "$work/gpu"
  COLL_CUDA_LIBRARY=$fake COLL_TIMEOUT=20 scenario "$work/gpu" gpu
fi

echo "$passed passed, $failed failed"
[ "$failed" = 0 ] && [ "$passed" -gt 0 ]
