//===- Sim.cpp - `collc sim`: simulated time of a program per size --------===//
//
// Lowers the program as collc does, then runs each algorithm's plans in the
// simulator at every size of a sweep (the variant whose size range holds
// it), and prints nccl-tests' columns beside the lower bound and NCCL's
// own model of the same collective on the same machine.
//
//===----------------------------------------------------------------------===//
#include "Sim.h"

#include "lib/Bound/Bound.h"
#include "lib/Sim/NcclModel.h"
#include "lib/Sim/SimFold.h"
#include "lib/Sim/SimPlan.h"
#include "lib/Sim/Simulator.h"
#include "lib/Topology/Topology.h"
#include "lib/Support/Bytes.h"

#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/ThreadPool.h"

#include <cmath>
#include <map>
#include <set>

namespace cl = llvm::cl;
using coll::formatBytes;
using coll::parseBytes;

namespace {

cl::OptionCategory category("collc sim options");
cl::opt<std::string> sizes("sizes",
                           cl::desc("Message sizes M (nccl-tests' size: the larger of a rank's "
                                    "buffers): FROM..TO, or a comma-separated list; K, M, G "
                                    "(powers of 1024) may follow each"),
                           cl::value_desc("8B..4GiB"), cl::init("8B..4GiB"), cl::cat(category),
                           cl::sub(collc::simCommand()));
cl::opt<double> factor("factor",
                       cl::desc("Step of FROM..TO: each size is this many times the last"),
                       cl::value_desc("f"), cl::init(2), cl::cat(category),
                       cl::sub(collc::simCommand()));
cl::opt<bool> nccl("nccl",
                   cl::desc("Print NCCL's model (its tuning formulas) beside the simulation "
                            "(default; --nccl=false leaves it out)"),
                   cl::init(true), cl::cat(category), cl::sub(collc::simCommand()));
cl::opt<int64_t> exactLoops("exact-loops",
                            cl::desc("Loops simulated one by one before the rest are "
                                     "extrapolated from their steady period"),
                            cl::init(coll::SimOptions().exactLoops), cl::Hidden, cl::cat(category),
                            cl::sub(collc::simCommand()));
cl::opt<bool> asJson("json", cl::desc("Print one JSON array, an object per algorithm"),
                     cl::cat(category), cl::sub(collc::simCommand()));
cl::opt<bool> fold("fold",
                   cl::desc("Run one period of a plan that repeats from node to node "
                            "(default; --fold=false runs every rank, to the same times)"),
                   cl::init(true), cl::Hidden, cl::cat(category), cl::sub(collc::simCommand()));

int fail(const llvm::Twine &message) {
  llvm::errs() << "collc sim: error: " << message << "\n";
  return 1;
}

/// More sizes than any plot needs is a mistyped --factor.
constexpr size_t kMaxSizes = 4096;

std::optional<std::vector<double>> sweep() {
  std::vector<double> out;
  auto [from, to] = llvm::StringRef(sizes).split("..");
  if (!to.empty()) {
    std::optional<double> lo = parseBytes(from), hi = parseBytes(to);
    if (!lo || !hi || *lo <= 0 || *hi < *lo)
      return std::nullopt;
    for (double s = *lo; s <= *hi * (1 + 1e-9); s *= factor) {
      out.push_back(std::round(s));
      if (out.size() > kMaxSizes)
        return std::nullopt;
    }
    return out;
  }
  llvm::SmallVector<llvm::StringRef> parts;
  llvm::StringRef(sizes).split(parts, ',');
  for (llvm::StringRef p : parts) {
    std::optional<double> s = parseBytes(p);
    if (!s || *s <= 0)
      return std::nullopt;
    out.push_back(*s);
  }
  return out;
}

std::string fixed(double v, int digits = 2) {
  std::string s;
  llvm::raw_string_ostream(s) << llvm::format("%.*f", digits, v);
  return s;
}

/// The variants of one algorithm, in increasing size ranges.
struct Algorithm {
  std::string topology;
  std::vector<coll::SimPlan> variants;
};

/// One size of a sweep: the variant that ran, its time, the bound's time
/// (none past the topology) and NCCL's choice (none for all-to-all).
struct Row {
  double bytes = 0;
  const coll::SimPlan *plan = nullptr;
  coll::SimResult sim;
  std::optional<double> boundUs;
  std::optional<coll::NcclChoice> nccl;
};

struct Table {
  std::string name, topology;
  coll::Collective collective;
  int64_t ranks = 0;
  size_t nodes = 0;
  int64_t period = 0, gpus = 0; // GPUs of the one period that ran, of all
  double bus = 1;               // busbw over algbw
  int ringChannels = 0, commChannels = 0;
  double ringChannelGBps = 0;
  int nvlsChannels = 0;
  double nvlsIntraGBps = 0, nvlsInterGBps = 0;
  std::string generation;
  std::vector<Row> rows;

