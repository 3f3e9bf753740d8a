#!/usr/bin/env bash
# `collc tune`'s library builds with the host compiler and runs bit-exactly
# on emulated ranks at a size inside each of its ranges (collc-launch checks
# every element), so the runtime's dispatch by size runs every winner; the
# header that --header writes declares what the library defines.
# Usage: tune.sh COLLC LAUNCH CXX RUNTIME_INCLUDE DEVICE_INCLUDE LIBDIR
set -uo pipefail
collc=$1 launch=$2 cxx=$3 include=$4 device=$5 libdir=$6
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
passed=0 failed=0

# tune NAME RANKS COLLECTIVE: the library of every generator on RANKS GPUs
# of hgx-h100, as NAME.so, and its ranges in NAME.json
tune() {
  local name=$1 ranks=$2 collective=$3
  if ! out=$("$collc" tune --synth "$collective" --topology hgx-h100 --ranks "$ranks" \
               --name "$name" --json -o "$work/$name.cpp" --header "$work/$name.h" \
               --quiet 2>&1 > "$work/$name.json") ||
     ! out=$("$cxx" -std=c++17 -O1 -fPIC -shared -I"$include" -I"$device" "$work/$name.cpp" \
               -o "$work/$name.so" -L"$libdir" -lcollrt -Wl,-rpath,"$libdir" 2>&1); then
    echo "FAIL: the $name library does not build"
    echo "$out"
    failed=$((failed + 1))
    return 1
  fi
}

# run NAME RANKS DTYPE BYTES_PER_ELEMENT: a count at the start and near the
# end of each range (input bytes per rank), at most 4 Mi elements
run() {
  local name=$1 ranks=$2 dtype=$3 size=$4
  local counts
  counts=$(python3 - "$work/$name.json" "$size" <<'PY'
import json, sys
ranges = json.load(open(sys.argv[1]))["ranges"]
size = int(sys.argv[2])
counts = set()
for r in ranges:
    for b in (r["min_bytes"], r["max_bytes"] - 1):
        c = max(1, -(-b // size))
        if c * size < r["max_bytes"] and c <= 4 << 20:
            counts.add(c)
print(" ".join(map(str, sorted(counts))))
PY
)
  for count in $counts; do
    out=$("$launch" "$work/$name.so" --algorithm "$name" --ranks "$ranks" --count "$count" \
            --dtype "$dtype" 2>&1)
    if [ $? = 0 ] && [[ "$out" == *PASS* ]]; then
      passed=$((passed + 1))
    else
      echo "FAIL: $name on $ranks ranks, $count x $dtype"
      echo "$out"
      failed=$((failed + 1))
    fi
  done
}

# declared NAME: a program that includes NAME.h links against NAME.so and
# finds the entry point and the descriptor the header declares
declared() {
  local name=$1 out
  printf '#include "%s.h"\nint main() { return collc_%s && &collc_algorithm_%s ? 0 : 1; }\n' \
    "$name" "$name" "$name" > "$work/uses_$name.cpp"
  if out=$("$cxx" -std=c++17 -I"$include" -I"$work" "$work/uses_$name.cpp" "$work/$name.so" \
             -o "$work/uses_$name" -L"$libdir" -lcollrt -Wl,-rpath,"$libdir" 2>&1) &&
     out=$("$work/uses_$name" 2>&1); then
    passed=$((passed + 1))
  else
    echo "FAIL: the header of $name does not match its library"
    echo "$out"
    failed=$((failed + 1))
  fi
}

# says NAME RANKS: under COLL_DEBUG=INFO the runtime names, for the smallest
# range and the largest that starts within 64 MiB (what 4 ranks can afford),
# the winner the tuner chose and its margin
says() {
  local name=$1 ranks=$2 index winner count out
  for index in 0 -1; do
    read -r winner count < <(python3 - "$work/$name.json" "$index" <<'PY'
import json, sys
ranges = [r for r in json.load(open(sys.argv[1]))["ranges"] if r["min_bytes"] <= 64 << 20]
r = ranges[int(sys.argv[2])]
# the range's first count of int32
print(r["winner"], r["min_bytes"] // 4 + 1)
PY
)
    out=$(COLL_DEBUG=INFO "$launch" "$work/$name.so" --algorithm "$name" --ranks "$ranks" \
            --count "$count" --dtype int32 2>&1)
    if [[ "$out" == *"collc tune's winner for M "*": $winner"* ]]; then
      passed=$((passed + 1))
    else
      echo "FAIL: COLL_DEBUG=INFO does not name $winner, the winner at $count x int32"
      echo "$out"
      failed=$((failed + 1))
    fi
  done
}

tune tuned_allreduce 4 allreduce &&
  { run tuned_allreduce 4 int32 4; says tuned_allreduce 4; declared tuned_allreduce; }
tune tuned_allgather 4 allgather && run tuned_allgather 4 float 4

echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
