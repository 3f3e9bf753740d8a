//===- SelectProtocol.cpp - Simple, LL or LL128 per message size ----------===//
//
// After this pass every plan is a set of variants, each for a message-size
// range [min_bytes, max_bytes) with a protocol on every threadblock, chosen
// by the α-β cost model: LL for latency-bound sizes, Simple (or LL128 on
// NVLink) for bandwidth-bound ones. Each variant names its algorithm, and on
// direct connections each sending step names where its receiver stores.
//
//===----------------------------------------------------------------------===//

#include "dialect/CollOps.h"
#include "lib/Lowering/Passes.h"
#include "lib/Lowering/PlanTopology.h"
#include "lib/Topology/CostModel.h"
#include "runtime/device/collc/abi.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"
#include "llvm/Support/MathExtras.h"

#include <map>

namespace coll {
#define GEN_PASS_DEF_COLLSELECTPROTOCOLPASS
#include "lib/Lowering/Passes.h.inc"
} // namespace coll

using namespace mlir;
using namespace coll;

/// What a variant for protocol `p` runs: its threadblocks' protocol where
/// `@protocol` gave them all one, `p` otherwise.
static Protocol planProtocol(PlanOp plan, Protocol p) {
  std::optional<Protocol> only;
  for (auto rank : plan.getBody().getOps<RankOp>())
    for (auto tb : rank.getBody().getOps<ThreadblockOp>()) {
      if (only && tb.getProtocol() != only)
        return p;
      only = tb.getProtocol();
    }
  return only.value_or(p);
}

/// The FIFO slots of each of a plan's connections: NCCL's eight, and one
/// more than the pieces a pipelined plan injects before it forwards any;
/// a power of two, so that the primitives find a step's slot with a mask,
/// not a division.
static int64_t fifoSlots(PlanOp plan) {
  int64_t slots = collc::kMinSlots;
  if (std::optional<uint64_t> depth = plan.getFifoDepth())
    slots = std::max<int64_t>(slots, int64_t(*depth) + 1);
  return int64_t(llvm::PowerOf2Ceil(uint64_t(slots)));
}

namespace {

constexpr int64_t kNoLimit = int64_t(1) << 62;

/// time(bytes) = fixed + perByte * bytes, in µs, for one protocol.
struct Line {
  double fixed, perByte;
  double at(double bytes) const { return fixed + perByte * bytes; }
};

/// On a direct connection the k-th step that sends pairs with the k-th step
/// that receives. Where that receive stores what arrives, and does not
/// reduce it with what it overwrites, the sender may store it there itself:
/// its `direct_dst` names that destination. Every other sending step has
/// none.
void pairDirect(PlanOp plan) {
  std::map<std::tuple<int64_t, int64_t, int64_t>, ThreadblockOp> receivers;
  for (auto rank : plan.getBody().getOps<RankOp>())
    for (auto tb : rank.getBody().getOps<ThreadblockOp>())
      if (tb.getDirectRecv() && tb.getRecv())
        receivers[{*tb.getRecv(), rank.getRank(), tb.getChannel()}] = tb;
  auto steps = [](ThreadblockOp tb, bool sending) {
    SmallVector<StepOpInterface> out;
    for (auto step : tb.getBody().front().getOps<StepOpInterface>())
      if (sending ? step.sends() : step.receives())
        out.push_back(step);
    return out;
  };
  auto where = [&](ChunkAttr c) {
    return physicalRange(plan.getCollective(), plan.getChunks(), plan.getInplace(), c);
  };
  for (auto rank : plan.getBody().getOps<RankOp>())
    for (auto tb : rank.getBody().getOps<ThreadblockOp>()) {
      SmallVector<StepOpInterface> sends = steps(tb, true);
      for (StepOpInterface send : sends)
        send.setDirectDst({});
      auto it = receivers.find({rank.getRank(), tb.getSend().value_or(-1), tb.getChannel()});
      if (!tb.getDirectSend() || it == receivers.end())
        continue;
      SmallVector<StepOpInterface> recvs = steps(it->second, false);
      for (size_t k = 0; k < sends.size() && k < recvs.size(); ++k) {
        ChunkAttr written = recvs[k].getWrittenChunk();
        if (!written)
          continue;
        bool apart = true;
        for (ChunkAttr r : recvs[k].getReadChunks())
          apart &= !where(r).overlaps(where(written));
        if (apart)
          sends[k].setDirectDst(written);
      }
    }
}

struct CollSelectProtocolPass : coll::impl::CollSelectProtocolPassBase<CollSelectProtocolPass> {
  using Base::Base;

  void runOnOperation() override {
    // No range would hold a larger size, and every plan would vanish.
    if (messageSize < -1 || messageSize >= kNoLimit) {
      getOperation().emitError() << "message-size " << int64_t(messageSize) << " is not in 0 .. "
                                 << kNoLimit - 1 << " bytes";
      return signalPassFailure();
    }
    for (auto plan : llvm::make_early_inc_range(getOperation().getOps<PlanOp>()))
      if (failed(select(plan)))
        return signalPassFailure();
  }

