#!/usr/bin/env bash
# Writes every output format of collc for every example (and a few
# placements, rank counts, protocols and splits) into DIR, one file each, so
# that a refactoring can be checked to change nothing:
#   scripts/emit-snapshot.sh before/ ; (change) ; scripts/emit-snapshot.sh after/
#   diff -r before after
# usage: scripts/emit-snapshot.sh DIR [COLLC]
set -euo pipefail
out=${1:?usage: emit-snapshot.sh DIR [COLLC]}
root="$(cd "$(dirname "$0")/.." && pwd)"
collc=${2:-$root/build/bin/collc}
mkdir -p "$out"

variants=(
  "default|"
  "h100|--topology=hgx-h100"
  "a100|--topology=dgx-a100"
  "ll|--protocol=LL"
  "split|--pipeline=2 --instances=2"
)
for file in "$root"/examples/*.coll; do
  name=$(basename "$file" .coll)
  if [[ $name == hier_* ]]; then sizes=("-D nodes=2 -D gpus=4"); else sizes=("-D ranks=8" "-D ranks=5"); fi
  for size in "${sizes[@]}"; do
    for variant in "${variants[@]}"; do
      tag=${variant%%|*} flags=${variant#*|}
      base="$out/$name.${size//[^a-z0-9]/}.$tag"
      for emit in coll plan msccl-xml cuda header; do
        # Rejected combinations are part of the snapshot too: their messages.
        # shellcheck disable=SC2086
        "$collc" "$file" $size $flags --emit=$emit >"$base.$emit" 2>&1 || echo "exit $?" >>"$base.$emit"
      done
    done
  done
done
echo "$(ls "$out" | wc -l) outputs in $out"
