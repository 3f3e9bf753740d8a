//===- Graph.h - Capture a launch into a CUDA graph and replay it --------===//
//
// For --graph, and to wait for a launch on the GPU before reading its
// result: the few driver calls an application makes around a collective,
// from the driver that collrt loads (COLL_CUDA_LIBRARY, else libcuda).
// The launcher's buffers are host memory, so this runs plans built for
// the GPU only where the driver can reach them: the fake driver of the
// tests.
//
//===----------------------------------------------------------------------===//
#ifndef COLLC_LAUNCH_GRAPH_H
#define COLLC_LAUNCH_GRAPH_H

#include <cstdlib>
#include <dlfcn.h>
#include <string>

namespace collc_launch {

class GraphDriver {
public:
  /// False, with `error` saying why, if the driver or a call is missing.
  bool open(std::string &error) {
    const char *path = getenv("COLL_CUDA_LIBRARY");
    void *lib = dlopen(path ? path : "libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
      error = std::string("--graph: cannot load the CUDA driver: ") + dlerror();
      return false;
    }
    // As collrt does: every call through cuGetProcAddress, at CUDA 12.0's
    // interface, whose prototypes these are.
    getProc = reinterpret_cast<GetProc>(dlsym(lib, "cuGetProcAddress_v2"));
    if (!getProc) {
      error = "--graph: the CUDA driver has no cuGetProcAddress_v2 (CUDA 12 or later)";
      return false;
    }
    return find("cuStreamCreate", streamCreate, error) &&
           find("cuStreamDestroy", streamDestroy, error) &&
           find("cuStreamSynchronize", streamSynchronize, error) &&
           find("cuStreamBeginCapture", beginCapture, error) &&
           find("cuStreamEndCapture", endCapture, error) &&
           find("cuGraphInstantiateWithFlags", instantiate, error) &&
           find("cuGraphLaunch", graphLaunch, error) &&
           find("cuGraphExecDestroy", execDestroy, error) &&
           find("cuGraphDestroy", graphDestroy, error);
  }

  // Each returns CUDA's result: 0 for success.
  int (*streamCreate)(void **stream, unsigned flags) = nullptr;
  int (*streamDestroy)(void *stream) = nullptr;
  int (*streamSynchronize)(void *stream) = nullptr;
  int (*beginCapture)(void *stream, int mode) = nullptr; // 0: global
  int (*endCapture)(void *stream, void **graph) = nullptr;
  int (*instantiate)(void **exec, void *graph, unsigned long long flags) = nullptr;
  int (*graphLaunch)(void *exec, void *stream) = nullptr;
  int (*execDestroy)(void *exec) = nullptr;
  int (*graphDestroy)(void *graph) = nullptr;

private:
  using GetProc = int (*)(const char *symbol, void **fn, int cudaVersion, unsigned long long flags,
                          int *status);
  GetProc getProc = nullptr;

  template <class F> bool find(const char *name, F &f, std::string &error) {
    void *fn = nullptr;
    int status = -1;
    f = getProc(name, &fn, 12000, 0, &status) == 0 && status == 0 ? reinterpret_cast<F>(fn)
                                                                  : nullptr;
    if (!f)
      error = std::string("--graph: the CUDA driver has no ") + name;
    return f != nullptr;
  }
};

} // namespace collc_launch

#endif // COLLC_LAUNCH_GRAPH_H
