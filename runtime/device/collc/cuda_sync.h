//===- cuda_sync.h - Counters, fences and waits on the GPU ----------------===//
//
// The memory operations the protocols synchronize with, and the one way a
// thread waits: polls that give up, naming themselves in Args::error, once
// the communicator is aborted or the wait outlasts Args::timeoutSeconds.
//
//===----------------------------------------------------------------------===//

#ifndef COLLC_DEVICE_CUDA_SYNC_H
#define COLLC_DEVICE_CUDA_SYNC_H

#include "collrt.h"

#include <stdint.h>

#define COLLC_DI __device__ __forceinline__

namespace collc {
namespace cuda {

// Counters and flags: relaxed polls, then a fence, make an acquire.
COLLC_DI uint64_t loadSys(const uint64_t *p) {
  uint64_t v;
  asm volatile("ld.relaxed.sys.global.u64 %0, [%1];" : "=l"(v) : "l"(p) : "memory");
  return v;
}
COLLC_DI uint64_t loadGpu(const uint64_t *p) {
  uint64_t v;
  asm volatile("ld.relaxed.gpu.global.u64 %0, [%1];" : "=l"(v) : "l"(p) : "memory");
  return v;
}
COLLC_DI void fenceSys() { asm volatile("fence.acq_rel.sys;" ::: "memory"); }
COLLC_DI void fenceGpu() { asm volatile("fence.acq_rel.gpu;" ::: "memory"); }
COLLC_DI void storeSys(uint64_t *p, uint64_t v) {
  asm volatile("st.relaxed.sys.global.u64 [%0], %1;" ::"l"(p), "l"(v) : "memory");
}
COLLC_DI void releaseSys(uint64_t *p, uint64_t v) {
  asm volatile("st.release.sys.global.u64 [%0], %1;" ::"l"(p), "l"(v) : "memory");
}
COLLC_DI void releaseGpu(uint64_t *p, uint64_t v) {
  asm volatile("st.release.gpu.global.u64 [%0], %1;" ::"l"(p), "l"(v) : "memory");
}
COLLC_DI uint64_t globalTimer() {
  uint64_t t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

// Appends to Args::errorText (256 bytes, NUL-terminated).
struct Text {
  char *p;
  int n = 0;
  __device__ Text &operator<<(const char *s) {
    while (*s && n < 255)
      p[n++] = *s++;
    p[n] = 0;
    return *this;
  }
  __device__ Text &operator<<(uint64_t v) {
    char d[20];
    int k = 0;
    do
      d[k++] = char('0' + v % 10);
    while (v /= 10);
    while (k && n < 255)
      p[n++] = d[--k];
    p[n] = 0;
    return *this;
  }
};

// What a wait does every 1024 polls: gives up, returning kGaveUp, once the
// communicator is aborted or the wait has outlasted Args::timeoutSeconds;
// the first failure of a launch names itself in Args::error and errorText,
// as collcHostWait does. Returns when the wait began (globaltimer).
constexpr uint64_t kGaveUp = ~uint64_t(0);
static __device__ __noinline__ uint64_t checkIn(const Args &a, uint64_t since, const char *what,
                                                int64_t peer) {
  int code = 0;
  if (*reinterpret_cast<volatile int32_t *>(a.error))
    return kGaveUp; // another wait of this launch failed and said why
  if (*a.abort)
    code = collAborted;
  else if (a.timeoutSeconds > 0 && since && double(globalTimer() - since) > a.timeoutSeconds * 1e9)
    code = collTimeout;
  if (!code)
    return since ? since : globalTimer();
  if (atomicCAS(reinterpret_cast<int *>(a.error), 0, code) == 0) {
    Text t{a.errorText};
    t << "rank " << uint64_t(a.rank) << " threadblock " << uint64_t(a.tb);
    if (code == collAborted)
      t << ": the communicator was aborted";
    else
      t << " waited " << uint64_t(a.timeoutSeconds + 0.5) << " s for " << what << " "
        << uint64_t(peer) << "; a peer may have died or the plan does not match";
    __threadfence_system();
  }
  return kGaveUp;
}

// One wait of one thread: make one per wait, so that the timeout counts
// from the start of that wait. Its state stays in registers.
class Patience {
public:
  __device__ explicit Patience(const Args &a) : a(&a) {}
  COLLC_DI bool keepWaiting(const char *what, int64_t peer) {
    if (++spins & 1023)
      return true;
    since = checkIn(*a, since, what, peer);
    return since != kGaveUp;
  }

private:
  const Args *a;
  uint32_t spins = 0;
  uint64_t since = 0;
};

// Waits until *word >= goal (sys: written from another device or the host);
// returns the value seen, or kGaveUp.
static __device__ __noinline__ uint64_t waitAtLeast(const Args &a, const uint64_t *word,
                                                    uint64_t goal, bool sys, const char *what,
                                                    int64_t peer) {
  Patience patience(a);
  uint64_t v;
  while ((v = sys ? loadSys(word) : loadGpu(word)) < goal)
    if (!patience.keepWaiting(what, peer))
      return kGaveUp;
  sys ? fenceSys() : fenceGpu();
  return v;
}

// Fails the launch for a step this GPU, data type or launch cannot do.
static __device__ __noinline__ void refuse(const Args &a, const char *what) {
  if (atomicCAS(reinterpret_cast<int *>(a.error), 0, collInvalidUsage) == 0) {
    Text t{a.errorText};
    t << "rank " << uint64_t(a.rank) << " threadblock " << uint64_t(a.tb) << ": " << what
      << " cannot run here (data type, op, chunk layout or unmapped peers); compile with "
         "--no-multimem";
    __threadfence_system();
  }
}

// The thread that posts a block's counters: not thread 0, which waits.
COLLC_DI bool poster() { return threadIdx.x == blockDim.x - 1; }
// Counts a step where another threadblock waits for this one's.
COLLC_DI void finished(const Args &a) {
  if (a.publishes)
    releaseGpu(&a.progress[a.tb], loadGpu(&a.progress[a.tb]) + 1);
}

} // namespace cuda
} // namespace collc

#endif // COLLC_DEVICE_CUDA_SYNC_H
