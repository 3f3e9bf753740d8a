//===- main.cu - An allreduce of cudaMalloc'd buffers through collrt ------===//
//
// What an application does with collc's output: the build compiles
// ring_allreduce.coll into kernels and the header ring_allreduce.h
// (collc_add_algorithm in CMakeLists.txt); the program joins the ranks,
// allocates its buffer on its GPU, calls the generated entry point
// collc_ring and checks the sum. Every failure ends the program with
// status 1 and a message: a machine without a usable GPU is one of them.
//
//===----------------------------------------------------------------------===//
#include "join.h"
#include "ring_allreduce.h"

#include <cuda_runtime.h>

#include <cstdio>
#include <vector>

namespace {

constexpr size_t kCount = size_t(1) << 20;

// Rank r holds r + (i % 7) at i: the sum over R ranks is exact in float.
float input(int rank, size_t i) { return float(rank + int(i % 7)); }
float sum(int nranks, size_t i) { return float(nranks * (nranks - 1) / 2 + nranks * int(i % 7)); }

bool cudaOk(cudaError_t e, int rank, const char *what) {
  if (e != cudaSuccess)
    fprintf(stderr, "rank %d: %s: %s\n", rank, what, cudaGetErrorString(e));
  return e == cudaSuccess;
}

// Picks this rank's GPU.
bool useGpu(int rank, int localRank) {
  int devices = 0;
  cudaError_t e = cudaGetDeviceCount(&devices);
  if (e != cudaSuccess || devices == 0) {
    fprintf(stderr, "rank %d: no usable GPU: %s\n", rank,
            e != cudaSuccess ? cudaGetErrorString(e) : "no CUDA device");
    return false;
  }
  return cudaOk(cudaSetDevice(localRank % devices), rank, "cudaSetDevice");
}

bool allreduce(collComm_t comm, int rank, int nranks) {
  std::vector<float> host(kCount);
  for (size_t i = 0; i < kCount; ++i)
    host[i] = input(rank, i);
  float *buf = nullptr;
  cudaStream_t stream = nullptr;
  bool ok = cudaOk(cudaMalloc(&buf, kCount * sizeof(float)), rank, "cudaMalloc") &&
            cudaOk(cudaStreamCreate(&stream), rank, "cudaStreamCreate") &&
            cudaOk(cudaMemcpy(buf, host.data(), kCount * sizeof(float), cudaMemcpyHostToDevice),
                   rank, "cudaMemcpy");
  if (ok) {
    // In place, with NCCL's signature.
    collResult_t r = collc_ring(buf, buf, kCount, collFloat32, collSum, comm, stream);
    if (r != collSuccess)
      fprintf(stderr, "rank %d: collc_ring: %s: %s\n", rank, collGetErrorString(r),
              collGetLastError(comm));
    ok = r == collSuccess && cudaOk(cudaStreamSynchronize(stream), rank, "the allreduce") &&
         cudaOk(cudaMemcpy(host.data(), buf, kCount * sizeof(float), cudaMemcpyDeviceToHost), rank,
                "cudaMemcpy");
  }
  for (size_t i = 0; ok && i < kCount; ++i)
    if (host[i] != sum(nranks, i)) {
      fprintf(stderr, "rank %d: element %zu is %g, not %g\n", rank, i, host[i], sum(nranks, i));
      ok = false;
    }
  if (stream)
    cudaStreamDestroy(stream);
  cudaFree(buf);
  return ok;
}

} // namespace

int main(int argc, char **argv) {
  int rank = 0, nranks = 1, localRank = 0;
  if (!joinRanks(&argc, &argv, &rank, &nranks, &localRank)) {
    fprintf(stderr, "the ranks could not start\n");
    return 1;
  }
  bool ok = everyone(useGpu(rank, localRank));
  collComm_t comm = nullptr;
  if (ok) {
    collResult_t r = joinComm(&comm, rank, nranks);
    if (r != collSuccess)
      fprintf(stderr, "rank %d: collCommInit: %s: %s\n", rank, collGetErrorString(r),
              collGetLastError(nullptr));
    ok = everyone(r == collSuccess);
  }
  if (ok)
    ok = everyone(allreduce(comm, rank, nranks));
  if (comm)
    collCommDestroy(comm);
  if (ok && rank == 0)
    printf("allreduce of %zu floats on %d ranks: correct\n", kCount, nranks);
  leaveRanks();
  return ok ? 0 : 1;
}
