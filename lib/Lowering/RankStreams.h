//===- RankStreams.h - Lowering one algorithm to rank streams ---*- C++ -*-===//
//
// Private to lib/Lowering: coll-to-rank-streams in three files around one
// class: making the steps (RankStreamSteps.cpp), placing and ordering them in
// threadblocks (RankStreamOrder.cpp), and building the plan
// (ToRankStreams.cpp).
//
//===----------------------------------------------------------------------===//
#ifndef COLLC_LOWERING_RANKSTREAMS_H
#define COLLC_LOWERING_RANKSTREAMS_H

#include "dialect/CollOps.h"
#include "lib/Analysis/SymbolicState.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"

#include <deque>
#include <tuple>
#include <vector>

namespace coll::streams {

using namespace mlir;

enum class StepKind {
  Send, Recv, RecvReduceCopy, LocalCopy, LocalReduce,
  MultimemLdReduce, MultimemSt, ReadReduce, Put, Get
};

struct Step {
  StepKind kind;
  int64_t rank, peer = -1, channel = 0;
  ChunkAttr src, dst;             // src: what is sent or reduced with
  SmallVector<Attribute, 2> srcs; // LocalReduce
  uint64_t level, order, sub;
  Location loc;
  int tb = -1, pos = -1;
  ProtocolAttr protocol; // from the statement's @protocol
  /// A receive: the send that forwards what it wrote, in one threadblock.
  Step *partner = nullptr;
  // Ordering a threadblock: the step's unit, and whether it is placed.
  size_t unit = 0;
  bool paired = false, done = false;

  bool receives() const { return kind == StepKind::Recv || kind == StepKind::RecvReduceCopy; }
  auto key() const { return std::make_tuple(level, order, sub); }
};

/// A connection end as seen from one rank: (peer, channel, direction).
struct Connection {
  int64_t peer, channel;
  bool sends;
  bool operator<(const Connection &o) const {
    return std::tie(peer, channel, sends) < std::tie(o.peer, o.channel, o.sends);
  }
};

class Lowering {
public:
  explicit Lowering(AlgorithmOp alg)
      : alg(alg), dialect(CollDialect::of(alg.getContext())), shape(CollectiveShape::of(alg)),
        slots(shape) {}

  PlanOp run();

private:
  void lowerOps();
  void lowerOne(Operation *op, ChunkAttr dst, ArrayRef<ChunkAttr> srcs, uint64_t level,
                uint64_t order, int64_t channel);
  Step &add(StepKind kind, int64_t rank, Location loc, uint64_t level, uint64_t order,
            int64_t channel);
  void assignThreadblocks(int64_t rank, std::vector<Step *> &steps);
  struct Threadblock;
  void orderThreadblock(Threadblock &tb);

  AlgorithmOp alg;
  CollDialect *dialect; // found once: its attribute helpers are asked per op
  CollectiveShape shape;
  SlotLayout slots;
  std::deque<Step> all; // stable addresses
  ProtocolAttr protocol; // of the op being lowered
  uint64_t sub = 0;
  llvm::DenseSet<int64_t> storeGroups; // coll.multimem_st and coll.put groups lowered

  struct Threadblock {
    int64_t recv = -1, send = -1, channel = 0;
    std::vector<Step *> steps;
  };
  std::vector<std::vector<Threadblock>> tbs; // per rank
  size_t partners = 0; // steps with a partner
  void setPartner(Step *recv, Step *send) {
    partners += (send != nullptr) - (recv->partner != nullptr);
    recv->partner = send;
  }
  bool pairing = true;
  bool mayDeadlock() const;
};

} // namespace coll::streams

#endif // COLLC_LOWERING_RANKSTREAMS_H
