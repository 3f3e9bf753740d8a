//===- Bound.cpp - `collc bound`: lower bounds on a collective's time -----===//
//
// Prints the bandwidth (cut) bound and the latency bounds of a collective
// on a topology at one message size, and how they combine, as a table or
// as JSON.
//
//===----------------------------------------------------------------------===//
#include "Help.h"
#include "Bound.h"

#include "lib/Bound/Bound.h"
#include "lib/Synthesis/Generators.h"
#include "lib/Support/Names.h"
#include "lib/Topology/Topology.h"
#include "lib/Support/Bytes.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/JSON.h"

#include <cmath>

namespace cl = llvm::cl;
using coll::formatBytes;
using coll::parseBytes;

namespace {

cl::SubCommand
    boundCommand("bound", "Lower bounds on COLLECTIVE's time on --topology at --message-size: the "
                          "bandwidth (cut) bound and the latency (rounds) bound");
cl::opt<std::string> collectiveName(cl::Positional, cl::desc("<collective>"), cl::Required,
                                    cl::sub(boundCommand));
cl::opt<std::string> topologySpec("topology", cl::desc("The machine: " COLLC_TOPOLOGY_HELP),
                                  cl::value_desc("name|file"), cl::sub(boundCommand));
cl::opt<std::string>
    messageSize("message-size",
                cl::desc("M: bytes of a rank's larger buffer (allreduce's buffer, all-gather's "
                         "output, reduce-scatter's input); K, M, G (powers of 1024) may follow"),
                cl::value_desc("bytes"), cl::sub(boundCommand));
cl::opt<int64_t> rankCount("ranks", cl::value_desc("N"),
                           cl::desc("Ranks, rank r on GPU r (default: every GPU)"), cl::init(0),
                           cl::sub(boundCommand));
cl::opt<int64_t> rootRank("root", cl::value_desc("rank"),
                          cl::desc("Root of broadcast and reduce (default 0)"), cl::init(0),
                          cl::sub(boundCommand));
cl::opt<bool> asJson("json", cl::desc("Print one JSON object instead of a table"),
                     cl::sub(boundCommand));

int fail(const llvm::Twine &message) {
  llvm::errs() << "collc bound: error: " << message << "\n";
  return 1;
}

std::string us(double v) {
  std::string s;
  llvm::raw_string_ostream(s) << llvm::format("%.2f", v);
  return s;
}

} // namespace

bool collc::boundRequested() { return bool(boundCommand); }

