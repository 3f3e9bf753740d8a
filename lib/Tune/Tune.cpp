//===- Tune.cpp - The fastest plan per message size, as one library -------===//
//
// Lowers every candidate (the files given and, with --synth, every generator
// that applies; past 64 ranks only the generators whose alpha-beta estimate
// comes near the best) once per protocol, instance count and pipeline depth,
// simulates each plan at every size from 8 B to 4 GiB, refines the programs
// that win from 64 KiB up over more instances and deeper pipelines, and
// keeps the fastest per size. Adjacent sizes with the same winner merge
// into one size range; the winners, cloned into one algorithm with those
// ranges, go through the kernel emitter, whose per-size dispatch then runs
// the winner.
//
//===----------------------------------------------------------------------===//
#include "lib/Tune/Tune.h"

#include "dialect/PeerSteps.h"
#include "lib/Frontend/Elaborate.h"
#include "lib/Lowering/Passes.h"
#include "lib/Lowering/Pipelines.h"
#include "lib/Support/Bytes.h"
#include "lib/Synthesis/Generators.h"
#include "lib/Sim/ProgramCost.h"
#include "lib/Sim/SimFold.h"
#include "lib/Sim/SimPlan.h"
#include "lib/Sim/Simulator.h"
#include "lib/Topology/Topology.h"
#include "lib/Target/Kernel.h"
#include "lib/Target/KernelAbi.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/ScopeExit.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/ThreadPool.h"

#include <chrono>
#include <cmath>
#include <limits>
#include <map>
#include <numeric>
#include <set>
#include <thread>
#include <tuple>

using namespace mlir;
using namespace coll::tune;

namespace {

/// Seconds since `start`, for --timing.
double since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

/// Says on `log`, if any, that `what` took the time since `start`.
void took(llvm::raw_ostream *log, const llvm::Twine &what,
          std::chrono::steady_clock::time_point start) {
  if (!log)
    return;
  // One write, since sources are read in parallel.
  std::string line;
  llvm::raw_string_ostream(line) << "collc tune: " << what << ": "
                                 << llvm::format("%.2f", since(start)) << " s\n";
  *log << line;
}

llvm::Error error(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
}

/// The grid each source is lowered over: few enough that 8 ranks tune in
/// seconds, wide enough to cover latency (LL) and bandwidth (more channels,
/// deeper pipelines).
struct Grid {
  std::vector<coll::Protocol> protocols;
  std::vector<int64_t> instances, pipeline;
  bool refine = false; // both left to their defaults: refine the winners
};

/// Past this many ranks, lowering and simulating every generator's program
/// over the grid takes many minutes, and most of them lose everywhere by
/// far: the tuner then lowers a generator's program only where its
/// alpha-beta estimate (collc synth --list) comes within kScreenFactor of
/// the best program it lowered, at some size. The estimate knows nothing
/// of instances and pipelines, hence the wide margin.
constexpr int64_t kScreenFrom = 64;
constexpr double kScreenFactor = 2;
bool screens(int64_t ranks) { return ranks > kScreenFrom; }

/// The grid of the options; left to their defaults, instances and depths
/// start coarse (refine() widens them for the winners), and past
/// kScreenFrom ranks at one each: there a deeper plan takes seconds to
/// lower and to simulate, and refinement tries them where they matter.
llvm::Expected<Grid> readGrid(const TuneOptions &options, int64_t ranks) {
  Grid g;
  g.protocols = options.protocols;
  if (g.protocols.empty())
    g.protocols = {coll::Protocol::Simple, coll::Protocol::LL, coll::Protocol::LL128};
  g.instances = options.instances;
  g.pipeline = options.pipeline;
  g.refine = g.instances.empty() && g.pipeline.empty();
  std::vector<int64_t> coarse =
      g.refine && screens(ranks) ? std::vector<int64_t>{1} : std::vector<int64_t>{1, 2};
  if (g.instances.empty())
    g.instances = coarse;
  if (g.pipeline.empty())
    g.pipeline = coarse;
  for (int64_t k : g.instances)
    if (k < 1 || k > 64)
      return error("--instances " + llvm::Twine(k) + " is not in 1 .. 64");
  for (int64_t k : g.pipeline)
    if (k < 1 || k > 64)
      return error("--pipeline " + llvm::Twine(k) + " is not in 1 .. 64");
  return g;
}

/// Says how far a long tune has got: at most once per `every` seconds, and
/// nothing before the first `every` seconds have passed.
struct Progress {
  llvm::raw_ostream *os = nullptr;
  double every = 10;
  std::chrono::steady_clock::time_point last = std::chrono::steady_clock::now();
  std::chrono::steady_clock::time_point start = last;

  void say(const llvm::Twine &what) {
    if (!os || since(last) < every)
      return;
    last = std::chrono::steady_clock::now();
    *os << "collc tune: " << what << " (" << llvm::format("%.0f", since(start)) << " s)\n";
    os->flush();
  }
};

} // namespace

/// Everything the tuner keeps alive: the context owns every candidate's IR.
struct coll::tune::Tuner {
  MLIRContext &context;
  const coll::Topology topo;
  std::string topologySpec; // what the lowering reads
  Grid grid;
  int64_t ranks = 0;
  llvm::raw_ostream *timing = nullptr;
  std::vector<OwningOpRef<ModuleOp>> parsed;  // per source; null once not needed
  std::vector<bool> verified;                 // per source: by a lowering that succeeded
  std::vector<std::vector<double>> estimates; // per source and size, when screening
  std::vector<std::string> names;             // every source's algorithms
  std::vector<OwningOpRef<ModuleOp>> modules; // the winners' plans
  /// The winners' streams (lowerStreams), by source, instances, depth and
  /// FIFOs.
  std::map<std::tuple<size_t, int64_t, int64_t, bool>, OwningOpRef<ModuleOp>> winnerStreams;
  std::vector<Candidate> candidates;
  std::optional<coll::Collective> collective;
  /// Generated sources that no lowering accepted, with the first refusal.
  std::vector<std::string> skipped;
  /// Where each refused grid point is said, if anywhere.
  llvm::raw_ostream *refusals = nullptr;
  Progress progress;
  std::vector<std::string> sourceNames; // per parsed source

