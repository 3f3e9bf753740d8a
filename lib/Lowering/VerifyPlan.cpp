//===- VerifyPlan.cpp - Run a plan symbolically with FIFOs of depth one ----===//
//
// A plan that passes can neither deadlock nor compute a wrong result: every
// threadblock runs its steps in order, waiting for its deps, for a message on
// its receive connection and for room on its send connection (one message:
// the tightest FIFO, so any deeper one also finishes), and the buffers it
// leaves satisfy the collective's postcondition. A step that receives and
// sends takes its slice off the receive FIFO before it waits for room to
// send: the primitives must release a receive slot once its data is
// consumed, which is what keeps a ring of fused steps moving at depth one.
//
// Races are found with vector clocks over the threadblocks that deps link,
// kept where a dep reads them: memory grows with the plan, not with the
// square of its threadblocks, up to kMaxClockEntries.
//
//===----------------------------------------------------------------------===//

#include "dialect/CollOps.h"
#include "lib/Analysis/Semantics.h"
#include "lib/Analysis/SymbolicState.h"
#include "lib/Lowering/Passes.h"

#include "mlir/IR/Diagnostics.h"
#include "llvm/ADT/DenseMap.h"

#include <algorithm>
#include <deque>
#include <map>
#include <numeric>

namespace coll {
#define GEN_PASS_DEF_COLLVERIFYPLANPASS
#include "lib/Lowering/Passes.h.inc"
} // namespace coll

using namespace mlir;
using namespace coll;

namespace {

/// Clock values kept over the whole plan, 4 bytes each: 512 MiB.
constexpr uint64_t kMaxClockEntries = uint64_t(1) << 27;

struct Fifo;

struct Threadblock {
  int64_t rank, id, recv, send, channel;
  SmallVector<Operation *> steps;
  SmallVector<uint64_t> ids; // of the steps, increasing
  size_t next = 0;
  SmallVector<size_t, 2> waiters;     // threadblocks blocked on this one's progress
  Fifo *in = nullptr, *out = nullptr; // found at the first step that uses them
  /// The current step has received and computed, and waits for room to send.
  std::optional<SmallVector<uint32_t>> holding;
  /// Vector clock over the threadblocks that deps link to this one, its
  /// component (by index `local` in it): how many steps of each are known
  /// to have finished. Nothing else orders steps within a rank, so steps of
  /// two components never are. `after` holds its value after each step at
  /// `snapshotAt` (the positions that deps name), `clock.size()` values each.
  size_t component = 0, local = 0;
  SmallVector<uint32_t> clock;
  SmallVector<uint32_t> snapshotAt;
  size_t snapshots = 0; // taken so far
  std::vector<uint32_t> after;

  /// The position of the step with id `id`, which the rank's verifier
  /// checked exists.
  size_t position(uint64_t id) const {
    return std::lower_bound(ids.begin(), ids.end(), id) - ids.begin();
  }
  /// The clock after step `pos`, one of `snapshotAt`.
  ArrayRef<uint32_t> clockAfter(size_t pos) const {
    size_t k = llvm::lower_bound(snapshotAt, pos) - snapshotAt.begin();
    return ArrayRef(after).slice(k * clock.size(), clock.size());
  }
};

struct Message {
  SmallVector<uint32_t> values;
  Operation *sender;
  size_t tb, pos; // of the sender, to name it
};

/// (from, to, channel)
using ConnectionKey = std::tuple<int64_t, int64_t, int64_t>;

struct Fifo {
  std::deque<Message> messages;
  SmallVector<size_t, 2> waiters;
};

struct StepAccess {
  SmallVector<ChunkAttr, 2> reads;
  ChunkAttr writes;
  SmallVector<ChunkAttr> remoteWrites; // on other ranks
};

class PlanRun {
public:
  PlanRun(PlanOp plan, bool mscclLimits, int64_t depth)
      : plan(plan), mscclLimits(mscclLimits), depth(depth), state(CollectiveShape::of(plan)) {}

