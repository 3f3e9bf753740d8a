//===- Real.h - The NCCL that calls without a plan go to ------------------===//
//
// libcollnccl answers nccl.h itself where a plan library has a plan for
// the call and hands every other call to a real NCCL, opened at run time
// from COLL_NCCL_LIBRARY (default libnccl.so.2) so that the shim links
// without one and works where none is installed, as long as no call needs it.
//
//===----------------------------------------------------------------------===//
#ifndef COLLNCCL_REAL_H
#define COLLNCCL_REAL_H

#include <string>

namespace collnccl {

class RealNccl {
public:
  /// The process's NCCL, opened at the first call; null if it cannot be,
  /// and then `why()` says why.
  static const RealNccl *get();
  static const std::string &why();

  /// `name` in the real library, as a pointer of the shim's own function
  /// of that name; null where that NCCL lacks it.
  template <class Fn> Fn *find(const char *name, Fn *) const {
    return reinterpret_cast<Fn *>(symbol(name));
  }
  const std::string &path() const { return path_; }

private:
  void *symbol(const char *name) const;
  void *handle = nullptr;
  std::string path_;
  friend struct Loader;
};

} // namespace collnccl

/// The real NCCL's function `fn`, typed as the shim's own, or null.
#define COLLNCCL_REAL(fn)                                                                          \
  (collnccl::RealNccl::get() ? collnccl::RealNccl::get()->find(#fn, &fn) : nullptr)

#endif // COLLNCCL_REAL_H
