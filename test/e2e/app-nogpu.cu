//===- app-nogpu.cu - An nvcc-built plan called through collrt ------------===//
//
// Built by nvcc with the kernels of examples/app (their plans have a CUDA
// kernel and no host kernel) and run where there is no usable GPU: the
// call must return an error whose message says so, and never crash.
// Exits 1 when the call failed, 0 when it ran, 2 when no rank could start.
//
//===----------------------------------------------------------------------===//
#include "ring_allreduce.h"

#include <cstdio>
#include <vector>

int main() {
  collUniqueId id;
  collComm_t comm = nullptr;
  if (collGetUniqueId(&id) != collSuccess || collCommInitRank(&comm, 1, id, 0) != collSuccess) {
    fprintf(stderr, "collCommInitRank: %s\n", collGetLastError(nullptr));
    return 2;
  }
  std::vector<float> buf(1024, 1.0f);
  collResult_t r =
      collc_ring(buf.data(), buf.data(), buf.size(), collFloat32, collSum, comm, nullptr);
  printf("collc_ring: %s: %s\n", collGetErrorString(r), r ? collGetLastError(comm) : "");
  collCommDestroy(comm);
  return r == collSuccess ? 0 : 1;
}
