//===- RankStreamSteps.cpp - Global-view ops as rank-stream steps ---------===//
//
// Each copy or reduce of the global view becomes the steps its ranks run: a
// send and a receive (reducing or not) between ranks, local copies and
// reductions, multimem and peer-window steps, keyed by dependency depth and
// program order.
//
//===----------------------------------------------------------------------===//

#include "lib/Lowering/RankStreams.h"

#include "mlir/IR/Builders.h"
#include "llvm/ADT/EquivalenceClasses.h"
#include "llvm/ADT/ScopeExit.h"

#include <algorithm>
#include <map>

using namespace mlir;
using namespace coll;
using namespace coll::streams;

Step &Lowering::add(StepKind kind, int64_t rank, Location loc, uint32_t level, uint32_t order,
                    int64_t channel) {
  Step *s = new (arenas[rank].Allocate<Step>())
      Step(kind, rank, channel, level, order, sub++, loc, protocol);
  byRank[rank].push_back(s);
  return *s;
}

void Lowering::lowerOne(Operation *op, ChunkAttr dst, ArrayRef<ChunkAttr> srcs, uint32_t level,
                        uint32_t order, int64_t channel) {
  Location loc = op->getLoc();
  int64_t to = dst.getRank();
  // coll-multimem chose a multicast or peer-window form: one local step on
  // the issuing rank, naming the chunk of that rank that stands for the
  // chunk on every rank.
  CollDialect *coll = dialect;
  bool multicastLoad = coll->getMultimemAttrHelper().isAttrPresent(op);
  if (multicastLoad || coll->getReadReduceAttrHelper().isAttrPresent(op)) {
    Step &s = add(multicastLoad ? StepKind::MultimemLdReduce : StepKind::ReadReduce, to, loc, level,
                  order, channel);
    s.src = ChunkAttr::get(op->getContext(), srcs[0].getBuffer(), to, srcs[0].getIndex(),
                           srcs[0].getCount());
    s.dst = dst;
    return;
  }
  if (coll->getGetAttrHelper().isAttrPresent(op)) {
    Step &s = add(StepKind::Get, to, loc, level, order, channel);
    s.src = srcs[0]; // the peer's chunk
    s.dst = dst;
    return;
  }
  IntegerAttr group = coll->getMultimemStAttrHelper().getAttr(op);
  bool multicast = bool(group);
  if (!group)
    group = coll->getPutAttrHelper().getAttr(op);
  if (group) {
    if (!storeGroups.insert(group.getInt()).second)
      return; // the group's first copy made the step
    int64_t from = srcs[0].getRank();
    Step &s =
        add(multicast ? StepKind::MultimemSt : StepKind::Put, from, loc, level, order, channel);
    s.src = srcs[0];
    s.dst = ChunkAttr::get(op->getContext(), dst.getBuffer(), from, dst.getIndex(), dst.getCount());
    return;
  }
  auto same = [&](ChunkAttr a, ChunkAttr b) {
    PhysicalRange x = physicalRange(shape.collective, shape.chunks, shape.inplace, a);
    PhysicalRange y = physicalRange(shape.collective, shape.chunks, shape.inplace, b);
    return x.buffer == y.buffer && x.rank == y.rank && x.begin == y.begin;
  };
  SmallVector<ChunkAttr, 4> local, remote;
  bool accumulates = false;
  for (ChunkAttr s : srcs) {
    if (s.getRank() != to)
      remote.push_back(s);
    else if (srcs.size() > 1 && same(s, dst))
      accumulates = true;
    else
      local.push_back(s);
  }
  // Local terms first, into the destination.
  if (!local.empty() && (accumulates || local.size() > 1)) {
    Step &s = add(StepKind::LocalReduce, to, loc, level, order, channel);
    SmallVector<Attribute, 4> terms;
    if (accumulates)
      terms.push_back(dst);
    terms.append(local.begin(), local.end());
    s.srcs = ArrayAttr::get(op->getContext(), terms);
    s.dst = dst;
    accumulates = true;
  } else if (local.size() == 1) {
    Step &s = add(StepKind::LocalCopy, to, loc, level, order, channel);
    s.src = local[0];
    s.dst = dst;
    accumulates = true;
  }
  // Then each remote term over its own connection.
  for (ChunkAttr r : remote) {
    Step &send = add(StepKind::Send, r.getRank(), loc, level, order, channel);
    send.peer = to;
    send.src = r;
    Step &recv = add(accumulates ? StepKind::RecvReduceCopy : StepKind::Recv, to, loc, level, order,
                     channel);
    recv.peer = r.getRank();
    recv.dst = dst;
    if (accumulates)
      recv.src = dst;
    accumulates = true;
  }
}

void Lowering::lowerOps() {
  // Dependency depth of every op over the chunk slots it reads and writes.
  std::vector<uint32_t> written(slots.size(), 0), read(slots.size(), 0);
  uint32_t order = 0;
  byRank.assign(shape.ranks, {});
  arenas.resize(shape.ranks);
  // Each op goes once lowered: the steps hold all the plan needs of it, and
  // take its memory (a program of millions of ops needs it).
  for (Operation &op : llvm::make_early_inc_range(alg.getBody().front())) {
    std::optional<TransferChunks> t = transferChunks(&op);
    if (!t)
      continue;
    llvm::scope_exit erase([&] { op.erase(); });
    ChunkAttr dst = t->dst;
    ArrayRef<ChunkAttr> srcs = t->srcs;
    IntegerAttr channel = t->channel;
    protocol = t->protocol;
    uint32_t level = 0;
    for (int64_t k = 0; k < dst.getCount(); ++k) {
      for (ChunkAttr s : srcs)
        level = std::max(level, written[slots.slot(s, k)]);
      uint64_t d = slots.slot(dst, k);
      level = std::max({level, written[d], read[d]});
    }
    ++level;
    // A pipelined piece starts no earlier than its wavefront (coll-split-chunks).
    if (IntegerAttr piece = dialect->getPieceAttrHelper().getAttr(&op))
      level = std::max<uint32_t>(level, piece.getInt() + 1);
    for (int64_t k = 0; k < dst.getCount(); ++k) {
      for (ChunkAttr s : srcs) {
        uint32_t &r = read[slots.slot(s, k)];
        r = std::max(r, level);
      }
      written[slots.slot(dst, k)] = level;
    }
    lowerOne(&op, dst, srcs, level, order++, channel ? channel.getInt() : 0);
  }
}
