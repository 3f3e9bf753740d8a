#!/usr/bin/env bash
# The NCCL-style entry points over collRegisterAlgorithm: an example of each
# collective runs through collAllReduce, collReduceScatter, collAllGather,
# collAlltoAll, collBroadcast or collReduce (collc-launch --api) and is
# checked bit-exactly as a collLaunch is; dispatch refuses an algorithm
# registered for another collective or another root, saying so. Plans with
# steps on other ranks' buffers run on symmetric windows (collMemAlloc and
# collCommWindowRegister, collc-launch --registered) without copies, and on
# copies where a rank's buffer is not in one.
# Usage: api.sh COLLC LAUNCH CXX RUNTIME_INCLUDE DEVICE_INCLUDE LIBDIR EXAMPLES
set -uo pipefail
collc=$1 launch=$2 cxx=$3 include=$4 device=$5 libdir=$6 examples=$7
. "$(dirname "$0")/launch-lib.sh"

build_collectives
# Multimem on an H100 node, peer-window loads and stores on an A100 node.
as=twoshot_h100 build twoshot_allreduce -D ranks=4 --topology=hgx-h100
as=twoshot_a100 build twoshot_allreduce -D ranks=4 --topology=dgx-a100

expect 0 PASS ring_allreduce ring --api --count 100003 --dtype bfloat16
expect 0 PASS ring_allreduce ring --api --count 1001 --dtype int64 --op prod --inplace
expect 0 PASS ring_reducescatter ring_rs --api --count 65537 --dtype half --op avg
expect 0 PASS ring_allgather ring_ag --api --count 1000 --dtype int32 --inplace
expect 0 PASS pairwise_alltoall pairwise --api --count 4099 --dtype uint8
expect 0 PASS tree_broadcast binomial_bcast --api --count 1001 --dtype double
expect 0 PASS binary_tree_reduce binomial_reduce --api --count 1001 --dtype float --op max

# The root and the collective must match the registered algorithm's.
expect 1 "no registered algorithm does broadcast on 4 ranks from root 0" \
  tree_broadcast binomial_bcast --api-root 0 --count 7
expect 1 "no registered algorithm does reduce on 4 ranks from root 3" \
  binary_tree_reduce binomial_reduce --api-root 3 --count 7
expect 1 "no registered algorithm does allreduce on 4 ranks" \
  ring_allgather ring_ag --api-as allreduce --count 8

# Symmetric windows: the user's buffers where every rank registered them.
direct="steps on other ranks' buffers run on the registered windows, without copies"
copies="steps on other ranks' buffers run on copies in the runtime's window"
COLL_DEBUG=INFO expect 0 "$direct" twoshot_h100 twoshot --registered --count 100000 --dtype bfloat16 --op max --iters 2
COLL_DEBUG=INFO expect 0 "$direct" twoshot_a100 twoshot --registered --count 65537 --dtype int64 --op prod
COLL_DEBUG=INFO expect 0 "$direct" twoshot_a100 twoshot --registered --api --count 4099 --dtype half --op avg
COLL_DEBUG=INFO expect 0 "$copies: no window is registered" twoshot_a100 twoshot --count 4099
# In place, a plan that is not stages the input outside the window.
COLL_DEBUG=INFO expect 0 "$copies: rank 0's input is not in a registered window" \
  twoshot_h100 twoshot --registered --inplace --count 4099 --dtype float
# Windows need every pair of ranks to share memory.
expect 1 "collCommWindowRegister: rank 0: windows need shared memory between every pair of ranks" \
  twoshot_a100 twoshot --registered --transport socket --count 7

echo "$passed passed, $failed failed"
[ "$failed" = 0 ] && [ "$passed" -gt 0 ]
