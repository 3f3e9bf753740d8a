//===- CudaApi.h - The CUDA driver calls collrt makes, loaded at run time --===//
//
// collrt never links libcuda: it opens it with dlopen on first use, so that
// the library loads, and the host emulation runs, on machines without an
// NVIDIA driver. Only the files that make CUDA calls include this header
// (it brings <cuda.h>); the rest of the runtime sees CudaDriver.h.
//
//===----------------------------------------------------------------------===//
#ifndef COLLRT_CUDAAPI_H
#define COLLRT_CUDAAPI_H

#include <cuda.h>

#include <string>

// Every call collrt makes. Each is resolved with cuGetProcAddress at the ABI
// of kCudaAbi (CUDA 12.0), as NCCL resolves its calls, never by symbol
// name: the driver then hands out the version of each call that matches
// these prototypes, whichever toolkit collrt was built with and however
// new the driver is. The prototypes of these calls are the same in 12.0's
// <cuda.h> and 13's; cuStreamGetCaptureInfo, which is not, has its own
// field below.
// clang-format off
#define COLLRT_CUDA_CALLS(X)           \
  X(cuInit)                            \
  X(cuGetErrorName)                    \
  X(cuDriverGetVersion)                \
  X(cuDeviceGetCount)                  \
  X(cuCtxGetDevice)                    \
  X(cuDeviceGetAttribute)              \
  X(cuDeviceCanAccessPeer)             \
  X(cuMemGetAllocationGranularity)     \
  X(cuMemCreate)                       \
  X(cuMemRelease)                      \
  X(cuMemAddressReserve)               \
  X(cuMemAddressFree)                  \
  X(cuMemMap)                          \
  X(cuMemUnmap)                        \
  X(cuMemSetAccess)                    \
  X(cuMemExportToShareableHandle)      \
  X(cuMemImportFromShareableHandle)    \
  X(cuMemAlloc)                        \
  X(cuMemFree)                         \
  X(cuMemAllocAsync)                   \
  X(cuMemFreeAsync)                    \
  X(cuMemHostAlloc)                    \
  X(cuMemHostGetDevicePointer)         \
  X(cuMemFreeHost)                     \
  X(cuMemHostRegister)                 \
  X(cuMemHostUnregister)               \
  X(cuMemcpyHtoDAsync)                 \
  X(cuMemcpyDtoDAsync)                 \
  X(cuMemsetD8Async)                   \
  X(cuCtxSynchronize)                  \
  X(cuStreamCreate)                    \
  X(cuStreamSynchronize)               \
  X(cuStreamDestroy)                   \
  X(cuEventCreate)                     \
  X(cuEventRecord)                     \
  X(cuEventSynchronize)                \
  X(cuStreamWaitEvent)                 \
  X(cuEventDestroy)                    \
  X(cuStreamIsCapturing)               \
  X(cuThreadExchangeStreamCaptureMode) \
  X(cuUserObjectCreate)                \
  X(cuUserObjectRelease)               \
  X(cuGraphRetainUserObject)
// clang-format on

// Calls that older drivers lack, resolved at kCudaOptionalAbi (CUDA 12.1):
// null there, and collrt does without them (NVLink multicast came with
// CUDA 12.1, dma-buf export with 11.7). The last three every driver has,
// but collrt does without them too: without the GPU's PCI bus id the ib
// transport picks its NIC blind, and without the context calls it takes
// no dma-buf (CudaMemory.cpp).
// clang-format off
#define COLLRT_CUDA_OPTIONAL_CALLS(X) \
  X(cuMulticastGetGranularity)        \
  X(cuMulticastCreate)                \
  X(cuMulticastAddDevice)             \
  X(cuMulticastBindMem)               \
  X(cuMulticastUnbind)                \
  X(cuMemGetHandleForAddressRange)    \
  X(cuFlushGPUDirectRDMAWrites)        \
  X(cuDeviceGetPCIBusId)               \
  X(cuDeviceGetByPCIBusId)             \
  X(cuCtxGetCurrent)                   \
  X(cuCtxSetCurrent)
// clang-format on

namespace collrt {

constexpr int kCudaAbi = 12000, kCudaOptionalAbi = 12010;

struct CudaApi {
#define COLLRT_CUDA_FIELD(name) decltype(&::name) name = nullptr;
  COLLRT_CUDA_CALLS(COLLRT_CUDA_FIELD)
  COLLRT_CUDA_OPTIONAL_CALLS(COLLRT_CUDA_FIELD)
#undef COLLRT_CUDA_FIELD
  /// cuStreamGetCaptureInfo as CUDA 12.0 defines it (its _v2): CUDA 12.3
  /// added edge data (_v3), which 13's <cuda.h> makes the default and which
  /// drivers before 12.3 lack.
  CUresult (*cuStreamGetCaptureInfo_v2)(CUstream, CUstreamCaptureStatus *, cuuint64_t *, CUgraph *,
                                        const CUgraphNode **, size_t *) = nullptr;

  /// The calling thread's device; false, saying why, where it has no
  /// CUDA context.
  bool currentDevice(CUdevice &device, std::string &error) const {
    if (CUresult c = cuCtxGetDevice(&device)) {
      error = describe("cuCtxGetDevice", c) + " (call cudaSetDevice before collrt)";
      return false;
    }
    return true;
  }

  /// "cuMemCreate: CUDA_ERROR_OUT_OF_MEMORY", for collUnhandledCudaError.
  std::string describe(const char *call, CUresult r) const {
    const char *name = nullptr;
    if (!cuGetErrorName || cuGetErrorName(r, &name) != CUDA_SUCCESS || !name)
      return std::string(call) + ": CUDA error " + std::to_string(int(r));
    return std::string(call) + ": " + name;
  }
};

} // namespace collrt

#endif // COLLRT_CUDAAPI_H
