#!/usr/bin/env bash
# collrt's GPU path, end to end, without a GPU: examples built for the host
# but presented as nvcc's build (fakecuda/FakeGpu.h: no host kernel, a
# "CUDA" launcher running the blocks as threads), and collrt loading the
# fake driver (fakecuda/FakeCuda.cpp) as its libcuda. The FIFOs are then
# VMM allocations passed between processes as descriptors, the Args and
# tables are copied to "device" memory, avg divides after the kernel and
# in-place layouts copy on the stream, peer-window plans run between
# barriers in shared windows, and launches are captured into graphs and
# replayed; every run is checked bit-exactly. The fake device runs each
# stream's work on a thread of its own, after the call returns, as a GPU
# does (collc-launch waits on the stream before it checks), and aborts a
# call that waits for the whole device while a kernel cannot end.
# Usage: fakegpu.sh COLLC LAUNCH CXX RUNTIME_INCLUDE DEVICE_INCLUDE LIBDIR
#                   EXAMPLES RUNTIME_DIR FAKE_DRIVER
set -uo pipefail
collc=$1 launch=$2 cxx=$3 include=$4 device=$5 libdir=$6 examples=$7 runtime=$8
. "$(dirname "$0")/launch-lib.sh"
cxxflags="-include $(dirname "$0")/fakecuda/FakeGpu.h -I$runtime"
export COLL_CUDA_LIBRARY=$9 COLL_TIMEOUT=20

build_collectives
build rechalving_allreduce -D ranks=4
build hier_allreduce -D ranks=4 -D gpus=2
as=twoshot_h100 build twoshot_allreduce -D ranks=4 --topology=hgx-h100
as=oneshot_h100 build oneshot_allreduce -D ranks=4 --topology=hgx-h100
as=ring_h100 build ring_allreduce -D ranks=4 --topology=hgx-h100

gpu="on the GPU: "
# Every protocol's range, replicas, types and ops; later launches reuse the
# FIFOs, their counters and the Args slots.
COLL_DEBUG=INFO expect 0 "plan ring_LL $gpu" ring_allreduce ring --count 100003 --dtype bfloat16 --iters 3
expect 0 PASS ring_allreduce ring --count 1000003 --dtype float --op avg --iters 2
expect 0 PASS ring_allreduce ring --count 4000037 --dtype int8 --op max
expect 0 PASS ring_allreduce ring --count 65537 --dtype half --op prod --inplace --iters 2
expect 0 PASS ring_allreduce ring --count 7 --dtype int64 --op min
expect 0 PASS ring_allreduce ring --count 0
expect 0 PASS ring_reducescatter ring_rs --count 65537 --dtype half --op avg --inplace
expect 0 PASS ring_reducescatter ring_rs --count 300001 --dtype uint32 --iters 2
expect 0 PASS ring_allgather ring_ag --count 1000 --dtype int32 --inplace --iters 2
expect 0 PASS ring_allgather ring_ag --count 250001 --dtype double
expect 0 PASS pairwise_alltoall pairwise --count 4099 --dtype uint8
expect 0 PASS tree_broadcast binomial_bcast --count 100001 --dtype double --inplace
expect 0 PASS binary_tree_reduce binomial_reduce --count 1001 --dtype float --op avg
expect 0 PASS rechalving_allreduce rechalving --count 100000 --dtype uint64 --op sum
expect 0 PASS hier_allreduce hier --count 100003 --dtype bfloat16 --op avg --iters 2
expect 0 PASS ring_allreduce ring --api --count 4097 --dtype int32

# Captured into a CUDA graph: nothing runs at capture (the first launch,
# which also connects the FIFOs), then replays and plain launches take
# turns on the same FIFOs; staging, scratch and avg run on every replay.
COLL_DEBUG=INFO expect 0 "captured into a CUDA graph" ring_allreduce ring --count 100003 --graph --iters 4
expect 0 PASS ring_allreduce ring --count 1000003 --dtype half --op avg --inplace --graph --iters 3
expect 0 PASS ring_reducescatter ring_rs --count 65537 --dtype float --op sum --inplace --graph --iters 3
expect 0 PASS hier_allreduce hier --count 100003 --dtype bfloat16 --op max --graph --iters 3
expect 0 PASS tree_broadcast binomial_bcast --count 10001 --dtype int32 --graph --iters 3
expect 0 PASS ring_allreduce ring --api --count 4097 --dtype int64 --op prod --graph --iters 3

