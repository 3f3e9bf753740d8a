//===- Simulator.cpp - Event simulation of a plan on a topology -----------===//
//
// Each threadblock runs at most one step at a time, so each has at most one
// flow: flows are numbered by threadblock. The runtime's replicas are copies
// of the plan's threadblocks and connections, numbered replica-major, that
// share the plan's steps. When a flow starts or ends, only the flows on the
// links it crosses (SimLinks.h) change rate, and only those whose rate
// changes are settled and rescheduled; a superseded completion event is
// recognised by its version and dropped. Flows that start or end at one
// instant (a wave of threadblocks) change the links' shares once: their
// links are marked and rescheduled together before time moves on, so a
// wave of n flows on one link costs n, not n squared.
//
//===----------------------------------------------------------------------===//
#include "lib/Sim/Simulator.h"

#include "lib/Sim/SimLinks.h"

#include <algorithm>
#include <cmath>
#include <queue>

using namespace coll;

double coll::busBandwidthFactor(Collective c, int64_t ranks) {
  double n = double(ranks);
  switch (c) {
  case Collective::allreduce:
    return 2 * (n - 1) / n;
  case Collective::allgather:
  case Collective::reducescatter:
  case Collective::alltoall:
    return (n - 1) / n;
  default:
    return 1;
  }
}

namespace {

using sim::Path;
using sim::Use;

struct Event {
  double time;
  uint64_t seq; // ties go first come, first served
  int32_t type, id;
  uint32_t version;
  bool operator>(const Event &o) const { return time != o.time ? time > o.time : seq > o.seq; }
};
enum EventType { FlowDone, Arrive };

class Engine {
public:
  Engine(const SimPlan &plan, const Topology &topo, const SimOptions &options)
      : plan(plan), links(plan, topo, options), capacity(links.capacity), paths(links.paths),
        stepPath(links.stepPath), trace(options.trace) {}

  llvm::Error build() { return links.build(); }
  /// Runs `loops` loops over `replicas` copies of the threadblocks, each
  /// chunk moving `slice` bytes per loop and `last` in the last one, each
  /// threadblock at `share` of its full rate. Returns the time of the last
  /// step.
  llvm::Expected<double> run(int64_t loops, double slice, double last, int64_t replicas,
                             double share);

private:
  double rate(int32_t tb) const;
  void settle(int32_t tb, double now);
  void touch(const Path &path);
  void reschedule(double now);
  void startFlow(int32_t tb, double bytes, double now);
  void endFlow(int32_t tb, double now);
  void tryStart(int32_t tb, double now);
  void complete(int32_t tb, double now);
  void wake(int32_t tb);
  void push(double time, EventType type, int32_t id, uint32_t version = 0) {
    events.push({time, seq++, type, id, version});
  }

  const SimPlan &plan;
  sim::Links links;
  const std::vector<double> &capacity;
  const std::vector<Path> &paths;
  const std::vector<int32_t> &stepPath;
  std::vector<SimSpan> *trace;

