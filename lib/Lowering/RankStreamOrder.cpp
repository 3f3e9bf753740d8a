//===- RankStreamOrder.cpp - Steps into ordered threadblocks --------------===//
//
// Places each rank's steps in threadblocks, one per (receive peer, send peer,
// channel), orders every threadblock by step key so that the two ends of a
// connection agree, and checks that no wait can close a cycle. Where a
// rank's connections would need more threadblocks than can run, one that
// only sends and one that only receives share a threadblock.
//
//===----------------------------------------------------------------------===//

#include "lib/Lowering/RankStreams.h"

#include "mlir/IR/Builders.h"
#include "llvm/ADT/EquivalenceClasses.h"

#include <algorithm>
#include <array>
#include <deque>
#include <map>
#include <optional>
#include <queue>
#include <set>

using namespace mlir;
using namespace coll;
using namespace coll::streams;

/// A rank's connections, joined into classes that share a threadblock.
struct Lowering::ConnectionClasses {
  llvm::EquivalenceClasses<unsigned> classes;
  std::map<Connection, unsigned> ids;
  std::vector<Connection> byId;

  explicit ConnectionClasses(ArrayRef<Step *> steps) {
    for (Step *s : steps)
      if (s->peer >= 0)
        idOf(*s);
    byId.resize(ids.size());
    for (auto &[c, id] : ids)
      byId[id] = c;
  }

  unsigned idOf(const Step &s) {
    Connection c{s.peer, s.channel, !s.receives()};
    auto [it, inserted] = ids.try_emplace(c, ids.size());
    if (inserted)
      classes.insert(it->second);
    return it->second;
  }

  /// The class's receive and send peers, once chosen (else -1).
  std::pair<int64_t, int64_t> peers(unsigned id) {
    std::pair<int64_t, int64_t> p{-1, -1};
    for (auto it = classes.findLeader(id); it != classes.member_end(); ++it)
      (byId[*it].sends ? p.second : p.first) = byId[*it].peer;
    return p;
  }
};

/// Whether send `s` forwards exactly what receive `r` wrote.
static bool forwards(const Step *r, const Step *s) {
  return s->kind == StepKind::Send && s->src == r->dst && s->channel == r->channel;
}

/// Afterwards receive `r` and send `s` share a class where neither already
/// has a different partner, and are partners if so (while pairing).
void Lowering::pair(Step *r, Step *s, ConnectionClasses &conns) {
  unsigned a = conns.idOf(*r), b = conns.idOf(*s);
  auto pa = conns.peers(a), pb = conns.peers(b);
  bool free = (pa.second < 0 || pa.second == s->peer) && (pb.first < 0 || pb.first == r->peer);
  if (free && !conns.classes.isEquivalent(a, b))
    conns.classes.unionSets(a, b);
  if (conns.classes.isEquivalent(a, b) && pairing)
    setPartner(r, s);
}

/// Afterwards each receive whose chunks are next used by a send of exactly
/// them is joined with that send (to fuse), where the connections allow.
void Lowering::pairForwards(ArrayRef<Step *> steps, ConnectionClasses &conns) {
  llvm::DenseMap<uint64_t, Step *> pendingWrite; // slot -> receive that wrote it
  for (size_t from = 0, to; from < steps.size(); from = to) {
    // The steps of one level (keys sort by level first): none writes what
    // another reads.
    for (to = from; to < steps.size() && steps[to]->level == steps[from]->level;)
      ++to;
    ArrayRef<Step *> level = steps.slice(from, to - from);
    // A receive whose chunks one send of the level alone forwards pairs
    // with it, whichever step of the level reads them first: that follows
    // program order, which differs from rank to rank, and would pair them
    // on some ranks only (recursive doubling's).
    SmallVector<std::pair<uint64_t, Step *>, 8> sends;
    for (Step *s : level)
      if (s->kind == StepKind::Send)
        sends.push_back({slots.slot(s->src, 0), s});
    llvm::sort(sends, [](auto &a, auto &b) { return a.first < b.first; });
    for (size_t i = 0; i < sends.size(); ++i) {
      auto [slot, s] = sends[i];
      if ((i > 0 && sends[i - 1].first == slot) ||
          (i + 1 < sends.size() && sends[i + 1].first == slot))
        continue;
      auto it = pendingWrite.find(slot);
      if (it != pendingWrite.end() && forwards(it->second, s))
        pair(it->second, s, conns);
    }
    // Else the first step to read a received chunk decides.
    for (Step *s : level) {
      auto touch = [&](ChunkAttr c, bool write) {
        for (int64_t k = 0; k < c.getCount(); ++k) {
          auto it = pendingWrite.find(slots.slot(c, k));
          if (it == pendingWrite.end())
            continue;
          Step *r = it->second;
          pendingWrite.erase(it);
          if (k == 0 && !write && forwards(r, s))
            pair(r, s, conns);
        }
      };
      if (s->src)
        touch(s->src, false);
      if (s->srcs)
        for (Attribute a : s->srcs)
          touch(llvm::cast<ChunkAttr>(a), false);
      if (s->dst) {
        touch(s->dst, true);
        if (s->receives())
          for (int64_t k = 0; k < s->dst.getCount(); ++k)
            pendingWrite[slots.slot(s->dst, k)] = s;
      }
    }
  }
}