  /// A source read by `read`, for `accept`.
  struct Read {
    OwningOpRef<ModuleOp> program;
    struct Algorithm {
      std::string name;
      coll::Collective collective;
      int64_t ranks;
    };
    std::vector<Algorithm> algorithms;
    std::vector<double> estimate; // per size, when screening
    std::string error;
  };
  /// Parses `source`. Given `sizes`, estimates it there for the screening
  /// (lowerSources), and keeps a generator's program only as text until it
  /// passes: at a thousand ranks, every program at once would take many
  /// GB. Builds in `into`: the tuner's context, or one of the caller's
  /// own for a program that is not kept. Touches nothing of the tuner's
  /// but `into`, so that sources can be read in parallel.
  Read read(const Source &source, const coll::ElaborateOptions &options,
            llvm::ArrayRef<double> sizes, MLIRContext &into) const;
  /// Adds what `read` gave into `parsed`, checking its collective, names
  /// and rank count against the sources before it.
  llvm::Error accept(const Source &source, Read r);
  /// `source` elaborated in `into`, or null with its errors printed.
  OwningOpRef<ModuleOp> import(const Source &source, const coll::ElaborateOptions &options,
                               std::string &unused, MLIRContext &into) const;
  /// Verifies and lowers parsed source `k` over the grid. A grid point the
  /// lowering refuses (a protocol a step cannot use) is skipped; a file
  /// with none left is an error, reported with the first refusal, and a
  /// generator's program (too many threadblocks at this rank count, say) is
  /// left out, noted in `skipped`.
  llvm::Error lowerGrid(size_t k, const Source &source);
  /// Lowers parsed source `k` at `instances` and `pipeline` once up to the
  /// protocol choice, and from there with each of `protocols`, adding the
  /// candidates. Per protocol, whether it lowered; the first refusal goes
  /// to `refusal`.
  llvm::Expected<SmallVector<bool>> lower(size_t k, llvm::ArrayRef<coll::Protocol> protocols,
                                          int64_t instances, int64_t pipeline,
                                          std::string &refusal);
  /// Parsed source `k` lowered up to the protocol choice
  /// (LoweringStage::Streams); null, with the first error in `refusal`,
  /// where the lowering refuses it.
  OwningOpRef<ModuleOp> lowerStreams(size_t k, int64_t instances, int64_t pipeline, bool peers,
                                     std::string &refusal);
  /// Finishes the lowering of `module` (from lowerStreams) with `protocol`;
  /// false, with the first error in `refusal`, where it refuses.
  bool lowerPlans(ModuleOp module, coll::Protocol protocol, int64_t instances, std::string &refusal,
                  bool verify = true);
  /// Candidate `c`'s plans, lowered again (kept in `modules`).
  llvm::Expected<std::vector<coll::PlanOp>> plansOf(const Candidate &c);
};

OwningOpRef<ModuleOp> Tuner::import(const Source &source, const coll::ElaborateOptions &options,
                                    std::string &unused, MLIRContext &into) const {
  llvm::SourceMgr sourceMgr;
  sourceMgr.AddNewSourceBuffer(llvm::MemoryBuffer::getMemBufferCopy(source.text, source.name),
                               llvm::SMLoc());
  SourceMgrDiagnosticHandler printed(sourceMgr, &into);
  TimingScope timing;
  return coll::importColl(sourceMgr, &into, options, timing, &unused);
}

Tuner::Read Tuner::read(const Source &source, const coll::ElaborateOptions &options,
                        llvm::ArrayRef<double> sizes, MLIRContext &into) const {
  Read r;
  std::string unused;
  r.program = import(source, options, unused, into);
  if (!r.program && !unused.empty() && source.file) {
    // -D ranks=N is implied for files; one without that parameter takes none.
    coll::ElaborateOptions without = options;
    llvm::erase_if(without.defines, [](const auto &d) { return d.first == "ranks"; });
    unused.clear();
    r.program = import(source, without, unused, into);
    if (!r.program && !unused.empty()) {
      r.error = source.name + ": no algorithm has a parameter named '" + unused + "'";
      return r;
    }
  }
  if (!r.program) {
    r.error = source.name + " does not compile";
    return r;
  }
  for (auto alg : r.program->getOps<coll::AlgorithmOp>())
    r.algorithms.push_back({alg.getSymName().str(), alg.getCollective(), int64_t(alg.getRanks())});
  if (!sizes.empty()) {
    r.estimate.assign(sizes.size(), std::numeric_limits<double>::infinity());
    for (auto alg : r.program->getOps<coll::AlgorithmOp>()) {
      std::vector<coll::ProgramCost> costs = coll::estimateProgram(alg, topo, sizes);
      for (size_t i = 0; i < sizes.size(); ++i)
        r.estimate[i] = std::min(r.estimate[i], costs[i].micros);
    }
    if (!source.file)
      r.program = nullptr; // parsed again if it passes
  }
  return r;
}

llvm::Error Tuner::accept(const Source &source, Read r) {
  if (!r.error.empty())
    return error(r.error);
  for (const Read::Algorithm &alg : r.algorithms) {
    if (!collective)
      collective = alg.collective;
    else if (*collective != alg.collective)
      return error(source.name + ": algorithm '" + alg.name + "' is " +
                   stringifyCollective(alg.collective) + ", the other candidates " +
                   stringifyCollective(*collective));
    // Candidates and the table are named by algorithm.
    if (llvm::is_contained(names, alg.name))
      return error(source.name + ": algorithm '" + alg.name +
                   "' has the name of an earlier candidate; rename one");
    if (alg.ranks != ranks)
      return error(source.name + ": algorithm '" + alg.name + "' has " + llvm::Twine(alg.ranks) +
                   " ranks, not " + llvm::Twine(ranks));
  }
  for (const Read::Algorithm &alg : r.algorithms)
    names.push_back(alg.name);
  sourceNames.push_back(source.name);
  estimates.push_back(std::move(r.estimate));
  parsed.push_back(std::move(r.program));
  verified.push_back(false);
  return llvm::Error::success();
}