  LogicalResult run();

private:
  LogicalResult collect();
  LogicalResult linkByDeps(RankOp rank, size_t first);
  LogicalResult step(size_t t, bool &blocked);
  StepAccess accessOf(const Threadblock &tb, StepOpInterface stepOp);
  bool finish(size_t t, Fifo *out, SmallVector<uint32_t> values);
  bool waitsForDeps(size_t t, DenseI64ArrayAttr depsAttr);
  void joinDepClocks(Threadblock &tb, DenseI64ArrayAttr depsAttr);
  LogicalResult receive(size_t t, Fifo &in, const StepAccess &access, Message &msg);
  LogicalResult compute(size_t t, const Message *received, ArrayRef<ChunkAttr> reads,
                        SmallVector<uint32_t> &result);
  std::string where(const Threadblock &tb, size_t pos) const {
    return "rank " + std::to_string(tb.rank) + ", threadblock " + std::to_string(tb.id) +
           ", step " + std::to_string(llvm::cast<StepOpInterface>(tb.steps[pos]).getId()) + " (" +
           tb.steps[pos]->getName().stripDialect().str() + ")";
  }
  void wake(SmallVector<size_t, 2> &waiters) {
    for (size_t w : waiters)
      ready.push_back(w);
    waiters.clear();
  }

  PlanOp plan;
  bool mscclLimits;
  size_t depth; // FIFO slots per connection
  SymbolicState state;
  std::vector<Threadblock> tbs;
  llvm::DenseMap<std::pair<int64_t, int64_t>, size_t> tbIndex; // (rank, id)
  std::map<ConnectionKey, Fifo> fifos;
  std::deque<size_t> ready;
  uint64_t clockEntries = 0; // over all ranks
  std::vector<Operation *> writers;
  /// The last step to write each slot and the steps that read it since, as
  /// (threadblock, step), to find accesses that nothing orders; by slot.
  using Access = std::pair<uint32_t, uint32_t>;
  static constexpr Access kNone = {UINT32_MAX, UINT32_MAX};
  std::vector<Access> lastWrite;
  std::vector<SmallVector<Access, 1>> readsSince;
  LogicalResult checkOrdered(size_t t, Operation *op, ArrayRef<ChunkAttr> reads, ChunkAttr writes);
};

} // namespace

LogicalResult PlanRun::collect() {
  std::map<ConnectionKey, size_t> sender, receiver; // connection -> threadblock
  std::map<std::pair<int64_t, int64_t>, ThreadblockOp> tbOps;
  std::map<int64_t, std::pair<int, int>> perChannel; // channel -> max send, recv tbs
  for (auto rank : plan.getBody().front().getOps<RankOp>()) {
    std::map<int64_t, std::pair<int, int>> mine;
    size_t firstOfRank = tbs.size();
    for (auto tbOp : rank.getBody().front().getOps<ThreadblockOp>()) {
      Threadblock tb;
      tb.rank = rank.getRankAttr().getInt();
      tb.id = tbOp.getIdAttr().getInt();
      tb.recv = tbOp.getRecvAttr() ? tbOp.getRecvAttr().getInt() : -1;
      tb.send = tbOp.getSendAttr() ? tbOp.getSendAttr().getInt() : -1;
      tb.channel = tbOp.getChannelAttr().getInt();
      for (Operation &op : tbOp.getBody().front()) {
        tb.ids.push_back(llvm::cast<StepOpInterface>(op).getId());
        tb.steps.push_back(&op);
      }
      size_t index = tbs.size();
      tbIndex[{tb.rank, tb.id}] = index;
      tbOps[{tb.rank, tb.id}] = tbOp;
      // A connection carries one ordered stream: one threadblock per end.
      if (tb.send >= 0) {
        auto [it, fresh] = sender.try_emplace({tb.rank, tb.send, tb.channel}, index);
        if (!fresh)
          return tbOp.emitError() << "rank " << tb.rank << " sends to rank " << tb.send
                                  << " on channel " << tb.channel << " from threadblocks "
                                  << tbs[it->second].id << " and " << tb.id
                                  << "; a connection belongs to one threadblock";
        ++mine[tb.channel].first;
      }
      if (tb.recv >= 0) {
        auto [it, fresh] = receiver.try_emplace({tb.recv, tb.rank, tb.channel}, index);
        if (!fresh)
          return tbOp.emitError() << "rank " << tb.rank << " receives from rank " << tb.recv
                                  << " on channel " << tb.channel << " in threadblocks "
                                  << tbs[it->second].id << " and " << tb.id
                                  << "; a connection belongs to one threadblock";
        ++mine[tb.channel].second;
      }
      if (mscclLimits && tb.steps.size() > 256)
        return tbOp.emitError() << "rank " << tb.rank << ", threadblock " << tb.id << " has "
                                << tb.steps.size() << " steps; the MSCCL runtime allows 256";
      tbs.push_back(std::move(tb));
    }
    if (failed(linkByDeps(rank, firstOfRank)))
      return failure();
    for (auto &[channel, counts] : mine) {
      auto &most = perChannel[channel];
      most = {std::max(most.first, counts.first), std::max(most.second, counts.second)};
    }
  }
  // Both ends of a connection must use one protocol and one transfer mode.
  for (auto &[key, from] : sender) {
    auto to = receiver.find(key);
    if (to == receiver.end())
      continue;
    ThreadblockOp a = tbOps[{tbs[from].rank, tbs[from].id}];
    ThreadblockOp b = tbOps[{tbs[to->second].rank, tbs[to->second].id}];
    if (a.getProtocolAttr() != b.getProtocolAttr())
      return b.emitError() << "rank " << tbs[to->second].rank << ", threadblock "
                           << tbs[to->second].id << " receives from rank " << std::get<0>(key)
                           << " with another protocol than its sender";
    if (a.getDirectSend() != b.getDirectRecv())
      return b.emitError() << "rank " << tbs[to->second].rank << ", threadblock "
                           << tbs[to->second].id << " and its sender, rank " << std::get<0>(key)
                           << ", disagree on direct transfer";
  }
  if (mscclLimits) {
    if (perChannel.size() > 32 || (!perChannel.empty() && perChannel.rbegin()->first >= 32))
      return plan.emitError() << "the plan uses channels up to " << perChannel.rbegin()->first
                              << "; the MSCCL runtime allows 32 channels";
    for (auto &[channel, counts] : perChannel)
      if (counts.first > 32 || counts.second > 32)
        return plan.emitError() << "channel " << channel << " has " << counts.first
                                << " sending and " << counts.second
                                << " receiving threadblocks on one rank; the MSCCL "
                                   "runtime allows 32 of each";
  }
  return success();
}