/// Where rank `rank` would need more threadblocks than can run, joins on
/// each channel a connection that only sends with one that only receives,
/// as a pairwise exchange pairs them: the k-th nearest peer it sends to,
/// counting up from the rank, with the k-th nearest it receives from,
/// counting down, so that every rank's threadblocks are the same shifted
/// (SimFold.h). Such a threadblock runs both connections' steps in key
/// order; coll-verify-plan proves that no wait closes a cycle.
void Lowering::shareThreadblocks(int64_t rank, ArrayRef<Step *> steps, ConnectionClasses &conns) {
  std::map<std::tuple<int64_t, int64_t, int64_t>, unsigned> classes; // channel, recv, send
  std::set<int64_t> local;                                           // channels
  for (auto &[c, id] : conns.ids) {
    unsigned leader = conns.classes.getLeaderValue(id);
    auto [recv, send] = conns.peers(leader);
    classes.try_emplace({c.channel, recv, send}, leader);
  }
  for (Step *s : steps)
    if (s->peer < 0)
      local.insert(s->channel);
  if (int64_t(classes.size() + local.size()) <= maxThreadblocks)
    return;
  const int64_t R = shape.ranks;
  std::map<int64_t, std::vector<std::pair<int64_t, unsigned>>> sendOnly, recvOnly; // by channel
  for (auto &[key, leader] : classes) {
    auto [channel, recv, send] = key;
    if (recv < 0 && send >= 0)
      sendOnly[channel].push_back({(send - rank + R) % R, leader});
    else if (send < 0 && recv >= 0)
      recvOnly[channel].push_back({(rank - recv + R) % R, leader});
  }
  for (auto &[channel, sends] : sendOnly) {
    std::vector<std::pair<int64_t, unsigned>> &recvs = recvOnly[channel];
    llvm::sort(sends);
    llvm::sort(recvs);
    for (size_t k = 0; k < sends.size() && k < recvs.size(); ++k)
      conns.classes.unionSets(sends[k].second, recvs[k].second);
  }
}

/// Afterwards rank `rank` has one threadblock per class, in a stable order,
/// and one per channel for local steps, and every step is in its own.
void Lowering::makeThreadblocks(int64_t rank, ArrayRef<Step *> steps, ConnectionClasses &conns) {
  std::map<std::tuple<int64_t, int64_t, int64_t>, int> tbOf; // channel, recv, send
  std::map<unsigned, std::tuple<int64_t, int64_t, int64_t>> classKey;
  for (auto &[c, id] : conns.ids) {
    unsigned leader = conns.classes.getLeaderValue(id);
    auto p = conns.peers(leader);
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
    auto key = s->peer < 0 ? std::make_tuple(int64_t(s->channel), int64_t(-1), int64_t(-1))
                           : classKey[conns.classes.getLeaderValue(conns.idOf(*s))];
    s->tb = tbOf[key];
    mine[s->tb].steps.push_back(s);
  }
}

void Lowering::assignThreadblocks(int64_t rank, std::vector<Step *> &steps) {
  ConnectionClasses conns(steps);
  pairForwards(steps, conns);
  shareThreadblocks(rank, steps, conns);
  makeThreadblocks(rank, steps, conns);
  // Ordering a threadblock for fusion can run a step after one with a larger
  // key; with several threadblocks and deps between them that risks a wait
  // cycle, so such ranks keep plain key order (fusing what is adjacent),
  // with each level's sends first where that is safe.
  std::vector<Threadblock> &mine = tbs[rank];
  if (mine.size() > 1) {
    for (Threadblock &tb : mine)
      for (Step *s : tb.steps)
        setPartner(s, nullptr);
    if (sendsFirst(steps))
      std::stable_sort(steps.begin(), steps.end(),
                       [](const Step *a, const Step *b) { return a->key() < b->key(); });
  }
  for (Threadblock &tb : mine)
    orderThreadblock(tb);
}