# Steps on other ranks' buffers (peer windows, multimem in its unicast
# form): every rank's buffers copied into a VMM window that all map, the
# kernels between barriers on a counter in rank 0's window; the window grows
# with the count. Direct stores into the receiver's window with COLL_DIRECT=1.
COLL_DEBUG=INFO expect 0 "multimem steps run as loads and stores over the peer windows: rank 0: its GPU has no NVLink multicast" \
  twoshot_h100 twoshot --count 4096
expect 0 PASS twoshot_h100 twoshot --count 100003 --dtype bfloat16 --op avg --iters 3
expect 0 PASS twoshot_h100 twoshot --count 1000000 --dtype int32 --op max --inplace --iters 2
expect 0 PASS oneshot_h100 oneshot --count 7 --dtype double --op prod
expect 0 PASS oneshot_h100 oneshot --count 300001 --dtype half --op sum --inplace --iters 2
COLL_DIRECT=1 expect 0 PASS ring_h100 ring --count 4000037 --dtype float --iters 2
# Their barriers (a count and a generation) depend on no launch, so they
# replay from a graph too.
expect 0 PASS twoshot_h100 twoshot --count 100003 --dtype float --op sum --graph --iters 4
expect 0 PASS oneshot_h100 oneshot --count 4099 --dtype int64 --op min --inplace --graph --iters 3
# Every rank's input and output in registered windows of GPU memory
# (collMemAlloc after the context exists): the kernels run on the user's
# buffers, without copies, and graphs replay on them.
COLL_DEBUG=INFO expect 0 "on the registered windows, without copies" twoshot_h100 twoshot --count 100003 --registered
COLL_DEBUG=INFO expect 0 "on the registered windows, without copies" twoshot_h100 twoshot --count 65537 --dtype bfloat16 --op avg --registered --iters 2
COLL_DEBUG=INFO expect 0 "on the registered windows, without copies" twoshot_h100 twoshot --count 300001 --dtype int64 --op min --registered --graph --iters 3
COLL_DIRECT=1 COLL_DEBUG=INFO expect 0 "on the registered windows, without copies" ring_h100 ring --count 6000001 --dtype float --registered --iters 2

# NVLink multicast (FAKE_CUDA_MULTICAST=1): every rank's window bound to
# one object, whose address each kernel gets for its buffers (the fake
# launcher checks that it aliases them) and whose multimem loads reduce over
# every rank's binding; the window is remade, bound again,
# as it grows, and graphs replay on it. Where the (type, op) has no
# multimem form, COLL_NVLS=0 says so, or binding fails, the unicast form
# runs instead, and says why.
export FAKE_CUDA_MULTICAST=1
COLL_DEBUG=INFO expect 0 "multimem steps run on NVLink multicast" twoshot_h100 twoshot --count 4096
COLL_DEBUG=INFO expect 0 "multimem steps run on NVLink multicast" twoshot_h100 twoshot --count 100003 --dtype bfloat16 --op max --inplace --iters 2
expect 0 PASS twoshot_h100 twoshot --count 2000003 --dtype float --op sum --graph --iters 3
expect 0 PASS oneshot_h100 oneshot --count 65536 --dtype half --op avg --iters 2
# collc synth's two-shot runs its shots on two threadblocks: the stores of
# a loop wait for the other threadblock's load-reduces of it.
"$collc" synth allreduce --algorithm two-shot --topology hgx-h100 --ranks 4 -o "$work/two_shot.coll"
examples=$work as=twoshot_synth build two_shot --topology=hgx-h100
COLL_DEBUG=INFO expect 0 "multimem steps run on NVLink multicast" \
  twoshot_synth two_shot_allreduce --count 1000003 --iters 3