llvm::Error Tuner::lowerGrid(size_t k, const Source &source) {
  if (!parsed[k]) {
    std::string unused;
    parsed[k] = import(source, {}, unused, context);
    if (!parsed[k])
      return error(source.name + " does not compile");
  }
  std::string firstRefusal;
  size_t before = candidates.size();
  // More instances need more threadblocks: past a count at which every
  // depth failed with a protocol, larger counts are not tried with it (each
  // failure is a whole lowering, minutes at a thousand ranks).
  std::vector<int64_t> failedAt(grid.protocols.size(), std::numeric_limits<int64_t>::max());
  for (int64_t instances : grid.instances) {
    SmallVector<size_t> live;
    SmallVector<coll::Protocol> protocols;
    for (size_t p = 0; p < grid.protocols.size(); ++p)
      if (instances < failedAt[p]) {
        live.push_back(p);
        protocols.push_back(grid.protocols[p]);
      }
    if (live.empty())
      continue;
    SmallVector<bool> any(live.size(), false);
    for (int64_t pipeline : grid.pipeline) {
      std::string refusal;
      llvm::Expected<SmallVector<bool>> ok = lower(k, protocols, instances, pipeline, refusal);
      if (!ok)
        return ok.takeError();
      for (size_t j = 0; j < live.size(); ++j)
        any[j] |= (*ok)[j];
      if (firstRefusal.empty())
        firstRefusal = refusal;
    }
    for (size_t j = 0; j < live.size(); ++j)
      if (!any[j])
        failedAt[live[j]] = instances;
  }
  // In the grid's order, protocols first, as the table lists them.
  auto position = [](auto &values, auto v) { return llvm::find(values, v) - values.begin(); };
  std::stable_sort(candidates.begin() + before, candidates.end(),
                   [&](const Candidate &a, const Candidate &b) {
                     auto key = [&](const Candidate &c) {
                       return std::make_tuple(position(grid.protocols, coll::Protocol(c.protocol)),
                                              position(grid.instances, c.instances),
                                              position(grid.pipeline, c.pipeline), c.fifo);
                     };
                     return key(a) < key(b);
                   });
  if (candidates.size() == before && !source.file) {
    skipped.push_back(source.name + ": " + firstRefusal);
    parsed[k] = nullptr; // no candidate to refine
    return llvm::Error::success();
  }
  if (candidates.size() == before)
    return error(source.name + ": no lowering succeeded; the first said: " + firstRefusal);
  return llvm::Error::success();
}

/// Runs `pm` on `module` with errors kept quiet, the first in `refusal`.
static bool runQuietly(PassManager &pm, ModuleOp module, std::string &refusal) {
  // Lowerings run side by side (Tuner::lower): each takes its own thread's
  // diagnostics and passes on the others'. Those of a pass on a pool thread
  // come back on this one, as the pass manager's parallel handler replays
  // them.
  const std::thread::id self = std::this_thread::get_id();
  ScopedDiagnosticHandler quiet(module.getContext(), [&](Diagnostic &d) {
    if (std::this_thread::get_id() != self)
      return failure();
    if (refusal.empty() && d.getSeverity() == DiagnosticSeverity::Error)
      refusal = d.str();
    return success();
  });
  // The plan verifier proves each plan; every op's invariants are the
  // tests' to check (collc-opt), as in collc.
  pm.enableVerifier(false);
  if (succeeded(pm.run(module)))
    return true;
  if (refusal.empty())
    refusal = "the lowering failed";
  return false;
}

OwningOpRef<ModuleOp> Tuner::lowerStreams(size_t k, int64_t instances, int64_t pipeline, bool peers,
                                          std::string &refusal) {
  OwningOpRef<ModuleOp> module = parsed[k]->clone();
  coll::CollLoweringOptions lowering;
  lowering.verifyAlgorithms = !verified[k]; // the same algorithm each time
  lowering.topology = topologySpec;
  lowering.instances = instances;
  lowering.pipeline = pipeline;
  lowering.multimem = peers;
  PassManager pm(&context);
  lowering.to = coll::LoweringStage::Streams;
  coll::buildCollLoweringPipeline(pm, lowering);
  if (!runQuietly(pm, *module, refusal))
    return nullptr;
  verified[k] = true;
  return module;
}

bool Tuner::lowerPlans(ModuleOp module, coll::Protocol protocol, int64_t instances,
                       std::string &refusal, bool verify) {
  coll::CollLoweringOptions lowering;
  lowering.topology = topologySpec;
  lowering.protocol = protocol;
  lowering.instances = instances;
  lowering.verifyPlans = verify;
  // Only the winners are emitted, and rerolled (library()).
  lowering.from = lowering.to = coll::LoweringStage::Plans;
  PassManager pm(&context);
  coll::buildCollLoweringPipeline(pm, lowering);
  return runQuietly(pm, module, refusal);
}

