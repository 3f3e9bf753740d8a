//===- PinnedMemory.cpp - Host windows that the GPU reaches ---------------===//
//
// Where a GPU plan's ranks span machines, a proxy thread must read what the
// kernels send and write what they receive. Without GPUDirect RDMA that
// memory is the host's, as NCCL's net transport keeps its buffers when the
// NIC cannot reach the GPU: memfds as in HostMemory.cpp (so shm still shares
// them between processes of one machine), each mapping pinned and mapped
// for the GPU with cuMemHostRegister. The kernels use the host address
// itself, which needs a GPU whose driver gives registered memory the same
// address on both sides.
//
//===----------------------------------------------------------------------===//
#include "transport/MemoryBackend.h"

#include "support/CudaDriver.h"

#if __has_include(<cuda.h>)
#include "support/CudaApi.h"

using namespace collrt;

namespace {

class PinnedMemory : public MemoryBackend {
public:
  explicit PinnedMemory(const CudaApi &cu) : cu(cu) {}
  const char *name() const override { return "pinned"; }

  collResult_t allocate(size_t bytes, Region &out, std::string &error) const override {
    if (collResult_t r = hostMemory().allocate(bytes, out, error))
      return r;
    return pin(out, error);
  }

  collResult_t import(int fd, size_t bytes, Region &out, std::string &error) const override {
    if (collResult_t r = hostMemory().import(fd, bytes, out, error))
      return r;
    return pin(out, error);
  }

  void unmap(Region &r) const override {
    if (r.base)
      cu.cuMemHostUnregister(r.base);
    hostMemory().unmap(r);
  }

private:
  collResult_t pin(Region &r, std::string &error) const {
    CUresult c = cu.cuMemHostRegister(r.base, r.size,
                                      CU_MEMHOSTREGISTER_PORTABLE | CU_MEMHOSTREGISTER_DEVICEMAP);
    if (c == CUDA_SUCCESS)
      return collSuccess;
    error = cu.describe("cuMemHostRegister", c) + " (pinning " + std::to_string(r.size) +
            " bytes of FIFOs for the GPU)";
    hostMemory().unmap(r);
    return collUnhandledCudaError;
  }

  const CudaApi &cu;
};

} // namespace

const MemoryBackend *collrt::pinnedMemory(std::string &error) {
  const CudaApi *cu = cudaDriver(error);
  if (!cu)
    return nullptr;
  CUdevice device;
  int same = 0;
  if (!cu->currentDevice(device, error))
    return nullptr;
  if (CUresult c = cu->cuDeviceGetAttribute(
          &same, CU_DEVICE_ATTRIBUTE_CAN_USE_HOST_POINTER_FOR_REGISTERED_MEM, device)) {
    error = cu->describe("cuDeviceGetAttribute", c);
    return nullptr;
  }
  if (!same) {
    error = "this GPU cannot use host addresses of registered memory, which its FIFOs to "
            "other machines need";
    return nullptr;
  }
  static const PinnedMemory memory(*cu);
  return &memory;
}

#else

const collrt::MemoryBackend *collrt::pinnedMemory(std::string &error) {
  collrt::cudaDriver(error); // says why: built without the CUDA headers
  return nullptr;
}

#endif
