//===- CollOps.h - Attributes and operations of the coll dialect ----------===//
#ifndef COLLC_DIALECT_COLLOPS_H
#define COLLC_DIALECT_COLLOPS_H

#include "dialect/CollDialect.h"

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/Attributes.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/SymbolTable.h"

#include "dialect/CollEnums.h.inc"

namespace coll {
/// One range of a #coll.launch: from `minBytes` per rank on, `replicas`
/// copies of each threadblock of `threads` threads.
struct LaunchRange {
  int64_t minBytes, replicas, threads;
  bool operator==(const LaunchRange &o) const {
    return minBytes == o.minBytes && replicas == o.replicas && threads == o.threads;
  }
};
inline llvm::hash_code hash_value(const LaunchRange &r) {
  return llvm::hash_combine(r.minBytes, r.replicas, r.threads);
}
} // namespace coll

#define GET_ATTRDEF_CLASSES
#include "dialect/CollAttrs.h.inc"

namespace coll {
/// A step named by its threadblock's id and its own: what a dep holds.
struct StepRef {
  int64_t tb, id;
  bool operator==(const StepRef &o) const { return tb == o.tb && id == o.id; }
};
} // namespace coll

#include "dialect/CollInterfaces.h.inc"

#define GET_OP_CLASSES
#include "dialect/CollOps.h.inc"

namespace coll {
/// Chunks per rank of buffer `name` (`in`, `out` or a scratch buffer) of a
/// collective, or nullopt when there is no such buffer.
std::optional<int64_t> bufferSize(Collective c, int64_t ranks, int64_t chunks,
                                  mlir::DictionaryAttr scratch, llvm::StringRef name);
/// Where chunks `c` live once the in-place aliasing of `in` and `out` is
/// resolved: allreduce, alltoall, broadcast and reduce alias one to one;
/// in-place allgather places `in[r]` at `out[r][r*C ...]`, reducescatter
/// places `out[r]` at `in[r][r*C ...]`.
struct PhysicalRange {
  llvm::StringRef buffer;
  int64_t rank, begin, end;
  bool overlaps(const PhysicalRange &o) const {
    return buffer == o.buffer && rank == o.rank && begin < o.end && o.begin < end;
  }
};
PhysicalRange physicalRange(Collective c, int64_t chunks, bool inplace, ChunkAttr chunk);
/// The same for chunks `buffer[rank][begin .. end]` not (yet) an attribute.
PhysicalRange physicalRange(Collective c, int64_t chunks, bool inplace, llvm::StringRef buffer,
                            int64_t rank, int64_t begin, int64_t end);

/// What a global-view op moves: `dst` <- the reduction of `srcs` (one source
/// for coll.copy), with the op's annotations.
struct TransferChunks {
  ChunkAttr dst;
  llvm::SmallVector<ChunkAttr, 4> srcs;
  mlir::IntegerAttr channel, pipeline;
  ProtocolAttr protocol;
};
/// The chunks of a coll.copy or coll.reduce; nullopt for any other op.
std::optional<TransferChunks> transferChunks(mlir::Operation *op);

/// An operand of a step as a shape (coll.shape) names it: `count` chunks of
/// `buffer` from `value`, or for role `peer` (a get's) the rank `value`.
/// Roles: `peer`, `src` (each chunk read), `dst` (written), `direct`.
struct StepField {
  FieldRole role;
  llvm::StringRef buffer;
  int64_t count, value;
};
/// A step's fields in the order the primitive takes them. With
/// `directSlot`, a sending step without a direct destination gets one that
/// stands in for it (the chunk it sends or writes, buffer ""): a shape
/// that threadblocks with and without direct connections share names one,
/// which the runtime never stores to where the connection is not direct.
llvm::SmallVector<StepField, 4> stepFields(StepOpInterface step, bool directSlot = false);
/// Whether a run's last field is a direct destination (which some of its
/// threadblocks' steps may only stand in for).
bool runHasDirect(RunOp run);
/// Whether multimem run `ld` and the run `st` after it may be one call
/// (`fuse_next`): one step each, every operand affine, `st` waiting for
/// nothing and storing exactly the chunk `ld` reduced.
bool fusesMultimem(RunOp ld, RunOp st);

/// Whether every step's id is its position in its threadblock, as
/// coll-number-steps leaves them and as the emitters, which count steps,
/// need; emits an error at the first step whose id is not.
mlir::LogicalResult verifyStepsNumbered(PlanOp plan);

/// The checks shared by coll.algorithm and coll.plan.
mlir::LogicalResult verifyCollectiveHeader(mlir::Operation *op, int64_t ranks, int64_t chunks,
                                           std::optional<int64_t> root,
                                           mlir::DictionaryAttr scratch);
} // namespace coll

#endif // COLLC_DIALECT_COLLOPS_H
