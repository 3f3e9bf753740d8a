//===- CudaMemory.cpp - Windows in GPU memory (CUDA VMM) ------------------===//
//
// cuMemCreate with POSIX-fd handles, mapped at an address range of our own
// and opened to this device; exported as a descriptor that shm passes to
// peers over its Unix sockets, as it passes memfds, and imported there
// with cuMemImportFromShareableHandle. A peer maps the allocation for its
// own device: over NVLink or PCIe P2P where the GPUs differ, plainly where
// ranks share one GPU. Where the device offers fabric handles, allocations
// carry one too, which ranks on other hosts of one NVLink domain (MNNVL)
// import without a descriptor (Nvl.cpp). An RDMA NIC registers the memory
// through a dma-buf (cuMemGetHandleForAddressRange), and
// cuFlushGPUDirectRDMAWrites orders what the NIC wrote before the flags
// that the proxy raises after it: on the proxy's thread, which has no
// context of its own, in the context current where the dma-buf was made.
// Allocations are GPUDirect RDMA capable where the device allows it, as
// NCCL makes them, so that a NIC can register them.
//
//===----------------------------------------------------------------------===//
#include "transport/MemoryBackend.h"

#include "support/CudaDriver.h"

#include <algorithm>
#include <atomic>
#include <cstring>
#include <unistd.h>

#if __has_include(<cuda.h>)
#include "support/CudaApi.h"

using namespace collrt;

namespace {

class CudaMemory : public MemoryBackend {
public:
  explicit CudaMemory(const CudaApi &cu) : cu(cu) {}
  const char *name() const override { return "cuda"; }
  bool hostAccessible() const override { return false; }

  collResult_t allocate(size_t bytes, Region &out, std::string &error) const override {
    CUmemAllocationProp prop;
    size_t granularity;
    if (collResult_t r = properties(prop, granularity, error))
      return r;
    bytes = (std::max<size_t>(bytes, 1) + granularity - 1) / granularity * granularity;
    CUmemGenericAllocationHandle handle;
    CUresult made = cu.cuMemCreate(&handle, bytes, &prop, 0);
    // A device may offer fabric handles that this node cannot make (no
    // IMEX channel): then plain descriptors, as NCCL falls back.
    if (made != CUDA_SUCCESS &&
        prop.requestedHandleTypes != CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR) {
      prop.requestedHandleTypes = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
      made = cu.cuMemCreate(&handle, bytes, &prop, 0);
    }
    if (made != CUDA_SUCCESS)
      return failed("cuMemCreate", made, error);
    int fd = -1;
    if (CUresult c = cu.cuMemExportToShareableHandle(&fd, handle,
                                                     CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0)) {
      cu.cuMemRelease(handle);
      return failed("cuMemExportToShareableHandle", c, error);
    }
    collResult_t r = map(handle, bytes, prop.location, granularity, out, error);
    if (r == collSuccess && (r = zero(out, error)) != collSuccess)
      unmap(out);
    if (r != collSuccess) {
      close(fd);
      return r;
    }
    out.fd = fd;
    return collSuccess;
  }

  collResult_t import(int fd, size_t bytes, Region &out, std::string &error) const override {
    CUmemAllocationProp prop;
    size_t granularity;
    if (collResult_t r = properties(prop, granularity, error))
      return r;
    CUmemGenericAllocationHandle handle;
    if (CUresult c =
            cu.cuMemImportFromShareableHandle(&handle, reinterpret_cast<void *>(intptr_t(fd)),
                                              CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR))
      return failed("cuMemImportFromShareableHandle", c, error);
    return map(handle, bytes, prop.location, granularity, out, error);
  }

  void unmap(Region &r) const override {
    if (r.base) {
      cu.cuMemUnmap(CUdeviceptr(r.base), r.size);
      cu.cuMemAddressFree(CUdeviceptr(r.base), r.size);
    }
    if (r.handle)
      cu.cuMemRelease(CUmemGenericAllocationHandle(r.handle));
    if (r.fd >= 0)
      close(r.fd);
    r = Region{};
  }

