//===- Sim.cpp - `collc sim`: simulated time of a program per size --------===//
//
// Lowers the program as collc does, then runs each algorithm's plans in the
// simulator at every size of a sweep (the variant whose size range holds
// it), and prints nccl-tests' columns beside the lower bound and NCCL's
// own model of the same collective on the same machine.
//
//===----------------------------------------------------------------------===//
#include "Sim.h"

#include "lib/Synthesis/Bound.h"
#include "lib/Synthesis/NcclModel.h"
#include "lib/Synthesis/SimPlan.h"
#include "lib/Synthesis/Simulator.h"
#include "lib/Synthesis/Topology.h"

#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/Format.h"

#include <cmath>
#include <map>
#include <set>

namespace cl = llvm::cl;

namespace {

cl::OptionCategory category("collc sim options");
cl::opt<std::string> sizes("sizes",
                           cl::desc("Message sizes M (nccl-tests' size: the larger of a rank's "
                                    "buffers): FROM..TO, or a comma-separated list; K, M, G "
                                    "(powers of 1024) may follow each"),
                           cl::value_desc("8B..4GiB"), cl::init("8B..4GiB"), cl::cat(category));
cl::opt<double> factor("factor", cl::desc("Step of FROM..TO: each size is this many times the last"),
                       cl::value_desc("f"), cl::init(2), cl::cat(category));
cl::opt<bool> nccl("nccl",
                   cl::desc("Print NCCL's model (its tuning formulas) beside the simulation "
                            "(default; --nccl=false leaves it out)"),
                   cl::init(true), cl::cat(category));

int fail(const llvm::Twine &message) {
  llvm::errs() << "collc sim: error: " << message << "\n";
  return 1;
}

/// "1073741824", "1G", "1GiB", "64K", "8B": bytes, in powers of 1024.
std::optional<double> parseBytes(llvm::StringRef text) {
  text = text.trim();
  llvm::StringRef digits = text.take_while([](char c) { return llvm::isDigit(c) || c == '.'; });
  double value;
  if (digits.empty() || digits.getAsDouble(value))
    return std::nullopt;
  std::string u = text.drop_front(digits.size()).lower();
  if (!u.empty() && u.back() == 'b')
    u.pop_back();
  if (u.size() == 2 && u[1] == 'i')
    u.pop_back();
  const char *units[] = {"", "k", "m", "g", "t"};
  for (int i = 0; i < 5; ++i)
    if (u == units[i])
      return value * std::pow(1024.0, i);
  return std::nullopt;
}

std::string formatBytes(double bytes) {
  const char *units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  int u = 0;
  while (u < 4 && bytes >= 1024) {
    bytes /= 1024;
    ++u;
  }
  std::string s;
  llvm::raw_string_ostream(s) << llvm::format("%g", bytes) << " " << units[u];
  return s;
}

std::optional<std::vector<double>> sweep() {
  std::vector<double> out;
  auto [from, to] = llvm::StringRef(sizes).split("..");
  if (!to.empty()) {
    std::optional<double> lo = parseBytes(from), hi = parseBytes(to);
    if (!lo || !hi || *lo <= 0 || *hi < *lo)
      return std::nullopt;
    for (double s = *lo; s <= *hi * (1 + 1e-9); s *= factor)
      out.push_back(std::round(s));
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

int simulateAlgorithm(llvm::StringRef name, Algorithm &alg, llvm::ArrayRef<double> sweepSizes,
                      llvm::raw_ostream &os) {
  using namespace coll;
  llvm::Expected<Topology> topo = loadTopology(alg.topology);
  if (!topo)
    return fail("topology: " + llvm::toString(topo.takeError()));
  llvm::sort(alg.variants, [](const SimPlan &a, const SimPlan &b) { return a.minBytes < b.minBytes; });
  const SimPlan &first = alg.variants.front();
  Collective c = first.collective;
  int64_t ranks = first.ranks;
  double bus = busBandwidthFactor(c, ranks);
  NcclModel model(*topo, first.gpus);
  // The bound is a line in M past its latency: take its slope once.
  bool bounded = ranks >= 2 && ranks <= topo->size();
  CollectiveBound perByte;
  if (bounded)
    perByte = computeBound(c, *topo, int(ranks), 1.0);

  std::set<int> nodes;
  for (int64_t g : first.gpus)
    nodes.insert(topo->gpus[g].node);
  os << name << ": " << stringifyCollective(c) << " on " << alg.topology << ", " << ranks
     << " ranks on " << nodes.size() << (nodes.size() == 1 ? " node" : " nodes")
     << "; simulated. Times in us, bandwidths in GB/s (nccl-tests' algbw and busbw)\n";
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
  for (double m : sweepSizes) {
    double in = first.inputBytes(m);
    const SimPlan *plan = &alg.variants.back();
    for (const SimPlan &v : alg.variants)
      if (double(v.minBytes) <= in && in < double(v.maxBytes)) {
        plan = &v;
        break;
      }
    llvm::Expected<SimResult> r = simulate(*plan, *topo, m);
    if (!r)
      return fail(llvm::toString(r.takeError()));
    double algbw = m / (r->micros * 1e3);
    cell(formatBytes(m), 10);
    os << "  " << llvm::left_justify(plan->name, 18);
    cell(fixed(r->micros), 11);
    cell(fixed(algbw), 9);
    cell(fixed(algbw * bus), 9);
    if (bounded) {
      double lower = std::max(perByte.bandwidthUs * m, perByte.fanoutLatencyUs);
      cell(fixed(m / (lower * 1e3) * bus), 9);
    } else {
      cell("-", 9);
    }
    if (nccl) {
      std::optional<NcclChoice> choice = model.choose(c, m);
      if (choice) {
        os << "   "
           << llvm::left_justify((ncclAlgorithmName(choice->algorithm) + "/" +
                                  stringifyProtocol(choice->protocol))
                                     .str(),
                                 16);
        cell(fixed(choice->micros), 11);
        cell(fixed(m / (choice->micros * 1e3) * bus), 9);
      } else {
        os << "   -";
      }
    }
    os << "\n";
  }
  os << "bound: busbw at collc bound's lower bound (max of the cut bound and the any-fan-out "
        "latency bound)\n";
  if (nccl)
    os << "nccl model: NCCL's tuning formulas (src/graph/tuning.cc), " << model.ringChannels()
       << " ring channels of " << fixed(model.ringChannelGBps(), 1)
       << " GB/s; a model, not a measurement\n";
  return 0;
}

} // namespace

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
    fail("--sizes '" + sizes +
         "' is not FROM..TO or a list of positive sizes (8, 64K, 1MiB, 4G)");
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
  bool firstTable = true;
  for (auto &[name, alg] : algorithms) {
    if (!firstTable)
      llvm::outs() << "\n";
    firstTable = false;
    if (int status = simulateAlgorithm(name, alg, sweepSizes, llvm::outs()))
      return status;
  }
  return 0;
}
