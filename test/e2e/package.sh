#!/usr/bin/env bash
# `cpack -G DEB` makes collc_<version>_<arch>.deb: named and versioned from
# the project, its dependencies declared (the shared libraries collc links,
# a C++ compiler for `collc run`), and holding the install under /usr. The
# package is only read (dpkg-deb), never installed.
# Usage: package.sh CPACK BUILD_DIR VERSION MAN(ON|OFF)
set -euo pipefail
cpack=$1 build=$2 version=$3 man=$4
work=$(mktemp -d "$build/package-test.XXXXXX")
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

"$cpack" -G DEB --config "$build/CPackConfig.cmake" -B "$work" > "$work/cpack.log" ||
  { cat "$work/cpack.log"; exit 1; }
deb=$work/collc_${version}_$(dpkg --print-architecture).deb
[ -f "$deb" ] || { ls "$work"; fail "no $deb"; }

dpkg-deb -f "$deb" | tee "$work/control.txt"
grep -qx "Package: collc" "$work/control.txt" || fail "the package is not named collc"
grep -qx "Version: $version" "$work/control.txt" || fail "the version is not $version"
depends=$(sed -n 's/^Depends: //p' "$work/control.txt")
for dep in libc6 libstdc++6 libllvm22 'g++ | c++-compiler'; do
  [[ ", $depends," == *", $dep"[\ ,]* ]] || fail "Depends lacks $dep: $depends"
done

dpkg-deb -c "$deb" | awk '{print $6}' > "$work/files.txt"
expected=(./usr/bin/collc ./usr/bin/collc-launch ./usr/bin/collc-perf ./usr/lib/libcollrt.so
  ./usr/include/collrt.h ./usr/include/collc/kernel.h ./usr/share/collc/plot.py
  ./usr/lib/cmake/collc/collcConfig.cmake ./usr/share/bash-completion/completions/collc)
[ "$man" = ON ] && expected+=(./usr/share/man/man1/collc.1)
for file in "${expected[@]}"; do
  grep -qx -- "$file" "$work/files.txt" || fail "the package lacks $file"
done
if grep -v '^\./usr/' "$work/files.txt" | grep -qv '^\./$'; then
  fail "the package has files outside /usr: $(grep -v '^\./usr/' "$work/files.txt")"
fi

# Unpacked, collc finds its runtime under the unpacked /usr.
dpkg-deb -x "$deb" "$work/root"
"$work/root/usr/bin/collc" --version | grep -qx "installed in $work/root/usr" ||
  fail "the packaged collc does not find its runtime beside it"
echo "PASS"
