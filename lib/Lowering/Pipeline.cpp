//===- Pipeline.cpp - Sub-chunks and parallel instances -------------------===//
//
// After this pass each algorithm works on `chunks x instances x pipeline`
// chunks: every op is repeated per instance (on its own channels) and split
// into pipeline pieces. Each sub-chunk follows the path its chunk followed,
// so the program still implements its collective.
//
//===----------------------------------------------------------------------===//

#include "dialect/CollOps.h"
#include "lib/Lowering/Passes.h"

#include "mlir/IR/Builders.h"

#include <numeric>

namespace coll {
#define GEN_PASS_DEF_COLLPIPELINEPASS
#include "lib/Lowering/Passes.h.inc"
} // namespace coll

using namespace mlir;
using namespace coll;

namespace {

struct CollPipelinePass : coll::impl::CollPipelinePassBase<CollPipelinePass> {
  using Base::Base;

  void runOnOperation() override {
    if (pipeline < 1 || instances < 1) {
      getOperation().emitError("pipeline and instances must be at least 1");
      return signalPassFailure();
    }
    for (auto alg : getOperation().getOps<AlgorithmOp>())
      if (failed(split(alg)))
        return signalPassFailure();
  }

  LogicalResult split(AlgorithmOp alg) {
    Block &body = alg.getBody().front();
    int64_t depth = pipeline, channels = 1;
    for (Operation &op : body) {
      if (auto p = op.getAttrOfType<IntegerAttr>("pipeline"))
        depth = std::lcm(depth, p.getInt());
      if (auto c = op.getAttrOfType<IntegerAttr>("channel"))
        channels = std::max(channels, c.getInt() + 1);
    }
    int64_t factor = depth * instances;
    if (factor == 1)
      return success();
    if (factor > (int64_t(1) << 40) / (int64_t(alg.getChunks()) * int64_t(alg.getRanks())))
      return alg.emitError() << "pipeline x instances = " << factor << " is too large";

    int64_t widest = 1; // chunks of the widest op, each now its own message
    for (Operation &op : body)
      widest = std::max<int64_t>(widest, llvm::isa<CopyOp>(op)
                                             ? llvm::cast<CopyOp>(op).getDst().getCount()
                                             : llvm::cast<ReduceOp>(op).getDst().getCount());
    MLIRContext *ctx = &getContext();
    OpBuilder b(ctx);
    auto sub = [&](ChunkAttr c, int64_t chunk, int64_t from, int64_t count) {
      return ChunkAttr::get(ctx, c.getBuffer(), c.getRank(), chunk * factor + from, count);
    };
    SmallVector<Operation *> old;
    for (Operation &op : body)
      old.push_back(&op);
    b.setInsertionPointToEnd(&body);
    for (int64_t j = 0; j < instances; ++j) {
      for (Operation *op : old) {
        auto p = op->getAttrOfType<IntegerAttr>("pipeline");
        int64_t pieces = p ? p.getInt() : pipeline, width = depth / pieces;
        auto channel = op->getAttrOfType<IntegerAttr>("channel");
        IntegerAttr ch = b.getI64IntegerAttr((channel ? channel.getInt() : 0) + j * channels);
        auto protocol = op->getAttrOfType<ProtocolAttr>("protocol");
        ChunkAttr dst = llvm::isa<CopyOp>(op) ? llvm::cast<CopyOp>(op).getDst()
                                              : llvm::cast<ReduceOp>(op).getDst();
        for (int64_t t = 0; t < dst.getCount(); ++t)
          for (int64_t q = 0; q < pieces; ++q) {
            int64_t from = j * depth + q * width;
            auto place = [&](ChunkAttr c) { return sub(c, c.getIndex() + t, from, width); };
            Operation *made;
            if (auto copy = llvm::dyn_cast<CopyOp>(op)) {
              made = CopyOp::create(b, op->getLoc(), place(copy.getSrc()), place(dst), ch,
                                    protocol, IntegerAttr());
            } else {
              SmallVector<Attribute> srcs;
              for (ChunkAttr s : llvm::cast<ReduceOp>(op).getSources())
                srcs.push_back(place(s));
              made = ReduceOp::create(b, op->getLoc(), b.getArrayAttr(srcs), place(dst), ch,
                                      protocol, IntegerAttr());
            }
            // Piece q starts q steps late: a wavefront, so that a rank
            // forwards piece q before it sends piece q + 1.
            if (q)
              made->setAttr("coll.piece", b.getI64IntegerAttr(q));
          }
      }
    }
    for (Operation *op : old)
      op->erase();
    alg.setChunksAttr(b.getI64IntegerAttr(alg.getChunks() * factor));
    // A rank may inject every piece of its own data before it can forward
    // any: its connections need that many slots (NCCL's have 8).
    alg->setAttr("fifo_depth", b.getI64IntegerAttr(depth * widest));
    if (auto scratch = alg.getScratchAttr()) {
      SmallVector<NamedAttribute> scaled;
      for (NamedAttribute e : scratch)
        scaled.push_back(b.getNamedAttr(
            e.getName(), b.getI64IntegerAttr(llvm::cast<IntegerAttr>(e.getValue()).getInt() *
                                             factor)));
      alg.setScratchAttr(b.getDictionaryAttr(scaled));
    }
    return success();
  }
};

} // namespace