/// Groups the threadblocks of `rank`, from `first` on, into the components
/// that deps link, and sizes their clocks; fails past kMaxClockEntries.
LogicalResult PlanRun::linkByDeps(RankOp rank, size_t first) {
  size_t count = tbs.size() - first;
  std::vector<size_t> parent(count);
  std::iota(parent.begin(), parent.end(), 0);
  auto find = [&](size_t v) {
    while (parent[v] != v)
      v = parent[v] = parent[parent[v]];
    return v;
  };
  for (size_t t = first; t < tbs.size(); ++t)
    for (Operation *op : tbs[t].steps)
      for (StepRef dep : llvm::cast<StepOpInterface>(op).getDepRefs()) {
        Threadblock &other = tbs[tbIndex.at({tbs[t].rank, dep.tb})];
        other.snapshotAt.push_back(other.position(dep.id));
        parent[find(t - first)] = find(&other - &tbs[first]);
      }
  std::vector<size_t> size(count, 0);
  for (size_t i = 0; i < count; ++i) {
    Threadblock &tb = tbs[first + i];
    tb.component = first + find(i);
    tb.local = size[find(i)]++;
    llvm::sort(tb.snapshotAt);
    tb.snapshotAt.erase(llvm::unique(tb.snapshotAt), tb.snapshotAt.end());
  }
  // Count before allocating, so that a plan past the limit costs nothing.
  for (size_t i = 0; i < count; ++i) {
    Threadblock &tb = tbs[first + i];
    clockEntries += size[tb.component - first] * (1 + tb.snapshotAt.size());
  }
  if (clockEntries > kMaxClockEntries)
    return mlir::emitError(rank.getLoc())
           << "the plan is too large to verify: its vector clocks (deps on rank " << rank.getRank()
           << " link up to " << *llvm::max_element(size) << " threadblocks) would hold more than "
           << kMaxClockEntries << " entries";
  for (size_t i = 0; i < count; ++i) {
    Threadblock &tb = tbs[first + i];
    tb.clock.assign(size[tb.component - first], 0);
    tb.after.resize(tb.snapshotAt.size() * tb.clock.size());
  }
  return success();
}

