//===- SplitChunks.cpp - Sub-chunks and parallel instances ----------------===//
//
// After this pass each algorithm works on `chunks x instances x pipeline`
// chunks: every op is repeated per instance (on its own channels) and split
// into pipeline pieces, and an op over more than `stream` chunks streams as
// ops of at most that many. Each sub-chunk follows the path its chunk
// followed, so the program still implements its collective. Splitting
// multiplies the program, so the pass first bounds what it would build
// (docs/guide.md, "Limits") and refuses larger requests before allocating
// anything.
//
//===----------------------------------------------------------------------===//

#include "dialect/CollOps.h"
#include "lib/Analysis/SymbolicState.h"
#include "lib/Lowering/Passes.h"

#include "mlir/IR/Builders.h"
#include "llvm/Support/MathExtras.h"

#include <numeric>

namespace coll {
#define GEN_PASS_DEF_COLLSPLITCHUNKSPASS
#include "lib/Lowering/Passes.h.inc"
} // namespace coll

using namespace mlir;
using namespace coll;

namespace {

// The lowered plan's steps over all ranks: the front end's limit on chunks
// copied or reduced (2^24, lib/Frontend/Elaborate.h), now counted in steps.
constexpr int64_t kMaxPlanSteps = int64_t(1) << 24;
// Chunk slots over all ranks and buffers after splitting: the most the plan
// verifier executes symbolically (lib/Analysis/Semantics.cpp), and what
// coll-to-rank-streams allocates per slot.
constexpr int64_t kMaxSplitSlots = int64_t(1) << 28;

/// Steps an op lowers to, at most: a send and a receive per remote source,
/// one local step for all local ones (coll-to-rank-streams).
int64_t stepsPerOp(const TransferChunks &t) {
  int64_t remote = 0, local = 0;
  for (ChunkAttr src : t.srcs)
    ++(src.getRank() == t.dst.getRank() ? local : remote);
  return 2 * remote + (local ? 1 : 0);
}

/// Ops that an op over `count` chunks streams as: at most `stream` chunks
/// each (0: any number).
int64_t streamParts(int64_t count, int64_t stream) {
  return stream > 0 && count > stream ? llvm::divideCeil(count, stream) : 1;
}

/// a * b, or nullopt when it does not fit in int64_t.
std::optional<int64_t> mul(int64_t a, int64_t b) {
  int64_t r;
  if (llvm::MulOverflow(a, b, r))
    return std::nullopt;
  return r;
}

struct CollSplitChunksPass : coll::impl::CollSplitChunksPassBase<CollSplitChunksPass> {
  using Base::Base;

  void runOnOperation() override {
    if (pipeline < 1 || instances < 1 || stream < 0) {
      getOperation().emitError("pipeline and instances must be at least 1, stream at least 0");
      return signalPassFailure();
    }
    if (failed(split(getOperation())))
      signalPassFailure();
  }

  /// Afterwards `alg` works on split chunks, unless it would grow too large.
  LogicalResult split(AlgorithmOp alg) {
    int64_t depth = pipeline, channels = 1;
    if (failed(pipelineShape(alg, depth, channels)))
      return failure();
    std::optional<int64_t> factor = mul(depth, instances);
    if (!factor)
      return tooLarge(alg, alg, "steps", kMaxPlanSteps);
    if (failed(checkSteps(alg, depth)) || failed(checkSlots(alg, *factor)))
      return failure();
    if (*factor == 1 && !streams(alg))
      return success();
    splitOps(alg, depth, channels, *factor);
    if (*factor != 1)
      scaleAlgorithm(alg, depth, *factor);
    return success();
  }

  /// Fails, blaming `at`'s own @pipeline where it has one, else the options.
  LogicalResult tooLarge(AlgorithmOp alg, Operation *at, const char *what, int64_t limit) {
    InFlightDiagnostic d = at->emitError();
    if (at != alg.getOperation())
      d << "@pipeline(" << transferChunks(at)->pipeline.getInt() << ") makes";
    else if (pipeline != 1 || instances != 1 || stream)
      d << "pipeline " << int64_t(pipeline) << " x instances " << int64_t(instances)
        << (stream ? " streamed " + std::to_string(stream) + " chunks a step" : "") << " makes";
    else
      d << "lowering makes";
    d << " the plan too large: more than " << limit << " " << what << " over all ranks";
    return failure();
  }

  /// Afterwards `depth` is the pieces every chunk is split into (a multiple
  /// of each op's @pipeline) and `channels` the channels one instance uses.
  LogicalResult pipelineShape(AlgorithmOp alg, int64_t &depth, int64_t &channels) {
    for (Operation &op : alg.getBody().front())
      if (std::optional<TransferChunks> t = transferChunks(&op)) {
        if (t->pipeline) {
          int64_t p = t->pipeline.getInt();
          std::optional<int64_t> lcm = mul(depth / std::gcd(depth, p), p);
          if (!lcm)
            return tooLarge(alg, &op, "steps", kMaxPlanSteps);
          depth = *lcm;
        }
        if (t->channel)
          channels = std::max(channels, t->channel.getInt() + 1);
      }
    return success();
  }

  /// Whether some op is wider than `stream` chunks (before splitting: a
  /// piece is never wider than its op).
  bool streams(AlgorithmOp alg) {
    for (Operation &op : alg.getBody().front())
      if (std::optional<TransferChunks> t = transferChunks(&op))
        if (streamParts(t->dst.getCount(), stream) > 1)
          return true;
    return false;
  }

