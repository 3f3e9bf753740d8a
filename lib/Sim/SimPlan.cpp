//===- SimPlan.cpp - A verified plan as the simulator runs it -------------===//
#include "lib/Sim/SimPlan.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/TypeSwitch.h"

#include <map>
#include <tuple>

using namespace coll;

int SimPlan::protocol() const {
  int count[3] = {0, 0, 0};
  for (const Threadblock &tb : threadblocks)
    ++count[tb.protocol];
  return int(std::max_element(count, count + 3) - count);
}

static llvm::Error planError(PlanOp plan, const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                 "plan " + plan.getSymName() + ": " + message);
}

static SimPlan::Access accessOf(mlir::Operation *op) {
  using A = SimPlan::Access;
  return llvm::TypeSwitch<mlir::Operation *, A>(op)
      .Case<LocalCopyOp, LocalReduceOp>([](auto) { return A::Local; })
      .Case<MultimemLdReduceOp>([](auto) { return A::LdReduce; })
      .Case<MultimemStOp>([](auto) { return A::Store; })
      .Case<ReadReduceOp>([](auto) { return A::Read; })
      .Case<PutOp>([](auto) { return A::Put; })
      .Case<GetOp>([](auto) { return A::Get; })
      .Default([](auto) { return A::None; });
}

llvm::Expected<SimPlan> coll::buildSimPlan(PlanOp plan) {
  SimPlan sim;
  sim.name = plan.getSymName().str();
  sim.algorithm = plan.getAlgorithm().value_or(plan.getSymName()).str();
  sim.collective = plan.getCollective();
  sim.ranks = plan.getRanks();
  sim.inChunks = plan.getBufferSize("in").value_or(1);
  sim.outChunks = plan.getBufferSize("out").value_or(1);
  if (auto lo = plan.getMinBytes())
    sim.minBytes = *lo;
  if (auto hi = plan.getMaxBytes())
    sim.maxBytes = *hi;
  // What coll-select-protocol recorded for the runtime.
  if (std::optional<uint64_t> slots = plan.getSlots())
    sim.slots = int64_t(*slots);
  if (coll::LaunchAttr launch = plan.getLaunchAttr())
    for (const coll::LaunchRange &r : launch.getRanges())
      sim.launches.push_back({r.minBytes, r.replicas, r.threads});
  if (auto map = plan.getRankMapAttr())
    sim.gpus.assign(map.asArrayRef().begin(), map.asArrayRef().end());
  else
    for (int64_t r = 0; r < sim.ranks; ++r)
      sim.gpus.push_back(r);

  // Threadblocks and steps; deps are resolved once all are numbered.
  llvm::DenseMap<std::pair<int64_t, int64_t>, int32_t> index; // (rank, tb id)
  llvm::DenseMap<mlir::OperationName, int32_t> kinds;
  std::vector<llvm::DenseMap<uint64_t, int32_t>> position; // step id -> position
  std::vector<std::pair<int64_t, StepRef>> pending;        // (rank, dep) per dep slot
  std::map<std::tuple<int64_t, int64_t, int64_t>, int32_t> senders, receivers;
  for (auto rank : plan.getBody().getOps<RankOp>())
    for (auto tb : rank.getBody().getOps<ThreadblockOp>()) {
      int64_t r = rank.getRank();
      if (!tb.getProtocol())
        return planError(plan, "threadblock " + llvm::Twine(tb.getId()) + " of rank " +
                                   llvm::Twine(r) + " has no protocol");
      SimPlan::Threadblock t;
      t.rank = int32_t(r);
      t.protocol = int32_t(*tb.getProtocol());
      t.directRecv = tb.getDirectRecv();
      t.stepBegin = int32_t(sim.steps.size());
      int32_t self = int32_t(sim.threadblocks.size());
      index[{r, int64_t(tb.getId())}] = self;
      position.emplace_back();
      for (auto step : tb.getBody().front().getOps<StepOpInterface>()) {
        SimPlan::Step s;
        s.receives = step.receives();
        s.sends = step.sends();
        s.access = accessOf(step.getOperation());
        s.chunks = int32_t(step.getChunkCount());
        mlir::OperationName name = step->getName();
        auto [kind, fresh] = kinds.try_emplace(name, int32_t(sim.kinds.size()));
        if (fresh)
          sim.kinds.push_back(name.stripDialect().str());
        s.kind = kind->second;
        sim.widest = std::max<int64_t>(sim.widest, s.chunks);
        if (auto get = llvm::dyn_cast<GetOp>(step.getOperation()))
          s.peer = int32_t(get.getSrc().getRank());
        if (s.access != SimPlan::Access::None && s.access != SimPlan::Access::Local)
          sim.peerSteps = true;
        if (s.receives)
          s.recvOrdinal = t.recvsPerLoop++;
        if (s.sends)
          s.sendOrdinal = t.sendsPerLoop++;
        s.depBegin = int32_t(pending.size());
        for (StepRef ref : step.getDepRefs())
          pending.push_back({r, ref});
        s.depEnd = int32_t(pending.size());
        position.back()[step.getId()] = int32_t(sim.steps.size()) - t.stepBegin;
        sim.steps.push_back(s);
      }
      t.stepEnd = int32_t(sim.steps.size());
      int64_t ch = tb.getChannel();
      if (t.sendsPerLoop &&
          (!tb.getSend() || !senders.insert({{r, *tb.getSend(), ch}, self}).second))
        return planError(plan, "threadblock " + llvm::Twine(tb.getId()) + " of rank " +
                                   llvm::Twine(r) + " sends without a connection of its own");
      if (t.recvsPerLoop &&
          (!tb.getRecv() || !receivers.insert({{*tb.getRecv(), r, ch}, self}).second))
        return planError(plan, "threadblock " + llvm::Twine(tb.getId()) + " of rank " +
                                   llvm::Twine(r) + " receives without a connection of its own");
      sim.threadblocks.push_back(t);
    }

  for (auto [rank, ref] : pending) {
    auto tb = index.find({rank, ref.tb});
    if (tb == index.end())
      return planError(plan, "a dep names threadblock " + llvm::Twine(ref.tb) + " of rank " +
                                 llvm::Twine(rank) + ", which does not exist");
    auto step = position[tb->second].find(ref.id);
    if (step == position[tb->second].end())
      return planError(plan, "a dep names step " + llvm::Twine(ref.id) + " of threadblock " +
                                 llvm::Twine(ref.tb) + " of rank " + llvm::Twine(rank) +
                                 ", which does not exist");
    sim.deps.push_back({tb->second, step->second});
  }

  for (auto &[key, sender] : senders) {
    auto receiver = receivers.find(key);
    auto [from, to, ch] = key;
    if (receiver == receivers.end())
      return planError(plan, "rank " + llvm::Twine(from) + " sends to rank " + llvm::Twine(to) +
                                 " on channel " + llvm::Twine(ch) + ", which receives nothing");
    int32_t c = int32_t(sim.connections.size());
    sim.connections.push_back({sender, receiver->second, int32_t(to)});
    sim.threadblocks[sender].sendConn = c;
    sim.threadblocks[receiver->second].recvConn = c;
  }
  for (const SimPlan::Threadblock &t : sim.threadblocks)
    if (t.recvsPerLoop && t.recvConn < 0)
      return planError(plan, "a threadblock of rank " + llvm::Twine(t.rank) +
                                 " receives from a rank that sends it nothing");
  return sim;
}
