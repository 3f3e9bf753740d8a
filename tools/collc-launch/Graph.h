//===- Graph.h - Capture a launch into a CUDA graph and replay it --------===//
//
// For --graph: the few driver calls an application makes around a captured
// collective, from the driver that collrt loads (COLL_CUDA_LIBRARY, else
// libcuda). The launcher's buffers are host memory, so this runs plans
// built for the GPU only where the driver can reach them: the fake driver
// of the tests.
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
    // The names <cuda.h> gives these calls in CUDA 12 and 13.
    return find(lib, "cuStreamCreate", streamCreate, error) &&
           find(lib, "cuStreamDestroy_v2", streamDestroy, error) &&
           find(lib, "cuStreamSynchronize", streamSynchronize, error) &&
           find(lib, "cuStreamBeginCapture_v2", beginCapture, error) &&
           find(lib, "cuStreamEndCapture", endCapture, error) &&
           find(lib, "cuGraphInstantiateWithFlags", instantiate, error) &&
           find(lib, "cuGraphLaunch", graphLaunch, error) &&
           find(lib, "cuGraphExecDestroy", execDestroy, error) &&
           find(lib, "cuGraphDestroy", graphDestroy, error);
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
  template <class F> static bool find(void *lib, const char *name, F &f, std::string &error) {
    f = reinterpret_cast<F>(dlsym(lib, name));
    if (!f)
      error = std::string("--graph: the CUDA driver has no ") + name;
    return f != nullptr;
  }
};

} // namespace collc_launch

#endif // COLLC_LAUNCH_GRAPH_H
