//===- GpuPeers.cpp - One GPU per rank, and peer access between them ------===//
#include "src/GpuPeers.h"

#include "src/Comm.h"
#include "support/CudaDriver.h"
#include "support/Env.h"

#if __has_include(<cuda.h>)
#include "support/CudaApi.h"
#endif

#include <algorithm>
#include <cstring>
#include <vector>

using namespace collrt;

#if __has_include(<cuda.h>)
namespace {

// Why `me` cannot share GPU memory with `peer`, or "".
std::string problem(const CudaApi &cu, int me, int peer, const std::vector<std::string> &bus) {
  const std::string &mine = bus[me], &theirs = bus[peer];
  if (mine.empty() || theirs.empty())
    return ""; // a rank without a bus id: nothing to judge by
  const std::string pair =
      std::to_string(std::min(me, peer)) + " and " + std::to_string(std::max(me, peer));
  if (mine == theirs)
    return Env::get().sharedGpu
               ? ""
               : "ranks " + pair + " both run on GPU " + mine +
                     ": collc runs one rank per GPU (cudaSetDevice each rank's own before "
                     "collrt; COLL_SHARED_GPU=1 allows sharing, for tests)";
  CUdevice self, other;
  int can = 0;
  std::string ignored;
  // A GPU this process cannot see (CUDA_VISIBLE_DEVICES) cannot be judged.
  if (!cu.cuDeviceGetByPCIBusId || !cu.currentDevice(self, ignored) ||
      cu.cuDeviceGetByPCIBusId(&other, theirs.c_str()) != CUDA_SUCCESS)
    return "";
  if (cu.cuDeviceCanAccessPeer(&can, self, other) != CUDA_SUCCESS || can)
    return "";
  return "rank " + std::to_string(me) + "'s GPU " + mine + " has no peer access to rank " +
         std::to_string(peer) + "'s GPU " + theirs +
         " (cuDeviceCanAccessPeer: as on PCIe without P2P, under MIG or in a VM); collc's GPU "
         "transports within a machine map each other's GPU memory";
}

} // namespace

#endif

collResult_t collrt::checkGpuPeers(collComm *comm) {
  if (comm->gpuPeersChecked)
    return collSuccess;
  std::string error;
  std::vector<std::string> bus, verdicts;
  if (collResult_t r = comm->bootstrap.allgather(currentGpuPciBusId(), bus, error))
    return comm->fail(r, error);
  std::string mine;
#if __has_include(<cuda.h>)
  const CudaApi *cu = cudaDriver(error);
  for (int peer = 0; cu && peer < comm->nranks && mine.empty(); ++peer)
    // Bus ids name GPUs within one machine: the pairs on shm.
    if (peer != comm->rank && !strcmp(comm->transport->nameOf(peer), "shm"))
      mine = problem(*cu, comm->rank, peer, bus);
#endif
  // Every rank fails with the same message, the first rank's that has one.
  if (collResult_t r = comm->bootstrap.allgather(mine, verdicts, error))
    return comm->fail(r, error);
  for (const std::string &v : verdicts)
    if (!v.empty())
      return comm->fail(collInvalidUsage, v);
  comm->gpuPeersChecked = true;
  return collSuccess;
}
