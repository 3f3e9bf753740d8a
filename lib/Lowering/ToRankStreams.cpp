//===- ToRankStreams.cpp - Global view to per-rank threadblock streams -----===//
//
// After this pass every `coll.algorithm` is a `coll.plan`: per rank, per
// threadblock, ordered sends, receives and local steps whose order on each
// connection matches on both sides, with explicit cross-threadblock deps.
// Steps are ordered by (dependency depth, program order): every wait —
// on data, on a matching send, on FIFO credit — points to a smaller key, so
// the unfused plan cannot deadlock.
//
//===----------------------------------------------------------------------===//

#include "dialect/CollOps.h"
#include "lib/Analysis/SymbolicState.h"
#include "lib/Lowering/Passes.h"

#include "mlir/IR/Builders.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/EquivalenceClasses.h"

#include <algorithm>
#include <deque>
#include <map>
#include <tuple>

namespace coll {
#define GEN_PASS_DEF_COLLTORANKSTREAMSPASS
#include "lib/Lowering/Passes.h.inc"
} // namespace coll

using namespace mlir;
using namespace coll;

namespace {

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
  explicit Lowering(AlgorithmOp alg) : alg(alg), shape(CollectiveShape::of(alg)), slots(shape) {}

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
  /// A receive -> the send that forwards what it wrote, in one threadblock.
  llvm::DenseMap<Step *, Step *> partner;
  bool pairing = true;
  bool mayDeadlock() const;
};

} // namespace

Step &Lowering::add(StepKind kind, int64_t rank, Location loc, uint64_t level,
                    uint64_t order, int64_t channel) {
  all.push_back(Step{kind, rank, -1, channel, {}, {}, {}, level, order, sub++, loc});
  all.back().protocol = protocol;
  return all.back();
}

