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
#include "llvm/Support/Allocator.h"

#include <tuple>
#include <vector>

namespace coll::streams {

using namespace mlir;

enum class StepKind : uint8_t {
  Send,
  Recv,
  RecvReduceCopy,
  LocalCopy,
  LocalReduce,
  MultimemLdReduce,
  MultimemSt,
  ReadReduce,
  Put,
  Get
};

/// One step of one rank. There is one per send and per receive of the whole
/// program (millions at 1024 ranks), so the fields are packed: the plan's
/// steps and ops fit in 32 bits (coll-split-chunks bounds them).
struct Step {
  Step(StepKind kind, int32_t rank, int32_t channel, uint32_t level, uint32_t order, uint32_t sub,
       Location loc, ProtocolAttr protocol)
      : kind(kind), rank(rank), channel(channel), level(level), order(order), sub(sub), loc(loc),
        protocol(protocol) {}

  StepKind kind;
  // Ordering a threadblock: whether the step is placed, and in a pair.
  bool paired = false, done = false;
  // After its level's sends (sendsFirst): the step's rank runs them first.
  bool late = false;
  int32_t rank, peer = -1, channel;
  ChunkAttr src, dst; // src: what is sent or reduced with
  ArrayAttr srcs;     // LocalReduce
  uint32_t level, order, sub;
  int32_t tb = -1, pos = -1;
  uint32_t unit = 0; // ordering a threadblock: the step's unit
  Location loc;
  ProtocolAttr protocol; // from the statement's @protocol
  /// A receive: the send that forwards what it wrote, in one threadblock.
  Step *partner = nullptr;

  bool receives() const { return kind == StepKind::Recv || kind == StepKind::RecvReduceCopy; }
  auto key() const { return std::make_tuple(level, late, order, sub); }
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
  /// `maxThreadblocks`: what one rank may run at once.
  Lowering(AlgorithmOp alg, int64_t maxThreadblocks)
      : alg(alg), dialect(CollDialect::of(alg.getContext())), shape(CollectiveShape::of(alg)),
        slots(shape), maxThreadblocks(maxThreadblocks) {}

  PlanOp run();

private:
  /// Makes every op's steps and erases the op.
  void lowerOps();
  void lowerOne(Operation *op, ChunkAttr dst, ArrayRef<ChunkAttr> srcs, uint32_t level,
                uint32_t order, int64_t channel);
  Step &add(StepKind kind, int64_t rank, Location loc, uint32_t level, uint32_t order,
            int64_t channel);
  /// Places rank `rank`'s steps, in key order, in ordered threadblocks.
  void assignThreadblocks(int64_t rank, std::vector<Step *> &steps);
  struct ConnectionClasses;
  void pair(Step *recv, Step *send, ConnectionClasses &conns);
  void pairForwards(ArrayRef<Step *> steps, ConnectionClasses &conns);
  void shareThreadblocks(int64_t rank, ArrayRef<Step *> steps, ConnectionClasses &conns);
  void makeThreadblocks(int64_t rank, ArrayRef<Step *> steps, ConnectionClasses &conns);
  struct Threadblock;
  void orderThreadblock(Threadblock &tb);
  /// Whether a rank of several threadblocks may run each level's sends
  /// before the level's other steps; if so marks those steps `late`.
  bool sendsFirst(ArrayRef<Step *> steps) const;

  AlgorithmOp alg;
  CollDialect *dialect; // found once: its attribute helpers are asked per op
  CollectiveShape shape;
  SlotLayout slots;
  int64_t maxThreadblocks;
  /// Each rank's steps in the order they were made, in an arena of the
  /// rank's own: a rank's steps are freed once its ops are built, so that
  /// the next rank's ops take their memory.
  std::vector<std::vector<Step *>> byRank;
  std::vector<llvm::BumpPtrAllocator> arenas;
  ProtocolAttr protocol; // of the op being lowered
  uint32_t sub = 0;
  llvm::DenseSet<int64_t> storeGroups; // coll.multimem_st and coll.put groups lowered

  struct Threadblock {
    int64_t recv = -1, send = -1, channel = 0;
    std::vector<Step *> steps;
  };
  std::vector<std::vector<Threadblock>> tbs; // per rank
  size_t partners = 0;                       // steps with a partner
  void setPartner(Step *recv, Step *send) {
    partners += (send != nullptr) - (recv->partner != nullptr);
    recv->partner = send;
  }
  bool pairing = true;
  bool mayDeadlock() const;

  /// Afterwards every step has its threadblock and position, paired for
  /// fusion only where that cannot stall the connections.
  void placeSteps();
  /// An empty plan for `alg`, with `builder` at the end of its body.
  PlanOp createPlan(OpBuilder &builder);
  /// The protocol each threadblock runs, per rank; fails where two
  /// @protocol statements of one threadblock disagree.
  LogicalResult threadblockProtocols(std::vector<std::vector<ProtocolAttr>> &forced);
  /// The id attribute of every step position, shared by all ranks.
  std::vector<IntegerAttr> stepIds(OpBuilder &builder) const;
  /// Per step of rank `r`, (threadblock, position) pairs of the steps of
  /// other threadblocks it must wait for.
  llvm::DenseMap<Step *, SmallVector<int64_t, 4>> crossThreadblockDeps(int64_t r);
  /// Afterwards `body` holds rank `r`'s threadblocks and their steps.
  void buildRank(int64_t r, Block *body, ArrayRef<ProtocolAttr> forced, ArrayRef<IntegerAttr> ids);
};

} // namespace coll::streams

#endif // COLLC_LOWERING_RANKSTREAMS_H
