//===- CudaDriver.h - Whether this machine has a usable CUDA driver -------===//
#ifndef COLLRT_CUDADRIVER_H
#define COLLRT_CUDADRIVER_H

#include <string>

namespace collrt {

struct CudaApi;

/// Opens the driver library at `path` (libcuda.so.1 where empty), resolves
/// every call collrt makes and initialises it. Null where any of that
/// fails, with the reason in `error`; the caller owns the result.
const CudaApi *loadCudaDriver(const std::string &path, std::string &error);

/// The process's driver, loaded once from COLL_CUDA_LIBRARY (or
/// libcuda.so.1); null, with the same reason at every call, where none is
/// usable.
const CudaApi *cudaDriver(std::string &error);

/// The PCI bus id of the calling thread's GPU, as cuDeviceGetPCIBusId writes
/// it ("0000:3B:00.0"); empty where there is no driver or no CUDA context.
std::string currentGpuPciBusId();

/// The calling thread's CUDA context; null where it has none, or where the
/// process has not loaded the driver (then no thread has one: asking loads
/// nothing).
void *currentCudaContext();

/// Makes `context` the calling thread's current one for its lifetime, and
/// the one before current again at its end: a communicator's calls run on
/// the GPU it was made on, whatever the caller has current then, as NCCL's
/// do. Nothing where `context` is null or current already.
class ContextScope {
public:
  explicit ContextScope(void *context);
  ~ContextScope();
  ContextScope(const ContextScope &) = delete;
  ContextScope &operator=(const ContextScope &) = delete;

private:
  void *before = nullptr;
  bool changed = false;
};

} // namespace collrt

#endif // COLLRT_CUDADRIVER_H