void Lowering::lowerOne(Operation *op, ChunkAttr dst, ArrayRef<ChunkAttr> srcs,
                        uint64_t level, uint64_t order, int64_t channel) {
  Location loc = op->getLoc();
  int64_t to = dst.getRank();
  // coll-multimem chose a multicast or peer-window form: one local step on
  // the issuing rank, naming the chunk of that rank that stands for the
  // chunk on every rank.
  if (op->hasAttr("coll.multimem") || op->hasAttr("coll.read_reduce")) {
    Step &s = add(op->hasAttr("coll.multimem") ? StepKind::MultimemLdReduce
                                               : StepKind::ReadReduce,
                  to, loc, level, order, channel);
    s.src = ChunkAttr::get(op->getContext(), srcs[0].getBuffer(), to, srcs[0].getIndex(),
                           srcs[0].getCount());
    s.dst = dst;
    return;
  }
  if (op->hasAttr("coll.get")) {
    Step &s = add(StepKind::Get, to, loc, level, order, channel);
    s.src = srcs[0]; // the peer's chunk
    s.dst = dst;
    return;
  }
  auto group = op->getAttrOfType<IntegerAttr>("coll.multimem_st");
  bool multicast = bool(group);
  if (!group)
    group = op->getAttrOfType<IntegerAttr>("coll.put");
  if (group) {
    if (!storeGroups.insert(group.getInt()).second)
      return; // the group's first copy made the step
    int64_t from = srcs[0].getRank();
    Step &s = add(multicast ? StepKind::MultimemSt : StepKind::Put, from, loc, level, order,
                  channel);
    s.src = srcs[0];
    s.dst = ChunkAttr::get(op->getContext(), dst.getBuffer(), from, dst.getIndex(),
                           dst.getCount());
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
    if (accumulates)
      s.srcs.push_back(dst);
    s.srcs.append(local.begin(), local.end());
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
    Step &recv = add(accumulates ? StepKind::RecvReduceCopy : StepKind::Recv, to, loc,
                     level, order, channel);
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
  uint64_t order = 0;
  for (Operation &op : alg.getBody().front()) {
    std::optional<TransferChunks> t = transferChunks(&op);
    if (!t)
      continue;
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
    if (auto piece = op.getAttrOfType<IntegerAttr>("coll.piece"))
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

void Lowering::assignThreadblocks(int64_t rank, std::vector<Step *> &steps) {
  // A receive whose chunks are next used by a send of exactly them wants to
  // share a threadblock with that send (to fuse); join the two connections
  // when neither already has a different partner.
  llvm::EquivalenceClasses<unsigned> classes;
  std::map<Connection, unsigned> ids;
  auto idOf = [&](const Step &s) {
    Connection c{s.peer, s.channel, !s.receives()};
    auto [it, inserted] = ids.try_emplace(c, ids.size());
    if (inserted)
      classes.insert(it->second);
    return it->second;
  };
  std::vector<Connection> byId;
  for (Step *s : steps)
    if (s->peer >= 0)
      idOf(*s);
  byId.resize(ids.size());
  for (auto &[c, id] : ids)
    byId[id] = c;
  // Per class: its receive and send peers, once chosen.
  auto peers = [&](unsigned id) {
    std::pair<int64_t, int64_t> p{-1, -1};
    for (auto it = classes.findLeader(id); it != classes.member_end();
         ++it)
      (byId[*it].sends ? p.second : p.first) = byId[*it].peer;
    return p;
  };
  llvm::DenseMap<uint64_t, Step *> pendingWrite; // slot -> receive that wrote it
  for (Step *s : steps) {
    auto touch = [&](ChunkAttr c, bool write) {
      for (int64_t k = 0; k < c.getCount(); ++k) {
        uint64_t slot = slots.slot(c, k);
        auto it = pendingWrite.find(slot);
        if (it != pendingWrite.end()) {
          Step *r = it->second;
          pendingWrite.erase(it);
          if (k == 0 && !write && s->kind == StepKind::Send && s->src == r->dst &&
              s->channel == r->channel) {
            unsigned a = idOf(*r), b = idOf(*s);
            auto pa = peers(a), pb = peers(b);
            bool free = (pa.second < 0 || pa.second == s->peer) &&
                        (pb.first < 0 || pb.first == r->peer);
            if (free && !classes.isEquivalent(a, b))
              classes.unionSets(a, b);
            if (classes.isEquivalent(a, b))
              if (pairing)
                partner[r] = s;
          }
        }
      }
    };
    if (s->src)
      touch(s->src, false);
    for (Attribute a : s->srcs)
      touch(llvm::cast<ChunkAttr>(a), false);
    if (s->dst) {
      touch(s->dst, true);
      if (s->receives())
        for (int64_t k = 0; k < s->dst.getCount(); ++k)
          pendingWrite[slots.slot(s->dst, k)] = s;
    }
  }

  // One threadblock per class, in a stable order; local steps get one per
  // channel.
  std::map<std::tuple<int64_t, int64_t, int64_t>, int> tbOf; // channel, recv, send
  std::map<unsigned, std::tuple<int64_t, int64_t, int64_t>> classKey;
  for (auto &[c, id] : ids) {
    unsigned leader = classes.getLeaderValue(id);
    auto p = peers(leader);
    classKey[leader] = {c.channel, p.first, p.second};
  }
  for (auto &[leader, key] : classKey)
    tbOf.try_emplace(key, 0);
  for (Step *s : steps)
    if (s->peer < 0)
      tbOf.try_emplace({s->channel, -1, -1}, 0);
  std::vector<Threadblock> &mine = tbs[rank];
  for (auto &[key, index] : tbOf) {
    index = mine.size();
    mine.push_back({std::get<1>(key), std::get<2>(key), std::get<0>(key), {}});
  }
  for (Step *s : steps) {
    auto key = s->peer < 0 ? std::make_tuple(s->channel, int64_t(-1), int64_t(-1))
                           : classKey[classes.getLeaderValue(idOf(*s))];
    s->tb = tbOf[key];
    mine[s->tb].steps.push_back(s);
  }
  // Ordering a threadblock for fusion can run a step after one with a larger
  // key; with several threadblocks and deps between them that risks a wait
  // cycle, so such ranks keep plain key order (fusing what is adjacent).
  if (mine.size() > 1)
    for (Threadblock &tb : mine)
      for (Step *s : tb.steps)
        partner.erase(s);
  for (Threadblock &tb : mine)
    orderThreadblock(tb);
}

void Lowering::orderThreadblock(Threadblock &tb) {
  // Each unit is a step, or a receive with the send that forwards its data
  // (to be fused). A unit may run once it heads the order of every
  // connection it uses: the receive side in the peer's key order, the send
  // side likewise; a pair that blocks both orders is split.
  struct Unit {
    Step *recv = nullptr, *send = nullptr, *other = nullptr;
  };
  std::vector<Unit> units;
  llvm::DenseSet<Step *> paired;
  for (Step *s : tb.steps) {
    auto it = partner.find(s);
    if (it != partner.end() && it->second->tb == s->tb) {
      units.push_back({s, it->second, nullptr});
      paired.insert(it->second);
    }
  }
  for (Step *s : tb.steps)
    if (!paired.contains(s) && !partner.count(s))
      units.push_back(s->kind == StepKind::Send ? Unit{nullptr, s, nullptr}
                      : s->receives()           ? Unit{s, nullptr, nullptr}
                                                : Unit{nullptr, nullptr, s});
  for (Step *s : tb.steps)
    if (partner.count(s) && partner[s]->tb != s->tb)
      units.push_back({s, nullptr, nullptr});

  std::vector<Step *> ordered;
  while (!units.empty()) {
    // Heads of the receive, send and local orders.
    auto headOf = [&](auto member) {
      Step *best = nullptr;
      for (Unit &u : units)
        if (Step *s = u.*member; s && (!best || s->key() < best->key()))
          best = s;
      return best;
    };
    Step *recvHead = headOf(&Unit::recv), *sendHead = headOf(&Unit::send),
         *otherHead = headOf(&Unit::other);
    size_t pick = units.size();
    for (size_t i = 0; i < units.size(); ++i) {
      Unit &u = units[i];
      bool ok = (!u.recv || u.recv == recvHead) && (!u.send || u.send == sendHead) &&
                (!u.other || u.other == otherHead);
      auto key = [](const Unit &x) { return (x.recv ? x.recv : x.other ? x.other : x.send)->key(); };
      if (ok && (pick == units.size() || key(u) < key(units[pick])))
        pick = i;
    }
    if (pick == units.size()) {
      // The paired receive at the head of its order waits for a send that
      // is not yet due: split the pair.
      for (size_t i = 0; i < units.size(); ++i)
        if (units[i].recv == recvHead && units[i].send) {
          Step *send = units[i].send;
          partner.erase(units[i].recv);
          units[i].send = nullptr;
          units.push_back({nullptr, send, nullptr}); // may reallocate: last
          break;
        }
      continue;
    }
    Unit u = units[pick];
    units.erase(units.begin() + pick);
    for (Step *s : {u.recv, u.send, u.other})
      if (s) {
        s->pos = ordered.size();
        ordered.push_back(s);
      }
  }
  tb.steps = std::move(ordered);
}

bool Lowering::mayDeadlock() const {
  // Threadblocks run their sends and receives in order over FIFOs of the
  // plan's depth; a receive frees its slot before the next step may wait to
  // send, as the fused primitives do.
  size_t depth = 1;
  if (auto d = alg->getAttrOfType<IntegerAttr>("fifo_depth"))
    depth = std::max<int64_t>(1, d.getInt());
  std::vector<std::pair<const Threadblock *, size_t>> run; // threadblock, next step
  for (const auto &rank : tbs)
    for (const Threadblock &tb : rank)
      run.push_back({&tb, 0});
  std::map<std::tuple<int64_t, int64_t, int64_t>, std::pair<size_t, SmallVector<size_t>>> fifo;
  std::deque<size_t> ready;
  for (size_t i = 0; i < run.size(); ++i)
    ready.push_back(i);
  while (!ready.empty()) {
    size_t i = ready.front();
    ready.pop_front();
    auto &[tb, next] = run[i];
    while (next < tb->steps.size()) {
      const Step *s = tb->steps[next];
      auto key = s->receives() ? std::make_tuple(s->peer, s->rank, s->channel)
                               : std::make_tuple(s->rank, s->peer, s->channel);
      if (s->peer >= 0) {
        auto &[count, waiters] = fifo[key];
        bool blocked = s->receives() ? count == 0 : count >= depth;
        if (blocked) {
          waiters.push_back(i);
          break;
        }
        count += s->receives() ? -1 : 1;
        for (size_t w : waiters)
          ready.push_back(w);
        waiters.clear();
      }
      ++next;
    }
  }
  for (auto &[tb, next] : run)
    if (next < tb->steps.size())
      return true;
  return false;
}

PlanOp Lowering::run() {
  lowerOps();
  int64_t ranks = shape.ranks;
  std::vector<std::vector<Step *>> byRank(ranks);
  for (Step &s : all)
    byRank[s.rank].push_back(&s);
  tbs.assign(ranks, {});
  for (int64_t r = 0; r < ranks; ++r) {
    std::stable_sort(byRank[r].begin(), byRank[r].end(),
                     [](const Step *a, const Step *b) { return a->key() < b->key(); });
    assignThreadblocks(r, byRank[r]);
  }
  // Ordering for fusion lets a threadblock run a step before one with a
  // smaller key. If that can stall the connections, fall back to key order,
  // which cannot (every wait points to a smaller key).
  if (!partner.empty() && mayDeadlock()) {
    pairing = false;
    partner.clear();
    tbs.assign(ranks, {});
    for (int64_t r = 0; r < ranks; ++r)
      assignThreadblocks(r, byRank[r]);
  }

  OpBuilder builder(alg);
  auto plan = PlanOp::create(builder, alg.getLoc(), alg.getSymNameAttr(),
                             alg.getCollectiveAttr(), alg.getRanksAttr(),
                             alg.getChunksAttr(), alg.getRootAttr(), alg.getInplaceAttr(),
                             alg.getScratchAttr(),
                             alg->getAttrOfType<DenseI64ArrayAttr>("rank_map"),
                             IntegerAttr(), IntegerAttr());
  for (StringRef carried : {"topology", "fifo_depth", "coll.moves_chunks"})
    if (Attribute a = alg->getAttr(carried))
      plan->setAttr(carried, a);
  builder.setInsertionPointToEnd(&plan.getBody().emplaceBlock());
  for (int64_t r = 0; r < ranks; ++r) {
    auto rankOp = RankOp::create(builder, alg.getLoc(), builder.getI64IntegerAttr(r));
    Block *rankBody = &rankOp.getBody().emplaceBlock();
    OpBuilder inRank = OpBuilder::atBlockEnd(rankBody);

    // Cross-threadblock dependencies: the latest conflicting step of each
    // other threadblock, over the rank's steps in key order.
    llvm::DenseMap<uint64_t, Step *> lastWrite;
    llvm::DenseMap<uint64_t, SmallVector<Step *, 2>> readsSince;
    llvm::DenseMap<Step *, SmallVector<int64_t, 4>> deps;
    for (Step *s : byRank[r]) {
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

    for (size_t t = 0; t < tbs[r].size(); ++t) {
      Threadblock &tb = tbs[r][t];
      auto opt = [&](int64_t v) { return v < 0 ? IntegerAttr() : inRank.getI64IntegerAttr(v); };
      // A threadblock runs one protocol: that of its @protocol statements.
      ProtocolAttr forced;
      for (Step *s : tb.steps)
        if (s->protocol) {
          if (forced && forced != s->protocol) {
            emitError(s->loc) << "@protocol(" << stringifyProtocol(s->protocol.getValue())
                                      << ") conflicts with @protocol("
                                      << stringifyProtocol(forced.getValue())
                                      << ") of another statement on the same threadblock of rank "
                              << r << "; put them on different channels";
            plan.erase();
            return nullptr;
          }
          forced = s->protocol;
        }
      auto tbOp = ThreadblockOp::create(inRank, alg.getLoc(), inRank.getI64IntegerAttr(t),
                                        opt(tb.recv), opt(tb.send),
                                        inRank.getI64IntegerAttr(tb.channel), forced,
                                        UnitAttr(), UnitAttr());
      OpBuilder b = OpBuilder::atBlockEnd(&tbOp.getBody().emplaceBlock());
      for (Step *s : tb.steps) {
        auto it = deps.find(s);
        DenseI64ArrayAttr d =
            it == deps.end() ? DenseI64ArrayAttr() : b.getDenseI64ArrayAttr(it->second);
        switch (s->kind) {
        case StepKind::Send:
          SendOp::create(b, s->loc, s->src, d);
          break;
        case StepKind::Recv:
          RecvOp::create(b, s->loc, s->dst, d);
          break;
        case StepKind::RecvReduceCopy:
          RecvReduceCopyOp::create(b, s->loc, s->src, s->dst, d);
          break;
        case StepKind::LocalCopy:
          LocalCopyOp::create(b, s->loc, s->src, s->dst, d);
          break;
        case StepKind::LocalReduce:
          LocalReduceOp::create(b, s->loc, b.getArrayAttr(s->srcs), s->dst, d);
          break;
        case StepKind::MultimemLdReduce:
          MultimemLdReduceOp::create(b, s->loc, s->src, s->dst, d);
          break;
        case StepKind::MultimemSt:
          MultimemStOp::create(b, s->loc, s->src, s->dst, d);
          break;
        case StepKind::ReadReduce:
          ReadReduceOp::create(b, s->loc, s->src, s->dst, d);
          break;
        case StepKind::Put:
          PutOp::create(b, s->loc, s->src, s->dst, d);
          break;
        case StepKind::Get:
          GetOp::create(b, s->loc, s->src, s->dst, d);
          break;
        }
      }
    }
  }
  return plan;
}

namespace {
struct CollToRankStreamsPass : coll::impl::CollToRankStreamsPassBase<CollToRankStreamsPass> {
  void runOnOperation() override {
    for (auto alg : llvm::make_early_inc_range(getOperation().getOps<AlgorithmOp>())) {
      PlanOp plan = Lowering(alg).run();
      alg.erase();
      if (!plan)
        return signalPassFailure();
    }
  }
};
} // namespace