  bool exportFabric(const Region &r, FabricHandle &h, std::string &error) const override {
    CUmemFabricHandle fabric;
    static_assert(sizeof fabric == sizeof h.bytes, "a fabric handle is 64 bytes");
    if (CUresult c = cu.cuMemExportToShareableHandle(
            &fabric, CUmemGenericAllocationHandle(r.handle), CU_MEM_HANDLE_TYPE_FABRIC, 0)) {
      error = cu.describe("cuMemExportToShareableHandle", c) +
              " (a fabric handle: the GPU or node offers none)";
      return false;
    }
    memcpy(h.bytes, &fabric, sizeof h.bytes);
    return true;
  }

  collResult_t importFabric(const FabricHandle &h, size_t bytes, Region &out,
                            std::string &error) const override {
    CUmemAllocationProp prop;
    size_t granularity;
    if (collResult_t r = properties(prop, granularity, error))
      return r;
    CUmemFabricHandle fabric;
    memcpy(&fabric, h.bytes, sizeof h.bytes);
    CUmemGenericAllocationHandle handle;
    if (CUresult c = cu.cuMemImportFromShareableHandle(&handle, &fabric, CU_MEM_HANDLE_TYPE_FABRIC))
      return failed("cuMemImportFromShareableHandle", c, error);
    return map(handle, bytes, prop.location, granularity, out, error);
  }

  int dmabuf(const Region &r, std::string &error) const override {
    int supported = 0;
    CUdevice device;
    if (!cu.cuMemGetHandleForAddressRange || !cu.cuFlushGPUDirectRDMAWrites ||
        !cu.cuCtxGetCurrent || !cu.cuCtxSetCurrent) {
      error = "the CUDA driver exports no dma-buf (CUDA 11.7 or later does)";
      return -1;
    }
    if (!cu.currentDevice(device, error))
      return -1;
    CUcontext current = nullptr;
    if (CUresult c = cu.cuCtxGetCurrent(&current)) {
      error = cu.describe("cuCtxGetCurrent", c);
      return -1;
    }
    context.store(current, std::memory_order_release);
    if (CUresult c =
            cu.cuDeviceGetAttribute(&supported, CU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED, device)) {
      error = cu.describe("cuDeviceGetAttribute", c);
      return -1;
    }
    if (!supported) {
      error = "this GPU or its kernel driver exports no dma-buf";
      return -1;
    }
    int fd = -1;
    if (CUresult c = cu.cuMemGetHandleForAddressRange(&fd, CUdeviceptr(r.base), r.size,
                                                      CU_MEM_RANGE_HANDLE_TYPE_DMA_BUF_FD, 0)) {
      error = cu.describe("cuMemGetHandleForAddressRange", c);
      return -1;
    }
    return fd;
  }

  // The flush targets the current context, which a proxy thread lacks
  // until it is given the one its memory lives in.
  bool flushWrites(std::string &error) const override {
    CUcontext want = context.load(std::memory_order_acquire), current = nullptr;
    if (cu.cuCtxGetCurrent(&current) != CUDA_SUCCESS || current != want) {
      if (CUresult c = cu.cuCtxSetCurrent(want)) {
        error = cu.describe("cuCtxSetCurrent", c);
        return false;
      }
    }
    if (CUresult c =
            cu.cuFlushGPUDirectRDMAWrites(CU_FLUSH_GPU_DIRECT_RDMA_WRITES_TARGET_CURRENT_CTX,
                                          CU_FLUSH_GPU_DIRECT_RDMA_WRITES_TO_OWNER)) {
      error = cu.describe("cuFlushGPUDirectRDMAWrites", c);
      return false;
    }
    return true;
  }

private:
  collResult_t failed(const char *call, CUresult c, std::string &error) const {
    error = cu.describe(call, c);
    return collUnhandledCudaError;
  }

  // Zeroes a new region completely before any peer can see it: a peer's
  // first writes must not be wiped by a memset still in flight. A stream of
  // its own, non-blocking, so that neither a capture on a blocking stream
  // (where the legacy stream's cuMemsetD8 is illegal) nor a kernel spinning
  // on the legacy stream holds it up.
  collResult_t zero(const Region &r, std::string &error) const {
    CUstream stream;
    if (CUresult c = cu.cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING))
      return failed("cuStreamCreate", c, error);
    const char *call = "cuMemsetD8Async";
    CUresult c = cu.cuMemsetD8Async(CUdeviceptr(r.base), 0, r.size, stream);
    if (c == CUDA_SUCCESS) {
      call = "cuStreamSynchronize";
      c = cu.cuStreamSynchronize(stream);
    }
    cu.cuStreamDestroy(stream);
    return c == CUDA_SUCCESS ? collSuccess : failed(call, c, error);
  }

