//===- cuda_divide.h - avg: a sum, then a division by the rank count ------===//
//
// The kernels reduce avg as a sum; the runtime then divides the output,
// as the host emulation does, with the same rounding: integers truncate,
// narrow floats divide in float and round once.
//
//===----------------------------------------------------------------------===//

#ifndef COLLC_DEVICE_CUDA_DIVIDE_H
#define COLLC_DEVICE_CUDA_DIVIDE_H

#include "collc/cuda_vec.h"

namespace collc {
namespace cuda {

template <class F> COLLC_DI void divideFloat(char *p, int32_t d) {
  using Bits = typename F::Bits;
  Bits *x = reinterpret_cast<Bits *>(p);
  *x = F::make(F::val(*x) / d);
}
template <typename T> COLLC_DI void divideInt(char *p, int32_t d) {
  T *x = reinterpret_cast<T *>(p);
  *x = T(*x / T(d));
}

static __global__ void divideKernel(char *data, int64_t count, int32_t type, int32_t d) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < count;
       i += int64_t(gridDim.x) * blockDim.x) {
    switch (type) {
    case collInt8:
      divideInt<int8_t>(data + i, d);
      break;
    case collUint8:
      divideInt<uint8_t>(data + i, d);
      break;
    case collInt32:
      divideInt<int32_t>(data + 4 * i, d);
      break;
    case collUint32:
      divideInt<uint32_t>(data + 4 * i, d);
      break;
    case collInt64:
      divideInt<int64_t>(data + 8 * i, d);
      break;
    case collUint64:
      divideInt<uint64_t>(data + 8 * i, d);
      break;
    case collFloat16:
      divideFloat<F16>(data + 2 * i, d);
      break;
    case collBfloat16:
      divideFloat<BF16>(data + 2 * i, d);
      break;
    case collFloat32:
      divideFloat<F32>(data + 4 * i, d);
      break;
    case collFloat64:
      divideFloat<F64>(data + 8 * i, d);
      break;
    case collFloat8e4m3:
      divideFloat<F8<__NV_E4M3>>(data + i, d);
      break;
    case collFloat8e5m2:
      divideFloat<F8<__NV_E5M2>>(data + i, d);
      break;
    default:
      break;
    }
  }
}

// DeviceDivideFn (static: each generated file has its own kernel).
static inline const char *divide(void *data, int64_t count, int32_t type, int32_t divisor,
                                 void *stream) {
  if (count <= 0)
    return nullptr;
  const int threads = 256;
  const int64_t blocks = (count + threads - 1) / threads;
  divideKernel<<<unsigned(blocks < 1024 ? blocks : 1024), threads, 0,
                 static_cast<cudaStream_t>(stream)>>>(static_cast<char *>(data), count, type,
                                                      divisor);
  const cudaError_t e = cudaGetLastError();
  return e == cudaSuccess ? nullptr : cudaGetErrorName(e);
}

} // namespace cuda
} // namespace collc

#endif // COLLC_DEVICE_CUDA_DIVIDE_H