/// The chunks a step reads and writes on its own rank, and those it writes
/// on every other rank: a multimem or peer-window step reads (ld_reduce,
/// read_reduce) or writes (st, put) its chunk on every rank.
StepAccess PlanRun::accessOf(const Threadblock &tb, StepOpInterface stepOp) {
  Operation *op = stepOp.getOperation();
  StepAccess access{stepOp.getReadChunks(), stepOp.getWrittenChunk(), {}};
  if (!stepOp.onEveryRank())
    return access;
  bool loads = llvm::isa<MultimemLdReduceOp, ReadReduceOp>(op);
  ChunkAttr c = loads ? access.reads[0] : access.writes;
  SmallVector<ChunkAttr> every;
  for (int64_t r = 0; r < int64_t(plan.getRanks()); ++r)
    every.push_back(ChunkAttr::get(op->getContext(), c.getBuffer(), r, c.getIndex(), c.getCount()));
  if (loads) {
    access.reads.assign(every.begin(), every.end());
  } else {
    for (ChunkAttr w : every)
      if (w.getRank() != tb.rank)
        access.remoteWrites.push_back(w);
  }
  return access;
}

/// Ends threadblock t's current step with `values`, unless `out` is full;
/// returns whether the step ended, and else the slice waits for room.
bool PlanRun::finish(size_t t, Fifo *out, SmallVector<uint32_t> values) {
  Threadblock &tb = tbs[t];
  if (out && out->messages.size() >= depth) {
    // Hold the slice: the receive side is already released.
    tb.holding = std::move(values);
    out->waiters.push_back(t);
    return false;
  }
  if (out) {
    out->messages.push_back({std::move(values), tb.steps[tb.next], t, tb.next});
    wake(out->waiters);
  }
  tb.holding.reset();
  tb.clock[tb.local] = tb.next + 1;
  if (tb.snapshots < tb.snapshotAt.size() && tb.snapshotAt[tb.snapshots] == tb.next)
    llvm::copy(tb.clock, tb.after.begin() + tb.snapshots++ * tb.clock.size());
  ++tb.next;
  wake(tb.waiters);
  return true;
}

/// Whether threadblock t must wait for a step it depends on; if so, it is
/// queued to wake when that step's threadblock moves on. Step p of
/// threadblock u is done once u has moved past it.
bool PlanRun::waitsForDeps(size_t t, DenseI64ArrayAttr depsAttr) {
  if (!depsAttr)
    return false;
  Threadblock &tb = tbs[t];
  ArrayRef<int64_t> deps = depsAttr.asArrayRef();
  for (size_t d = 0; d + 1 < deps.size(); d += 2) {
    Threadblock &other = tbs[tbIndex.at({tb.rank, deps[d]})];
    if (other.next <= other.position(deps[d + 1])) {
      other.waiters.push_back(t);
      return true;
    }
  }
  return false;
}

/// Afterwards tb's clock knows every step its deps knew had finished.
void PlanRun::joinDepClocks(Threadblock &tb, DenseI64ArrayAttr depsAttr) {
  if (!depsAttr)
    return;
  ArrayRef<int64_t> deps = depsAttr.asArrayRef();
  for (size_t d = 0; d + 1 < deps.size(); d += 2) {
    const Threadblock &other = tbs[tbIndex.at({tb.rank, deps[d]})];
    ArrayRef<uint32_t> seen = other.clockAfter(other.position(deps[d + 1]));
    for (size_t k = 0; k < seen.size(); ++k)
      tb.clock[k] = std::max(tb.clock[k], seen[k]);
  }
}

/// Takes the message at the head of `in` into `msg`; succeeds only if it
/// carries as many chunks as the step expects and a direct sender could
/// not have stored it anywhere but where the step puts it.
LogicalResult PlanRun::receive(size_t t, Fifo &in, const StepAccess &access, Message &msg) {
  Threadblock &tb = tbs[t];
  Operation *op = tb.steps[tb.next];
  int64_t count = llvm::cast<StepOpInterface>(op).getChunkCount();
  msg = std::move(in.messages.front());
  in.messages.pop_front();
  wake(in.waiters);
  if (int64_t(msg.values.size()) != count) {
    InFlightDiagnostic diag = op->emitError()
                              << where(tb, tb.next) << " expects " << count << " chunks from rank "
                              << tb.recv << " but the matching "
                              << "send carries " << msg.values.size();
    diag.attachNote(msg.sender->getLoc()) << "the send is here";
    return failure();
  }
  // A direct sender may have stored the step straight into this step's
  // destination: it must be that destination, and not reduced into.
  ChunkAttr direct = llvm::cast<StepOpInterface>(msg.sender).getDirectDstAttr();
  if (!direct)
    return success();
  auto range = [&](ChunkAttr c) {
    return physicalRange(plan.getCollective(), plan.getChunks(), plan.getInplace(), c);
  };
  bool apart =
      llvm::none_of(access.reads, [&](ChunkAttr r) { return range(r).overlaps(range(direct)); });
  if (direct == access.writes && apart)
    return success();
  std::string name = (direct.getBuffer().getValue() + "[" + Twine(direct.getRank()) + "][" +
                      Twine(direct.getIndex()) + "]")
                         .str();
  if (direct.getCount() != 1)
    name.insert(name.size() - 1, ":" + std::to_string(direct.getEnd()));
  InFlightDiagnostic diag = op->emitError()
                            << where(tb, tb.next) << " does not just store what it "
                            << "receives in " << name << ", where its sender may store it directly";
  diag.attachNote(msg.sender->getLoc()) << "the send is here";
  return failure();
}

