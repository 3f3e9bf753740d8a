#!/usr/bin/env bash
# An install stands alone: `cmake --install` into a prefix inside the build
# tree, the prefix moved out of it, then, from the prefix only, `collc run`
# verifies an allreduce on 4 emulated ranks, collc-perf measures one it
# validates, and the manual page and bash completion are there. Where
# `unshare -rm` can make a mount namespace, the source and build trees are
# hidden under empty mounts while the installed tools run, so that a path
# baked in at configure time cannot be what makes them work.
# Usage: install.sh CMAKE CXX SOURCE_ROOT BUILD_DIR MAN(ON|OFF)
set -euo pipefail

# Second stage, run from a copy of this script: the checks from the prefix.
if [ "${1:-}" = --from-prefix ]; then
  prefix=$2 work=$3 cxx=$4 man=$5
  fail() { echo "FAIL: $*" >&2; exit 1; }

  "$prefix/bin/collc" --version | tee "$work/version.txt"
  grep -qx "installed in $prefix" "$work/version.txt" ||
    fail "collc does not find its runtime in the prefix"

  "$prefix/bin/collc" run "$work/ring_allreduce.coll" --ranks 4 --count 100003 |
    tee "$work/run.txt"
  grep -q '^PASS' "$work/run.txt" || fail "collc run did not pass"

  "$prefix/bin/collc" "$work/ring_allreduce.coll" -D ranks=4 --emit=cuda -o "$work/ring.cpp"
  "$cxx" -std=c++17 -O2 -fPIC -shared -I"$prefix/include" "$work/ring.cpp" -o "$work/ring.so" \
    -L"$prefix/lib" -lcollrt -Wl,-rpath,"$prefix/lib"
  "$prefix/bin/collc-perf" "$work/ring.so" --algorithm ring --ranks 4 -b 1K -e 64K -f 8 -n 1 \
    -w 0 -c 1 | tee "$work/perf.txt"
  grep -q '^# Out of bounds values : 0 OK' "$work/perf.txt" || fail "collc-perf did not validate"

  if [ "$man" = ON ]; then
    page=$prefix/share/man/man1/collc.1
    grep -q '^\.TH COLLC "1"' "$page" || fail "no manual page $page"
    grep -q 'emit' "$page" || fail "the manual page lacks collc's flags"
  fi

  # The completion offers commands, a command's flags and a flag's values.
  completion=$prefix/share/bash-completion/completions/collc
  complete_words() {
    bash -c 'source "$1"; shift; COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); _collc
      printf "%s\n" "${COMPREPLY[@]}"' _ "$completion" "$@"
  }
  complete_words "$prefix/bin/collc" r | grep -qx run || fail "completion lacks run"
  complete_words "$prefix/bin/collc" run --tran | grep -qx -- --transport ||
    fail "completion lacks collc run --transport"
  complete_words "$prefix/bin/collc" --emit = cu | grep -qx cuda ||
    fail "completion lacks --emit=cuda"
  echo "PASS"
  exit 0
fi

cmake=$1 cxx=$2 root=$3 build=$4 man=$5
installed=$(mktemp -d "$build/install-test.XXXXXX")
work=$(mktemp -d)
trap 'rm -rf "$installed" "$work"' EXIT

"$cmake" --install "$build" --prefix "$installed/prefix" > /dev/null
mv "$installed/prefix" "$work/prefix"
cp "$root/examples/ring_allreduce.coll" "$0" "$work/"
stage=("$work/install.sh" --from-prefix "$work/prefix" "$work" "$cxx" "$man")

if unshare -rm mount -t tmpfs none "$work" 2> /dev/null; then
  # The build tree first: it may lie inside the source tree.
  unshare -rm bash -c 'mount -t tmpfs none "$1" && mount -t tmpfs none "$2" && shift 2 &&
    exec bash "$@"' _ "$build" "$root" "${stage[@]}"
else
  echo "note: no mount namespace here; the source and build trees stay visible"
  bash "${stage[@]}"
fi