  double gbps(double micros, double bytes) const { return bytes / (micros * 1e3); }
};

llvm::Error simulateAlgorithm(Table &table, Algorithm &alg, llvm::ArrayRef<double> sweepSizes) {
  using namespace coll;
  llvm::Expected<Topology> topo = loadTopology(alg.topology);
  if (!topo)
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "topology: " + llvm::toString(topo.takeError()));
  llvm::sort(alg.variants,
             [](const SimPlan &a, const SimPlan &b) { return a.minBytes < b.minBytes; });
  if (fold)
    for (SimPlan &v : alg.variants)
      if (std::optional<SimPlan> folded = foldPlan(v, *topo)) {
        v = std::move(*folded);
        table.period = std::max(table.period, v.foldGpus);
      }
  table.gpus = topo->size();
  const SimPlan &first = alg.variants.front();
  table.topology = alg.topology;
  table.collective = first.collective;
  table.ranks = first.ranks;
  table.bus = busBandwidthFactor(first.collective, first.ranks);
  std::set<int> nodes;
  for (int64_t g : first.gpus)
    if (g >= 0 && g < topo->size())
      nodes.insert(topo->gpus[g].node);
  table.nodes = nodes.size();
  NcclModel model(*topo, first.gpus);
  table.ringChannels = model.ringChannels();
  table.commChannels = model.commChannels();
  table.ringChannelGBps = model.ringChannelGBps();
  table.nvlsChannels = model.nvlsChannels();
  table.nvlsIntraGBps = model.nvlsIntraGBps();
  table.nvlsInterGBps = model.nvlsInterGBps();
  table.generation = model.generationName().str();
  // The bound is a line in M past its latency: take its slope once.
  bool bounded = first.ranks >= 2 && first.ranks <= topo->size();
  CollectiveBound perByte;
  if (bounded) {
    llvm::Expected<CollectiveBound> b =
        computeBound(first.collective, *topo, int(first.ranks), 1.0);
    if (!b)
      return b.takeError();
    perByte = *b;
  }

  // Sizes are independent runs over the same plans: one task each.
  table.rows.assign(sweepSizes.size(), {});
  std::vector<std::string> errors(sweepSizes.size());
  llvm::DefaultThreadPool pool(llvm::hardware_concurrency());
  for (size_t i = 0; i < sweepSizes.size(); ++i)
    pool.async([&, i] {
      Row &row = table.rows[i];
      double m = row.bytes = sweepSizes[i];
      double in = first.inputBytes(m);
      row.plan = &alg.variants.back();
      for (const SimPlan &v : alg.variants)
        if (double(v.minBytes) <= in && in < double(v.maxBytes)) {
          row.plan = &v;
          break;
        }
      SimOptions options;
      options.exactLoops = std::max<int64_t>(exactLoops, 2);
      llvm::Expected<SimResult> r = simulate(*row.plan, *topo, m, options);
      if (!r) {
        errors[i] = llvm::toString(r.takeError());
        return;
      }
      row.sim = *r;
      if (bounded)
        row.boundUs = std::max(perByte.bandwidthUs * m, perByte.fanoutLatencyUs);
      row.nccl = model.choose(first.collective, m);
    });
  pool.wait();
  for (const std::string &e : errors)
    if (!e.empty())
      return llvm::createStringError(llvm::inconvertibleErrorCode(), e);
  return llvm::Error::success();
}

void printTable(const Table &t, llvm::raw_ostream &os) {
  using namespace coll;
  os << t.name << ": " << stringifyCollective(t.collective) << " on " << t.topology << ", "
     << t.ranks << " ranks on " << t.nodes << (t.nodes == 1 ? " node" : " nodes") << "; simulated";
  if (t.period)
    os << " (one period of " << t.period << " GPUs of " << t.gpus << ", which the rest repeat)";
  os << ". Times in us, bandwidths in GB/s (nccl-tests' algbw and busbw)\n";
  auto cell = [&](const llvm::Twine &text, unsigned width) {
    os << llvm::right_justify(text.str(), width);
  };
  cell("size", 10);
  os << "  " << llvm::left_justify("plan", 18);
  cell("time", 11);
  cell("algbw", 9);
  cell("busbw", 9);
  cell("bound", 9);
  if (nccl) {
    os << "   " << llvm::left_justify("nccl model", 16);
    cell("time", 11);
    cell("busbw", 9);
  }
  os << "\n";
  for (const Row &row : t.rows) {
    double algbw = t.gbps(row.sim.micros, row.bytes);
    cell(formatBytes(row.bytes), 10);
    os << "  " << llvm::left_justify(row.plan->name, 18);
    cell(fixed(row.sim.micros), 11);
    cell(fixed(algbw), 9);
    cell(fixed(algbw * t.bus), 9);
    cell(row.boundUs ? fixed(t.gbps(*row.boundUs, row.bytes) * t.bus) : "-", 9);
    if (nccl && row.nccl) {
      os << "   "
         << llvm::left_justify((ncclAlgorithmName(row.nccl->algorithm) + "/" +
                                stringifyProtocol(row.nccl->protocol))
                                   .str(),
                               16);
      cell(fixed(row.nccl->micros), 11);
      cell(fixed(t.gbps(row.nccl->micros, row.bytes) * t.bus), 9);
    } else if (nccl) {
      os << "   -";
    }
    os << "\n";
  }
  os << "bound: busbw at collc bound's lower bound (max of the cut bound and the any-fan-out "
        "latency bound)\n";
  if (!nccl)
    return;
  os << "nccl model: NCCL's tuning formulas (src/graph/tuning.cc) with " << t.generation
     << "'s constants, " << t.ringChannels << " ring channels of " << fixed(t.ringChannelGBps, 1)
     << " GB/s (" << t.commChannels << " on the communicator)";
  // The graph search's NVLS channels and their bwIntra / bwInter.
  if (t.nvlsChannels)
    os << ", " << t.nvlsChannels << " NVLS channels of " << fixed(t.nvlsIntraGBps, 1) << "/"
       << fixed(t.nvlsInterGBps, 1) << " GB/s";
  os << "; a model, not a measurement\n";
}