/// The values the current step of threadblock t computes, one per chunk,
/// from what it received (if `received`) and what it reads; fails where it
/// reads an unwritten chunk or combines values that do not combine.
LogicalResult PlanRun::compute(size_t t, const Message *received, ArrayRef<ChunkAttr> reads,
                               SmallVector<uint32_t> &result) {
  Threadblock &tb = tbs[t];
  Operation *op = tb.steps[tb.next];
  const SlotLayout &slots = state.layout();
  int64_t count = llvm::cast<StepOpInterface>(op).getChunkCount();
  result.assign(count, 0);
  SmallVector<uint32_t, 4> terms;
  for (int64_t k = 0; k < count; ++k) {
    terms.clear();
    if (received)
      terms.push_back(received->values[k]);
    for (ChunkAttr c : reads) {
      uint32_t v = state.get(slots.slot(c, k));
      if (v == 0)
        return op->emitError() << where(tb, tb.next) << " reads " << chunkName(c, k)
                               << ", which has not been written yet";
      terms.push_back(v);
    }
    if (terms.size() == 1) {
      result[k] = terms[0];
      continue;
    }
    std::string why;
    FailureOr<uint32_t> v = state.combine(
        terms,
        [&](size_t s) {
          if (received && s == 0)
            return "the chunk received from rank " + std::to_string(tb.recv);
          return chunkName(reads[s - (received ? 1 : 0)], k);
        },
        why);
    if (failed(v))
      return op->emitError() << where(tb, tb.next) << " " << why;
    result[k] = *v;
  }
  return success();
}

/// Afterwards threadblock t's next step has run, or `blocked` says it waits
/// (queued to wake) for a dep, a message or room to send.
LogicalResult PlanRun::step(size_t t, bool &blocked) {
  Threadblock &tb = tbs[t];
  Operation *op = tb.steps[tb.next];
  auto stepOp = llvm::cast<StepOpInterface>(op);
  StepAccess access = accessOf(tb, stepOp);
  DenseI64ArrayAttr depsAttr = stepOp.getDepsAttr();
  blocked = true;
  if (stepOp.sends() && !tb.out)
    tb.out = &fifos[{tb.rank, tb.send, tb.channel}];
  Fifo *out = stepOp.sends() ? tb.out : nullptr;
  if (tb.holding) {
    blocked = !finish(t, out, *tb.holding);
    return success();
  }
  if (waitsForDeps(t, depsAttr))
    return success();
  if (stepOp.receives() && !tb.in)
    tb.in = &fifos[{tb.recv, tb.rank, tb.channel}];
  Fifo *in = stepOp.receives() ? tb.in : nullptr;
  if (in && in->messages.empty()) {
    in->waiters.push_back(t);
    return success();
  }
  joinDepClocks(tb, depsAttr);
  if (failed(checkOrdered(t, op, access.reads, access.writes)))
    return failure();
  for (ChunkAttr w : access.remoteWrites)
    if (failed(checkOrdered(t, op, {}, w)))
      return failure();

  const SlotLayout &slots = state.layout();
  int64_t count = stepOp.getChunkCount();
  Message msg;
  if (in && failed(receive(t, *in, access, msg)))
    return failure();
  ChunkAttr writes = access.writes;
  if (writes && slots.isReadOnly(writes))
    return op->emitError() << where(tb, tb.next) << " writes " << chunkName(writes, 0)
                           << ", but 'in' is read-only in a collective that is not in place";
  writers.push_back(op);
  SmallVector<uint32_t> result;
  if (failed(compute(t, in ? &msg : nullptr, access.reads, result)))
    return failure();
  if (writes)
    for (int64_t k = 0; k < count; ++k)
      state.set(slots.slot(writes, k), result[k], writers.size());
  for (ChunkAttr w : access.remoteWrites)
    for (int64_t k = 0; k < count; ++k)
      state.set(slots.slot(w, k), result[k], writers.size());
  blocked = !finish(t, out, std::move(result));
  return success();
}

