#!/usr/bin/env bash
# collc-perf checks what it measures: a ring allreduce and a pairwise
# all-to-all on 4 emulated ranks, sizes 1 KiB .. 1 MiB, with validation on;
# collc-perf exits non-zero if any element of any size is wrong.
# Usage: perf.sh COLLC COLLC_PERF CXX INCLUDE DEVICE_INCLUDE LIBDIR EXAMPLES
set -euo pipefail
collc=$1 perf=$2 cxx=$3 include=$4 device=$5 libdir=$6 examples=$7
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
for pair in ring_allreduce:ring:float:sum pairwise_alltoall:pairwise:int32:sum \
            ring_reducescatter:ring_rs:half:max; do
  IFS=: read -r file name dtype op <<<"$pair"
  "$collc" "$examples/$file.coll" -D ranks=4 --emit=cuda -o "$work/$file.cpp"
  "$cxx" -std=c++17 -O2 -fPIC -shared -I"$include" -I"$device" "$work/$file.cpp" \
    -o "$work/$file.so" -L"$libdir" -lcollrt -Wl,-rpath,"$libdir"
  "$perf" "$work/$file.so" --algorithm "$name" --ranks 4 -b 1K -e 1M -f 32 -n 2 -w 1 \
    -d "$dtype" -o "$op" -c 1 | tee "$work/out.txt"
  grep -q '^# Out of bounds values : 0 OK' "$work/out.txt"
done
# -d all: a table for every type the host emulation has (not fp8), each
# validated; -g 1 is what collc-perf does anyway.
"$perf" "$work/ring_allreduce.so" --algorithm ring --ranks 4 -b 1K -e 4K -f 4 -n 1 -w 0 \
  -d all -g 1 -c 1 >"$work/all.txt"
tables=$(grep -c '^# Out of bounds values : 0 OK' "$work/all.txt")
[ "$tables" = 10 ] || { echo "-d all made $tables validated tables, not 10"; cat "$work/all.txt"; exit 1; }
grep -q 'bfloat16' "$work/all.txt" || { echo "-d all left out bfloat16"; exit 1; }
# Sizes that do not fit in memory are refused before any rank starts.
if "$perf" "$work/ring_allreduce.so" --algorithm ring --ranks 4 -b 1K -e 1000000000000000 \
    -f 32 >"$work/big.txt" 2>&1; then
  echo "collc-perf accepted -e 1e15"; exit 1
fi
grep -q 'collc-perf: -e 1000000000000000 needs about .*iB (4 ranks x 3 buffers of .*iB, .*iB of FIFOs), more than the .*iB available' \
  "$work/big.txt" || { cat "$work/big.txt"; exit 1; }
# Under mpirun, rank 0 writes the id, which holds the communicator's secret,
# to a file it makes itself (O_EXCL, mode 0600): one that someone made
# beforehand, under the name it once picked (PATH.tmp.<pid>), gets nothing.
# Alone of 4 ranks, rank 0 then fails within COLL_TIMEOUT.
: >"$work/spy"
if OMPI_COMM_WORLD_RANK=0 OMPI_COMM_WORLD_SIZE=4 COLL_TIMEOUT=1 bash -c \
    'ln "$1" "$2.tmp.$$" && shift 2 && exec "$@"' _ "$work/spy" "$work/id" \
    "$perf" "$work/ring_allreduce.so" --algorithm ring -b 1K -e 1K --id-file "$work/id" \
    >"$work/mpi.txt" 2>&1; then
  echo "rank 0 ran without the other ranks"; cat "$work/mpi.txt"; exit 1
fi
[ ! -s "$work/spy" ] || { echo "a file made beforehand received the id"; exit 1; }
