//===- Run.h - `collc run`: compile for the host and run on emulated ranks ===//
#ifndef COLLC_TOOLS_RUN_H
#define COLLC_TOOLS_RUN_H

#include "mlir/IR/BuiltinOps.h"

#include <string>
#include <vector>

namespace collc {

struct RunOptions {
  std::string source;    // the .coll file, for names in the output
  std::string algorithm; // empty: the first of the file
  int64_t ranks = 0;
  std::vector<std::string> launchArgs; // passed on to collc-launch
  bool keep = false;                   // keep the generated files
};

/// Emits the plans of `module` as host C++, compiles them into a shared
/// library and runs collc-launch on it. Returns the exit status.
int runOnHost(mlir::ModuleOp module, const RunOptions &options);

} // namespace collc

#endif // COLLC_TOOLS_RUN_H
