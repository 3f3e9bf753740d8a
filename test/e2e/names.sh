#!/usr/bin/env bash
# One host program links the ring allreduce compiled for 4 and for 8 ranks
# and the two-shot allreduce (collc --name through collc_add_algorithm's
# NAME, with RANKS and DEFINES) in a project without the CUDA language,
# built against the installed collc, and runs each, checked, on emulated
# ranks. A .coll file that does not exist fails at configure time, saying so.
# Usage: names.sh CMAKE GENERATOR SOURCE_ROOT BUILD_DIR
set -euo pipefail
cmake=$1 generator=$2 root=$3 build=$4
work=$(mktemp -d "$build/names-test.XXXXXX")
trap 'rm -rf "$work"' EXIT

"$cmake" --install "$build" --prefix "$work/prefix" > /dev/null
project=$root/test/e2e/names
"$cmake" -G "$generator" -S "$project" -B "$work/names" -DCMAKE_PREFIX_PATH="$work/prefix" \
  > "$work/configure.log" || { cat "$work/configure.log"; exit 1; }
"$cmake" --build "$work/names"
"$work/names/names"

if "$cmake" -G "$generator" -S "$project" -B "$work/missing" -DCMAKE_PREFIX_PATH="$work/prefix" \
     -DNAMES_MISSING=ON > "$work/missing.log" 2>&1; then
  echo "FAIL: a missing .coll file configured"
  exit 1
fi
# CMake wraps the message: joined, it reads as one line.
tr -s ' \n' '  ' < "$work/missing.log" |
  grep -q "collc_add_algorithm: names: [^ ]*/examples/no_such_allreduce.coll does not exist" || {
  cat "$work/missing.log"
  echo "FAIL: the configure error does not name the missing file"
  exit 1
}
echo "PASS"
