//===- RunLimits.h - What `collc run` refuses before it compiles ----------===//
//
// Checks of `collc run`'s flags, and an estimate of the memory a run needs
// (buffers of every rank, the reference, scratch and FIFOs), so that a run
// the machine cannot hold fails with a message instead of dying of
// bad_alloc in every rank.
//
//===----------------------------------------------------------------------===//
#ifndef COLLC_TOOLS_RUNLIMITS_H
#define COLLC_TOOLS_RUNLIMITS_H

#include "mlir/IR/BuiltinOps.h"
#include "llvm/Support/Error.h"

#include <cstdint>

namespace collc {

/// The most ranks collc-launch emulates (one process each).
constexpr int64_t kMaxRunRanks = 4096;

/// --ranks: given, and in 1 .. kMaxRunRanks.
llvm::Error checkRunRanks(int64_t ranks, bool given);

/// --count: a whole number with an optional K, M, G or T, as sizes are
/// written; sets `count`.
llvm::Error parseRunCount(llvm::StringRef text, int64_t &count);

/// What one run asks for.
struct RunRequest {
  std::string algorithm; // empty: the first of the module
  int64_t ranks = 0, count = 0;
  std::string dtype;
  bool inplace = false;
};

/// Refuses a run whose element count the runtime rejects, or whose memory
/// (estimated from the lowered plans of `module`) exceeds what is available.
llvm::Error checkRunMemory(mlir::ModuleOp module, const RunRequest &request);

} // namespace collc

#endif // COLLC_TOOLS_RUNLIMITS_H
