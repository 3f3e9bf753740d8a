//===- CudaDriver.cpp - libcuda, opened with dlopen -----------------------===//
#include "support/CudaDriver.h"

#include <cstdlib>
#include <dlfcn.h>
#include <mutex>

using namespace collrt;

#if !__has_include(<cuda.h>)
const CudaApi *collrt::loadCudaDriver(const std::string &, std::string &error) {
  error = "collrt was built without the CUDA headers (cuda.h)";
  return nullptr;
}
#else
#include "support/CudaApi.h"

const CudaApi *collrt::loadCudaDriver(const std::string &path, std::string &error) {
  const std::string file = path.empty() ? "libcuda.so.1" : path;
  void *lib = dlopen(file.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    const char *why = dlerror();
    error = "cannot load the CUDA driver " + file + " (" + (why ? why : "unknown error") +
            "): no NVIDIA driver is installed, or it is not on the library path";
    return nullptr;
  }
  // The one call looked up by name; CUDA 12.0 gave it its present form.
  using GetProc =
      CUresult (*)(const char *, void **, int, cuuint64_t, CUdriverProcAddressQueryResult *);
  auto getProc = reinterpret_cast<GetProc>(dlsym(lib, "cuGetProcAddress_v2"));
  if (!getProc) {
    error = "the CUDA driver " + file +
            " has no cuGetProcAddress_v2 (a driver for CUDA 12 or later is needed)";
    dlclose(lib);
    return nullptr;
  }
  auto *api = new CudaApi;
  const char *missing = nullptr;
  bool stub = false; // the toolkit's stub answers every lookup so
  auto resolve = [&](const char *name, void **fn, int abi, bool required) {
    CUdriverProcAddressQueryResult found = CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
    CUresult r = getProc(name, fn, abi, CU_GET_PROC_ADDRESS_DEFAULT, &found);
    if (r != CUDA_SUCCESS || found != CU_GET_PROC_ADDRESS_SUCCESS)
      *fn = nullptr;
    stub |= r == CUDA_ERROR_STUB_LIBRARY;
    if (!*fn && required && !missing)
      missing = name;
  };
  // #name is the call's name as written in the list, before <cuda.h> renames
  // it (cuMemAlloc, not cuMemAlloc_v2): the name cuGetProcAddress takes.
#define COLLRT_CUDA_RESOLVE(name)                                                                  \
  resolve(#name, reinterpret_cast<void **>(&api->name), kCudaAbi, true);
  COLLRT_CUDA_CALLS(COLLRT_CUDA_RESOLVE)
#undef COLLRT_CUDA_RESOLVE
  resolve("cuStreamGetCaptureInfo", reinterpret_cast<void **>(&api->cuStreamGetCaptureInfo_v2),
          kCudaAbi, true);
#define COLLRT_CUDA_OPTIONAL(name)                                                                 \
  resolve(#name, reinterpret_cast<void **>(&api->name), kCudaOptionalAbi, false);
  COLLRT_CUDA_OPTIONAL_CALLS(COLLRT_CUDA_OPTIONAL)
#undef COLLRT_CUDA_OPTIONAL
  if (stub) {
    error = file + " is the CUDA toolkit's stub library, not a driver "
                   "(cuGetProcAddress: CUDA_ERROR_STUB_LIBRARY)";
  } else if (missing) {
    error = "the CUDA driver " + file + " has no " + missing +
            " for CUDA 12.0's interface (a driver for CUDA 12 or later is needed)";
  } else if (CUresult r = api->cuInit(0)) {
    error = r == CUDA_ERROR_STUB_LIBRARY
                ? file + " is the CUDA toolkit's stub library, not a driver "
                         "(cuInit: CUDA_ERROR_STUB_LIBRARY)"
                : api->describe("cuInit", r);
  } else {
    int devices = 0;
    if (CUresult c = api->cuDeviceGetCount(&devices))
      error = api->describe("cuDeviceGetCount", c);
    else if (!devices)
      error = "the CUDA driver sees no GPU";
  }
  if (!error.empty()) {
    delete api;
    dlclose(lib);
    return nullptr;
  }
  return api; // and the library stays open for the process's life
}
#endif

const CudaApi *collrt::cudaDriver(std::string &error) {
  static std::once_flag once;
  static const CudaApi *driver = nullptr;
  static std::string why;
  std::call_once(once, [] {
    const char *path = getenv("COLL_CUDA_LIBRARY");
    driver = loadCudaDriver(path ? path : "", why);
  });
  if (!driver)
    error = why;
  return driver;
}

std::string collrt::currentGpuPciBusId() {
#if __has_include(<cuda.h>)
  std::string why;
  const CudaApi *cu = cudaDriver(why);
  CUdevice device;
  char id[32] = "";
  if (cu && cu->cuDeviceGetPCIBusId && cu->cuCtxGetDevice(&device) == CUDA_SUCCESS &&
      cu->cuDeviceGetPCIBusId(id, sizeof id, device) == CUDA_SUCCESS)
    return id;
#endif
  return "";
}

void *collrt::currentCudaContext() {
#if __has_include(<cuda.h>)
  const char *path = getenv("COLL_CUDA_LIBRARY");
  void *lib = dlopen(path && *path ? path : "libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
  if (!lib)
    return nullptr;
  dlclose(lib);
  std::string why;
  const CudaApi *cu = cudaDriver(why);
  CUcontext context = nullptr;
  if (cu && cu->cuCtxGetCurrent(&context) == CUDA_SUCCESS)
    return context;
#endif
  return nullptr;
}

collrt::ContextScope::ContextScope(void *context) {
#if __has_include(<cuda.h>)
  std::string why;
  const CudaApi *cu = context ? cudaDriver(why) : nullptr;
  CUcontext now = nullptr;
  if (!cu || cu->cuCtxGetCurrent(&now) != CUDA_SUCCESS || now == context)
    return;
  changed = cu->cuCtxSetCurrent(static_cast<CUcontext>(context)) == CUDA_SUCCESS;
  before = now;
#else
  (void)context;
#endif
}

collrt::ContextScope::~ContextScope() {
#if __has_include(<cuda.h>)
  std::string why;
  if (changed)
    cudaDriver(why)->cuCtxSetCurrent(static_cast<CUcontext>(before));
#endif
}