  /// Sets protocol p on every threadblock that @protocol did not fix, after
  /// spreading fixed protocols along connections: both ends of a connection
  /// speak one protocol.
  LogicalResult applyProtocol(PlanOp plan, Protocol p) {
    // (rank, peer, channel, sends) -> threadblock
    std::map<std::tuple<int64_t, int64_t, int64_t, bool>, ThreadblockOp> ends;
    SmallVector<ThreadblockOp> all;
    for (auto rank : plan.getBody().front().getOps<RankOp>())
      for (auto tb : rank.getBody().front().getOps<ThreadblockOp>()) {
        all.push_back(tb);
        int64_t r = rank.getRankAttr().getInt(), ch = tb.getChannelAttr().getInt();
        if (tb.getSendAttr())
          ends[{r, tb.getSendAttr().getInt(), ch, true}] = tb;
        if (tb.getRecvAttr())
          ends[{r, tb.getRecvAttr().getInt(), ch, false}] = tb;
      }
    for (bool changed = true; changed;) {
      changed = false;
      for (auto &[key, tb] : ends) {
        auto [r, peer, ch, sends] = key;
        auto other = ends.find({peer, r, ch, !sends});
        if (other == ends.end())
          continue;
        ProtocolAttr a = tb.getProtocolAttr(), b = other->second.getProtocolAttr();
        if (a && b && a != b)
          return tb.emitError() << "rank " << r << " and rank " << peer << " on channel " << ch
                                << " need both " << stringifyProtocol(a.getValue()) << " and "
                                << stringifyProtocol(b.getValue())
                                << " from @protocol; put those statements on another channel";
        if (a && !b) {
          other->second.setProtocolAttr(a);
          changed = true;
        }
      }
    }
    for (ThreadblockOp tb : all)
      if (!tb.getProtocolAttr())
        tb.setProtocolAttr(ProtocolAttr::get(&getContext(), p));
    return success();
  }

  /// Marks direct each connection that joins two GPUs of one NVLink switch
  /// domain and runs Simple at both ends: there the sender can store straight
  /// into the receiver's buffer window.
  void markDirect(PlanOp plan, const Topology &topo, ArrayRef<int64_t> map) {
    std::map<std::tuple<int64_t, int64_t, int64_t>, ThreadblockOp> senders, receivers;
    for (auto rank : plan.getBody().front().getOps<RankOp>())
      for (auto tb : rank.getBody().front().getOps<ThreadblockOp>()) {
        int64_t r = rank.getRankAttr().getInt(), ch = tb.getChannelAttr().getInt();
        if (tb.getSendAttr())
          senders[{r, tb.getSendAttr().getInt(), ch}] = tb;
        if (tb.getRecvAttr())
          receivers[{tb.getRecvAttr().getInt(), r, ch}] = tb;
      }
    auto simple = [](ThreadblockOp tb) {
      return tb.getProtocolAttr() && tb.getProtocolAttr().getValue() == Protocol::Simple;
    };
    for (auto &[key, from] : senders) {
      auto to = receivers.find(key);
      auto [a, b, ch] = key;
      if (to == receivers.end() || !simple(from) || !simple(to->second) ||
          topo.nvlink != Topology::NVLinkKind::Switch ||
          topo.linkClass(map[a], map[b]) != LinkClass::NVLink)
        continue;
      from.setDirectSend(true);
      to->second.setDirectRecv(true);
    }
  }

  /// The cost of `plan` with protocol p as a line in the message size.
  Line estimate(PlanOp plan, const Topology &topo, ArrayRef<int64_t> map, int p, bool &allNVLink) {
    double inChunks = *plan.getBufferSize("in");
    size_t depth = 0;
    // Every connection at once, in chunks: each chunk is 1 / inChunks of
    // the message.
    SmallVector<Transfer> transfers;
    allNVLink = true;
    for (auto rank : plan.getBody().front().getOps<RankOp>())
      for (auto tb : rank.getBody().front().getOps<ThreadblockOp>()) {
        size_t steps = tb.getBody().front().getOperations().size();
        depth = std::max(depth, steps);
        if (!tb.getSendAttr())
          continue;
        int from = map[rank.getRankAttr().getInt()];
        int to = map[tb.getSendAttr().getInt()];
        allNVLink &= topo.allowsLL128(from, to);
        double chunks = 0;
        for (auto step : tb.getBody().front().getOps<StepOpInterface>())
          if (step.sends())
            chunks += step.getChunkCount();
        transfers.push_back({from, to, chunks});
      }
    // Protocols are costed on the sending side only: counting what a tree's
    // root receives moves the LL-Simple cut of reduce trees, a change of the
    // model rather than of where it lives.
    RoundCost round = CostModel(topo).roundCost(transfers, p, /*receivers=*/false);
    return {topo.baseLatencyUs[p] + depth * round.latency, round.busiest / inChunks};
  }

