//===- ToRankStreams.cpp - Global view to per-rank threadblock streams -----===//
//
// After this pass every `coll.algorithm` is a `coll.plan`: per rank, per
// threadblock, ordered sends, receives and local steps whose order on each
// connection matches on both sides, with explicit cross-threadblock deps.
// Steps are ordered by (dependency depth, program order): every wait —
// on data, on a matching send, on FIFO credit — points to a smaller key, so
// the unfused plan cannot deadlock. Ranks of several threadblocks run each
// level's sends first where that is as safe (Lowering::sendsFirst), so that
// every rank of a ring orders its steps alike.
//
//===----------------------------------------------------------------------===//

#include "lib/Lowering/Passes.h"
#include "lib/Lowering/RankStreams.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/Threading.h"
#include "llvm/ADT/DenseSet.h"

#include <numeric>

namespace coll {
#define GEN_PASS_DEF_COLLTORANKSTREAMSPASS
#include "lib/Lowering/Passes.h.inc"
} // namespace coll

using namespace mlir;
using namespace coll;
using namespace coll::streams;

/// The plan that replaces `alg`, or null after an error.
PlanOp Lowering::run() {
  lowerOps();
  placeSteps();
  OpBuilder builder(alg);
  PlanOp plan = createPlan(builder);
  std::vector<std::vector<ProtocolAttr>> forced;
  if (failed(threadblockProtocols(forced))) {
    plan.erase();
    return nullptr;
  }
  std::vector<IntegerAttr> ids = stepIds(builder);
  std::vector<Block *> bodies;
  for (int64_t r = 0; r < shape.ranks; ++r) {
    auto rankOp = RankOp::create(builder, alg.getLoc(), builder.getI64IntegerAttr(r));
    bodies.push_back(&rankOp.getBody().emplaceBlock());
  }
  // Each rank's threadblocks are built apart, so in parallel.
  std::vector<int64_t> order(shape.ranks);
  std::iota(order.begin(), order.end(), 0);
  parallelForEach(alg.getContext(), order, [&](int64_t r) {
    buildRank(r, bodies[r], forced[r], ids);
    // The rank's ops are built: its steps' memory goes to the next rank's.
    std::vector<Threadblock>().swap(tbs[r]);
    std::vector<Step *>().swap(byRank[r]);
    arenas[r] = llvm::BumpPtrAllocator();
  });
  return plan;
}

void Lowering::placeSteps() {
  int64_t ranks = shape.ranks;
  tbs.assign(ranks, {});
  for (int64_t r = 0; r < ranks; ++r) {
    std::stable_sort(byRank[r].begin(), byRank[r].end(),
                     [](const Step *a, const Step *b) { return a->key() < b->key(); });
    assignThreadblocks(r, byRank[r]);
  }
  // Ordering for fusion lets a threadblock run a step before one with a
  // smaller key. If that can stall the connections, fall back to key order,
  // which cannot (every wait points to a smaller key).
  if (partners && mayDeadlock()) {
    pairing = false;
    for (std::vector<Step *> &steps : byRank)
      for (Step *s : steps)
        setPartner(s, nullptr);
    tbs.assign(ranks, {});
    for (int64_t r = 0; r < ranks; ++r)
      assignThreadblocks(r, byRank[r]);
  }
}

PlanOp Lowering::createPlan(OpBuilder &builder) {
  auto plan = PlanOp::create(builder, alg.getLoc(), alg.getSymNameAttr(), alg.getCollectiveAttr(),
                             alg.getRanksAttr(), alg.getChunksAttr(), alg.getRootAttr(),
                             alg.getInplaceAttr(), alg.getScratchAttr(), alg.getRankMapAttr(),
                             IntegerAttr(), IntegerAttr());
  plan.setTopologyAttr(alg.getTopologyAttr());
  plan.setFifoDepthAttr(alg.getFifoDepthAttr());
  auto movesChunks = CollDialect::of(alg.getContext())->getMovesChunksAttrHelper();
  if (UnitAttr moves = movesChunks.getAttr(alg))
    movesChunks.setAttr(plan, moves);
  builder.setInsertionPointToEnd(&plan.getBody().emplaceBlock());
  return plan;
}

