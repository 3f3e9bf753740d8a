#!/usr/bin/env bash
# collc-launch fails with a message and an exit status, never an abort:
# a run larger than the memory available (buffers and FIFOs) is refused
# before any rank starts, a rank that cannot allocate its buffers says so, and a
# COLLC_PARENT_PID left over from another program is named.
# Usage: launch-limits.sh COLLC LAUNCH CXX RUNTIME_INCLUDE DEVICE_INCLUDE LIBDIR EXAMPLES
set -uo pipefail
collc=$1 launch=$2 cxx=$3 include=$4 device=$5 libdir=$6 examples=$7
. "$(dirname "$0")/launch-lib.sh"

build ring_allreduce -D ranks=4
build bidir_ring_allreduce -D ranks=4

# 2^40 floats on 4 ranks need about 52 TiB; 4e9 doubles (every rank once
# died of bad_alloc at 4e9) about 370 GiB, where that is more than there is.
needs="collc-launch: the run needs about"
expect 2 "$needs 52.0 TiB of memory (4 ranks x 13.0 TiB of buffers for --count 1099511627776, " \
  ring_allreduce ring --count 1099511627776
# The FIFOs count too, one per replica: bidir_ring has 3 plan variants of 8
# receiving threadblocks over the 4 ranks, each run by up to 8 replicas,
# whose FIFOs of 8 LL slots of 256 MiB take 3 x 8 x 8 x 2 GiB = 384 GiB.
COLL_LL_SLOT=268435456 expect 2 \
  "$needs 384.0 GiB of memory (4 ranks x 104 bytes of buffers for --count 8, 384.0 GiB of FIFOs)" \
  bidir_ring_allreduce bidir_ring --count 8
available=$(awk '/^MemAvailable:/ { print $2 }' /proc/meminfo)
if [ "${available:-0}" -lt $((370 * 1024 * 1024)) ]; then
  expect 2 "$needs" ring_allreduce ring --count 4000000000 --dtype double
fi

# The launcher's estimate passes (2 GiB in all), but each rank may map only
# 300 MiB: its buffers (520 MB) fail to allocate, and it says so.
if (ulimit -v 307200 && failed=0 &&
    expect 1 "FAIL rank" ring_allreduce ring --count 40000000 &&
    [[ "$failed" = 0 && "$out" == *": out of memory for --count 40000000"* ]] ||
    { echo "$out"; false; }); then
  passed=$((passed + 1))
else
  failed=$((failed + 1))
fi

COLLC_PARENT_PID=999999999 expect 1 \
  "collc-launch: COLLC_PARENT_PID=999999999, but this process's parent is" \
  ring_allreduce ring --count 10

echo "$passed passed, $failed failed"
[ "$failed" = 0 ] && [ "$passed" -gt 0 ]
