//===- Paths.h - Where collc finds the runtime, launcher and plots --------===//
#ifndef COLLC_TOOLS_PATHS_H
#define COLLC_TOOLS_PATHS_H

#include <string>

namespace collc {

/// What `collc run` compiles against and starts, and what draws collc's
/// pictures. Installed, collc finds them under its own prefix, so that the
/// prefix may move and the build tree go; else in the trees it was built in.
struct Paths {
  std::string prefix;         ///< the install prefix; empty in the build tree
  std::string runtimeInclude; ///< collrt.h
  std::string deviceInclude;  ///< collc/kernel.h
  std::string libDir;         ///< libcollrt.so
  std::string launcher;       ///< collc-launch
  std::string plotScript;     ///< plot.py
  std::string hostCompiler;   ///< the C++ compiler collc was built with
};

/// This collc's paths, found when first asked for.
const Paths &paths();

} // namespace collc

#endif // COLLC_TOOLS_PATHS_H
