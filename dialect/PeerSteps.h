//===- PeerSteps.h - Threadblocks that reach other ranks' buffers --*- C++ -*-===//
//
// Multimem and peer-window steps load and store other ranks' buffers
// directly. The emitter flags such threadblocks for the runtime, and
// coll-choose-channels keeps their plans to one replica (their barriers
// count threadblocks): both ask here.
//
//===----------------------------------------------------------------------===//
#ifndef COLLC_DIALECT_PEERSTEPS_H
#define COLLC_DIALECT_PEERSTEPS_H

#include "dialect/CollOps.h"

namespace coll {

/// Whether a threadblock has NVLink multicast steps.
inline bool usesMultimem(ThreadblockOp tb) {
  return llvm::any_of(tb.getBody().front(), [](mlir::Operation &op) {
    return llvm::isa<MultimemLdReduceOp, MultimemStOp>(op);
  });
}

/// Whether a threadblock reaches other ranks' buffers: multimem or
/// peer-window steps.
inline bool usesPeers(ThreadblockOp tb) {
  return llvm::any_of(tb.getBody().front(), [](mlir::Operation &op) {
    return llvm::isa<MultimemLdReduceOp, MultimemStOp, ReadReduceOp, PutOp, GetOp>(op);
  });
}

} // namespace coll

#endif // COLLC_DIALECT_PEERSTEPS_H
