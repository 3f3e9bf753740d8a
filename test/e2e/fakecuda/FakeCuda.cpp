//===- FakeCuda.cpp - The driver calls collrt makes, on host memory --------===//
//
// Loaded by collrt in place of libcuda (COLL_CUDA_LIBRARY) so that its GPU
// path runs where there is no GPU: "device" memory is host memory, VMM
// allocations are memfds (exported and imported as their descriptors, as
// POSIX-fd handles are), every copy and memset happens at once, streams
// and events are in order by construction. Only the calls CudaApi.h lists.
// FAKE_CUDA_FAIL=NAME makes the call NAME fail with out-of-memory, so that
// tests see how collrt reports a failing call.
//
//===----------------------------------------------------------------------===//
#include <cuda.h>

#include <cstdlib>
#include <cstring>
#include <sys/mman.h>
#include <unistd.h>

namespace {
void *at(CUdeviceptr p) { return reinterpret_cast<void *>(uintptr_t(p)); }
CUdeviceptr of(const void *p) { return CUdeviceptr(reinterpret_cast<uintptr_t>(p)); }
// A VMM handle is a descriptor of its own, plus one (0 is no handle).
int fdOf(CUmemGenericAllocationHandle h) { return int(h) - 1; }
bool failing(const char *call) {
  const char *which = getenv("FAKE_CUDA_FAIL");
  return which && !strcmp(which, call);
}
} // namespace

