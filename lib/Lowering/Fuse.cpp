//===- Fuse.cpp - Join receives with the sends that forward them ----------===//
//
// After this pass no threadblock holds a receive (or receive-reduce)
// immediately followed by a send of the chunks it just wrote: the pair is
// one `recv_copy_send`, `recv_reduce_copy_send`, or `recv_reduce_send` when
// the stored result would never be read. A ring allreduce then lowers, per
// chunk, to 1 send, n-2 recv_reduce_send, 1 recv_reduce_copy_send,
// n-2 recv_copy_send and 1 recv.
//
//===----------------------------------------------------------------------===//

#include "dialect/CollOps.h"
#include "lib/Analysis/SymbolicState.h"
#include "lib/Lowering/Passes.h"

#include "mlir/IR/Builders.h"
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

/// The steps of one rank in an order that respects threadblock order and
/// deps. Conflicting accesses to a chunk are ordered by deps, so any such
/// order tells what a write's next reader or writer is.
std::vector<Operation *> topologicalOrder(ArrayRef<SmallVector<Operation *>> tbs,
                                          ArrayRef<int64_t> ids) {
  llvm::DenseMap<int64_t, size_t> index;
  for (size_t t = 0; t < ids.size(); ++t)
    index[ids[t]] = t;
  // waiters[(t, p)]: steps that depend on step p of threadblock t.
  llvm::DenseMap<Operation *, SmallVector<std::pair<size_t, size_t>>> waiters;
  std::vector<std::vector<unsigned>> pending(tbs.size());
  for (size_t t = 0; t < tbs.size(); ++t) {
    pending[t].assign(tbs[t].size(), 0);
    for (size_t p = 0; p < tbs[t].size(); ++p) {
      DenseI64ArrayAttr depsAttr = llvm::cast<StepOpInterface>(tbs[t][p]).getDepsAttr();
      ArrayRef<int64_t> deps = depsAttr ? depsAttr.asArrayRef() : ArrayRef<int64_t>();
      for (size_t d = 0; d + 1 < deps.size(); d += 2) {
        waiters[tbs[index[deps[d]]][deps[d + 1]]].push_back({t, p});
        ++pending[t][p];
      }
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
      for (auto [wt, wp] : waiters.lookup(op))
        if (--pending[wt][wp] == 0 && next[wt] == wp)
          ready.push_back(wt);
    }
  }
  return order; // shorter than all steps when deps form a cycle
}

struct CollFusePass : coll::impl::CollFusePassBase<CollFusePass> {
  void runOnOperation() override {
    for (auto plan : getOperation().getOps<PlanOp>())
      for (auto rank : plan.getBody().front().getOps<RankOp>())
        fuseRank(plan, rank);
  }

