//===- multimem.h - Which reductions NVLink multicast has -----------------===//
//
// One answer for the kernels, which take the unicast path (peer windows)
// where multimem has no form, and for the runtime, which says so.
//
//===----------------------------------------------------------------------===//

#ifndef COLLC_DEVICE_MULTIMEM_H
#define COLLC_DEVICE_MULTIMEM_H

#include "collrt.h"

#include <stdint.h>

#if defined(__CUDACC__)
#define COLLC_MULTIMEM_FN __host__ __device__ inline
#else
#define COLLC_MULTIMEM_FN inline
#endif

namespace collc {

// multimem.ld_reduce (sm_90): sums of fp32, fp64, fp16 and bf16 (these two
// in pairs, summed in fp32) and of 32- and 64-bit integers; min and max of
// the integers, fp16 and bf16. Nothing for 8-bit types or products.
COLLC_MULTIMEM_FN bool multimemReduces(int32_t type, int32_t op) {
  const bool sum = op == collSum || op == collAvg, order = op == collMin || op == collMax;
  switch (type) {
  case collFloat32:
  case collFloat64:
    return sum;
  case collFloat16:
  case collBfloat16:
  case collInt32:
  case collUint32:
  case collInt64:
  case collUint64:
    return sum || order;
  default:
    return false;
  }
}

// The types and ops of multimemReduces with a 16-byte .v4 form: fp32 sums,
// fp16 and bf16 sums, min and max.
COLLC_MULTIMEM_FN bool multimemReduces16(int32_t type, int32_t op) {
  return (type == collFloat32 && (op == collSum || op == collAvg)) || type == collFloat16 ||
         type == collBfloat16;
}

// multimem.st stores whole 4- or 8-byte words: 1- and 2-byte elements need
// chunks whose edges fall on 4-byte boundaries, which `elements` of them
// per chunk (and a count cut into such chunks) keep.
COLLC_MULTIMEM_FN bool multimemStoresWhole(int32_t elemSize, int64_t elements) {
  return elemSize >= 4 || elements * elemSize % 4 == 0;
}

} // namespace collc

#undef COLLC_MULTIMEM_FN

#endif // COLLC_DEVICE_MULTIMEM_H
