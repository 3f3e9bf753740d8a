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

#define COLLRT_STR(x) #x
#define COLLRT_SYMBOL(x) COLLRT_STR(x) // the name after <cuda.h>'s renaming

const CudaApi *collrt::loadCudaDriver(const std::string &path, std::string &error) {
  const std::string file = path.empty() ? "libcuda.so.1" : path;
  void *lib = dlopen(file.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    const char *why = dlerror();
    error = "cannot load the CUDA driver " + file + " (" + (why ? why : "unknown error") +
            "): no NVIDIA driver is installed, or it is not on the library path";
    return nullptr;
  }
  auto *api = new CudaApi;
  const char *missing = nullptr;
#define COLLRT_CUDA_RESOLVE(name)                                                                  \
  api->name = reinterpret_cast<decltype(api->name)>(dlsym(lib, COLLRT_SYMBOL(name)));              \
  if (!api->name && !missing)                                                                      \
    missing = COLLRT_SYMBOL(name);
  COLLRT_CUDA_CALLS(COLLRT_CUDA_RESOLVE)
#undef COLLRT_CUDA_RESOLVE
#define COLLRT_CUDA_OPTIONAL(name)                                                                 \
  api->name = reinterpret_cast<decltype(api->name)>(dlsym(lib, COLLRT_SYMBOL(name)));
  COLLRT_CUDA_OPTIONAL_CALLS(COLLRT_CUDA_OPTIONAL)
#undef COLLRT_CUDA_OPTIONAL
  if (missing) {
    error = "the CUDA driver " + file + " has no " + missing +
            " (a driver for CUDA 12 or "
            "later is needed)";
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
