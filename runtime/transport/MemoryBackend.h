//===- MemoryBackend.h - What windows are made of -------------------------===//
//
// One interface for the memory of windows, and three implementations: host
// memfds (HostMemory.cpp), CUDA VMM allocations exported as POSIX fds
// (CudaMemory.cpp), and host memfds pinned for the GPU (PinnedMemory.cpp).
// All hand a peer on the same machine a descriptor that
// it imports and maps, so the transports' connection logic is one, and the
// host runs it in every test.
//
//===----------------------------------------------------------------------===//
#ifndef COLLRT_MEMORYBACKEND_H
#define COLLRT_MEMORYBACKEND_H

#include "collrt.h"

#include <cstddef>
#include <cstdint>
#include <string>

namespace collrt {

/// Bytes that name an allocation to a process on another host of one
/// NVLink domain, who imports it without a descriptor: a CUDA fabric
/// handle (CUmemFabricHandle is 64 bytes).
struct FabricHandle {
  unsigned char bytes[64] = {};
};

/// Memory mapped in this process: an allocation of this rank's or one
/// imported from a peer.
struct Region {
  char *base = nullptr;
  size_t size = 0;
  int fd = -1;         // what a peer imports; -1 once closed
  uint64_t handle = 0; // the backend's own (a CUDA allocation handle)
};

class MemoryBackend {
public:
  virtual ~MemoryBackend() = default;
  virtual const char *name() const = 0;
  /// Whether this process's threads can read and write it, as a proxy
  /// thread must.
  virtual bool hostAccessible() const { return true; }
  /// At least `bytes` of zeroed memory, mapped here, and its descriptor.
  virtual collResult_t allocate(size_t bytes, Region &out, std::string &error) const = 0;
  /// Maps the `bytes` of a peer's allocation that `fd` names; the caller
  /// keeps `fd`.
  virtual collResult_t import(int fd, size_t bytes, Region &out, std::string &error) const = 0;
  /// Unmaps a region, closes its descriptor, and leaves it empty.
  virtual void unmap(Region &region) const = 0;
  /// A dma-buf descriptor of `region`, for an RDMA NIC to register memory
  /// that no host address reaches (the caller closes it); -1, saying why,
  /// where there is none. Host memory is registered by its address instead.
  virtual int dmabuf(const Region & /*region*/, std::string &error) const {
    error = std::string(name()) + " memory exports no dma-buf";
    return -1;
  }
  /// The fabric handle of `region`, this rank's allocation; false, saying
  /// why, where the memory has none.
  virtual bool exportFabric(const Region & /*region*/, FabricHandle & /*handle*/,
                            std::string &error) const {
    error = std::string(name()) + " memory has no fabric handles";
    return false;
  }
  /// Maps the `bytes` of a peer's allocation that `handle` names.
  virtual collResult_t importFabric(const FabricHandle & /*handle*/, size_t /*bytes*/,
                                    Region & /*out*/, std::string &error) const {
    error = std::string(name()) + " memory has no fabric handles";
    return collInvalidUsage;
  }
  /// Makes what a NIC wrote into this memory visible to the GPU before a
  /// flag in other memory says that it is there, as NCCL flushes after a
  /// GPUDirect receive. Memory that kernels do not read needs nothing.
  /// Called from a proxy thread; false, saying why, where it failed.
  virtual bool flushWrites(std::string & /*error*/) const { return true; }
};

/// memfds and mmap.
const MemoryBackend &hostMemory();
/// CUDA VMM memory on the calling thread's current device; null, with the
/// reason, where the driver is not usable.
const MemoryBackend *cudaMemory(std::string &error);
/// CUDA VMM memory where the calling thread has a current CUDA context (the
/// application has called cudaSetDevice), else null: what collMemAlloc
/// hands out, as ncclMemAlloc does, and host memory for the emulation.
const MemoryBackend *currentGpuMemory();
/// memfds pinned and mapped for the calling thread's GPU, at the same
/// address there: the FIFOs of GPU plans whose ranks span machines, which
/// a proxy thread and the kernels both reach. Null, with the reason, where
/// the driver is not usable or the GPU cannot use host addresses.
const MemoryBackend *pinnedMemory(std::string &error);

} // namespace collrt

#endif // COLLRT_MEMORYBACKEND_H
