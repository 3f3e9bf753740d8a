#!/usr/bin/env bash
# The GPU check's bundle (scripts/gpu-bundle.sh) holds all that
# test/gpu/run.sh needs: made here for one kernel file and moved away from
# the source and build trees, its run.sh (BUILD_ONLY=1: no GPU needed)
# builds the runtime with <infiniband/verbs.h> out of reach, the harness
# (which passes its --self-test) and collrt_check in both forms, a row
# each, without calling collc (COLLC, and collc on a PATH stripped of the
# directories that hold one, record a call and fail).
# Usage: gpu-bundle.sh COLLC NVCC SOURCE_ROOT
set -euo pipefail
collc=$1 nvcc=$2 root=$3
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

EXAMPLES=ring_allreduce PROTOCOLS=Simple COLLC=$collc "$root/scripts/gpu-bundle.sh" "$work/made"
mkdir "$work/elsewhere"
mv "$work/made" "$work/elsewhere/bundle"
bundle=$work/elsewhere/bundle

# A collc that records being called; a c++ that takes the runtime's branch
# for a machine without <infiniband/verbs.h> (IbVerbs.cpp's guard).
mkdir "$work/stub"
printf '#!/bin/sh\ntouch "%s"\nexit 1\n' "$work/collc-called" > "$work/stub/collc"
printf '#!/bin/sh\nexec "%s" -DCOLLRT_WITHOUT_VERBS "$@"\n' "$(command -v c++)" > "$work/stub/c++"
chmod +x "$work/stub/collc" "$work/stub/c++"
path=$work/stub
IFS=: read -r -a dirs <<< "$PATH"
for d in "${dirs[@]}"; do
  if [ -n "$d" ] && [ "$d" != "$(dirname "$collc")" ] && [ ! -x "$d/collc" ]; then
    path=$path:$d
  fi
done

rc=0
env PATH="$path" COLLC="$work/stub/collc" NVCC="$nvcc" OUT_DIR="$work/out" BUILD_ONLY=1 JOBS=2 \
  "$bundle/test/gpu/run.sh" > "$work/log" 2>&1 || rc=$?
cat "$work/log"

problems=()
[ "$rc" -eq 0 ] || problems+=("run.sh exited $rc")
grep -q "^generated: $bundle/generated, from a bundle" "$work/log" ||
  problems+=("run.sh did not take the bundle's generated files")
[ ! -e "$work/collc-called" ] || problems+=("run.sh called collc")
for name in libcollrt ring_allreduce_Simple collrt collrt/machines; do
  grep -Eq "^$name +PASS " "$work/log" || problems+=("no PASS row for $name")
done
last=$(tail -n 1 "$work/log")
[ "$last" = "4 passed, 0 failed, 0 skipped" ] || problems+=("last line: $last")
# The guard's branch was the one built: the runtime says why ib is off.
grep -q "built without rdma-core" "$work/out/bin/libcollrt.so" ||
  problems+=("libcollrt.so was not built without verbs.h")
if [ ${#problems[@]} -gt 0 ]; then
  printf 'gpu-bundle: %s\n' "${problems[@]}"
  exit 1
fi
