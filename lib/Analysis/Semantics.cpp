//===- Semantics.cpp - Prove that a program implements its collective -----===//
//
// Runs the global view over a SymbolicState, op by op, and checks the
// postcondition at the end. Linear in chunk operations.
//
//===----------------------------------------------------------------------===//

#include "lib/Analysis/Semantics.h"

#include "lib/Analysis/SymbolicState.h"

#include "mlir/IR/Diagnostics.h"

using namespace mlir;
using namespace coll;

/// Slots the verifier may allocate, so that hand-written IR cannot exhaust
/// memory (the front end stops well below).
static constexpr uint64_t kMaxSlots = uint64_t(1) << 28;

bool coll::fitsSymbolicExecution(const CollectiveShape &shape) {
  uint64_t slots = 0;
  for (StringRef name : {"in", "out"})
    slots += uint64_t(*shape.bufferSize(name));
  if (shape.scratch)
    for (NamedAttribute entry : shape.scratch)
      slots += llvm::cast<IntegerAttr>(entry.getValue()).getUInt();
  return slots <= kMaxSlots / uint64_t(shape.ranks);
}

LogicalResult coll::verifySemantics(AlgorithmOp alg) {
  CollectiveShape shape = CollectiveShape::of(alg);
  if (!fitsSymbolicExecution(shape))
    return alg.emitError("the buffers are too large to verify");
  SymbolicState state(shape);
  const SlotLayout &layout = state.layout();
  std::vector<Operation *> ops; // writer id - 1 -> op, for notes
  SmallVector<uint32_t, 4> read;
  // The runtime clips the last loop's chunks by their position in a unit of
  // C chunks; a value stored at another position would be clipped wrongly.
  bool moves = false;
  for (Operation &op : alg.getBody().front()) {
    std::optional<TransferChunks> t = transferChunks(&op);
    if (!t)
      continue;
    ChunkAttr dst = t->dst;
    ArrayRef<ChunkAttr> srcs = t->srcs;
    ops.push_back(&op);
    if (layout.isReadOnly(dst))
      return op.emitError() << "writes " << chunkName(dst, 0)
                            << ", but 'in' is read-only: declare the algorithm "
                               "'inplace' or write to 'out'";
    read.resize(srcs.size());
    for (int64_t k = 0; k < dst.getCount(); ++k) {
      for (size_t s = 0; s < srcs.size(); ++s) {
        read[s] = state.get(layout.slot(srcs[s], k));
        if (read[s] == 0)
          return op.emitError() << "reads " << chunkName(srcs[s], k)
                                << ", which has not been written yet";
      }
      uint32_t result = read[0];
      if (srcs.size() > 1) {
        std::string why;
        FailureOr<uint32_t> id =
            state.combine(read, [&](size_t s) { return chunkName(srcs[s], k); }, why);
        if (failed(id))
          return op.emitError() << why;
        result = *id;
      }
      state.set(layout.slot(dst, k), result, ops.size());
      StringRef buffer = dst.getBuffer().getValue();
      int64_t index = state.value(result).index;
      if ((buffer == "in" || buffer == "out") && index >= 0 &&
          index % shape.chunks != (dst.getIndex() + k) % shape.chunks)
        moves = true;
    }
  }
  auto movesChunks = CollDialect::of(alg.getContext())->getMovesChunksAttrHelper();
  if (moves)
    movesChunks.setAttr(alg, UnitAttr::get(alg.getContext()));
  else if (movesChunks.isAttrPresent(alg))
    movesChunks.removeAttr(alg);
  return state.checkPostcondition(alg, [&](uint32_t w) { return ops[w - 1]->getLoc(); });
}