  // Per run.
  int64_t loops = 0, replicas = 1;
  double slice = 0, last = 0, share = 1;
  int32_t tbs = 0, conns = 0; // of the plan, in one replica
  /// Loops that replica j runs: j, j + replicas, ...
  int64_t loopsOf(int64_t j) const { return loops > j ? (loops - 1 - j) / replicas + 1 : 0; }
  std::vector<std::vector<int32_t>> flowsOn;      // per resource: threadblocks
  std::vector<double> remaining, flowRate, since; // per threadblock's flow
  std::vector<double> began;                      // of its step, when traced
  std::vector<int32_t> flowPath;
  std::vector<uint32_t> version;
  std::vector<int64_t> done; // steps finished, over all loops
  std::vector<char> busy, queued;
  std::vector<int64_t> arrived, consumed; // per connection
  std::vector<std::vector<int32_t>> waiters;
  std::vector<int32_t> ready;
  std::vector<int32_t> touched;        // resources whose flows changed this instant
  std::vector<char> isTouched;         // per resource
  std::vector<uint64_t> rescheduledAt; // per flow: the last reschedule's stamp
  uint64_t stamp = 0;
  std::priority_queue<Event, std::vector<Event>, std::greater<Event>> events;
  uint64_t seq = 0;
};

double Engine::rate(int32_t tb) const {
  const Path &path = paths[flowPath[tb]];
  double r = path.cap * share;
  for (const Use &u : path.uses)
    r = std::min(r, capacity[u.resource] / (double(flowsOn[u.resource].size()) * u.weight));
  return r;
}

// A flow's remaining bytes fall linearly at its rate, so they are brought
// up to date only when the rate changes (and when the flow ends).
void Engine::settle(int32_t tb, double now) {
  if (flowRate[tb] > 0)
    remaining[tb] = std::max(0.0, remaining[tb] - flowRate[tb] * (now - since[tb]));
  since[tb] = now;
}

void Engine::touch(const Path &path) {
  for (const Use &u : path.uses)
    if (!isTouched[u.resource]) {
      isTouched[u.resource] = 1;
      touched.push_back(u.resource);
    }
}

void Engine::reschedule(double now) {
  ++stamp;
  for (int32_t resource : touched) {
    isTouched[resource] = 0;
    for (int32_t f : flowsOn[resource]) {
      if (rescheduledAt[f] == stamp)
        continue;
      rescheduledAt[f] = stamp;
      // A flow held at the same rate (by its threadblock, or another link)
      // still ends when its event says.
      double r = rate(f);
      if (r == flowRate[f])
        continue;
      settle(f, now); // at the rate it had until now
      flowRate[f] = r;
      push(now + remaining[f] / r, FlowDone, f, ++version[f]);
    }
  }
  touched.clear();
}

void Engine::startFlow(int32_t tb, double bytes, double now) {
  const Path &path = paths[flowPath[tb]];
  remaining[tb] = bytes;
  since[tb] = now;
  flowRate[tb] = -1; // no event yet
  for (const Use &u : path.uses)
    flowsOn[u.resource].push_back(tb);
  touch(path);
}

void Engine::endFlow(int32_t tb, double now) {
  const Path &path = paths[flowPath[tb]];
  for (const Use &u : path.uses) {
    std::vector<int32_t> &on = flowsOn[u.resource];
    on.erase(std::find(on.begin(), on.end(), tb));
  }
  touch(path);
}

void Engine::wake(int32_t tb) {
  if (!queued[tb]) {
    queued[tb] = 1;
    ready.push_back(tb);
  }
}

void Engine::tryStart(int32_t tb, double now) {
  int32_t j = tb / tbs;
  const SimPlan::Threadblock &t = plan.threadblocks[tb % tbs];
  int64_t n = t.steps();
  if (busy[tb] || n == 0 || done[tb] >= loopsOf(j) * n)
    return;
  int64_t loop = done[tb] / n; // of this replica's
  int32_t s = t.stepBegin + int32_t(done[tb] % n);
  const SimPlan::Step &step = plan.steps[s];
  for (int32_t d = step.depBegin; d < step.depEnd; ++d) {
    const SimPlan::Dep &dep = plan.deps[d];
    int32_t other = j * tbs + dep.threadblock;
    if (done[other] < loop * plan.threadblocks[dep.threadblock].steps() + dep.step + 1) {
      waiters[other].push_back(tb);
      return;
    }
  }
  if (step.receives && arrived[j * conns + t.recvConn] <= loop * t.recvsPerLoop + step.recvOrdinal)
    return;
  if (step.sends &&
      loop * t.sendsPerLoop + step.sendOrdinal >= consumed[j * conns + t.sendConn] + plan.slots)
    return;
  busy[tb] = 1;
  if (trace)
    began[tb] = now;
  double bytes = step.chunks * (loop * replicas + j + 1 == loops ? last : slice);
  int32_t p = stepPath[s];
  if (p < 0 || bytes <= 0) {
    complete(tb, now);
    return;
  }
  flowPath[tb] = p;
  startFlow(tb, bytes / paths[p].efficiency, now);
}

void Engine::complete(int32_t tb, double now) {
  int32_t j = tb / tbs;
  const SimPlan::Threadblock &t = plan.threadblocks[tb % tbs];
  int64_t n = t.steps();
  const SimPlan::Step &step = plan.steps[t.stepBegin + done[tb] % n];
  if (step.sends) {
    int32_t p = stepPath[t.stepBegin + done[tb] % n];
    push(now + (p < 0 ? 0 : paths[p].latency), Arrive, j * conns + t.sendConn);
  }
  if (trace)
    trace->push_back({tb % tbs, j, int32_t(done[tb] % n), done[tb] / n, began[tb], now});
  if (step.receives) {
    ++consumed[j * conns + t.recvConn];
    wake(j * tbs + plan.connections[t.recvConn].sender);
  }
  ++done[tb];
  busy[tb] = 0;
  std::vector<int32_t> woken;
  woken.swap(waiters[tb]);
  for (int32_t w : woken)
    wake(w);
  wake(tb);
}

llvm::Expected<double> Engine::run(int64_t loopCount, double sliceBytes, double lastBytes,
                                   int64_t replicaCount, double threadShare) {
  loops = loopCount;
  slice = sliceBytes;
  last = lastBytes;
  replicas = replicaCount;
  share = threadShare;
  tbs = int32_t(plan.threadblocks.size());
  conns = int32_t(plan.connections.size());
  size_t all = size_t(tbs) * replicas;
  flowsOn.assign(capacity.size(), {});
  touched.clear();
  isTouched.assign(capacity.size(), 0);
  rescheduledAt.assign(all, 0);
  stamp = 0;
  remaining.assign(all, 0);
  flowRate.assign(all, 0);
  since.assign(all, 0);
  if (trace) {
    trace->clear();
    began.assign(all, 0);
  }
  flowPath.assign(all, -1);
  version.assign(all, 0);
  done.assign(all, 0);
  busy.assign(all, 0);
  queued.assign(all, 0);
  waiters.assign(all, {});
  arrived.assign(size_t(conns) * replicas, 0);
  consumed.assign(size_t(conns) * replicas, 0);
  events = {};
  double now = 0;
  for (size_t tb = 0; tb < all; ++tb)
    wake(int32_t(tb));
  for (;;) {
    while (!ready.empty()) {
      int32_t tb = ready.back();
      ready.pop_back();
      queued[tb] = 0;
      tryStart(tb, now);
    }
    // Events of this instant come first: no time passes before them, so
    // the rates they would see do not matter yet.
    if (!touched.empty() && (events.empty() || events.top().time > now))
      reschedule(now);
    if (events.empty())
      break;
    Event e = events.top();
    events.pop();
    now = e.time;
    if (e.type == FlowDone) {
      if (e.version != version[e.id])
        continue;
      settle(e.id, now);
      endFlow(e.id, now);
      complete(e.id, now);
    } else {
      ++arrived[e.id];
      wake(e.id / conns * tbs + plan.connections[e.id % conns].receiver);
    }
  }
  for (size_t tb = 0; tb < done.size(); ++tb) {
    const SimPlan::Threadblock &t = plan.threadblocks[tb % tbs];
    if (done[tb] < loopsOf(int64_t(tb / tbs)) * t.steps())
      return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                     "plan " + plan.name + " stalls: rank " + llvm::Twine(t.rank) +
                                         " waits forever in step " +
                                         llvm::Twine(done[tb] % t.steps()));
  }
  return now;
}

} // namespace

