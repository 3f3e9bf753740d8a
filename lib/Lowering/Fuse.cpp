//===- Fuse.cpp - Join receives with the sends that forward them ----------===//
//
// After this pass no threadblock holds a receive (or receive-reduce)
// immediately followed by a send of the chunks it just wrote: the pair is
// one `recv_copy_send`, `recv_reduce_copy_send`, or `recv_reduce_send` when
// the stored result would never be read. A ring allreduce then lowers, per
// chunk, to 1 send, n-2 recv_reduce_send, 1 recv_reduce_copy_send,
// n-2 recv_copy_send and 1 recv.
//
// The fusion is a rewrite pattern on each send, applied once to every send
// in order (a fused step is never fused again, so nothing is left for a
// driver to revisit); what it needs to know beyond the pair (who waits for
// which step, who reads a stored value later) is found per rank before any
// rewrite, keyed by step ids, which rewrites keep.
//
//===----------------------------------------------------------------------===//

#include "dialect/CollOps.h"
#include "lib/Analysis/SymbolicState.h"
#include "lib/Lowering/Passes.h"

#include "mlir/IR/PatternMatch.h"
#include "mlir/IR/Threading.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"

#include <deque>

namespace coll {
#define GEN_PASS_DEF_COLLFUSEPASS
#include "lib/Lowering/Passes.h.inc"
} // namespace coll

using namespace mlir;
using namespace coll;

namespace {

using StepKey = std::pair<int64_t, int64_t>; // (threadblock id, step id)

/// The steps of one rank in an order that respects threadblock order and
/// deps. Conflicting accesses to a chunk are ordered by deps, so any such
/// order tells what a write's next reader or writer is. Shorter than all
/// steps when deps form a cycle.
std::vector<Operation *> topologicalOrder(RankOp rank) {
  SmallVector<SmallVector<Operation *>> tbs;
  bool deps = false;
  for (auto tb : rank.getBody().front().getOps<ThreadblockOp>()) {
    tbs.emplace_back();
    for (auto step : tb.getBody().front().getOps<StepOpInterface>()) {
      deps |= bool(step.getDepsAttr());
      tbs.back().push_back(step);
    }
  }
  // Without deps, the threadblocks one after another are an order.
  if (!deps) {
    std::vector<Operation *> order;
    for (ArrayRef<Operation *> steps : tbs)
      order.insert(order.end(), steps.begin(), steps.end());
    return order;
  }
  llvm::DenseMap<StepKey, std::pair<size_t, size_t>> where; // -> (tb, position)
  for (auto [t, tb] : llvm::enumerate(rank.getBody().front().getOps<ThreadblockOp>()))
    for (auto [p, step] : llvm::enumerate(tbs[t]))
      where[{int64_t(tb.getId()), int64_t(llvm::cast<StepOpInterface>(step).getId())}] = {t, p};
  // waiters[step]: steps (tb, position) that depend on it.
  llvm::DenseMap<Operation *, SmallVector<std::pair<size_t, size_t>>> waiters;
  std::vector<std::vector<unsigned>> pending(tbs.size());
  for (size_t t = 0; t < tbs.size(); ++t) {
    pending[t].assign(tbs[t].size(), 0);
    for (size_t p = 0; p < tbs[t].size(); ++p)
      for (StepRef dep : llvm::cast<StepOpInterface>(tbs[t][p]).getDepRefs()) {
        auto [wt, wp] = where.at({dep.tb, dep.id});
        waiters[tbs[wt][wp]].push_back({t, p});
        ++pending[t][p];
      }
  }
  std::vector<Operation *> order;
  std::vector<size_t> next(tbs.size(), 0);
  std::deque<size_t> ready;
  for (size_t t = 0; t < tbs.size(); ++t)
    ready.push_back(t);
  while (!ready.empty()) {
    size_t t = ready.front();
    ready.pop_front();
    while (next[t] < tbs[t].size() && pending[t][next[t]] == 0) {
      Operation *op = tbs[t][next[t]++];
      order.push_back(op);
      auto it = waiters.find(op);
      if (it == waiters.end())
        continue;
      for (auto [wt, wp] : it->second)
        if (--pending[wt][wp] == 0 && next[wt] == wp)
          ready.push_back(wt);
    }
  }
  return order;
}

StepKey keyOf(Operation *step) {
  return {int64_t(step->getParentOfType<ThreadblockOp>().getId()),
          int64_t(llvm::cast<StepOpInterface>(step).getId())};
}

/// What fusing a pair in one rank depends on beyond the pair itself.
class RankFacts {
public:
  RankFacts(PlanOp plan, RankOp rank) : slots(CollectiveShape::of(plan)) {
    std::vector<Operation *> order = topologicalOrder(rank);
    size_t total = 0;
    for (auto tb : rank.getBody().front().getOps<ThreadblockOp>())
      total += tb.getBody().front().getOperations().size();
    cyclic = order.size() != total;
    if (cyclic)
      return; // leave the rank as it is for coll-verify-plan to report
    // Accesses of each slot in that order: (position, writes).
    position.reserve(order.size());
    for (size_t i = 0; i < order.size(); ++i) {
      position[keyOf(order[i])] = i;
      auto step = llvm::cast<StepOpInterface>(order[i]);
      for (ChunkAttr c : step.getReadChunks())
        for (int64_t k = 0; k < c.getCount(); ++k)
          accesses[slots.slot(c, k)].push_back({i, false});
      if (ChunkAttr written = step.getWrittenChunk())
        for (int64_t k = 0; k < written.getCount(); ++k)
          accesses[slots.slot(written, k)].push_back({i, true});
      for (StepRef dep : step.getDepRefs())
        waited.insert({dep.tb, dep.id});
    }
  }