llvm::Expected<SmallVector<bool>> Tuner::lower(size_t k, llvm::ArrayRef<coll::Protocol> protocols,
                                               int64_t instances, int64_t pipeline,
                                               std::string &firstRefusal) {
  SmallVector<bool> any(protocols.size(), false);
  auto refused = [&](std::string &refusal, llvm::StringRef protocol, bool peers) {
    if (firstRefusal.empty())
      firstRefusal = refusal;
    if (refusals)
      *refusals << "collc tune: refused " << sourceNames[k] << " at " << protocol
                << (protocol.empty() ? "i" : "/i") << instances << "/p" << pipeline
                << (peers ? "" : "/fifo") << ": " << refusal << "\n";
  };
  // Where the machine has NVLink, copies between ranks become steps on the
  // peers' buffers; the same program over FIFOs is a candidate too, as
  // neither wins everywhere (a rank's peer steps share its threadblocks,
  // while FIFOs give each peer a threadblock of its own).
  bool peerSteps = false;
  for (bool peers : {true, false}) {
    if (!peers && !peerSteps)
      continue;
    std::string refusal;
    OwningOpRef<ModuleOp> streams = lowerStreams(k, instances, pipeline, peers, refusal);
    if (!streams) {
      refused(refusal, "", peers); // before any protocol is chosen
      continue;
    }
    streams->walk([&](coll::ThreadblockOp tb) { peerSteps |= coll::usesPeers(tb); });
    // Every protocol's plans at once, each in a copy of the streams (the
    // last in the streams themselves: at a thousand ranks a copy costs a
    // second, and the plan verifier seconds per plan); the candidates then
    // in the protocols' order.
    const size_t n = protocols.size();
    std::vector<OwningOpRef<ModuleOp>> modules(n);
    std::vector<std::string> why(n);
    std::vector<char> ok(n, false);
    for (size_t p = 0; p < n; ++p)
      modules[p] = p + 1 < n ? streams->clone() : std::move(streams);
    {
      llvm::DefaultThreadPool pool(llvm::hardware_concurrency());
      for (size_t p = 0; p < n; ++p)
        pool.async([&, p] { ok[p] = lowerPlans(*modules[p], protocols[p], instances, why[p]); });
    }
    for (auto [p, protocol] : llvm::enumerate(protocols)) {
      OwningOpRef<ModuleOp> &module = modules[p];
      if (!ok[p]) {
        refused(why[p], stringifyProtocol(protocol), peers);
        continue;
      }
      any[p] = true;
      std::string tag =
          (llvm::Twine("/") + stringifyProtocol(protocol) + "/i" + llvm::Twine(instances) + "/p" +
           llvm::Twine(pipeline) + (peers ? "" : "/fifo"))
              .str();
      // The simulator keeps what it needs of each plan; the IR goes, and
      // only the winners are lowered again (at a thousand ranks, every
      // candidate's IR would take tens of GB).
      llvm::MapVector<llvm::StringRef, size_t> byAlgorithm;
      for (auto plan : module->getOps<coll::PlanOp>()) {
        llvm::StringRef alg = plan.getAlgorithm().value_or(plan.getSymName());
        auto [it, fresh] = byAlgorithm.insert({alg, candidates.size()});
        if (fresh) {
          Candidate &c = candidates.emplace_back();
          c.algorithm = alg.str();
          c.name = alg.str() + tag;
          c.source = k;
          c.protocol = int(protocol);
          c.instances = instances;
          c.pipeline = pipeline;
          c.fifo = !peers;
        }
        llvm::Expected<coll::SimPlan> sim = coll::buildSimPlan(plan);
        if (!sim)
          return sim.takeError();
        if (std::optional<coll::SimPlan> folded = coll::foldPlan(*sim, topo))
          *sim = std::move(*folded);
        candidates[it->second].sims.push_back(std::move(*sim));
        candidates[it->second].periods.push_back(std::make_unique<coll::SimPeriods>());
      }
      module = nullptr; // its simulator plans are all that is kept
    }
  }
  return any;
}

llvm::Expected<std::vector<coll::PlanOp>> Tuner::plansOf(const Candidate &c) {
  std::string refusal;
  // Winners that differ only in protocol share their streams: a copy
  // costs less than lowering them again.
  OwningOpRef<ModuleOp> &streams = winnerStreams[{c.source, c.instances, c.pipeline, c.fifo}];
  if (!streams)
    streams = lowerStreams(c.source, c.instances, c.pipeline, !c.fifo, refusal);
  OwningOpRef<ModuleOp> module = streams ? streams->clone() : nullptr;
  // The same lowering proved these plans when it made the candidate.
  if (!module ||
      !lowerPlans(*module, coll::Protocol(c.protocol), c.instances, refusal, /*verify=*/false))
    return error(c.name + " no longer lowers: " + refusal);
  std::vector<coll::PlanOp> plans;
  for (auto plan : module->getOps<coll::PlanOp>())
    if (plan.getAlgorithm().value_or(plan.getSymName()) == c.algorithm)
      plans.push_back(plan);
  if (plans.size() != c.sims.size())
    return error(c.name + " lowers to " + llvm::Twine(plans.size()) + " plans, not " +
                 llvm::Twine(c.sims.size()));
  modules.push_back(std::move(module));
  return plans;
}

