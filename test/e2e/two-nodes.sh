#!/usr/bin/env bash
# Two H100 nodes on emulated ranks, with direct connections on
# (COLL_DIRECT=1): threadblocks that cross nodes share their code with
# those that store straight into the receiver's buffers, and must never do
# so themselves. ring_ag_oop.coll makes their stand-in destination differ
# from where the receiver writes, so a stray direct store corrupts it.
# Usage: two-nodes.sh COLLC EXAMPLES
set -uo pipefail
collc=$1 examples=$2
here=$(dirname "$0")
status=0
check() {
  local out
  out=$(COLL_DIRECT=1 "$collc" run "$@" --ranks=16 --topology=hgx-h100:nodes=2 \
        --protocol=Simple 2>&1)
  if grep -q '^PASS' <<<"$out"; then
    echo "PASS $*"
  else
    echo "FAIL $*"; echo "$out"; status=1
  fi
}
check "$here/ring_ag_oop.coll" --count=10007 --dtype=float
check "$here/ring_ag_oop.coll" --count=65537 --dtype=int8
check "$examples/ring_allreduce.coll" -D ranks=16 --count=100003 --dtype=bfloat16 --op=max
check "$examples/rechalving_allreduce.coll" -D ranks=16 --count=10007 --dtype=int32 --inplace
# The ring's code is one shape on two nodes, as on one.
shapes=$("$collc" "$examples/ring_allreduce.coll" -D ranks=16 --topology=hgx-h100:nodes=2 \
         --protocol=Simple --emit=cuda | grep -c '^COLLC_DEVICE void shape')
if [ "$shapes" = 1 ]; then echo "PASS one shape"; else echo "FAIL $shapes shapes"; status=1; fi
exit $status