  /// Whether the rank's deps form a cycle, so that nothing may be fused.
  bool cyclic = false;

  /// Whether a step of another threadblock waits for this one.
  bool waitedOn(StepKey step) const { return waited.contains(step); }

  /// Whether the value `recv` writes to `chunk` is read by anyone but `send`
  /// before it is overwritten, or is output.
  bool storeIsLive(StepKey recv, StepKey send, ChunkAttr chunk) const {
    size_t from = position.at(recv), skip = position.at(send);
    for (int64_t k = 0; k < chunk.getCount(); ++k) {
      uint64_t slot = slots.slot(chunk, k);
      bool decided = false;
      auto it = accesses.find(slot);
      for (auto [pos, writes] :
           it == accesses.end() ? ArrayRef<std::pair<size_t, bool>>() : ArrayRef(it->second)) {
        if (pos <= from || pos == skip)
          continue;
        if (!writes)
          return true;
        decided = true;
        break;
      }
      if (!decided && slots.isOutput(slot))
        return true;
    }
    return false;
  }

private:
  SlotLayout slots;
  llvm::DenseMap<StepKey, size_t> position;
  llvm::DenseMap<uint64_t, SmallVector<std::pair<size_t, bool>, 4>> accesses;
  llvm::DenseSet<StepKey> waited;
};

/// A send of the chunks the step before it received: the pair becomes one
/// step, which keeps the send's id (a dep on the send now waits for the
/// fused step; nothing waits for the receive, or the pair is left alone: a
/// receive that others wait for must not also wait for room to send, which
/// could close a cycle) and the receive's deps (the send has none).
struct FuseReceiveAndSend : OpRewritePattern<SendOp> {
  FuseReceiveAndSend(MLIRContext *context, const RankFacts *const &facts)
      : OpRewritePattern(context), facts(facts) {}

  LogicalResult matchAndRewrite(SendOp send, PatternRewriter &rewriter) const override {
    Operation *prev = send->getPrevNode();
    if (!prev || send.getDepsAttr() || facts->cyclic)
      return failure();
    StepKey sendKey = keyOf(send);
    StepKey prevKey = keyOf(prev);
    if (facts->waitedOn(prevKey))
      return failure();
    rewriter.setInsertionPoint(prev);
    uint64_t id = send.getId();
    if (auto recv = llvm::dyn_cast<RecvOp>(prev); recv && send.getSrc() == recv.getDst()) {
      RecvCopySendOp::create(rewriter, recv.getLoc(), recv.getDst(), id, recv.getDepsAttr());
    } else if (auto rrc = llvm::dyn_cast<RecvReduceCopyOp>(prev);
               rrc && send.getSrc() == rrc.getDst()) {
      if (facts->storeIsLive(prevKey, sendKey, rrc.getDst()))
        RecvReduceCopySendOp::create(rewriter, rrc.getLoc(), rrc.getSrc(), rrc.getDst(), id,
                                     rrc.getDepsAttr());
      else
        RecvReduceSendOp::create(rewriter, rrc.getLoc(), rrc.getSrc(), id, rrc.getDepsAttr());
    } else {
      return failure();
    }
    rewriter.eraseOp(prev);
    rewriter.eraseOp(send);
    return success();
  }

  const RankFacts *const &facts;
};

struct CollFusePass : coll::impl::CollFusePassBase<CollFusePass> {
  void runOnOperation() override {
    PlanOp plan = getOperation();
    // Ranks are rewritten apart (each pair lies in one), so in parallel.
    SmallVector<RankOp> ranks(plan.getBody().front().getOps<RankOp>());
    parallelForEach(&getContext(), ranks, [&](RankOp rank) {
      RankFacts rankFacts(plan, rank);
      const RankFacts *facts = &rankFacts;
      FuseReceiveAndSend pattern(&getContext(), facts);
      PatternRewriter rewriter(&getContext());
      // Each send once, in order: a failed match stays failed, since only
      // the pair it fuses changes, and steps are neither folded nor dead.
      for (auto tb : rank.getBody().front().getOps<ThreadblockOp>())
        for (Operation &op : llvm::make_early_inc_range(tb.getBody().front()))
          if (auto send = llvm::dyn_cast<SendOp>(op))
            (void)pattern.matchAndRewrite(send, rewriter);
    });
  }
};

} // namespace