expect 0 PASS twoshot_synth two_shot_allreduce --count 300001 --dtype bfloat16 --op avg --graph --iters 2
# Registered windows are bound at registration, and the kernels reach the
# user's buffers through that object.
COLL_DEBUG=INFO expect 0 "on the registered windows, without copies" twoshot_h100 twoshot --count 100003 --registered
COLL_DEBUG=INFO expect 0 $'bound to one multicast object\n' twoshot_h100 twoshot --count 100003 --registered --iters 2
expect 0 PASS twoshot_h100 twoshot --count 1000001 --dtype half --op max --registered --graph --iters 3
COLL_DEBUG=INFO expect 0 "over the peer windows: multimem has no prod of float32" twoshot_h100 twoshot --count 4096 --op prod
# Multimem steps go through the object, which reduces over every bound
# memory and stores to each: where it has lost one rank's binding, that
# rank's part is missing from the sums and its buffer from the stores.
FAKE_CUDA_MULTICAST_DROP=1 expect 1 " wrong)" twoshot_h100 twoshot --count 4096
COLL_NVLS=0 COLL_DEBUG=INFO expect 0 "over the peer windows: rank 0: COLL_NVLS=0" twoshot_h100 twoshot --count 4096
FAKE_CUDA_FAIL=cuMulticastBindMem COLL_DEBUG=INFO expect 0 \
  "over the peer windows: binding NVLink multicast failed (rank 0: cuMulticastBindMem: CUDA_ERROR_OUT_OF_MEMORY)" \
  twoshot_h100 twoshot --count 4096 --dtype int32
unset FAKE_CUDA_MULTICAST

# Ranks on several machines (collc-launch --machines sets COLL_HOSTID): shm
# within a machine, socket between, or socket everywhere. The FIFOs between
# machines are pinned host memory (the fake launcher checks that the GPU
# may reach every FIFO), shared by the kernels and the proxy threads, those
# within a machine VMM memory; LL senders publish every step for the proxy,
# and LL128 is refused between machines.
COLL_DEBUG=INFO expect 0 "shm to 1, socket to 2-3" ring_allreduce ring --machines 2 --count 100003 --dtype bfloat16 --iters 3
COLL_DEBUG=INFO expect 0 "rank 1 receives on 48 FIFOs in GPU memory and 0 in pinned host memory" \
  ring_allreduce ring --machines 2 --count 1000
COLL_DEBUG=INFO expect 0 "rank 0 receives on 0 FIFOs in GPU memory and 48 in pinned host memory" \
  ring_allreduce ring --machines 2 --count 1000
expect 0 PASS ring_allreduce ring --machines 2 --count 6000037 --dtype float --op avg --iters 2
expect 0 PASS ring_allreduce ring --machines 2 --count 7 --dtype int64 --op min --graph --iters 3
expect 0 PASS ring_reducescatter ring_rs --machines 2 --count 65537 --dtype half --op avg --inplace
expect 0 PASS ring_allgather ring_ag --machines 4 --count 250001 --dtype double --iters 2
expect 0 PASS pairwise_alltoall pairwise --machines 2 --count 4099 --dtype uint8
expect 0 PASS tree_broadcast binomial_bcast --transport socket --count 100001 --dtype double --inplace
expect 0 PASS hier_allreduce hier --machines 2 --count 100003 --dtype bfloat16 --op max --graph --iters 3
# A plan compiled for those two machines (collc synth for two nodes of two
# GPUs: LL and Simple, direct steps within a node and across it), with
# FIFOs in both memories; COLL_DIRECT=1 leaves its direct connections on
# FIFOs, as windows need every rank on one machine.
echo '{"nodes": 2, "gpusPerNode": 2, "network": {"nicsPerNode": 2}}' > "$work/2x2.json"
"$collc" synth allreduce --topology "$work/2x2.json" --algorithm hierarchical-direct \
  -o "$work/hd_allreduce.coll" > /dev/null
examples=$work build hd_allreduce --topology="$work/2x2.json"
COLL_DEBUG=INFO expect 0 "rank 2 receives on 32 FIFOs in GPU memory and 32 in pinned host memory" \
  hd_allreduce hierarchical_direct_allreduce --machines 2 --count 100003 --dtype bfloat16 --op avg