LogicalResult PlanRun::checkOrdered(size_t t, Operation *op, ArrayRef<ChunkAttr> reads,
                                    ChunkAttr writes) {
  Threadblock &tb = tbs[t];
  const SlotLayout &slots = state.layout();
  // Only multimem and peer-window steps touch another rank's chunks, and
  // nothing but the barriers around the kernel orders those with the
  // owner's steps.
  auto ordered = [&](Access other) {
    if (other.first == t)
      return true;
    const Threadblock &them = tbs[other.first];
    if (them.rank != tb.rank || them.component != tb.component)
      return false;
    return tb.clock[them.local] > other.second;
  };
  auto race = [&](ChunkAttr c, int64_t k, Access other) {
    return op->emitError() << "race: " << where(tb, tb.next) << " and "
                           << where(tbs[other.first], other.second) << " both access "
                           << chunkName(c, k) << " and nothing orders them; add a dependency";
  };
  for (ChunkAttr c : reads)
    for (int64_t k = 0, n = c.getCount(), first = slots.slot(c, 0); k < n; ++k) {
      uint64_t slot = first + k;
      Access w = lastWrite[slot];
      if (w != kNone && !ordered(w))
        return race(c, k, w);
      readsSince[slot].push_back({uint32_t(t), uint32_t(tb.next)});
    }
  if (writes)
    for (int64_t k = 0, n = writes.getCount(), first = slots.slot(writes, 0); k < n; ++k) {
      uint64_t slot = first + k;
      Access w = lastWrite[slot];
      if (w != kNone && !ordered(w))
        return race(writes, k, w);
      for (Access reader : readsSince[slot])
        if (!ordered(reader))
          return race(writes, k, reader);
      readsSince[slot].clear();
      lastWrite[slot] = {uint32_t(t), uint32_t(tb.next)};
    }
  return success();
}

LogicalResult PlanRun::run() {
  if (failed(collect()))
    return failure();
  lastWrite.assign(state.layout().size(), kNone);
  readsSince.resize(state.layout().size());
  for (size_t t = 0; t < tbs.size(); ++t)
    ready.push_back(t);
  while (!ready.empty()) {
    size_t t = ready.front();
    ready.pop_front();
    bool blocked = false;
    while (!blocked && tbs[t].next < tbs[t].steps.size())
      if (failed(step(t, blocked)))
        return failure();
  }
  for (Threadblock &tb : tbs) {
    if (tb.next == tb.steps.size())
      continue;
    Operation *op = tb.steps[tb.next];
    InFlightDiagnostic diag = op->emitError()
                              << "deadlock: " << where(tb, tb.next) << " waits forever";
    if (tb.holding)
      diag << " for room to send to rank " << tb.send << " on channel " << tb.channel;
    else if (llvm::cast<StepOpInterface>(op).receives() &&
             fifos[{tb.recv, tb.rank, tb.channel}].messages.empty())
      diag << " for a message from rank " << tb.recv << " on channel " << tb.channel;
    else
      diag << " for a step of another threadblock it depends on";
    return failure();
  }
  for (auto &[key, fifo] : fifos)
    if (!fifo.messages.empty())
      return fifo.messages.front().sender->emitError()
             << where(tbs[fifo.messages.front().tb], fifo.messages.front().pos) << " sends to rank "
             << std::get<1>(key) << " on channel " << std::get<2>(key)
             << " a message nobody receives";
  return state.checkPostcondition(plan, [&](uint32_t w) { return writers[w - 1]->getLoc(); });
}

namespace {
struct CollVerifyPlanPass : coll::impl::CollVerifyPlanPassBase<CollVerifyPlanPass> {
  using Base::Base;
  void runOnOperation() override {
    PlanOp plan = getOperation();
    if (!fitsSymbolicExecution(CollectiveShape::of(plan))) {
      plan.emitError("the buffers are too large to verify");
      return signalPassFailure();
    }
    // Pipelined plans say how many slots they need (coll-split-chunks).
    int64_t depth = 1;
    if (std::optional<uint64_t> need = plan.getFifoDepth())
      depth = std::max<int64_t>(depth, *need);
    if (failed(PlanRun(plan, mscclLimits, depth).run()))
      return signalPassFailure();
    markAllAnalysesPreserved();
  }
};
} // namespace