namespace {

/// Past kScreenFrom ranks, the most steps a generated candidate's
/// simulated plans may have unless they fold to one node (SimFold.h): a
/// plan that does not fold, or only over a large part of the machine
/// (split plans, Bruck's all-gather), takes minutes to simulate there.
constexpr size_t kSimulatedSteps = 1 << 14;

/// Past kScreenFrom ranks, the most steps over all ranks of a plan that
/// refinement lowers: lowering takes a few microseconds a step.
constexpr int64_t kLoweredSteps = int64_t(1) << 21;

/// Steps the simulator runs per loop of `c`.
size_t stepsOf(const Candidate &c) {
  size_t steps = 0;
  for (const coll::SimPlan &p : c.sims)
    steps += p.steps.size();
  return steps;
}

/// Whether `c` would run more than kSimulatedSteps steps without folding
/// to one node.
bool slowToSimulate(const Tuner &tuner, const Candidate &c) {
  int64_t period = c.sims.front().foldGpus;
  return stepsOf(c) > kSimulatedSteps && !(period && period <= tuner.topo.gpusPerNode);
}

/// Past kScreenFrom ranks, leaves out the candidates from `from` on that
/// `droppable` allows and that are slow to simulate, noting each in
/// `skipped`.
void leaveOutSlow(Tuner &tuner, size_t from,
                  llvm::function_ref<bool(const Candidate &)> droppable) {
  if (!screens(tuner.ranks))
    return;
  auto slow = [&](const Candidate &c) {
    if (!slowToSimulate(tuner, c) || !droppable(c))
      return false;
    size_t steps = stepsOf(c);
    int64_t period = c.sims.front().foldGpus;
    std::string why = period ? "its plan repeats only every " + std::to_string(period) + " GPUs"
                             : "its plan does not repeat from node to node";
    tuner.skipped.push_back(c.name + ": simulating it would run " + llvm::utostr(steps) +
                            " steps, more than " + llvm::utostr(kSimulatedSteps) + " (" + why +
                            ")");
    return true;
  };
  std::vector<Candidate> &cs = tuner.candidates;
  cs.erase(std::remove_if(cs.begin() + from, cs.end(), slow), cs.end());
}

/// Lowers every parsed source over the grid, all of them up to
/// kScreenFrom ranks. Past it, files first and then the generators from
/// the most promising (the smallest ratio of its estimate to the best at
/// any size), each only if it is within kScreenFactor of the best
/// estimate lowered so far at some size; one that failed to lower sets no
/// bar.
llvm::Error lowerSources(Tuner &tuner, llvm::ArrayRef<Source> sources,
                         llvm::ArrayRef<double> sizes) {
  std::vector<size_t> order(sources.size());
  std::iota(order.begin(), order.end(), 0);
  if (!screens(tuner.ranks)) {
    for (size_t k : order) {
      auto start = std::chrono::steady_clock::now();
      if (llvm::Error e = tuner.lowerGrid(k, sources[k]))
        return e;
      took(tuner.timing, "lower " + sources[k].name, start);
      tuner.progress.say("lowered " + llvm::Twine(k + 1) + " of " + llvm::Twine(sources.size()) +
                         " programs");
    }
    return llvm::Error::success();
  }
  constexpr double kNone = std::numeric_limits<double>::infinity();
  const std::vector<std::vector<double>> &estimate = tuner.estimates;
  std::vector<double> best(sizes.size(), kNone), lowered(sizes.size(), kNone);
  for (size_t k : order)
    for (size_t i = 0; i < sizes.size(); ++i)
      best[i] = std::min(best[i], estimate[k][i]);
  auto promise = [&](size_t k) {
    double ratio = kNone;
    for (size_t i = 0; i < sizes.size(); ++i)
      ratio = std::min(ratio, estimate[k][i] / best[i]);
    return sources[k].file ? 0 : ratio;
  };
  llvm::stable_sort(order, [&](size_t a, size_t b) { return promise(a) < promise(b); });
  for (auto [done, k] : llvm::enumerate(order)) {
    tuner.progress.say("lowered or screened " + llvm::Twine(done) + " of " +
                       llvm::Twine(sources.size()) + " programs");
    bool near = sources[k].file;
    for (size_t i = 0; i < sizes.size() && !near; ++i)
      near = estimate[k][i] <= kScreenFactor * lowered[i];
    if (!near) {
      tuner.skipped.push_back(sources[k].name + ": its alpha-beta estimate is more than " +
                              llvm::formatv("{0:0}", kScreenFactor).str() +
                              "x that of a lowered candidate at every size");
      tuner.parsed[k] = nullptr;
      continue;
    }
    size_t before = tuner.candidates.size();
    auto start = std::chrono::steady_clock::now();
    if (llvm::Error e = tuner.lowerGrid(k, sources[k]))
      return e;
    took(tuner.timing, "lower " + sources[k].name, start);
    if (tuner.candidates.size() > before)
      for (size_t i = 0; i < sizes.size(); ++i)
        lowered[i] = std::min(lowered[i], estimate[k][i]);
  }
  return llvm::Error::success();
}

/// Sizes M from 8 B to 4 GiB, doubling: collc sim's default sweep.
std::vector<double> sweep() {
  std::vector<double> sizes;
  for (double s = 8; s <= double(int64_t(1) << 32); s *= 2)
    sizes.push_back(s);
  return sizes;
}

/// Simulates candidates `from` onwards at every size.
llvm::Error simulateAll(std::vector<Candidate> &candidates, const coll::Topology &topo,
                        llvm::ArrayRef<double> sizes, llvm::raw_ostream *timing, size_t from = 0) {
  for (size_t k = from; k < candidates.size(); ++k) {
    candidates[k].micros.assign(sizes.size(), 0);
    candidates[k].variant.assign(sizes.size(), 0);
  }
  std::vector<std::string> errors(candidates.size() * sizes.size());
  std::vector<double> seconds(candidates.size() * sizes.size());
  llvm::DefaultThreadPool pool(llvm::hardware_concurrency());
  for (size_t k = from; k < candidates.size(); ++k)
    for (size_t i = 0; i < sizes.size(); ++i)
      pool.async([&, k, i] {
        auto start = std::chrono::steady_clock::now();
        llvm::scope_exit clock([&] { seconds[k * sizes.size() + i] = since(start); });
        Candidate &c = candidates[k];
        double in = c.sims.front().inputBytes(sizes[i]);
        size_t v = c.sims.size() - 1;
        for (size_t j = 0; j < c.sims.size(); ++j)
          if (double(c.sims[j].minBytes) <= in && in < double(c.sims[j].maxBytes)) {
            v = j;
            break;
          }
        coll::SimOptions options;
        options.periods = c.periods[v].get();
        llvm::Expected<coll::SimResult> r = coll::simulate(c.sims[v], topo, sizes[i], options);
        if (!r) {
          errors[k * sizes.size() + i] = c.name + ": " + llvm::toString(r.takeError());
          return;
        }
        c.variant[i] = v;
        c.micros[i] = r->micros;
      });
  pool.wait();
  for (size_t k = from; timing && k < candidates.size(); ++k) {
    const Candidate &c = candidates[k];
    double total = 0;
    for (size_t i = 0; i < sizes.size(); ++i)
      total += seconds[k * sizes.size() + i];
    size_t steps = 0;
    for (const coll::SimPlan &p : c.sims)
      steps += p.steps.size();
    *timing << "collc tune: simulate " << c.name << " (" << steps << " steps"
            << (c.sims.front().foldGpus ? ", folded" : "") << "): " << llvm::format("%.2f", total)
            << " s\n";
  }
  for (const std::string &e : errors)
    if (!e.empty())
      return error(e);
  return llvm::Error::success();
}

/// The fastest candidate at size `i`; on a tie the earlier one, so that
/// the choice is stable.
size_t fastest(llvm::ArrayRef<Candidate> candidates, size_t i) {
  size_t best = 0;
  for (size_t k = 1; k < candidates.size(); ++k)
    if (candidates[k].micros[i] < candidates[best].micros[i])
      best = k;
  return best;
}

/// Where bandwidth starts to matter, and with it more channels and deeper
/// pipelines than the coarse grid's.
constexpr double kRefineFrom = 64 << 10;

/// Lowers the programs and protocols that win some size from kRefineFrom
/// up once more for every instance count and pipeline depth of the finer
/// grid that the coarse one left out, as one would tune them by hand: the
/// coarse grid says which to refine, so that the rest cost nothing more.
/// Returns where the new candidates start.
llvm::Expected<size_t> refine(Tuner &tuner, llvm::ArrayRef<double> sizes) {
  std::vector<Candidate> &cs = tuner.candidates;
  const size_t from = cs.size();
  // Each winning program and protocol, with the steps over all ranks of
  // one instance and depth (its plan's, scaled).
  std::map<std::pair<size_t, int>, std::pair<double, std::string>> winners;
  for (size_t i = 0; i < sizes.size(); ++i)
    if (sizes[i] >= kRefineFrom) {
      const Candidate &w = cs[fastest(cs, i)];
      int64_t period = w.sims.front().foldGpus;
      winners[{w.source, w.protocol}] = {double(stepsOf(w)) *
                                             double(period ? tuner.topo.size() / period : 1) /
                                             double(w.instances * w.pipeline),
                                         w.algorithm};
    }
  std::set<std::tuple<size_t, int, int64_t, int64_t>> tried;
  for (const Candidate &c : cs)
    tried.insert({c.source, c.protocol, c.instances, c.pipeline});
  // Past kScreenFrom ranks the coarse grid was one point, and a plan 32
  // times deeper would take minutes to lower: the old coarse grid instead.
  std::vector<int64_t> instanceCounts = {1, 2, 4, 8}, depths = {1, 2, 4};
  if (screens(tuner.ranks))
    instanceCounts = depths = {1, 2};
  // A program's winning protocols are lowered together, sharing streams.
  std::map<size_t, std::vector<int>> protocolsOf;
  for (const auto &[key, winner] : winners)
    protocolsOf[key.first].push_back(key.second);
  // A refined plan that repeats too seldom to simulate stays so at more
  // instances or depth: both cut each op's chunks into contiguous shares
  // alike, which only breaks more of its symmetry. The rest of that
  // program's grid is left out without lowering it (seconds each).
  std::set<size_t> slow;
  for (const auto &[source, protocols] : protocolsOf)
    for (int64_t instances : instanceCounts)
      for (int64_t pipeline : depths) {
        if (slow.count(source)) {
          tuner.skipped.push_back((winners[{source, protocols.front()}].second + "/i" +
                                   llvm::Twine(instances) + "/p" + llvm::Twine(pipeline) +
                                   ": a smaller instance count or depth was too slow to "
                                   "simulate already")
                                      .str());
          continue;
        }
        SmallVector<coll::Protocol> todo;
        for (int protocol : protocols) {
          if (tried.count({source, protocol, instances, pipeline}))
            continue;
          const auto &[steps, algorithm] = winners[{source, protocol}];
          double planSteps = steps * double(instances * pipeline);
          if (screens(tuner.ranks) && planSteps > kLoweredSteps) {
            tuner.skipped.push_back((algorithm + "/" + stringifyProtocol(coll::Protocol(protocol)) +
                                     "/i" + llvm::Twine(instances) + "/p" + llvm::Twine(pipeline) +
                                     ": its plan would have about " +
                                     llvm::Twine(int64_t(planSteps)) +
                                     " steps over all ranks, more than " +
                                     llvm::Twine(kLoweredSteps) + " (seconds a million to lower)")
                                        .str());
            continue;
          }
          todo.push_back(coll::Protocol(protocol));
        }
        if (todo.empty())
          continue;
        std::string refusal; // too many threadblocks, say: not a candidate
        size_t before = cs.size();
        llvm::Expected<SmallVector<bool>> ok =
            tuner.lower(source, todo, instances, pipeline, refusal);
        if (!ok)
          return ok.takeError();
        size_t lowered = cs.size();
        leaveOutSlow(tuner, before, [](const Candidate &) { return true; });
        if (cs.size() < lowered)
          slow.insert(source);
      }
  // Program by program, protocols first, as the table lists them.
  std::stable_sort(cs.begin() + from, cs.end(), [](const Candidate &a, const Candidate &b) {
    return std::make_tuple(a.source, a.protocol, a.instances, a.pipeline, a.fifo) <
           std::make_tuple(b.source, b.protocol, b.instances, b.pipeline, b.fifo);
  });
  return from;
}

/// Ranges of adjacent sizes with one winner (and one variant of it), in
/// input bytes: from 0, each up to the next range's first size, the last
/// to the emitter's end of sizes.
std::vector<Range> pickRanges(llvm::ArrayRef<Candidate> candidates, llvm::ArrayRef<double> sizes) {
  constexpr int64_t kNoLimit = int64_t(1) << 62; // as coll-select-protocol ends
  std::vector<Range> ranges;
  for (size_t i = 0; i < sizes.size(); ++i) {
    size_t w = fastest(candidates, i);
    if (!ranges.empty() && ranges.back().winner == w &&
        candidates[w].variant[i] == candidates[w].variant[ranges.back().last]) {
      ranges.back().last = i;
      continue;
    }
    int64_t lo = 0;
    if (!ranges.empty()) {
      lo = std::llround(candidates[w].sims.front().inputBytes(sizes[i]));
      ranges.back().maxBytes = lo;
    }
    ranges.push_back({i, i, w, lo, kNoLimit});
  }
  return ranges;
}

/// What the runtime says of a range's plan under COLL_DEBUG: the winner
/// and its margin over the runner-up.
std::string why(llvm::ArrayRef<Candidate> candidates, const Range &r, const Row &row,
                llvm::ArrayRef<double> sizes, llvm::StringRef topology) {
  std::string s;
  llvm::raw_string_ostream os(s);
  os << "collc tune's winner for M " << sizeSpan(sizes, r) << " on " << topology << " among "
     << candidates.size() << " candidates: " << candidates[r.winner].name;
  if (row.second)
    os << ", " << llvm::format("%.1f", row.margin * 100) << "% ahead of "
       << candidates[*row.second].name << " at " << coll::formatBytes(row.bytes);
  return s;
}

/// One library: each range's winning plan, cloned under a name of its own,
/// as a variant of algorithm `name` for that range's sizes.
llvm::Expected<OwningOpRef<ModuleOp>> buildLibrary(Tuner &tuner, llvm::ArrayRef<Range> ranges,
                                                   llvm::ArrayRef<Row> rows,
                                                   llvm::ArrayRef<double> sizes,
                                                   llvm::StringRef name, llvm::StringRef topology) {
  llvm::ArrayRef<Candidate> candidates = tuner.candidates;
  OpBuilder b(&tuner.context);
  OwningOpRef<ModuleOp> library = ModuleOp::create(b.getUnknownLoc());
  b.setInsertionPointToEnd(library->getBody());
  std::map<size_t, std::vector<coll::PlanOp>> winners;
  for (auto [k, r] : llvm::enumerate(ranges)) {
    const Candidate &c = candidates[r.winner];
    auto [it, fresh] = winners.try_emplace(r.winner);
    if (fresh) {
      llvm::Expected<std::vector<coll::PlanOp>> plans = tuner.plansOf(c);
      if (!plans)
        return plans.takeError();
      it->second = std::move(*plans);
    }
    auto plan = llvm::cast<coll::PlanOp>(b.clone(*it->second[c.variant[r.first]]));
    plan.setSymName(coll::cIdent((name + "_" + llvm::Twine(k) + "_" + c.name).str()));
    plan.setAlgorithmAttr(b.getStringAttr(name));
    plan.setMinBytesAttr(b.getI64IntegerAttr(r.minBytes));
    plan.setMaxBytesAttr(b.getI64IntegerAttr(r.maxBytes));
    plan.setWhy(why(candidates, r, rows[k], sizes, topology));
  }
  return library;
}

/// The checks of `options` that need neither topology nor candidate.
llvm::Error checkOptions(const TuneOptions &options) {
  if (options.files.empty() && options.synth.empty())
    return error("no candidates: give .coll files, --synth COLLECTIVE, or both");
  if (options.name.empty() || llvm::isDigit(options.name[0]) ||
      coll::cIdent(options.name) != options.name)
    return error("--name '" + options.name + "' is not a C identifier");
  return llvm::Error::success();
}

/// The files, then every generator of `options.synth` that serves `ranks`
/// GPUs of `topo`.
llvm::Expected<std::vector<Source>> gatherSources(const TuneOptions &options,
                                                  const coll::Topology &topo, int64_t ranks,
                                                  std::optional<coll::Collective> &collective) {
  std::vector<Source> sources = options.files;
  for (Source &s : sources)
    s.file = true;
  if (options.synth.empty())
    return sources;
  collective = coll::synth::parseCollective(options.synth);
  if (!collective)
    return error("unknown collective '" + options.synth + "'");
  coll::synth::Target target;
  target.collective = *collective;
  target.ranks = ranks;
  target.gpusPerNode = topo.nvlink == coll::Topology::NVLinkKind::None
                           ? topo.gpusPerNode
                           : std::max(topo.gpusPerNode, topo.nvlinkDomain);
  for (const coll::synth::Generator &g : coll::synth::generators())
    if (g.serves(*collective) && g.refuse(target).empty())
      sources.push_back({("synth:" + g.name).str(), g.generate(target), false});
  return sources;
}

/// Reads every source into the tuner: files one by one, so that each
/// error prints with its source line (the context has one diagnostic
/// handler at a time), the generators' programs in parallel (at a thousand
/// ranks a ring takes seconds to elaborate and estimate).
llvm::Error readSources(Tuner &tuner, llvm::ArrayRef<Source> sources,
                        const coll::ElaborateOptions &fileOptions, llvm::ArrayRef<double> sizes) {
  bool screened = screens(tuner.ranks);
  std::vector<Tuner::Read> reads(sources.size());
  auto read = [&](size_t k) {
    auto start = std::chrono::steady_clock::now();
    const Source &s = sources[k];
    // A screened generator's program goes once estimated: it is built in a
    // context of its own, which shares no locks with the other reads.
    std::optional<MLIRContext> own;
    if (screened && !s.file) {
      own.emplace(tuner.context.getDialectRegistry(), MLIRContext::Threading::DISABLED);
      own->loadAllAvailableDialects();
      own->printOpOnDiagnostic(false);
    }
    reads[k] = tuner.read(s, s.file ? fileOptions : coll::ElaborateOptions{},
                          screened ? sizes : llvm::ArrayRef<double>{}, own ? *own : tuner.context);
    took(tuner.timing, "parse " + s.name, start);
  };
  for (size_t k = 0; k < sources.size(); ++k)
    if (sources[k].file)
      read(k);
  {
    llvm::DefaultThreadPool pool(llvm::hardware_concurrency());
    for (size_t k = 0; k < sources.size(); ++k)
      if (!sources[k].file)
        pool.async([&, k] { read(k); });
  }
  for (size_t k = 0; k < sources.size(); ++k)
    if (llvm::Error e = tuner.accept(sources[k], std::move(reads[k])))
      return e;
  return llvm::Error::success();
}

/// Says on `notes` the reasons from `from` on.
void note(llvm::raw_ostream *notes, llvm::ArrayRef<std::string> skipped, size_t from = 0) {
  for (size_t i = from; notes && i < skipped.size(); ++i)
    *notes << "collc tune: left out " << skipped[i] << "\n";
}

/// Lowers and simulates every source, refining the winners where the grid
/// was left to its defaults; on return each candidate has its times.
llvm::Error lowerAndSimulate(Tuner &tuner, llvm::ArrayRef<Source> sources,
                             llvm::ArrayRef<double> sizes, llvm::raw_ostream *notes,
                             llvm::StringRef synth) {
  if (llvm::Error e = lowerSources(tuner, sources, sizes))
    return e;
  // A file is always simulated, and so is everything where nothing else
  // would be.
  auto generated = [&](const Candidate &c) { return !sources[c.source].file; };
  if (llvm::any_of(tuner.candidates,
                   [&](const Candidate &c) { return !generated(c) || !slowToSimulate(tuner, c); }))
    leaveOutSlow(tuner, 0, generated);
  note(notes, tuner.skipped);
  if (tuner.candidates.empty())
    return error("no candidates: no generator serves " + synth + " on " + llvm::Twine(tuner.ranks) +
                 " ranks");

  tuner.progress.say("simulating " + llvm::Twine(tuner.candidates.size()) + " candidates at " +
                     llvm::Twine(sizes.size()) + " sizes");
  auto simStart = std::chrono::steady_clock::now();
  if (llvm::Error e = simulateAll(tuner.candidates, tuner.topo, sizes, tuner.timing))
    return e;
  took(tuner.timing, "simulate", simStart);
  if (!tuner.grid.refine)
    return llvm::Error::success();
  auto start = std::chrono::steady_clock::now();
  size_t said = tuner.skipped.size();
  tuner.progress.say("refining the winners");
  llvm::Expected<size_t> from = refine(tuner, sizes);
  if (!from)
    return from.takeError();
  note(notes, tuner.skipped, said);
  took(tuner.timing, "refine the winners", start);
  return simulateAll(tuner.candidates, tuner.topo, sizes, tuner.timing, *from);
}

} // namespace

