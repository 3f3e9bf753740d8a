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
    SmallVector<std::pair<Operation *, TransferChunks>> old;
    int64_t depth = pipeline, channels = 1;
    int64_t widest = 1; // chunks of the widest op, each to become a message
    for (Operation &op : body)
      if (std::optional<TransferChunks> t = transferChunks(&op)) {
        if (t->pipeline)
          depth = std::lcm(depth, t->pipeline.getInt());
        if (t->channel)
          channels = std::max(channels, t->channel.getInt() + 1);
        widest = std::max(widest, t->dst.getCount());
        old.push_back({&op, *t});
      }
    int64_t factor = depth * instances;
    if (factor == 1)
      return success();
    if (factor > (int64_t(1) << 40) / (int64_t(alg.getChunks()) * int64_t(alg.getRanks())))
      return alg.emitError() << "pipeline x instances = " << factor << " is too large";

    MLIRContext *ctx = &getContext();
    OpBuilder b = OpBuilder::atBlockEnd(&body);
    for (int64_t j = 0; j < instances; ++j) {
      for (auto &[op, t] : old) {
        int64_t pieces = t.pipeline ? t.pipeline.getInt() : int64_t(pipeline);
        int64_t width = depth / pieces;
        IntegerAttr ch =
            b.getI64IntegerAttr((t.channel ? t.channel.getInt() : 0) + j * channels);
        for (int64_t k = 0; k < t.dst.getCount(); ++k)
          for (int64_t q = 0; q < pieces; ++q) {
            // Chunk k of the op, piece q of instance j.
            int64_t from = j * depth + q * width;
            auto place = [&](ChunkAttr c) {
              return ChunkAttr::get(ctx, c.getBuffer(), c.getRank(),
                                    (c.getIndex() + k) * factor + from, width);
            };
            Operation *made;
            if (llvm::isa<CopyOp>(op)) {
              made = CopyOp::create(b, op->getLoc(), place(t.srcs[0]), place(t.dst), ch,
                                    t.protocol, IntegerAttr());
            } else {
              SmallVector<Attribute> srcs;
              for (ChunkAttr src : t.srcs)
                srcs.push_back(place(src));
              made = ReduceOp::create(b, op->getLoc(), b.getArrayAttr(srcs), place(t.dst), ch,
                                      t.protocol, IntegerAttr());
            }
            // Piece q starts q steps late: a wavefront, so that a rank
            // forwards piece q before it sends piece q + 1.
            if (q)
              made->setAttr("coll.piece", b.getI64IntegerAttr(q));
          }
      }
    }
    for (auto &[op, t] : old)
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