LogicalResult Lowering::threadblockProtocols(std::vector<std::vector<ProtocolAttr>> &forced) {
  // A threadblock runs one protocol: that of its @protocol statements.
  forced.assign(shape.ranks, {});
  for (int64_t r = 0; r < shape.ranks; ++r)
    for (Threadblock &tb : tbs[r]) {
      ProtocolAttr &p = forced[r].emplace_back();
      for (Step *s : tb.steps) {
        if (!s->protocol)
          continue;
        if (p && p != s->protocol) {
          emitError(s->loc) << "@protocol(" << stringifyProtocol(s->protocol.getValue())
                            << ") conflicts with @protocol(" << stringifyProtocol(p.getValue())
                            << ") of another statement on the same threadblock of rank " << r
                            << "; put them on different channels";
          return failure();
        }
        p = s->protocol;
      }
    }
  return success();
}

std::vector<IntegerAttr> Lowering::stepIds(OpBuilder &builder) const {
  // Step ids are positions; made once, not once per step.
  size_t longest = 0;
  for (const std::vector<Step *> &steps : byRank)
    for (const Step *s : steps)
      longest = std::max(longest, size_t(s->pos) + 1);
  std::vector<IntegerAttr> ids;
  for (size_t pos = 0; pos < longest; ++pos)
    ids.push_back(builder.getI64IntegerAttr(pos));
  return ids;
}

llvm::DenseMap<Step *, SmallVector<int64_t, 4>> Lowering::crossThreadblockDeps(int64_t r) {
  // The latest conflicting step of each other threadblock, over the rank's
  // steps in key order (none with one threadblock).
  llvm::DenseMap<uint64_t, Step *> lastWrite;
  llvm::DenseMap<uint64_t, SmallVector<Step *, 2>> readsSince;
  llvm::DenseMap<Step *, SmallVector<int64_t, 4>> deps;
  for (Step *s : tbs[r].size() > 1 ? ArrayRef<Step *>(byRank[r]) : ArrayRef<Step *>()) {
    std::map<int, int> latest; // tb -> pos
    auto need = [&](Step *other) {
      if (other && other->tb != s->tb)
        latest[other->tb] = std::max(latest[other->tb], other->pos);
    };
    auto reads = [&](ChunkAttr c) {
      for (int64_t k = 0; k < c.getCount(); ++k) {
        uint64_t slot = slots.slot(c, k);
        need(lastWrite.lookup(slot));
        readsSince[slot].push_back(s);
      }
    };
    if (s->src)
      reads(s->src);
    if (s->srcs)
      for (Attribute a : s->srcs)
        reads(llvm::cast<ChunkAttr>(a));
    if (s->dst)
      for (int64_t k = 0; k < s->dst.getCount(); ++k) {
        uint64_t slot = slots.slot(s->dst, k);
        need(lastWrite.lookup(slot));
        for (Step *reader : readsSince[slot])
          if (reader != s)
            need(reader);
        readsSince[slot].clear();
        lastWrite[slot] = s;
      }
    for (auto [tb, pos] : latest)
      deps[s].append({int64_t(tb), int64_t(pos)});
  }
  return deps;
}

/// The op of step `s`, made at the end of `b`'s block.
static void createStep(OpBuilder &b, const Step *s, IntegerAttr id, DenseI64ArrayAttr d) {
  switch (s->kind) {
  case StepKind::Send:
    SendOp::create(b, s->loc, s->src, id, d, ChunkAttr());
    break;
  case StepKind::Recv:
    RecvOp::create(b, s->loc, s->dst, id, d);
    break;
  case StepKind::RecvReduceCopy:
    RecvReduceCopyOp::create(b, s->loc, s->src, s->dst, id, d);
    break;
  case StepKind::LocalCopy:
    LocalCopyOp::create(b, s->loc, s->src, s->dst, id, d);
    break;
  case StepKind::LocalReduce:
    LocalReduceOp::create(b, s->loc, s->srcs, s->dst, id, d);
    break;
  case StepKind::MultimemLdReduce:
    MultimemLdReduceOp::create(b, s->loc, s->src, s->dst, id, d);
    break;
  case StepKind::MultimemSt:
    MultimemStOp::create(b, s->loc, s->src, s->dst, id, d);
    break;
  case StepKind::ReadReduce:
    ReadReduceOp::create(b, s->loc, s->src, s->dst, id, d);
    break;
  case StepKind::Put:
    PutOp::create(b, s->loc, s->src, s->dst, id, d);
    break;
  case StepKind::Get:
    GetOp::create(b, s->loc, s->src, s->dst, id, d);
    break;
  }
}

