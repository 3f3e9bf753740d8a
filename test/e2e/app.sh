#!/usr/bin/env bash
# Applications build against the installed collc: `cmake --install` into a
# prefix inside the build tree, the prefix moved (nothing may point back to
# where it was installed), examples/app configured and built by nvcc through
# find_package(collc) and collc_add_algorithm, and a caller of its kernels
# built by nvcc through pkg-config. Then both run here, where there is no
# usable GPU: each must exit with status 1 and say so, never crash.
# Usage: app.sh CMAKE GENERATOR NVCC SOURCE_ROOT BUILD_DIR
set -euo pipefail
cmake=$1 generator=$2 nvcc=$3 root=$4 build=$5
work=$(mktemp -d "$build/app-test.XXXXXX")
trap 'rm -rf "$work"' EXIT

"$cmake" --install "$build" --prefix "$work/installed" > /dev/null
mv "$work/installed" "$work/prefix"
prefix=$work/prefix

"$cmake" -G "$generator" -S "$root/examples/app" -B "$work/app" -DCMAKE_PREFIX_PATH="$prefix" \
  -DCMAKE_CUDA_COMPILER="$nvcc" > "$work/configure.log" || { cat "$work/configure.log"; exit 1; }
"$cmake" --build "$work/app"
generated=$work/app/collc/allreduce
test -f "$generated/ring_allreduce.cu" && test -f "$generated/ring_allreduce.h"

export PKG_CONFIG_PATH=$prefix/lib/pkgconfig
"$nvcc" -std=c++17 -arch=sm_90 $(pkg-config --cflags collrt) -I"$generated" \
  "$generated/ring_allreduce.cu" "$root/test/e2e/app-nogpu.cu" -o "$work/nogpu" \
  $(pkg-config --libs collrt)

# Expects status 1 and a message naming the missing GPU.
expect_no_gpu() {
  local name=$1
  shift
  local rc=0
  "$@" > "$work/out.txt" 2>&1 || rc=$?
  cat "$work/out.txt"
  if [ "$rc" -ne 1 ]; then
    echo "FAIL: $name exited with status $rc, not 1" >&2
    exit 1
  fi
  if ! grep -q "no usable GPU" "$work/out.txt"; then
    echo "FAIL: $name does not say that there is no usable GPU" >&2
    exit 1
  fi
}
expect_no_gpu "the app" "$work/app/allreduce"
export LD_LIBRARY_PATH=$prefix/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
expect_no_gpu "an nvcc-built plan called through collrt" "$work/nogpu"
grep -q "collc_ring: invalid usage: plan ring_LL has no host kernel" "$work/out.txt"
echo "PASS"
