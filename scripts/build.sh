#!/usr/bin/env bash
# Configures (once) and builds collc into $BUILD_DIR (default: build/).
set -euo pipefail
cd "$(dirname "$0")/.."
: "${BUILD_DIR:=build}"
: "${LLVM_PREFIX:=/usr/lib/llvm-22}"

if [ ! -f "$BUILD_DIR/build.ninja" ]; then
  cmake -G Ninja -S . -B "$BUILD_DIR" \
    -DCMAKE_BUILD_TYPE=Release \
    -DCOLLC_LLVM_PREFIX="$LLVM_PREFIX" \
    -DLLVM_EXTERNAL_LIT="$LLVM_PREFIX/bin/lit" \
    "$@"
fi
ninja -C "$BUILD_DIR"
