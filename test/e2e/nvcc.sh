#!/usr/bin/env bash
# nvcc compiles what collc emits: one example's kernels (every size range,
# direct, multimem and peer-window forms on an H100 node, or on $TOPOLOGY)
# for sm_80, sm_90 and sm_100 where this nvcc knows it, through ptxas;
# prints registers and spills.
# Usage: [TOPOLOGY=name] nvcc.sh COLLC NVCC RUNTIME_INCLUDE DEVICE_INCLUDE EXAMPLE.coll [collc flags...]
set -euo pipefail
collc=$1 nvcc=$2 include=$3 device=$4 example=$5
shift 5
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"$collc" "$example" --topology="${TOPOLOGY:-hgx-h100}" --emit=cuda -o "$work/k.cu" "$@"
archs=()
for sm in 80 90 100; do
  if "$nvcc" --list-gpu-arch | grep -qx "compute_$sm"; then
    archs+=(-gencode "arch=compute_$sm,code=sm_$sm")
  fi
done
"$nvcc" -std=c++17 -O3 "${archs[@]}" -Xptxas -v -I"$include" -I"$device" -c "$work/k.cu" \
  -o "$work/k.o" 2> "$work/ptxas.txt"
# One line per kernel and architecture: registers, spills.
awk '/Compiling entry function/ { match($0, /_ZN[0-9]+[A-Za-z0-9_]+/); fn = substr($0, RSTART, RLENGTH);
       match($0, /sm_[0-9]+/); sm = substr($0, RSTART, RLENGTH) }
     /Used [0-9]+ registers/ && fn != "" { match($0, /Used [0-9]+ registers/); regs = substr($0, RSTART, RLENGTH) }
     /spill stores/ && fn != "" { spill = $0 }
     /Used [0-9]+ registers/ && fn != "" { print sm, fn ":", regs; fn = "" }' "$work/ptxas.txt"
grep -o '[0-9]* bytes spill stores, [0-9]* bytes spill loads' "$work/ptxas.txt" | sort | uniq -c