expect 0 PASS hd_allreduce hierarchical_direct_allreduce --machines 2 --count 6000001 --dtype float --iters 2
expect 0 PASS hd_allreduce hierarchical_direct_allreduce --machines 2 --count 7 --dtype int32 --op max --graph --iters 3
COLL_DIRECT=1 expect 0 PASS hd_allreduce hierarchical_direct_allreduce --machines 2 --count 300001 --dtype half --op min --inplace
expect 1 "plan ring_LL128 runs LL128 between rank 0 and rank 3, which are on different machines" \
  ring_allreduce ring --machines 2 --count 1000003
FAKE_CUDA_FAIL=cuMemHostRegister expect 1 "unhandled CUDA error: cuMemHostRegister: CUDA_ERROR_OUT_OF_MEMORY" \
  ring_allreduce ring --machines 2 --count 1000
# The machines in one NVLink domain (COLL_NVLINK_DOMAIN, a device with
# fabric handles): nvl joins them, each rank maps every other's VMM memory
# through fabric handles, so FIFOs stay in GPU memory, LL128 runs between
# machines, and peer-window plans run across them (without multicast,
# whose object travels as a descriptor). Without fabric handles, the
# communicator's first window fails saying why.
export COLL_NVLINK_DOMAIN=rack1
FAKE_CUDA_FABRIC=1 COLL_DEBUG=INFO expect 0 "shm to 1, nvl to 2-3" ring_allreduce ring --machines 2 --count 100003 --dtype bfloat16
FAKE_CUDA_FABRIC=1 expect 0 PASS ring_allreduce ring --machines 2 --count 1000003 --dtype float --op avg --iters 2
FAKE_CUDA_FABRIC=1 expect 0 PASS ring_allgather ring_ag --machines 4 --count 250001 --dtype double --graph --iters 2
FAKE_CUDA_FABRIC=1 FAKE_CUDA_MULTICAST=1 COLL_DEBUG=INFO expect 0 \
  "over the peer windows: its ranks span hosts" twoshot_h100 twoshot --machines 2 --count 4096 --dtype int32
FAKE_CUDA_FABRIC=1 expect 0 PASS oneshot_h100 oneshot --machines 2 --count 100003 --dtype half --op max
expect 1 "cannot export its window" ring_allreduce ring --machines 2 --count 1000
unset COLL_NVLINK_DOMAIN
# A failing driver call fails the launch as collUnhandledCudaError, named.
FAKE_CUDA_FAIL=cuMemCreate expect 1 "unhandled CUDA error: cuMemCreate: CUDA_ERROR_OUT_OF_MEMORY" \
  ring_allreduce ring --count 1000
# A kernel's error reaches the host through host-mapped memory and fails
# the next call on the communicator.
FAKE_GPU_FAIL=1 expect 1 "timeout: an earlier launch failed on the GPU: rank 0 timed out (a fake kernel)" \
  ring_allreduce ring --count 1000 --iters 2
FAKE_CUDA_FAIL=cuMemAllocAsync expect 1 "unhandled CUDA error: cuMemAllocAsync: CUDA_ERROR_OUT_OF_MEMORY" \
  ring_allreduce ring --count 1000

# Ranks of one machine on one GPU, or on GPUs without peer access, fail on
# every rank at the first launch, saying why, where one rank would fail to
# map the other's memory and the rest wait out their timeout.
FAKE_CUDA_SHARED_GPU=1 expect 1 "both run on GPU 0000:01:00.0: collc runs one rank per GPU" \
  ring_allreduce ring --count 4099
FAKE_CUDA_SHARED_GPU=1 COLL_SHARED_GPU=1 expect 0 PASS ring_allreduce ring --count 4099
FAKE_CUDA_NO_PEER_ACCESS=1 expect 1 "has no peer access to rank" ring_allreduce ring --count 4099

echo "$passed passed, $failed failed"
[ "$failed" = 0 ] && [ "$passed" -gt 0 ]
