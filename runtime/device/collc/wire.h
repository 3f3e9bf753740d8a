//===- wire.h - What a FIFO slot holds: the LL and LL128 formats ----------===//
//
// One definition for every side that writes or reads a slot: the host
// emulation (host.h), the GPU primitives (cuda.h, cuda_ll.h, cuda_ll128.h),
// the runtime's slot sizes (support/FifoLayout.h) and the proxy's frames
// (transport/Frame.cpp), so that the host tests exercise the arithmetic the
// GPU runs. A Simple slot holds the payload's bytes as they are.
//
// LL (NCCL's prims_ll.h): 8-byte words of 4 payload bytes and the step's
// flag above them, two to a 16-byte line, which the GPU stores at once; a
// word whose flag is the step's holds the step's bytes. LL128 (prims_ll128.h):
// 128-byte lines of 15 payload words and the flag (the step + 1) in the
// last word.
//
//===----------------------------------------------------------------------===//

#ifndef COLLC_DEVICE_WIRE_H
#define COLLC_DEVICE_WIRE_H

#include "collc/abi.h"

#include <stdint.h>

#if defined(__CUDACC__)
#define COLLC_WIRE_FN __host__ __device__ inline
#else
#define COLLC_WIRE_FN inline
#endif

namespace collc {

// The LL flag of a step: never 0, the value of words no step has written
// yet, and the same again only after 2^32 - 1 steps.
COLLC_WIRE_FN uint32_t llFlag(uint64_t step) { return uint32_t(step % 0xFFFFFFFFull) + 1; }

// A line that no step rewrites keeps its flag until the flag comes round
// again, and a shorter step leaves the lines past its end as they were.
// So an LL sender fills its whole slot (flag, zero data) on the first
// numSlots steps of every 2^31: no line is older than 2^31 + numSlots
// steps, well inside the flag's period. NCCL cleans on the same grounds
// (NCCL_LL_CLEAN_MASK, prims_ll.h).
COLLC_WIRE_FN bool llCleans(uint64_t step, int32_t numSlots) {
  return (step & 0x7FFFFFFFull) < uint64_t(numSlots);
}

// An LL word: 4 payload bytes under `flag`.
COLLC_WIRE_FN uint64_t llWord(uint32_t data, uint32_t flag) { return uint64_t(flag) << 32 | data; }
COLLC_WIRE_FN uint32_t llWordFlag(uint64_t word) { return uint32_t(word >> 32); }
COLLC_WIRE_FN uint32_t llWordData(uint64_t word) { return uint32_t(word); }
// The LL words that carry `bytes` of payload, and their bytes on the wire.
COLLC_WIRE_FN int64_t llWords(int64_t bytes) { return (bytes + 3) / 4; }

// An LL128 line: payload words 0 .. 14, the flag in word 15.
constexpr int kLL128LineBytes = 128, kLL128LineWords = 16, kLL128FlagWord = 15;
constexpr int kLL128PayloadWords = 15, kLL128PayloadBytes = 8 * kLL128PayloadWords;
COLLC_WIRE_FN uint64_t ll128Flag(uint64_t step) { return step + 1; }
COLLC_WIRE_FN int64_t ll128Lines(int64_t bytes) {
  return (bytes + kLL128PayloadBytes - 1) / kLL128PayloadBytes;
}

// The bytes of a slot that a step of `bytes` of payload writes, which a
// proxy ships: a cleaning LL step (llCleans) writes its whole slot.
COLLC_WIRE_FN int64_t wireBytes(int32_t protocol, int64_t bytes, bool cleans, int64_t slotBytes) {
  return protocol == kSimple ? bytes
         : cleans            ? slotBytes
         : protocol == kLL   ? llWords(bytes) * 8
                             : ll128Lines(bytes) * kLL128LineBytes;
}
// The payload a slot of `slotBytes` carries: LL spends half on flags,
// LL128 one word in 16.
COLLC_WIRE_FN int64_t payloadBytes(int32_t protocol, int64_t slotBytes) {
  return protocol == kLL      ? slotBytes / 2
         : protocol == kLL128 ? slotBytes / kLL128LineBytes * kLL128PayloadBytes
                              : slotBytes;
}

} // namespace collc

#undef COLLC_WIRE_FN

#endif // COLLC_DEVICE_WIRE_H
