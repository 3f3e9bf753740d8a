//===- Memory.h - Allocations that peers can map ---------------------------===//
//
// collMemAlloc hands out memory that a window can share. On the host it is
// a memfd, which a peer on the same machine maps after receiving the
// descriptor, as a CUDA VMM allocation is exported as a POSIX fd; this file
// remembers each allocation so that registration can find the descriptor
// behind a pointer.
//
//===----------------------------------------------------------------------===//
#ifndef COLLRT_MEMORY_H
#define COLLRT_MEMORY_H

#include <cstddef>

namespace collrt {

struct Allocation {
  char *base = nullptr;
  size_t size = 0;
  int fd = -1; // owned by the allocation: dup it to keep it
};

/// The collMemAlloc allocation that holds all of [p, p + bytes), if any.
bool findAllocation(const void *p, size_t bytes, Allocation &out);

} // namespace collrt

#endif // COLLRT_MEMORY_H
