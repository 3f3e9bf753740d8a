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

// Every call, by the name <cuda.h> gives it (cuMemsetD8 is cuMemsetD8_v2
// there, and so in libcuda's symbol table).
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
  X(cuMemsetD8)                        \
  X(cuMemAlloc)                        \
  X(cuMemFree)                         \
  X(cuMemHostAlloc)                    \
  X(cuMemHostGetDevicePointer)         \
  X(cuMemFreeHost)                     \
  X(cuMemHostRegister)                 \
  X(cuMemHostUnregister)               \
  X(cuMemcpyHtoDAsync)                 \
  X(cuMemcpyDtoDAsync)                 \
  X(cuMemsetD8Async)                   \
  X(cuCtxSynchronize)                  \
  X(cuEventCreate)                     \
  X(cuEventRecord)                     \
  X(cuEventSynchronize)                \
  X(cuEventDestroy)                    \
  X(cuStreamIsCapturing)               \
  X(cuStreamGetCaptureInfo)            \
  X(cuThreadExchangeStreamCaptureMode) \
  X(cuUserObjectCreate)                \
  X(cuUserObjectRelease)               \
  X(cuGraphRetainUserObject)
// clang-format on

// Calls that older drivers lack: null there, and collrt does without them
// (NVLink multicast came with CUDA 12.1, dma-buf export with 11.7).
// clang-format off
#define COLLRT_CUDA_OPTIONAL_CALLS(X) \
  X(cuMulticastGetGranularity)        \
  X(cuMulticastCreate)                \
  X(cuMulticastAddDevice)             \
  X(cuMulticastBindMem)               \
  X(cuMulticastUnbind)                \
  X(cuMemGetHandleForAddressRange)    \
  X(cuFlushGPUDirectRDMAWrites)
// clang-format on

namespace collrt {

struct CudaApi {
#define COLLRT_CUDA_FIELD(name) decltype(&::name) name = nullptr;
  COLLRT_CUDA_CALLS(COLLRT_CUDA_FIELD)
  COLLRT_CUDA_OPTIONAL_CALLS(COLLRT_CUDA_FIELD)
#undef COLLRT_CUDA_FIELD

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