int collc::runBound() {
  using namespace coll;
  std::optional<Collective> collective = synth::parseCollective(collectiveName);
  if (!collective) {
    llvm::SmallVector<llvm::StringRef> names;
    for (int i = 0; i <= int(Collective::reduce); ++i)
      names.push_back(stringifyCollective(Collective(i)));
    std::string hint = didYouMean(collectiveName, names);
    return fail("unknown collective '" + collectiveName + "'" +
                (hint.empty() ? "; expected one of " + llvm::join(names, ", ") : hint));
  }
  if (topologySpec.empty())
    return fail("--topology is required: a preset (" + llvm::join(presetNames(), ", ") +
                ") or a JSON file");
  if (messageSize.empty())
    return fail("--message-size is required: the bytes of a rank's larger buffer, such as "
                "1073741824 or 1G");
  std::optional<double> bytes = parseBytes(messageSize);
  if (!bytes || *bytes <= 0)
    return fail("--message-size '" + messageSize +
                "' is not a positive number of bytes (K, M, G may follow)");
  llvm::Expected<Topology> topo = loadTopology(topologySpec);
  if (!topo)
    return fail("topology: " + llvm::toString(topo.takeError()));
  int64_t ranks = rankCount.getNumOccurrences() ? int64_t(rankCount) : topo->size();
  // A bare preset grows to the nodes the ranks need, as `collc synth` does.
  if (ranks > topo->size() && llvm::is_contained(presetNames(), topologySpec.getValue())) {
    int64_t nodes = (ranks + topo->gpusPerNode - 1) / topo->gpusPerNode;
    topo = presetTopology(topologySpec + ":nodes=" + std::to_string(nodes));
    if (!topo)
      return fail("topology: " + llvm::toString(topo.takeError()));
  }
  if (ranks < 2)
    return fail("--ranks " + llvm::Twine(ranks) + ": a collective needs at least 2 ranks");
  if (ranks > topo->size())
    return fail("topology " + topo->name + " has " + llvm::Twine(topo->size()) +
                " GPUs, fewer than " + llvm::Twine(ranks) +
                " ranks; give a larger one (a preset takes :nodes=N)");
  bool rooted = *collective == Collective::broadcast || *collective == Collective::reduce;
  if (rootRank.getNumOccurrences() && !rooted)
    return fail("--root applies to broadcast and reduce, not " + collectiveName);
  if (rootRank < 0 || rootRank >= ranks)
    return fail("--root " + llvm::Twine(rootRank.getValue()) + " is not a rank of 0 .. " +
                llvm::Twine(ranks - 1));

  llvm::Expected<CollectiveBound> bound =
      computeBound(*collective, *topo, int(ranks), *bytes, int(rootRank));
  if (!bound)
    return fail(llvm::toString(bound.takeError()));
  const CollectiveBound &b = *bound;
  double oneport = std::max(b.bandwidthUs, b.latencyUs);
  double sum = b.bandwidthUs + b.latencyUs;
  llvm::StringRef name = stringifyCollective(*collective);
  llvm::StringRef protocol = stringifyProtocol(b.latencyProtocol);

  llvm::raw_ostream &os = llvm::outs();
  if (asJson) {
    llvm::json::OStream j(os, 2);
    j.object([&] {
      j.attribute("collective", name);
      j.attribute("topology", topologySpec);
      j.attribute("ranks", ranks);
      j.attribute("bytes", *bytes);
      j.attribute("bandwidth_us", b.bandwidthUs);
      j.attribute("bandwidth_formula", b.bandwidthFormula);
      j.attribute("cut", b.cutDescription);
      j.attribute("rounds", b.rounds);
      j.attribute("latency_protocol", protocol);
      j.attribute("latency_us", b.latencyUs);
      j.attribute("fanout_latency_us", b.fanoutLatencyUs);
      j.attribute("lower_bound_us", b.lowerUs());
      j.attribute("oneport_lower_bound_us", oneport);
      j.attribute("sum_us", sum);
    });
    os << "\n";
    return 0;
  }
  os << name << " on " << topologySpec << ": " << ranks << " ranks, " << topo->nodes
     << (topo->nodes == 1 ? " node" : " nodes") << " of " << topo->gpusPerNode
     << " GPUs; M = " << formatBytes(*bytes) << " per rank\n\n";
  auto row = [&](llvm::StringRef what, double value, const llvm::Twine &how) {
    os << "  " << llvm::left_justify(what, 22) << llvm::right_justify(us(value), 12) << " us   "
       << how << "\n";
  };
  row("bandwidth", b.bandwidthUs, b.bandwidthFormula);
  os << llvm::indent(42) << "cut: " << b.cutDescription << "\n";
  row("latency (one-port)", b.latencyUs,
      protocol + ": base " + us(b.baseUs) + " + max(" + llvm::Twine(b.rounds) + " rounds x " +
          us(b.hopUs) + ", farthest pair " + us(b.farthestUs) + ")");
  row("latency (any fan-out)", b.fanoutLatencyUs, "base + farthest pair, one round");
  row("lower bound", b.lowerUs(), "max(bandwidth, latency (any fan-out)): every schedule");
  row("one-port lower bound", oneport,
      "max(bandwidth, latency (one-port)): one message per rank per round");
  row("sum", sum, "bandwidth + latency (one-port): a target, not a bound");
  return 0;
}
