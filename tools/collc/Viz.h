//===- Viz.h - `collc viz`: where a plan's threadblocks wait ---------------===//
#ifndef COLLC_TOOLS_VIZ_H
#define COLLC_TOOLS_VIZ_H

#include "mlir/IR/BuiltinOps.h"
#include "llvm/Support/CommandLine.h"

namespace collc {

/// `collc viz FILE.coll ...`, which takes the compile's options and its own,
/// in vizCategory().
llvm::cl::SubCommand &vizCommand();
llvm::cl::OptionCategory &vizCategory();

/// Checks the options of `collc viz` before the program is compiled.
/// Returns false after printing why they are wrong.
bool checkVizOptions(llvm::StringRef topology);

/// Simulates the plan of `module`'s first algorithm that runs at --size on
/// `topology`, every step traced; prints the busiest threadblocks and their waits
/// and draws the timeline. Returns the exit status.
int runViz(mlir::ModuleOp module, llvm::StringRef topology);

} // namespace collc

#endif // COLLC_TOOLS_VIZ_H