  /// Succeeds only if the split program lowers to at most kMaxPlanSteps.
  LogicalResult checkSteps(AlgorithmOp alg, int64_t depth) {
    // Each op becomes one per piece and instance once split.
    // The ops are read again rather than kept: a program of millions of ops
    // mostly needs no splitting, and keeping them cost a third of its memory.
    int64_t steps = 0;
    for (Operation &each : alg.getBody().front()) {
      std::optional<TransferChunks> chunks = transferChunks(&each);
      if (!chunks)
        continue;
      Operation *op = &each;
      const TransferChunks &t = *chunks;
      int64_t pieces = t.pipeline ? t.pipeline.getInt() : int64_t(pipeline);
      std::optional<int64_t> opSteps = mul(stepsPerOp(t), pieces);
      if (opSteps)
        opSteps = mul(*opSteps, instances);
      // Each piece, count x depth / pieces sub-chunks, streams in parts.
      if (opSteps)
        opSteps = mul(*opSteps, streamParts(t.dst.getCount() * (depth / pieces), stream));
      if (!opSteps || *opSteps > kMaxPlanSteps - steps)
        return tooLarge(alg, t.pipeline ? op : alg.getOperation(), "steps", kMaxPlanSteps);
      steps += *opSteps;
    }
    return success();
  }

  /// Succeeds only if the split buffers have at most kMaxSplitSlots slots.
  LogicalResult checkSlots(AlgorithmOp alg, int64_t factor) {
    CollectiveShape shape = CollectiveShape::of(alg);
    int64_t perRank = *shape.bufferSize("in") + *shape.bufferSize("out");
    if (shape.scratch)
      for (NamedAttribute e : shape.scratch)
        perRank += llvm::cast<IntegerAttr>(e.getValue()).getInt();
    std::optional<int64_t> slots = mul(factor, perRank * shape.ranks);
    if (!slots || *slots > kMaxSplitSlots)
      return tooLarge(alg, alg, "chunk slots of all buffers", kMaxSplitSlots);
    return success();
  }

  /// Afterwards every op is replaced by its parts, one per instance and
  /// piece, each on sub-chunks of a chunk split `factor` ways.
  void splitOps(AlgorithmOp alg, int64_t depth, int64_t channels, int64_t factor) {
    Block &body = alg.getBody().front();
    SmallVector<std::pair<Operation *, TransferChunks>> old;
    for (Operation &op : body)
      if (std::optional<TransferChunks> t = transferChunks(&op))
        old.push_back({&op, *t});

    MLIRContext *ctx = &getContext();
    OpBuilder b = OpBuilder::atBlockEnd(&body);
    // Each op becomes its parts in its place: they touch disjoint
    // sub-chunks, so the program does what it did. Instance j's parts
    // of two ops need not cover the same sub-chunks (below), hence not
    // instance after instance.
    for (auto &[op, t] : old) {
      int64_t pieces = t.pipeline ? t.pipeline.getInt() : int64_t(pipeline);
      int64_t width = depth / pieces;
      int64_t count = t.dst.getCount();
      for (int64_t j = 0; j < instances; ++j) {
        // Unsplit (only streamed), an op keeps its channel or none.
        IntegerAttr ch =
            factor == 1 ? t.channel
                        : b.getI64IntegerAttr((t.channel ? t.channel.getInt() : 0) + j * channels);
        for (int64_t q = 0; q < pieces; ++q) {
          // Piece q of instance j: of each chunk range, the same share,
          // contiguous, so that an op over many chunks stays one op per
          // piece (one per chunk and piece multiplied the plan by its
          // width). For a single chunk it is sub-chunks j * depth + q *
          // width on.
          int64_t from = (j * pieces + q) * count * width;
          // A piece wider than `stream` streams as parts in order, each
          // on a FIFO slot of its own, as NCCL's primitives stream a
          // large send through their slots.
          int64_t n = count * width, parts = streamParts(n, stream);
          for (int64_t s = 0; s < parts; ++s) {
            int64_t at = from + s * n / parts, len = from + (s + 1) * n / parts - at;
            auto place = [&](ChunkAttr c) {
              return ChunkAttr::get(ctx, c.getBuffer(), c.getRank(), c.getIndex() * factor + at,
                                    len);
            };
            Operation *made;
            if (llvm::isa<CopyOp>(op)) {
              made = CopyOp::create(b, op->getLoc(), place(t.srcs[0]), place(t.dst), ch, t.protocol,
                                    IntegerAttr());
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
              CollDialect::of(b.getContext())
                  ->getPieceAttrHelper()
                  .setAttr(made, b.getI64IntegerAttr(q));
          }
        }
      }
    }
    for (auto &[op, t] : old)
      op->erase();
  }

  /// Afterwards the algorithm's chunk count, FIFO depth and scratch sizes
  /// describe the split program.
  void scaleAlgorithm(AlgorithmOp alg, int64_t depth, int64_t factor) {
    OpBuilder b(alg.getContext());
    alg.setChunksAttr(b.getI64IntegerAttr(alg.getChunks() * factor));
    // A rank may inject every piece of its own data before it can forward
    // any: its connections need that many slots (NCCL's have 8).
    alg.setFifoDepthAttr(b.getI64IntegerAttr(depth));
    if (auto scratch = alg.getScratchAttr()) {
      SmallVector<NamedAttribute> scaled;
      for (NamedAttribute e : scratch)
        scaled.push_back(b.getNamedAttr(
            e.getName(),
            b.getI64IntegerAttr(llvm::cast<IntegerAttr>(e.getValue()).getInt() * factor)));
      alg.setScratchAttr(b.getDictionaryAttr(scaled));
    }
  }
};

} // namespace