void Lowering::buildRank(int64_t r, Block *body, ArrayRef<ProtocolAttr> forced,
                         ArrayRef<IntegerAttr> ids) {
  OpBuilder inRank = OpBuilder::atBlockEnd(body);
  llvm::DenseMap<Step *, SmallVector<int64_t, 4>> deps = crossThreadblockDeps(r);
  for (size_t t = 0; t < tbs[r].size(); ++t) {
    Threadblock &tb = tbs[r][t];
    auto opt = [&](int64_t v) { return v < 0 ? IntegerAttr() : inRank.getI64IntegerAttr(v); };
    auto tbOp = ThreadblockOp::create(
        inRank, alg.getLoc(), inRank.getI64IntegerAttr(t), opt(tb.recv), opt(tb.send),
        inRank.getI64IntegerAttr(tb.channel), forced[t], UnitAttr(), UnitAttr(), IntegerAttr());
    OpBuilder b = OpBuilder::atBlockEnd(&tbOp.getBody().emplaceBlock());
    for (Step *s : tb.steps) {
      DenseI64ArrayAttr d;
      if (!deps.empty())
        if (auto it = deps.find(s); it != deps.end())
          d = b.getDenseI64ArrayAttr(it->second);
      createStep(b, s, ids[s->pos], d);
    }
  }
}

namespace {

// Every threadblock sends to at most one peer and receives from at most one,
// so a rank needs at least as many as it has peers on either side, counting
// copies between ranks that are not peer steps. Refusing such an algorithm
// before it is lowered saves making its millions of steps (a one-shot
// allreduce at a thousand ranks) only for coll-assign-channels to refuse.
LogicalResult checkPeers(AlgorithmOp alg, int64_t most) {
  CollDialect *coll = alg->getContext()->getLoadedDialect<CollDialect>();
  const int64_t ranks = alg.getRanks();
  std::vector<llvm::DenseSet<int64_t>> sendsTo(ranks), receivesFrom(ranks);
  for (Operation &op : alg.getBody().front()) {
    std::optional<TransferChunks> t = transferChunks(&op);
    if (!t || coll->getMultimemAttrHelper().isAttrPresent(&op) ||
        coll->getReadReduceAttrHelper().isAttrPresent(&op) ||
        coll->getGetAttrHelper().isAttrPresent(&op) ||
        coll->getMultimemStAttrHelper().isAttrPresent(&op) ||
        coll->getPutAttrHelper().isAttrPresent(&op))
      continue;
    const int64_t to = t->dst.getRank();
    for (ChunkAttr src : t->srcs) {
      const int64_t from = src.getRank();
      if (from == to || from < 0 || to < 0 || from >= ranks || to >= ranks)
        continue;
      sendsTo[from].insert(to);
      receivesFrom[to].insert(from);
    }
  }
  for (int64_t r = 0; r < ranks; ++r) {
    const size_t peers = std::max(sendsTo[r].size(), receivesFrom[r].size());
    if (int64_t(peers) > most)
      return alg.emitError() << "rank " << r << " needs at least " << peers
                             << " threadblocks, one for each peer it "
                             << (sendsTo[r].size() >= receivesFrom[r].size() ? "sends to"
                                                                             : "receives from")
                             << "; at most " << most
                             << " can run at once (use fewer peers per channel or fewer "
                                "instances)";
  }
  return success();
}

struct CollToRankStreamsPass : coll::impl::CollToRankStreamsPassBase<CollToRankStreamsPass> {
  using Base::Base;

  void runOnOperation() override {
    for (auto alg : getOperation().getOps<AlgorithmOp>())
      if (failed(checkPeers(alg, maxThreadblocks)))
        return signalPassFailure();
    for (auto alg : llvm::make_early_inc_range(getOperation().getOps<AlgorithmOp>())) {
      PlanOp plan = Lowering(alg, maxThreadblocks).run();
      alg.erase();
      if (!plan)
        return signalPassFailure();
    }
  }
};
} // namespace