void printJson(llvm::ArrayRef<Table> tables, llvm::raw_ostream &os) {
  using namespace coll;
  llvm::json::OStream j(os, 2);
  j.array([&] {
    for (const Table &t : tables)
      j.object([&] {
        j.attribute("algorithm", t.name);
        j.attribute("collective", stringifyCollective(t.collective));
        j.attribute("topology", t.topology);
        j.attribute("ranks", t.ranks);
        j.attribute("nodes", int64_t(t.nodes));
        j.attributeArray("sizes", [&] {
          for (const Row &row : t.rows)
            j.object([&] {
              double algbw = t.gbps(row.sim.micros, row.bytes);
              j.attribute("bytes", row.bytes);
              j.attribute("plan", row.plan->name);
              j.attribute("protocol", stringifyProtocol(Protocol(row.plan->protocol())));
              j.attribute("loops", row.sim.loops);
              j.attribute("time_us", row.sim.micros);
              j.attribute("algbw", algbw);
              j.attribute("busbw", algbw * t.bus);
              if (row.boundUs)
                j.attribute("bound_busbw", t.gbps(*row.boundUs, row.bytes) * t.bus);
              if (nccl && row.nccl)
                j.attributeObject("nccl_model", [&] {
                  j.attribute("algorithm", ncclAlgorithmName(row.nccl->algorithm));
                  j.attribute("protocol", stringifyProtocol(row.nccl->protocol));
                  j.attribute("time_us", row.nccl->micros);
                  j.attribute("busbw", t.gbps(row.nccl->micros, row.bytes) * t.bus);
                });
            });
        });
      });
  });
  os << "\n";
}

} // namespace

cl::SubCommand &collc::simCommand() {
  static cl::SubCommand command("sim", "Lower FILE.coll to plans and simulate their time per "
                                       "message size on --topology");
  return command;
}

cl::OptionCategory &collc::simCategory() { return category; }

bool collc::checkSimOptions(llvm::StringRef topology) {
  if (topology.empty()) {
    fail("--topology is required: a preset (" + llvm::join(coll::presetNames(), ", ") +
         ") or a JSON file");
    return false;
  }
  if (!(factor > 1)) {
    fail("--factor " + fixed(factor) + " must be more than 1");
    return false;
  }
  if (!sweep()) {
    fail("--sizes '" + sizes + "' is not FROM..TO (at most " + llvm::Twine(kMaxSizes) +
         " sizes at --factor) or a list of positive sizes (8, 64K, 1MiB, 4G)");
    return false;
  }
  return true;
}

int collc::runSim(mlir::ModuleOp module, llvm::StringRef topology) {
  llvm::MapVector<std::string, Algorithm, std::map<std::string, unsigned>> algorithms;
  for (auto plan : module.getOps<coll::PlanOp>()) {
    llvm::Expected<coll::SimPlan> sim = coll::buildSimPlan(plan);
    if (!sim)
      return fail(llvm::toString(sim.takeError()));
    Algorithm &alg = algorithms[sim->algorithm];
    alg.topology = plan.getTopology().value_or(topology).str();
    alg.variants.push_back(std::move(*sim));
  }
  std::vector<double> sweepSizes = *sweep();
  std::vector<Table> tables;
  for (auto &[name, alg] : algorithms) {
    Table &table = tables.emplace_back();
    table.name = name;
    if (llvm::Error e = simulateAlgorithm(table, alg, sweepSizes))
      return fail(llvm::toString(std::move(e)));
  }
  if (asJson) {
    printJson(tables, llvm::outs());
    return 0;
  }
  for (const Table &t : tables) {
    if (&t != &tables.front())
      llvm::outs() << "\n";
    printTable(t, llvm::outs());
  }
  return 0;
}