  // Device memory of the current context's device, exportable as an fd,
  // and as a fabric handle where the device offers them.
  collResult_t properties(CUmemAllocationProp &prop, size_t &granularity,
                          std::string &error) const {
    CUdevice device;
    if (!cu.currentDevice(device, error))
      return collUnhandledCudaError;
    prop = CUmemAllocationProp{};
    prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
    prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    prop.location.id = device;
    prop.requestedHandleTypes = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
    // Else a NIC may fail to register it through its dma-buf.
    int rdma = 0;
    if (cu.cuDeviceGetAttribute(&rdma, CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_WITH_CUDA_VMM_SUPPORTED,
                                device) == CUDA_SUCCESS &&
        rdma)
      prop.allocFlags.gpuDirectRDMACapable = 1;
    int fabric = 0;
    if (cu.cuDeviceGetAttribute(&fabric, CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_FABRIC_SUPPORTED,
                                device) == CUDA_SUCCESS &&
        fabric)
      prop.requestedHandleTypes = CUmemAllocationHandleType(
          CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR | CU_MEM_HANDLE_TYPE_FABRIC);
    if (CUresult c = cu.cuMemGetAllocationGranularity(&granularity, &prop,
                                                      CU_MEM_ALLOC_GRANULARITY_RECOMMENDED))
      return failed("cuMemGetAllocationGranularity", c, error);
    return collSuccess;
  }

  // Maps `handle` (which the region then owns) at an address range of its
  // own, readable and writable from `device`.
  collResult_t map(CUmemGenericAllocationHandle handle, size_t bytes, CUmemLocation device,
                   size_t granularity, Region &out, std::string &error) const {
    CUdeviceptr at = 0;
    if (CUresult c = cu.cuMemAddressReserve(&at, bytes, granularity, 0, 0)) {
      cu.cuMemRelease(handle);
      return failed("cuMemAddressReserve", c, error);
    }
    CUresult c = cu.cuMemMap(at, bytes, 0, handle, 0);
    const char *call = "cuMemMap";
    if (c == CUDA_SUCCESS) {
      CUmemAccessDesc access{};
      access.location = device;
      access.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
      c = cu.cuMemSetAccess(at, bytes, &access, 1);
      call = "cuMemSetAccess";
      if (c != CUDA_SUCCESS)
        cu.cuMemUnmap(at, bytes);
    }
    if (c != CUDA_SUCCESS) {
      cu.cuMemAddressFree(at, bytes);
      cu.cuMemRelease(handle);
      return failed(call, c, error);
    }
    out = Region{reinterpret_cast<char *>(at), bytes, -1, uint64_t(handle)};
    return collSuccess;
  }

  const CudaApi &cu;
  // The context that dmabuf() found current: the memory's, which flushes
  // need. One per process, as collrt serves one GPU per process.
  mutable std::atomic<CUcontext> context{nullptr};
};

} // namespace

const MemoryBackend *collrt::cudaMemory(std::string &error) {
  const CudaApi *cu = cudaDriver(error);
  if (!cu)
    return nullptr;
  static const CudaMemory memory(*cu);
  return &memory;
}

const MemoryBackend *collrt::currentGpuMemory() {
  std::string why;
  const CudaApi *cu = cudaDriver(why);
  CUdevice device;
  if (!cu || cu->cuCtxGetDevice(&device) != CUDA_SUCCESS)
    return nullptr;
  return cudaMemory(why);
}

#else

const collrt::MemoryBackend *collrt::cudaMemory(std::string &error) {
  collrt::cudaDriver(error); // says why: built without the CUDA headers
  return nullptr;
}
const collrt::MemoryBackend *collrt::currentGpuMemory() { return nullptr; }

#endif
