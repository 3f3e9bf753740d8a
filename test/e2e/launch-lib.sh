# Shared by the e2e scripts that build examples for the host and run them
# with collc-launch on 4 ranks. The caller sets collc, launch, cxx, include,
# device, libdir and examples; `cxxflags` adds to each compile.
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
passed=0 failed=0

# build NAME FLAGS...: the host build of examples/NAME.coll as NAME.so, or
# as $as.so where `as` is set
build() {
  local name=$1 so=${as:-$1}
  shift
  # shellcheck disable=SC2086 # cxxflags is a list of words
  if ! out=$("$collc" "$examples/$name.coll" "$@" --emit=cuda -o "$work/$so.cpp" 2>&1) ||
     ! out=$("$cxx" -std=c++17 -O1 -fPIC -shared ${cxxflags:-} -I"$include" -I"$device" \
               "$work/$so.cpp" -o "$work/$so.so" -L"$libdir" -lcollrt -Wl,-rpath,"$libdir" 2>&1); then
    echo "FAIL: $name $* does not build"
    echo "$out"
    failed=$((failed + 1))
  fi
}

# expect STATUS TEXT NAME ALGORITHM ARGS...: collc-launch on NAME.so exits
# with STATUS and prints TEXT
expect() {
  local status=$1 text=$2 name=$3 algorithm=$4
  shift 4
  out=$("$launch" "$work/$name.so" --algorithm "$algorithm" --ranks 4 "$@" 2>&1)
  local rc=$?
  if [ "$rc" = "$status" ] && [[ "$out" == *"$text"* ]]; then
    passed=$((passed + 1))
  else
    echo "FAIL: $name $*: expected exit status $status and '$text', got $rc"
    echo "$out"
    failed=$((failed + 1))
  fi
}

# An example of each collective, for 4 ranks: ring_allreduce, ring_reducescatter,
# ring_allgather, pairwise_alltoall, tree_broadcast (root 2), binary_tree_reduce
# (root 1).
build_collectives() {
  build ring_allreduce -D ranks=4
  build ring_reducescatter -D ranks=4
  build ring_allgather -D ranks=4
  build pairwise_alltoall -D ranks=4
  build tree_broadcast -D ranks=4 -D root=2
  build binary_tree_reduce -D ranks=4 -D root=1
}
