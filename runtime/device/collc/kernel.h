//===- kernel.h - The only header generated kernels include ---------------===//
//
// Picks the implementation of the device primitives: CUDA when nvcc compiles
// the file, the host emulation otherwise. Both define collc::Block with the
// same member functions, which is all that generated code calls.
//
//===----------------------------------------------------------------------===//

#ifndef COLLC_DEVICE_KERNEL_H
#define COLLC_DEVICE_KERNEL_H

#include "collc/abi.h"
#include "collc/wire.h"

#if defined(__CUDACC__)
#define COLLC_HD __host__ __device__
#else
#define COLLC_HD
#endif

namespace collc {
// A run of `count` consecutive chunks of one buffer, as a step names it.
struct Ref {
  int32_t buffer;
  int32_t count;
  int64_t index;
};

// Where the receiver of a direct connection stores a step: generated code
// passes it to the sending step, which may store there itself.
struct Direct {
  Ref ref;
};

// A plan whose FIFOs differ in protocol: BlockOf<kAnyProtocol> reads each
// FIFO's.
constexpr int32_t kAnyProtocol = -1;

// How generated code names chunks: in(3), out(4, 2), scratch(kScratch_t, 0).
COLLC_HD constexpr Ref in(int64_t index, int32_t count = 1) { return {kIn, count, index}; }
COLLC_HD constexpr Ref out(int64_t index, int32_t count = 1) { return {kOut, count, index}; }
COLLC_HD constexpr Ref scratch(int32_t buffer, int64_t index, int32_t count = 1) {
  return {buffer, count, index};
}
COLLC_HD constexpr Direct direct(Ref r) { return {r}; }
} // namespace collc

#if defined(__CUDACC__)
#include "collc/cuda.h"
#else
#include "collc/host.h"
#endif

#endif // COLLC_DEVICE_KERNEL_H