Tuned::Tuned() = default;
Tuned::~Tuned() = default;
Tuned::Tuned(Tuned &&) = default;

llvm::Expected<Tuned> coll::tune::run(const TuneOptions &options, MLIRContext &context) {
  if (options.topology.empty())
    return error("--topology is required: a preset (" + llvm::join(coll::presetNames(), ", ") +
                 ") or a JSON file");
  llvm::Expected<coll::Topology> topo = coll::loadTopology(options.topology);
  if (!topo)
    return error("topology: " + llvm::toString(topo.takeError()));
  int64_t ranks = options.ranks.value_or(topo->size());
  if (ranks < 2 || ranks > topo->size())
    return error("--ranks " + llvm::Twine(ranks) + " is not in 2 .. " + llvm::Twine(topo->size()) +
                 ", the GPUs of " + topo->name);
  llvm::Expected<Grid> grid = readGrid(options, ranks);
  if (!grid)
    return grid.takeError();
  if (llvm::Error e = checkOptions(options))
    return e;
  coll::ElaborateOptions fileOptions;
  fileOptions.defines = options.defines;
  if (!llvm::any_of(fileOptions.defines, [](const auto &d) { return d.first == "ranks"; }))
    fileOptions.defines.emplace_back("ranks", ranks);
  std::optional<coll::Collective> collective;
  llvm::Expected<std::vector<Source>> sources = gatherSources(options, *topo, ranks, collective);
  if (!sources)
    return sources.takeError();

  Tuned result;
  result.tuner.reset(new Tuner{context, *topo, options.topology, *grid, ranks, options.timing});
  result.name = options.name;
  Tuner &tuner = *result.tuner;
  tuner.collective = collective;
  tuner.refusals = options.refusals;
  tuner.progress.os = options.progress;
  tuner.progress.every = options.progressEvery;
  result.sizes = sweep();
  const std::vector<double> &sizes = result.sizes;
  if (llvm::Error e = readSources(tuner, *sources, fileOptions, sizes))
    return e;
  if (llvm::Error e = lowerAndSimulate(tuner, *sources, sizes, options.notes, options.synth))
    return e;

  result.topology = std::move(*topo);
  result.collective = *tuner.collective;
  result.ranks = ranks;
  result.leftOut = tuner.skipped;
  result.ranges = pickRanges(tuner.candidates, sizes);
  llvm::Expected<References> refs =
      references(tuner.candidates, sizes, result.topology, result.collective, ranks);
  if (!refs)
    return refs.takeError();
  result.references = std::move(*refs);
  result.busFactor = coll::busBandwidthFactor(result.collective, ranks);
  result.rows =
      describe(tuner.candidates, result.ranges, sizes, result.references, result.busFactor);
  result.warnings =
      shortfalls(tuner.candidates, result.ranges, sizes, result.references, result.busFactor);
  llvm::raw_string_ostream(result.heading)
      << options.name << ": " << stringifyCollective(result.collective) << " on "
      << result.topology.name << ", " << ranks << " ranks; " << tuner.candidates.size()
      << " candidates simulated at " << sizes.size() << " sizes; " << result.ranges.size()
      << (result.ranges.size() == 1 ? " range" : " ranges");
  return result;
}

llvm::ArrayRef<Candidate> Tuned::candidates() const { return tuner->candidates; }

llvm::Expected<OwningOpRef<ModuleOp>> Tuned::library() {
  auto start = std::chrono::steady_clock::now();
  llvm::Expected<OwningOpRef<ModuleOp>> built =
      buildLibrary(*tuner, ranges, rows, sizes, name, topology.name);
  if (!built)
    return built.takeError();
  took(tuner->timing, "lower the winners again", start);
  start = std::chrono::steady_clock::now();
  // The winners' threadblocks get their shapes, checked against their steps.
  PassManager reroll(&tuner->context);
  reroll.enableVerifier(false);
  coll::CollLoweringOptions only;
  only.from = coll::LoweringStage::Reroll;
  coll::buildCollLoweringPipeline(reroll, only);
  if (failed(reroll.run(**built)))
    return error("the winners could not be rerolled");
  for (auto plan : (*built)->getOps<coll::PlanOp>())
    if (failed(plan.verifyRegions()))
      return error("a winner's shapes do not make its steps");
  took(tuner->timing, "reroll the winners", start);
  return built;
}
