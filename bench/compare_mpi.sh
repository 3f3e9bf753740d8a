#!/usr/bin/env bash
# collc's ring allreduce (host emulation) next to Open MPI's MPI_Allreduce.
#
# Expects collc already built in build/ (build/bin/collc, build/lib/libcollrt.so)
# and Open MPI installed (scripts/install-deps.sh). Builds collc-perf and
# mpi-allreduce, compiles examples/ring_allreduce.coll for each rank count,
# runs collc-perf (which starts its own ranks) and
# `mpirun --oversubscribe --allow-run-as-root -np R mpi-allreduce` on the same
# sizes, prints both tables and a side-by-side summary of the out-of-place time.
#
# Knobs (environment): RANKS="2 4"  MIN_BYTES=1K  MAX_BYTES=256M  FACTOR=4
#   ITERS=20  WARMUP=2  CHECK=1  OUT_DIR=/tmp/collc-compare-mpi
#   COLLC_UNDER_MPIRUN=1   also run collc-perf as an mpirun job (--id-file)
#   MPIRUN_FLAGS="..."     extra mpirun flags
#
# The host emulation is a correctness vehicle (one OS thread per threadblock,
# shared-memory FIFOs): its numbers say where it stands, not what the
# algorithm does on GPUs.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
RANKS=${RANKS:-"2 4"}
MIN_BYTES=${MIN_BYTES:-1K}
MAX_BYTES=${MAX_BYTES:-256M}
FACTOR=${FACTOR:-4}
ITERS=${ITERS:-20}
WARMUP=${WARMUP:-2}
CHECK=${CHECK:-1}
OUT_DIR=${OUT_DIR:-${TMPDIR:-/tmp}/collc-compare-mpi}
CXX=${CXX:-c++}
MPICC=${MPICC:-mpicc}
MPIRUN=${MPIRUN:-mpirun}
# Where containers forbid cross-memory attach (Open MPI then prints "Read -1,
# expected ..."), run with MPIRUN_FLAGS="--mca btl_vader_single_copy_mechanism none".
MPIRUN_FLAGS=${MPIRUN_FLAGS:-}

die() { echo "compare_mpi.sh: $*" >&2; exit 1; }

if [ ! -x "$ROOT/build/bin/collc" ] || [ ! -f "$ROOT/build/lib/libcollrt.so" ]; then
  die "build collc first (build/bin/collc and build/lib/libcollrt.so are missing)"
fi
if ! command -v "$MPICC" >/dev/null || ! command -v "$MPIRUN" >/dev/null; then
  die "Open MPI is missing: scripts/install-deps.sh installs openmpi-bin and libopenmpi-dev"
fi

mkdir -p "$OUT_DIR"
cd "$ROOT"

echo "# building collc-perf and mpi-allreduce in $OUT_DIR" >&2
"$CXX" -std=c++17 -O2 -I runtime -I runtime/include -I runtime/device -I tools \
  bench/collc-perf.cpp -o "$OUT_DIR/collc-perf" \
  -Lbuild/lib -lcollrt -Wl,-rpath,"$ROOT/build/lib" -ldl -pthread
"$MPICC" -O2 bench/mpi-allreduce.c -o "$OUT_DIR/mpi-allreduce"

sizes=(-b "$MIN_BYTES" -e "$MAX_BYTES" -f "$FACTOR" -n "$ITERS" -w "$WARMUP" -c "$CHECK")
status=0

# Prints "size time busbw" of the out-of-place column of a table.
columns() { awk '!/^#/ && NF >= 13 { print $1, $6, $8 }' "$1"; }

for R in $RANKS; do
  kernel="$OUT_DIR/ring$R"
  build/bin/collc examples/ring_allreduce.coll -D ranks="$R" --emit=cuda -o "$kernel.cpp"
  "$CXX" -std=c++17 -O2 -fPIC -shared -I runtime/include -I runtime/device "$kernel.cpp" \
    -o "$kernel.so" -Lbuild/lib -lcollrt -Wl,-rpath,"$ROOT/build/lib"

  echo
  echo "######## $R ranks: collc ring allreduce (host emulation), collc-perf"
  "$OUT_DIR/collc-perf" "$kernel.so" --algorithm ring --ranks "$R" "${sizes[@]}" |
    tee "$OUT_DIR/collc-$R.txt" || status=1

  if [ "${COLLC_UNDER_MPIRUN:-0}" = 1 ]; then
    echo
    echo "######## $R ranks: collc ring allreduce, collc-perf under mpirun"
    rm -f "$OUT_DIR/id-$R" "$OUT_DIR/id-$R".rank*
    # shellcheck disable=SC2086
    "$MPIRUN" --oversubscribe --allow-run-as-root --bind-to none $MPIRUN_FLAGS -np "$R" \
      "$OUT_DIR/collc-perf" "$kernel.so" --algorithm ring --id-file "$OUT_DIR/id-$R" \
      "${sizes[@]}" | tee "$OUT_DIR/collc-mpirun-$R.txt" || status=1
  fi

  echo
  echo "######## $R ranks: Open MPI MPI_Allreduce, mpi-allreduce"
  # shellcheck disable=SC2086
  "$MPIRUN" --oversubscribe --allow-run-as-root $MPIRUN_FLAGS -np "$R" \
    "$OUT_DIR/mpi-allreduce" "${sizes[@]}" | tee "$OUT_DIR/mpi-$R.txt" || status=1

  echo
  echo "######## $R ranks, out of place: collc vs MPI_Allreduce"
  printf '# %10s  %12s  %12s  %10s  %10s  %9s\n' "size(B)" "collc(us)" "mpi(us)" \
    "collc bus" "mpi bus" "time c/m"
  join <(columns "$OUT_DIR/collc-$R.txt" | sort -k1,1) <(columns "$OUT_DIR/mpi-$R.txt" | sort -k1,1) |
    sort -n -k1,1 |
    awk '{ printf "  %10d  %12s  %12s  %10s  %10s  %9.2f\n", $1, $2, $4, $3, $5, ($4 > 0 ? $2 / $4 : 0) }'
done
exit $status