llvm::Expected<SimResult> coll::simulate(const SimPlan &plan, const Topology &topo, double bytes,
                                         const SimOptions &options) {
  Engine engine(plan, topo, options);
  if (llvm::Error e = engine.build())
    return std::move(e);
  SimResult result;
  int p = plan.protocol();
  double fixed = topo.baseLatencyUs[p];
  // Plans on other ranks' buffers open and close with a barrier over the
  // ranks: a hop each, at NVLink's smallest latency (LL's flags).
  if (plan.peerSteps)
    fixed += 2 * topo.nvlinkParams.latencyUs[int(Protocol::LL)];
  double chunk = bytes / double(std::max(plan.inChunks, plan.outChunks));
  if (chunk <= 0) {
    result.micros = fixed;
    return result;
  }
  // The runtime's slice: what the smallest slot holds for the widest step,
  // in whole 16-byte units.
  double capacity = 1e300;
  for (const SimPlan::Threadblock &tb : plan.threadblocks) {
    int64_t slot = options.slotBytes[tb.protocol];
    double payload = tb.protocol == int(Protocol::LL)      ? slot / 2
                     : tb.protocol == int(Protocol::LL128) ? slot / 128 * 120
                                                           : slot;
    capacity = std::min(capacity, payload);
  }
  double slice = std::floor(capacity / double(plan.widest));
  if (slice >= 16)
    slice -= std::fmod(slice, 16.0);
  // The launch the runtime picks for this size; a threadblock of fewer
  // threads moves proportionally less.
  SimPlan::Launch launch = plan.launchFor(plan.inputBytes(bytes));
  result.replicas = launch.replicas;
  // Replicas share a chunk where it has fewer loops than they are
  // (collrt::replicaSlice).
  if (launch.replicas > 1) {
    double share = std::ceil(chunk / double(launch.replicas));
    if (slice >= 16)
      share = std::ceil(share / 16) * 16;
    slice = std::max(1.0, std::min(slice, share));
  }
  double loops = std::ceil(chunk / slice);
  result.loops = int64_t(loops);
  double share = std::min(1.0, double(launch.threads) / double(options.fullThreads));
  auto all = [&] {
    return engine.run(result.loops, slice, chunk - (loops - 1) * slice, launch.replicas, share);
  };
  int64_t k = std::max<int64_t>(options.exactLoops, 2) * launch.replicas;
  if (result.loops <= k || options.trace ||
      double(result.loops) * double(plan.steps.size()) <= double(options.exactSteps)) {
    llvm::Expected<double> t = all();
    if (!t)
      return t.takeError();
    result.micros = fixed + *t;
    return result;
  }
  // Past the pipeline's fill every loop takes the same time: the period is
  // what k more loops add, once doubling k no longer changes it (a schedule
  // whose stages run ahead of each other settles only after many loops).
  auto run = [&](int64_t k) { return engine.run(k, slice, slice, launch.replicas, share); };
  SimPeriods::Key key{slice, launch.replicas, share};
  if (options.periods)
    // Had this size run the doublings, it would have taken the same ones.
    if (std::optional<SimPeriods::Steady> s = options.periods->find(key);
        s && 2 * s->loops < result.loops) {
      result.extrapolated = true;
      result.micros = fixed + s->micros + (chunk / slice - double(2 * s->loops)) * s->period;
      return result;
    }
  llvm::Expected<double> shorter = run(k);
  if (!shorter)
    return shorter.takeError();
  double period = -1;
  for (;; k *= 2) {
    if (2 * k >= result.loops) {
      llvm::Expected<double> t = all();
      if (!t)
        return t.takeError();
      result.micros = fixed + *t;
      return result;
    }
    llvm::Expected<double> longer = run(2 * k);
    if (!longer)
      return longer.takeError();
    double next = (*longer - *shorter) / double(k);
    *shorter = *longer;
    bool settled = period > 0 && std::abs(next - period) <= options.settled * next;
    period = next;
    if (settled)
      break;
  }
  if (options.periods)
    options.periods->insert(key, {k, *shorter, period});
  result.extrapolated = true;
  result.micros = fixed + *shorter + (chunk / slice - double(2 * k)) * period;
  return result;
}