extern "C" {

CUresult cuInit(unsigned int) { return CUDA_SUCCESS; }
CUresult cuGetErrorName(CUresult r, const char **name) {
  *name = r == CUDA_ERROR_OUT_OF_MEMORY ? "CUDA_ERROR_OUT_OF_MEMORY" : "CUDA_ERROR_FAKE";
  return CUDA_SUCCESS;
}
CUresult cuDriverGetVersion(int *v) {
  *v = CUDA_VERSION;
  return CUDA_SUCCESS;
}
CUresult cuDeviceGetCount(int *n) {
  *n = 1;
  return CUDA_SUCCESS;
}
CUresult cuCtxGetDevice(CUdevice *d) {
  *d = 0;
  return CUDA_SUCCESS;
}
CUresult cuDeviceGetAttribute(int *v, CUdevice_attribute, CUdevice) {
  *v = 0;
  return CUDA_SUCCESS;
}
CUresult cuDeviceCanAccessPeer(int *v, CUdevice, CUdevice) {
  *v = 1;
  return CUDA_SUCCESS;
}

CUresult cuMemGetAllocationGranularity(size_t *g, const CUmemAllocationProp *,
                                       CUmemAllocationGranularity_flags) {
  *g = 4096;
  return CUDA_SUCCESS;
}
CUresult cuMemCreate(CUmemGenericAllocationHandle *h, size_t size, const CUmemAllocationProp *,
                     unsigned long long) {
  if (failing("cuMemCreate"))
    return CUDA_ERROR_OUT_OF_MEMORY;
  int fd = memfd_create("fake-cuda", MFD_CLOEXEC);
  if (fd < 0 || ftruncate(fd, off_t(size)))
    return CUDA_ERROR_OUT_OF_MEMORY;
  *h = CUmemGenericAllocationHandle(fd + 1);
  return CUDA_SUCCESS;
}
CUresult cuMemRelease(CUmemGenericAllocationHandle h) {
  close(fdOf(h));
  return CUDA_SUCCESS;
}
CUresult cuMemExportToShareableHandle(void *out, CUmemGenericAllocationHandle h,
                                      CUmemAllocationHandleType, unsigned long long) {
  *static_cast<int *>(out) = dup(fdOf(h));
  return CUDA_SUCCESS;
}
CUresult cuMemImportFromShareableHandle(CUmemGenericAllocationHandle *h, void *os,
                                        CUmemAllocationHandleType) {
  int fd = dup(int(reinterpret_cast<intptr_t>(os)));
  if (fd < 0)
    return CUDA_ERROR_INVALID_VALUE;
  *h = CUmemGenericAllocationHandle(fd + 1);
  return CUDA_SUCCESS;
}
CUresult cuMemAddressReserve(CUdeviceptr *p, size_t size, size_t, CUdeviceptr,
                             unsigned long long) {
  void *r = mmap(nullptr, size, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (r == MAP_FAILED)
    return CUDA_ERROR_OUT_OF_MEMORY;
  *p = of(r);
  return CUDA_SUCCESS;
}
CUresult cuMemAddressFree(CUdeviceptr p, size_t size) {
  munmap(at(p), size);
  return CUDA_SUCCESS;
}
CUresult cuMemMap(CUdeviceptr p, size_t size, size_t offset, CUmemGenericAllocationHandle h,
                  unsigned long long) {
  void *r = mmap(at(p), size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, fdOf(h),
                 off_t(offset));
  return r == MAP_FAILED ? CUDA_ERROR_INVALID_VALUE : CUDA_SUCCESS;
}
CUresult cuMemUnmap(CUdeviceptr p, size_t size) {
  void *r = mmap(at(p), size, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
  return r == MAP_FAILED ? CUDA_ERROR_INVALID_VALUE : CUDA_SUCCESS;
}
CUresult cuMemSetAccess(CUdeviceptr, size_t, const CUmemAccessDesc *, size_t) {
  return CUDA_SUCCESS;
}

CUresult cuMemsetD8(CUdeviceptr p, unsigned char v, size_t n) {
  memset(at(p), v, n);
  return CUDA_SUCCESS;
}
CUresult cuMemsetD8Async(CUdeviceptr p, unsigned char v, size_t n, CUstream) {
  memset(at(p), v, n);
  return CUDA_SUCCESS;
}
CUresult cuMemAlloc(CUdeviceptr *p, size_t n) {
  if (failing("cuMemAlloc"))
    return CUDA_ERROR_OUT_OF_MEMORY;
  void *r = aligned_alloc(256, (n + 255) & ~size_t(255));
  if (!r)
    return CUDA_ERROR_OUT_OF_MEMORY;
  *p = of(r);
  return CUDA_SUCCESS;
}
CUresult cuMemFree(CUdeviceptr p) {
  free(at(p));
  return CUDA_SUCCESS;
}
CUresult cuMemHostAlloc(void **p, size_t n, unsigned int) {
  *p = calloc(1, n);
  return *p ? CUDA_SUCCESS : CUDA_ERROR_OUT_OF_MEMORY;
}
CUresult cuMemHostGetDevicePointer(CUdeviceptr *d, void *p, unsigned int) {
  *d = of(p);
  return CUDA_SUCCESS;
}
CUresult cuMemFreeHost(void *p) {
  free(p);
  return CUDA_SUCCESS;
}
CUresult cuMemcpyHtoDAsync(CUdeviceptr d, const void *s, size_t n, CUstream) {
  memcpy(at(d), s, n);
  return CUDA_SUCCESS;
}
CUresult cuMemcpyDtoDAsync(CUdeviceptr d, CUdeviceptr s, size_t n, CUstream) {
  memmove(at(d), at(s), n);
  return CUDA_SUCCESS;
}
CUresult cuCtxSynchronize() { return CUDA_SUCCESS; }

CUresult cuEventCreate(CUevent *e, unsigned int) {
  static char events;
  *e = reinterpret_cast<CUevent>(&events);
  return CUDA_SUCCESS;
}
CUresult cuEventRecord(CUevent, CUstream) { return CUDA_SUCCESS; }
CUresult cuEventSynchronize(CUevent) { return CUDA_SUCCESS; }
CUresult cuEventDestroy(CUevent) { return CUDA_SUCCESS; }
CUresult cuStreamIsCapturing(CUstream, CUstreamCaptureStatus *s) {
  *s = CU_STREAM_CAPTURE_STATUS_NONE;
  return CUDA_SUCCESS;
}

} // extern "C"
