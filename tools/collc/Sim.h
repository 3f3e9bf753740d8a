//===- Sim.h - `collc sim`: simulated time of a program per size ----------===//
#ifndef COLLC_TOOLS_SIM_H
#define COLLC_TOOLS_SIM_H

#include "mlir/IR/BuiltinOps.h"
#include "llvm/Support/CommandLine.h"

namespace collc {

/// `collc sim FILE.coll ...`, which takes the compile's options and its own,
/// in simCategory().
llvm::cl::SubCommand &simCommand();
llvm::cl::OptionCategory &simCategory();

/// Checks the options of `collc sim` before the program is compiled.
/// Returns false after printing why they are wrong.
bool checkSimOptions(llvm::StringRef topology);

/// Prints, per algorithm of `module` (lowered to plans on `topology`), a
/// table of the simulated time, algbw and busbw per size, beside the bound
/// and NCCL's model. Returns the exit status.
int runSim(mlir::ModuleOp module, llvm::StringRef topology);

} // namespace collc

#endif // COLLC_TOOLS_SIM_H
