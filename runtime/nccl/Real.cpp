//===- Real.cpp - Open the real NCCL once --------------------------------===//
#include "nccl/Real.h"

#include <cstdlib>
#include <dlfcn.h>
#include <mutex>
#include <nccl.h>

namespace collnccl {

struct Loader {
  RealNccl real;
  std::string why;
  bool ok = false;

  Loader() {
    const char *path = getenv("COLL_NCCL_LIBRARY");
    real.path_ = path && *path ? path : "libnccl.so.2";
    // DEEPBIND: the real library's calls of its own entry points stay in
    // it when the shim is preloaded and defines the same names.
    real.handle = dlopen(real.path_.c_str(), RTLD_NOW | RTLD_LOCAL | RTLD_DEEPBIND);
    if (!real.handle) {
      const char *e = dlerror();
      why = "no NCCL to fall back to: " + std::string(e ? e : real.path_) +
            " (COLL_NCCL_LIBRARY names it)";
      return;
    }
    void *own = dlsym(real.handle, "ncclAllReduce");
    if (!own || own == reinterpret_cast<void *>(&ncclAllReduce)) {
      why = "no NCCL to fall back to: " + real.path_ +
            (own ? " is this shim itself" : " has no ncclAllReduce") +
            "; point COLL_NCCL_LIBRARY at NCCL's libnccl.so.2";
      dlclose(real.handle);
      real.handle = nullptr;
      return;
    }
    ok = true;
  }
};

namespace {
Loader &loader() {
  static Loader l;
  return l;
}
} // namespace

const RealNccl *RealNccl::get() {
  Loader &l = loader();
  return l.ok ? &l.real : nullptr;
}

const std::string &RealNccl::why() { return loader().why; }

void *RealNccl::symbol(const char *name) const { return dlsym(handle, name); }

} // namespace collnccl
