//===- Paths.cpp - Where collc finds the runtime, launcher and plots ------===//
//
// An installed collc lies in PREFIX/bin beside collc-launch, with the
// runtime's headers and libraries, and plot.py, where `cmake --install` puts
// them; the prefix is found from the running executable, not from where it
// was first installed, so that a moved prefix or a package works alone.
// Anywhere else collc is taken to run from its build tree.
//
//===----------------------------------------------------------------------===//
#include "Paths.h"

#include "Layout.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"

namespace collc {
namespace {

/// Any address in this program, for finding its executable.
int anchor;

/// `dir`/`relative`, without `..` steps.
std::string under(llvm::StringRef dir, llvm::StringRef relative) {
  llvm::SmallString<256> path(dir);
  llvm::sys::path::append(path, relative);
  llvm::sys::path::remove_dots(path, /*remove_dot_dot=*/true);
  return std::string(path);
}

Paths find() {
  std::string exe = llvm::sys::fs::getMainExecutable("collc", &anchor);
  llvm::StringRef bin = llvm::sys::path::parent_path(exe);
  std::string include = under(bin, COLLC_BIN_TO_INCLUDE);
  std::string lib = under(bin, COLLC_BIN_TO_LIB);
  // The device primitives and the shared runtime, which the build tree's
  // bin/.. lacks, say that collc is installed.
  if (llvm::sys::fs::exists(under(include, "collc/kernel.h")) &&
      llvm::sys::fs::exists(under(lib, "libcollrt.so")))
    return {under(bin, COLLC_BIN_TO_PREFIX),
            include,
            include,
            lib,
            under(bin, "collc-launch"),
            under(under(bin, COLLC_BIN_TO_DATA), "collc/plot.py"),
            COLLC_HOST_CXX};
  return {"",
          COLLC_BUILD_RUNTIME_INCLUDE,
          COLLC_BUILD_DEVICE_INCLUDE,
          COLLC_BUILD_LIB_DIR,
          COLLC_BUILD_BIN_DIR "/collc-launch",
          COLLC_BUILD_PLOT_SCRIPT,
          COLLC_HOST_CXX};
}

} // namespace

const Paths &paths() {
  static const Paths found = find();
  return found;
}

} // namespace collc