  void fuseRank(PlanOp plan, RankOp rank) {
    CollectiveShape shape = CollectiveShape::of(plan);
    SlotLayout slots(shape);
    SmallVector<SmallVector<Operation *>> tbs;
    SmallVector<int64_t> ids;
    SmallVector<ThreadblockOp> tbOps;
    for (auto tb : rank.getBody().front().getOps<ThreadblockOp>()) {
      tbOps.push_back(tb);
      ids.push_back(tb.getIdAttr().getInt());
      tbs.emplace_back();
      for (Operation &op : tb.getBody().front())
        tbs.back().push_back(&op);
    }
    std::vector<Operation *> order = topologicalOrder(tbs, ids);
    size_t total = 0;
    for (auto &steps : tbs)
      total += steps.size();
    if (order.size() != total)
      return; // a cycle: leave the plan as it is for coll-verify-plan to report

    // Accesses of each slot in that order: (position, writes).
    llvm::DenseMap<Operation *, size_t> position;
    llvm::DenseMap<uint64_t, SmallVector<std::pair<size_t, bool>, 4>> accesses;
    for (size_t i = 0; i < order.size(); ++i) {
      position[order[i]] = i;
      auto step = llvm::cast<StepOpInterface>(order[i]);
      for (ChunkAttr c : step.getReadChunks())
        for (int64_t k = 0; k < c.getCount(); ++k)
          accesses[slots.slot(c, k)].push_back({i, false});
      if (ChunkAttr written = step.getWrittenChunk())
        for (int64_t k = 0; k < written.getCount(); ++k)
          accesses[slots.slot(written, k)].push_back({i, true});
    }
    // Whether the value `recv` writes is read by anyone but `send` before it
    // is overwritten, or is output.
    auto storeIsLive = [&](Operation *recv, Operation *send, ChunkAttr chunk) {
      size_t from = position[recv], skip = position[send];
      for (int64_t k = 0; k < chunk.getCount(); ++k) {
        uint64_t slot = slots.slot(chunk, k);
        bool decided = false;
        for (auto [pos, writes] : accesses[slot]) {
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
    };

    llvm::DenseSet<std::pair<int64_t, int64_t>> waitedOn; // (tb id, step)
    for (auto &steps : tbs)
      for (Operation *op : steps)
        if (auto deps = llvm::cast<StepOpInterface>(op).getDepsAttr())
          for (int64_t d = 0; d + 1 < deps.size(); d += 2)
            waitedOn.insert({deps[d], deps[d + 1]});

    // Fuse within each threadblock, remembering where each old step went.
    SmallVector<SmallVector<int64_t>> newPos(tbs.size());
    for (size_t t = 0; t < tbs.size(); ++t) {
      SmallVector<Operation *> &steps = tbs[t];
      newPos[t].resize(steps.size());
      int64_t out = 0;
      for (size_t p = 0; p < steps.size(); ++p) {
        newPos[t][p] = out;
        auto send = p + 1 < steps.size() ? llvm::dyn_cast<SendOp>(steps[p + 1]) : SendOp();
        // A receive that other threadblocks wait for must not also wait for
        // room to send: that could close a cycle.
        bool fusable = send && !send.getDepsAttr() && !waitedOn.contains({ids[t], int64_t(p)});
        if (fusable) {
          OpBuilder b(steps[p]);
          Operation *fused = nullptr;
          if (auto recv = llvm::dyn_cast<RecvOp>(steps[p]); recv && send.getSrc() == recv.getDst()) {
            fused = RecvCopySendOp::create(b, recv.getLoc(), recv.getDst(), recv.getDepsAttr());
          } else if (auto rrc = llvm::dyn_cast<RecvReduceCopyOp>(steps[p]);
                     rrc && send.getSrc() == rrc.getDst()) {
            if (storeIsLive(rrc, send, rrc.getDst()))
              fused = RecvReduceCopySendOp::create(b, rrc.getLoc(), rrc.getSrc(), rrc.getDst(),
                                                   rrc.getDepsAttr());
            else
              fused = RecvReduceSendOp::create(b, rrc.getLoc(), rrc.getSrc(), rrc.getDepsAttr());
          }
          if (fused) {
            newPos[t][p + 1] = out;
            steps[p]->erase();
            send->erase();
            ++p;
          }
        }
        ++out;
      }
    }

    // Deps name steps by position: renumber them.
    llvm::DenseMap<int64_t, size_t> index;
    for (size_t t = 0; t < ids.size(); ++t)
      index[ids[t]] = t;
    for (ThreadblockOp tb : tbOps)
      for (auto step : tb.getBody().front().getOps<StepOpInterface>()) {
        DenseI64ArrayAttr deps = step.getDepsAttr();
        if (!deps)
          continue;
        SmallVector<int64_t> updated(deps.asArrayRef());
        for (size_t d = 0; d + 1 < updated.size(); d += 2)
          updated[d + 1] = newPos[index[updated[d]]][updated[d + 1]];
        step.setDepsAttr(DenseI64ArrayAttr::get(&getContext(), updated));
      }
  }
};

} // namespace
