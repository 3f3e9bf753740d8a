#!/usr/bin/env bash
# Configures (once, and again when given cache settings such as
# -DCOLLC_WERROR=ON) and builds collc into $BUILD_DIR (default: build/).
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
elif [ $# -gt 0 ]; then
  cmake -S . -B "$BUILD_DIR" "$@"
fi
ninja -C "$BUILD_DIR"
