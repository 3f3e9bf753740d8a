#!/usr/bin/env bash
# Bootstrap from MPI: build test/mpi/allreduce.c with a compiled ring
# allreduce and run it under mpirun on 3 ranks.
# Usage: run.sh COLLC CXX MPICC MPIRUN SOURCE_ROOT LIBDIR
set -euo pipefail
collc=$1 cxx=$2 mpicc=$3 mpirun=$4 root=$5 libdir=$6
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"$collc" "$root/examples/ring_allreduce.coll" -D ranks=3 --emit=cuda -o "$work/ring.cpp"
"$cxx" -std=c++17 -O2 -fPIC -c -I"$root/runtime/include" -I"$root/runtime/device" \
  "$work/ring.cpp" -o "$work/ring.o"
"$mpicc" -O2 -I"$root/runtime/include" "$root/test/mpi/allreduce.c" "$work/ring.o" \
  -o "$work/allreduce" -L"$libdir" -lcollrt -Wl,-rpath,"$libdir" -lstdc++
"$mpirun" --oversubscribe --allow-run-as-root -np 3 "$work/allreduce" | tee "$work/out.txt"
grep -q '^PASS: 3 ranks' "$work/out.txt"