bool Lowering::sendsFirst(ArrayRef<Step *> steps) const {
  // Key order breaks ties within a level by program order, which follows
  // the rank: on a ring, one rank receives before it sends and the rest
  // send first, and no rank's plan is another's shifted (SimFold.h). Each
  // level's sends first is the same on every rank, and as safe where a
  // level never sends more on a connection than its FIFO holds: by
  // induction on the level, every send of level L finds a slot (the lower
  // levels' messages are received), its deps are of lower levels, and so
  // every receive of level L finds its message; the receives and local
  // steps of a level wait only on each other in key order.
  int64_t depth = 1;
  if (std::optional<uint64_t> d = AlgorithmOp(alg).getFifoDepth()) // ops are handles
    depth = std::max<int64_t>(1, *d);
  llvm::DenseMap<std::tuple<int64_t, int64_t, uint32_t>, int64_t> sent; // peer, channel, level
  for (const Step *s : steps) {
    switch (s->kind) {
    case StepKind::Send:
      if (++sent[{s->peer, s->channel, s->level}] > depth)
        return false;
      break;
    case StepKind::Recv:
    case StepKind::RecvReduceCopy:
    case StepKind::LocalCopy:
    case StepKind::LocalReduce:
      break;
    default: // steps on peers' windows wait on barriers, not on levels
      return false;
    }
  }
  for (Step *s : steps)
    s->late = s->kind != StepKind::Send;
  return true;
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
  for (Step *s : tb.steps)
    s->paired = s->done = false;
  for (Step *s : tb.steps)
    if (s->partner && s->partner->tb == s->tb) {
      units.push_back({s, s->partner, nullptr});
      s->partner->paired = true;
    }
  for (Step *s : tb.steps)
    if (!s->paired && !s->partner)
      units.push_back(s->kind == StepKind::Send ? Unit{nullptr, s, nullptr}
                      : s->receives()           ? Unit{s, nullptr, nullptr}
                                                : Unit{nullptr, nullptr, s});
  for (Step *s : tb.steps)
    if (s->partner && s->partner->tb != s->tb)
      units.push_back({s, nullptr, nullptr});

  // Each order's steps by key (keys are unique), emitted ones dropped when
  // they surface. A unit may run only when each of its steps heads its
  // order, so the only candidates are the units of the three heads.
  // Entries carry their key, so that the heaps compare without visiting steps.
  using Entry = std::pair<decltype(std::declval<Step>().key()), Step *>;
  auto later = [](const Entry &a, const Entry &b) { return b.first < a.first; };
  using Order = std::priority_queue<Entry, std::vector<Entry>, decltype(later)>;
  Order recvs(later), sends(later), others(later);
  for (size_t i = 0; i < units.size(); ++i)
    for (auto [s, order] :
         {std::pair{units[i].recv, &recvs}, {units[i].send, &sends}, {units[i].other, &others}})
      if (s) {
        order->push({s->key(), s});
        s->unit = i;
      }
  auto head = [&](Order &order) -> Step * {
    while (!order.empty() && order.top().second->done)
      order.pop();
    return order.empty() ? nullptr : order.top().second;
  };
  auto key = [](const Unit &x) { return (x.recv ? x.recv : x.other ? x.other : x.send)->key(); };

  std::vector<Step *> ordered;
  for (size_t left = units.size(); left;) {
    Step *recvHead = head(recvs), *sendHead = head(sends), *otherHead = head(others);
    std::optional<size_t> pick;
    for (Step *h : {recvHead, sendHead, otherHead}) {
      if (!h)
        continue;
      size_t i = h->unit;
      const Unit &u = units[i];
      bool ok = (!u.recv || u.recv == recvHead) && (!u.send || u.send == sendHead) &&
                (!u.other || u.other == otherHead);
      if (ok && (!pick || key(u) < key(units[*pick])))
        pick = i;
    }
    if (!pick) {
      // The paired receive at the head of its order waits for a send that
      // is not yet due: split the pair.
      if (recvHead && units[recvHead->unit].send) {
        size_t i = recvHead->unit;
        Step *send = units[i].send;
        setPartner(units[i].recv, nullptr);
        units[i].send = nullptr;
        send->unit = units.size();
        units.push_back({nullptr, send, nullptr});
        ++left;
      }
      continue;
    }
    Unit u = units[*pick];
    --left;
    for (Step *s : {u.recv, u.send, u.other})
      if (s) {
        s->done = true;
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
  if (std::optional<uint64_t> d = AlgorithmOp(alg).getFifoDepth()) // ops are handles
    depth = std::max<int64_t>(1, *d);
  std::vector<std::pair<const Threadblock *, size_t>> run; // threadblock, next step
  for (const auto &rank : tbs)
    for (const Threadblock &tb : rank)
      run.push_back({&tb, 0});
  using Key = std::tuple<int64_t, int64_t, int64_t>;
  using Fifo = std::pair<size_t, SmallVector<size_t>>; // messages, waiters
  llvm::DenseMap<Key, size_t> fifoOf;
  std::vector<Fifo> fifos;
  // A threadblock's steps use one or two connections: remember the last
  // one of each direction instead of hashing every step's.
  std::vector<std::array<std::pair<Key, size_t>, 2>> last(
      run.size(), {std::pair{Key{-1, -1, -1}, 0}, std::pair{Key{-1, -1, -1}, 0}});
  std::deque<size_t> ready;
  for (size_t i = 0; i < run.size(); ++i)
    ready.push_back(i);
  while (!ready.empty()) {
    size_t i = ready.front();
    ready.pop_front();
    auto &[tb, next] = run[i];
    while (next < tb->steps.size()) {
      const Step *s = tb->steps[next];
      Key key =
          s->receives() ? Key{s->peer, s->rank, s->channel} : Key{s->rank, s->peer, s->channel};
      if (s->peer >= 0) {
        auto &[lastKey, index] = last[i][s->receives()];
        if (lastKey != key) {
          auto [it, fresh] = fifoOf.try_emplace(key, fifos.size());
          if (fresh)
            fifos.emplace_back();
          lastKey = key;
          index = it->second;
        }
        auto &[count, waiters] = fifos[index];
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
