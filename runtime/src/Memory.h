//===- Memory.h - Allocations that peers can map ---------------------------===//
//
// collMemAlloc hands out memory that a window can share: CUDA VMM memory
// exported as a POSIX fd where the calling thread has a CUDA context, else
// (the host emulation) a memfd; a peer on the same machine maps either
// after receiving the descriptor. This file remembers each allocation so
// that registration can find the descriptor behind a pointer.
//
//===----------------------------------------------------------------------===//
#ifndef COLLRT_MEMORY_H
#define COLLRT_MEMORY_H

#include <cstddef>
#include <cstdint>

namespace collrt {

class MemoryBackend;

struct Allocation {
  char *base = nullptr;
  size_t size = 0;
  int fd = -1;                           // owned by the allocation: dup it to keep it
  uint64_t handle = 0;                   // the backend's (a CUDA allocation handle)
  const MemoryBackend *memory = nullptr; // null: host memory
  int windows = 0;                       // registered windows on it: collMemFree refuses then
};

/// The collMemAlloc allocation that holds all of [p, p + bytes), if any.
bool findAllocation(const void *p, size_t bytes, Allocation &out);

/// Counts a window registered on the allocation at `base` (+1) or released
/// (-1).
void holdAllocation(const void *base, int windows);

} // namespace collrt

#endif // COLLRT_MEMORY_H
