//===- Semantics.h - Prove that a program implements its collective -------===//
#ifndef COLLC_ANALYSIS_SEMANTICS_H
#define COLLC_ANALYSIS_SEMANTICS_H

#include "mlir/Support/LLVM.h"

namespace coll {

class AlgorithmOp;
struct CollectiveShape;

/// Executes `alg` symbolically over every rank's buffers and checks the
/// postcondition of its collective. Reports, at the statement responsible,
/// reads of unwritten chunks, writes to a read-only `in`, reductions that mix
/// input chunks or count a rank twice, and at the algorithm any output chunk
/// that ends wrong.
mlir::LogicalResult verifySemantics(AlgorithmOp alg);

/// Whether a collective's buffers are small enough to execute symbolically.
bool fitsSymbolicExecution(const CollectiveShape &shape);

} // namespace coll

#endif // COLLC_ANALYSIS_SEMANTICS_H
