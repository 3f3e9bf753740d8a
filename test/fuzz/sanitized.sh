#!/usr/bin/env bash
# Builds the front-end fuzzer with ASan and UBSan and runs it.
# usage: sanitized.sh SOURCE_DIR BUILD_DIR LLVM_PREFIX SECONDS SEED_DIR...
set -euo pipefail
src=$1 build=$2 prefix=$3 seconds=$4
shift 4
flags="-fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer"
if [ ! -f "$build/build.ninja" ]; then
  cmake -G Ninja -S "$src" -B "$build" -DCMAKE_BUILD_TYPE=Release \
    -DCOLLC_FUZZ_ONLY=ON -DCOLLC_LLVM_PREFIX="$prefix" \
    -DCMAKE_CXX_FLAGS="$flags" -DCMAKE_EXE_LINKER_FLAGS="$flags" >/dev/null
fi
ninja -C "$build" collc-fuzz >/dev/null
# Leaks of MLIR's global registries at exit are not the front end's errors;
# LLVM's allocators poison memory by hand only in sanitized builds of LLVM,
# which the installed libraries are not, so hand poisoning is ignored.
ASAN_OPTIONS=detect_leaks=0:allow_user_poisoning=0:abort_on_error=1 \
  "$build/bin/collc-fuzz" --seconds "$seconds" "$@"