  LogicalResult select(PlanOp plan) {
    SmallVector<int64_t> map;
    const Topology *topo = planTopology(plan, topology, getAnalysis<TopologyAnalysis>(), map);
    if (!topo)
      return failure();

    // Candidates and their cost lines.
    SmallVector<std::pair<Protocol, Line>> candidates;
    std::optional<Protocol> forced = protocol;
    bool allNVLink = true;
    for (Protocol p : {Protocol::Simple, Protocol::LL, Protocol::LL128}) {
      if (forced && *forced != p)
        continue;
      Line line = estimate(plan, *topo, map, int(p), allNVLink);
      // Both ends of a connection must speak one protocol, so LL128 is for
      // plans whose connections are all NVLink.
      if (p == Protocol::LL128 && !allNVLink) {
        if (!forced)
          continue;
        if (topology.empty() && !plan.getTopology())
          // Not given one, the plan gets hgx-h100 nodes enough for its
          // ranks: say so rather than name a topology the user never gave.
          return plan.emitError()
                 << "LL128 needs NVLink on every connection, but the plan's " << plan.getRanks()
                 << " ranks span " << topo->nodes << " nodes of " << topo->gpusPerNode
                 << " GPUs, which the network joins (without --topology, collc assumes "
                 << topo->name << " nodes); force LL or Simple, or give a --topology whose "
                 << "NVLink reaches every rank";
        return plan.emitError() << "LL128 needs NVLink on every connection, and " << topo->name
                                << " gives this plan others";
      }
      candidates.push_back({p, line});
    }
    // The cheapest protocol changes only where two lines cross.
    SmallVector<double> cuts = {0};
    for (auto &[p, a] : candidates)
      for (auto &[q, b] : candidates)
        if (a.perByte > b.perByte && b.fixed > a.fixed) {
          double x = (b.fixed - a.fixed) / (a.perByte - b.perByte);
          if (x > 0 && x < double(kNoLimit))
            cuts.push_back(x);
        }
    llvm::sort(cuts);
    SmallVector<std::tuple<int64_t, int64_t, Protocol>> ranges;
    for (size_t i = 0; i < cuts.size(); ++i) {
      double lo = cuts[i], hi = i + 1 < cuts.size() ? cuts[i + 1] : double(kNoLimit);
      double probe = i + 1 < cuts.size() ? (lo + hi) / 2 : lo * 2 + 1;
      Protocol best = candidates[0].first;
      double bestTime = candidates[0].second.at(probe);
      for (auto &[p, line] : candidates)
        if (line.at(probe) < bestTime) {
          best = p;
          bestTime = line.at(probe);
        }
      // Byte boundaries on whole 4 KiB pages, so ranges stay readable.
      int64_t from = i == 0 ? 0 : llvm::alignTo(int64_t(lo), 4096);
      if (!ranges.empty() && std::get<2>(ranges.back()) == best)
        continue;
      // Rounding can close a range entirely; the later protocol wins there.
      if (!ranges.empty() && from <= std::get<0>(ranges.back())) {
        std::get<2>(ranges.back()) = best;
        if (ranges.size() > 1 && std::get<2>(ranges[ranges.size() - 2]) == best)
          ranges.pop_back();
        continue;
      }
      if (!ranges.empty())
        std::get<1>(ranges.back()) = from;
      ranges.push_back({from, kNoLimit, best});
    }

    if (messageSize >= 0)
      llvm::erase_if(ranges, [&](auto &range) {
        return messageSize < std::get<0>(range) || messageSize >= std::get<1>(range);
      });
    // Every variant but the last is a copy; the last is the plan itself,
    // which saves copying a plan of millions of steps once more.
    OpBuilder builder(plan);
    std::string name = plan.getSymName().str();
    StringAttr algorithm = plan.getAlgorithmAttr();
    if (!algorithm)
      algorithm = plan.getSymNameAttr();
    for (auto [i, range] : llvm::enumerate(ranges)) {
      auto [lo, hi, p] = range;
      auto variant = i + 1 < ranges.size() ? llvm::cast<PlanOp>(builder.clone(*plan)) : plan;
      variant.setSymName(name + "_" + stringifyProtocol(p).str());
      variant.setAlgorithmAttr(algorithm);
      variant.setMinBytesAttr(builder.getI64IntegerAttr(lo));
      variant.setMaxBytesAttr(builder.getI64IntegerAttr(hi));
      if (failed(applyProtocol(variant, p)))
        return failure();
      variant.setProtocol(planProtocol(variant, p));
      variant.setSlotsAttr(builder.getI64IntegerAttr(fifoSlots(variant)));
      if (direct)
        markDirect(variant, *topo, map);
      pairDirect(variant);
    }
    if (ranges.empty())
      plan.erase();
    return success();
  }
};

} // namespace
