#!/usr/bin/env bash
# Runs a few examples on emulated ranks under a sanitizer: each kernel is
# emitted by collc, compiled with the sanitizer's flags against the matching
# sanitized collrt and run by the sanitized collc-launch (whose ranks are
# that program again). Every protocol, both transports, multimem and peer
# windows with direct connections, 2-4 ranks; small FIFO slots, so that a
# few thousand elements wrap every FIFO many times, and two launches per
# run, so that the second starts from counters the first left.
# Fails on a wrong result and on any sanitizer report, including one that
# a rank prints after it has reported success (a leak at exit).
# usage: e2e.sh COLLC LAUNCH CXX "FLAGS" SOURCE_DIR LIB_DIR LIB_NAME
set -uo pipefail
collc=$1 launch=$2 cxx=$3 flags=$4 src=$5 libdir=$6 lib=$7
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export COLL_SIMPLE_SLOT=4096 COLL_LL_SLOT=512 COLL_LL128_SLOT=1024 COLL_TIMEOUT=60

# example ranks protocol transport count dtype op [collc flags and launch
# flags ...]; a leading DIRECT places the build on shared windows
# (COLL_DIRECT=1), as the e2e matrix does for builds placed on a node.
cases=(
  "ring_allreduce 4 Simple shm 3001 float sum --instances=2"
  "ring_allreduce 3 LL socket 1000 int32 max"
  "ring_allreduce 2 LL128 shm 5003 bfloat16 sum --pipeline=2 +--inplace"
  "binary_tree_reduce 4 Simple socket 2000 double prod"
  "binary_tree_reduce 3 LL shm 777 half min --instances=2"
  "chain_broadcast 4 LL128 socket 3000 int8 sum"
  "chain_broadcast 4 Simple shm 4096 uint64 sum --pipeline=2"
  "pairwise_alltoall 3 Simple shm 500 int32 sum"
  "pairwise_alltoall 4 LL socket 300 uint8 sum"
  "pairwise_alltoall 2 LL128 shm 1000 float sum +--inplace"
  "twoshot_allreduce 4 Simple shm 1000 float avg --topology=hgx-h100 DIRECT"
  "twoshot_allreduce 3 LL shm 2001 int64 sum --topology=dgx-a100 DIRECT"
  "twoshot_allreduce 2 LL128 socket 1500 half max"
  "ring_allgather 4 Simple shm 1200 float sum --topology=dgx-a100 DIRECT"
  "ring_allgather 3 LL128 socket 999 uint32 sum"
  "ring_allgather 2 LL shm 640 int8 sum +--inplace"
)

passed=0 failed=0
reports='ThreadSanitizer|AddressSanitizer|LeakSanitizer|UndefinedBehaviorSanitizer|runtime error:'
for c in "${cases[@]}"; do
  read -r example ranks proto transport count dtype op rest <<<"$c"
  shape=() extra=() knobs=()
  for word in $rest; do
    case $word in
      DIRECT) knobs=(COLL_DIRECT=1) ;;
      +*) extra+=("${word#+}") ;;
      *) shape+=("$word") ;;
    esac
  done
  defines=(-D ranks="$ranks")
  name=$("$collc" "$src/examples/$example.coll" "${defines[@]}" | sed -n 's/^\([a-z_0-9]*\): .*/\1/p' | head -1)
  kernel="$work/${example}_${ranks}_$proto"
  log="$work/log"
  if ! "$collc" "$src/examples/$example.coll" "${defines[@]}" --emit=cuda --protocol "$proto" \
         "${shape[@]}" -o "$kernel.cpp" >"$log" 2>&1 ||
     ! $cxx -std=c++17 $flags -fPIC -shared -I"$src/runtime/include" -I"$src/runtime/device" \
         "$kernel.cpp" -o "$kernel.so" -L"$libdir" -l"$lib" -Wl,-rpath,"$libdir" >>"$log" 2>&1; then
    failed=$((failed + 1))
    echo "FAIL $c: does not build"
    cat "$log"
    continue
  fi
  env "${knobs[@]}" "$launch" "$kernel.so" --algorithm "$name" --ranks "$ranks" --count "$count" \
    --dtype "$dtype" --op "$op" --transport "$transport" --iters 2 "${extra[@]}" >"$log" 2>&1
  rc=$?
  if [ $rc -eq 0 ] && grep -q '^PASS' "$log" && ! grep -Eq "$reports" "$log"; then
    passed=$((passed + 1))
  else
    failed=$((failed + 1))
    echo "FAIL $c (exit $rc)"
    cat "$log"
  fi
done
echo "$passed passed, $failed failed"
[ $failed -eq 0 ] && [ $passed -gt 0 ]
