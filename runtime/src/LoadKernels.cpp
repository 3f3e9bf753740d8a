//===- LoadKernels.cpp - Modules loaded before any kernel can spin --------===//
//
// CUDA loads a module at its kernel's first launch by default (lazy
// loading, 12.2 on), and loading may wait for the whole device: behind a
// kernel of this process that waits for a peer whose launch comes after
// ours, it hangs. Registration loads an algorithm's kernels, as does its
// first launch where nothing registered it (NCCL loads its own at init).
//
//===----------------------------------------------------------------------===//
#include "src/Comm.h"
#include "src/GpuLaunch.h"

#include <mutex>
#include <set>

using namespace collrt;

collResult_t collrt::loadKernels(collComm *comm, const collc::AlgorithmDesc *alg) {
  static std::mutex lock;
  static std::set<const collc::AlgorithmDesc *> loaded;
  std::lock_guard<std::mutex> held(lock);
  if (loaded.count(alg))
    return collSuccess;
  for (int32_t p = 0; p < alg->numPlans; ++p) {
    const collc::PlanDesc &plan = alg->plans[p];
    for (int32_t k = -1; k < plan.numTyped; ++k) {
      const collc::CudaEntry &entry = k < 0 ? plan.cuda : plan.typed[k].cuda;
      if (!entry.load)
        continue;
      if (const char *e = entry.load())
        return comm->fail(collUnhandledCudaError,
                          std::string("loading the kernels of plan ") + plan.name + ": " + e);
    }
  }
  loaded.insert(alg);
  return collSuccess;
}
