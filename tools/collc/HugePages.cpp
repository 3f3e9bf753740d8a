//===- HugePages.cpp - collc's heap on transparent huge pages -------------===//
#include "HugePages.h"

#include <climits>
#include <cstdint>
#include <cstdlib>
#include <malloc.h>
#include <pthread.h>
#include <sched.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23 // Linux 5.14
#endif

namespace {

constexpr uintptr_t kHuge = uintptr_t(2) << 20;

uintptr_t programBreak() { return uintptr_t(syscall(SYS_brk, 0)); }

/// Advises the heap for huge pages up to the program break, 2 MiB at a
/// time, as glibc moves the break on; past the first 128 MiB (a large
/// compile) also faults the pages in, so that the kernel zeroes them here
/// rather than in the compiler's thread. Stops where the kernel refuses.
void *faultAhead(void *from) {
  const uintptr_t start = reinterpret_cast<uintptr_t>(from), eager = start + (128 << 20);
  uintptr_t next = start;
  const timespec pause = {0, 500'000};
  for (;;) {
    if (next + kHuge > programBreak()) {
      nanosleep(&pause, nullptr);
      continue;
    }
    void *page = reinterpret_cast<void *>(next);
    if (madvise(page, kHuge, MADV_HUGEPAGE) != 0 ||
        (next >= eager && madvise(page, kHuge, MADV_POPULATE_WRITE) != 0))
      return nullptr;
    next += kHuge;
  }
}

/// Starts faultAhead where a second CPU can run it.
bool startFaultAhead(uintptr_t from) {
  cpu_set_t cpus;
  if (sched_getaffinity(0, sizeof(cpus), &cpus) != 0 || CPU_COUNT(&cpus) < 2)
    return false;
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
  pthread_attr_setstacksize(&attr, 64 << 10);
  pthread_t thread;
  bool started = pthread_create(&thread, &attr, faultAhead, reinterpret_cast<void *>(from)) == 0;
  pthread_attr_destroy(&attr);
  return started;
}

} // namespace

void collc::adviseHugeHeap() {
  mallopt(M_TRIM_THRESHOLD, INT_MAX);
  mallopt(M_MMAP_THRESHOLD, 32 << 20); // glibc's largest
  const uintptr_t start = programBreak();
  const uintptr_t from = (start + kHuge - 1) & ~(kHuge - 1);
  // With a second CPU, glibc moves the break 64 MiB at a time and a thread
  // of ours faults the pages in before the compiler reaches them.
  mallopt(M_TOP_PAD, 64 << 20);
  if (startFaultAhead(from))
    return;
  // Else one step of 2 GiB, advised at once.
  mallopt(M_TOP_PAD, INT_MAX & ~int(kHuge - 1));
  // More than the heap has left, so that it takes its first step now
  // (volatile: a compiler drops a malloc whose block nobody uses).
  void *volatile first = malloc(16 << 20);
  free(first);
  const uintptr_t end = programBreak() & ~(kHuge - 1);
  if (end > from) // a hint: where the kernel has THP off, nothing changes
    madvise(reinterpret_cast<void *>(from), end - from, MADV_HUGEPAGE);
}
