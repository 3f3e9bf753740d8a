#!/usr/bin/env bash
# Writes into DIR (emptied first) the GPU check ready to run where collc
# cannot be built (no LLVM/MLIR, no verbs headers, no network): what collc
# emits for it (test/gpu/generate.sh, into DIR/generated), the runtime's
# sources, test/gpu and the harness's headers from tools/. Copy DIR to the
# machine with the GPU and run, with nvcc and a C++ compiler only:
#
#   DIR/test/gpu/run.sh          (BUILD_ONLY=1 to build without a GPU)
#
# The bundle is made for RANKS (8) and COLLRT_RANKS (2) ranks; EXAMPLES
# and PROTOCOLS narrow the sample of kernels (test/gpu/kernels.sh). Fails
# where collc is not built, or the bundle would exceed 64 MiB; where collc
# could not emit a part, the bundle is still written (run.sh reports the
# part as failed) and the exit status is 1.
# Usage: [COLLC=build/bin/collc] scripts/gpu-bundle.sh DIR
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
if [ $# -ne 1 ]; then
  echo "usage: scripts/gpu-bundle.sh DIR" >&2
  exit 2
fi
dir=$1
limit_kib=$((64 * 1024))
export COLLC=${COLLC:-$root/build/bin/collc}
if [ ! -x "$COLLC" ]; then
  echo "gpu-bundle.sh: no collc at $COLLC: build it (scripts/build.sh) or set COLLC" >&2
  exit 1
fi

rm -rf "$dir"
mkdir -p "$dir/test" "$dir/tools/ranks"
# What run.sh reads besides collc's output: the runtime (-I runtime,
# runtime/include, runtime/device), test/gpu and harness.cu's ranks/*.h
# (-I tools).
cp -R "$root/runtime" "$dir/runtime"
cp -R "$root/test/gpu" "$dir/test/gpu"
cp "$root"/tools/ranks/*.h "$dir/tools/ranks/"

status=0
if ! "$root/test/gpu/generate.sh" "$dir/generated"; then
  status=1
  echo "gpu-bundle.sh: collc failed to emit some of it:" >&2
  find "$dir/generated" -name '*.failed' >&2
fi

kib=$(du -sk "$dir" | cut -f1)
echo "bundle: $dir, $kib KiB (kernel files: $(find "$dir/generated/kernels" -name "*.cu" | wc -l))"
if [ "$kib" -gt "$limit_kib" ]; then
  echo "gpu-bundle.sh: the bundle is over $limit_kib KiB" >&2
  exit 1
fi
exit $status
