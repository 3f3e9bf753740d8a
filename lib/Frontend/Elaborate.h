//===- Elaborate.h - Coll source to global-view IR ------------------------===//
//
// Parses a .coll file and elaborates it (parameters, loops, conditions and
// asserts evaluated) into `coll.algorithm` ops. Errors are reported through
// the context's diagnostic engine at the user's line and column.
//
//===----------------------------------------------------------------------===//
#ifndef COLLC_FRONTEND_ELABORATE_H
#define COLLC_FRONTEND_ELABORATE_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"
#include "mlir/Support/Timing.h"

#include <string>
#include <utility>
#include <vector>

namespace llvm {
class SourceMgr;
}

namespace coll {

struct ElaborateOptions {
  /// `-D name=value` overrides of algorithm parameters.
  std::vector<std::pair<std::string, int64_t>> defines;
  /// Elaborate only this algorithm; all of them when empty.
  std::string algorithm;
  /// Bounds that keep any input within time and memory: source chunks over
  /// all operations, statements and loop iterations executed, and chunk slots
  /// over all ranks and buffers (what the verifier allocates).
  uint64_t maxOps = uint64_t(1) << 24;
  uint64_t maxSteps = uint64_t(1) << 28;
  int64_t maxSlots = int64_t(1) << 26;
};

/// Imports the main buffer of `sourceMgr`, timing the parse and elaboration
/// under `timing`. Returns null after reporting an error in the program, or
/// without a report after setting `unusedDefine` to a `-D` name that no
/// elaborated algorithm has (a command-line error, the caller's to word).
mlir::OwningOpRef<mlir::ModuleOp> importColl(llvm::SourceMgr &sourceMgr, mlir::MLIRContext *context,
                                             const ElaborateOptions &options,
                                             mlir::TimingScope &timing, std::string *unusedDefine);

} // namespace coll

#endif // COLLC_FRONTEND_ELABORATE_H
