//===- HugePages.cpp - collc's heap on transparent huge pages -------------===//
#include "HugePages.h"

#include <climits>
#include <cstdint>
#include <cstdlib>
#include <malloc.h>
#include <sys/mman.h>
#include <unistd.h>

void collc::adviseHugeHeap() {
  constexpr uintptr_t kHuge = uintptr_t(2) << 20;
  mallopt(M_TOP_PAD, INT_MAX & ~int(kHuge - 1));
  mallopt(M_TRIM_THRESHOLD, INT_MAX);
  mallopt(M_MMAP_THRESHOLD, 32 << 20); // glibc's largest
  const uintptr_t start = reinterpret_cast<uintptr_t>(sbrk(0));
  // More than the heap has left, so that it takes its first step now
  // (volatile: a compiler drops a malloc whose block nobody uses).
  void *volatile first = malloc(16 << 20);
  free(first);
  const uintptr_t from = (start + kHuge - 1) & ~(kHuge - 1),
                  end = reinterpret_cast<uintptr_t>(sbrk(0)) & ~(kHuge - 1);
  if (end > from) // a hint: where the kernel has THP off, nothing changes
    madvise(reinterpret_cast<void *>(from), end - from, MADV_HUGEPAGE);
}
