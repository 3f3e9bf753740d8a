//===- Synth.cpp - `collc synth`: write a Coll program for a collective ---===//
//
// Picks a generator (the one asked for, or the cheapest under the alpha-beta
// model at one message size), checks that its program parses and verifies
// like a hand-written one, and prints it under a comment saying what it is,
// for which machine and rank count, and what it costs.
//
//===----------------------------------------------------------------------===//
#include "Help.h"
#include "Synth.h"

#include "lib/Frontend/Elaborate.h"
#include "lib/Lowering/Pipelines.h"
#include "lib/Synthesis/Generators.h"
#include "lib/Sim/ProgramCost.h"
#include "lib/Support/Bytes.h"
#include "lib/Support/Names.h"
#include "lib/Topology/Topology.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Support/FileUtilities.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/ToolOutputFile.h"

using namespace mlir;
using namespace coll::synth;
namespace cl = llvm::cl;

namespace {

cl::SubCommand
    synthCommand("synth",
                 "Write a Coll program for COLLECTIVE on --topology: a classic algorithm "
                 "(--algorithm), or the cheapest under the alpha-beta model (--list shows them)");
cl::opt<std::string> collectiveName(cl::Positional, cl::desc("<collective>"), cl::Required,
                                    cl::sub(synthCommand));
cl::opt<std::string> topologySpec("topology", cl::desc("The machine: " COLLC_TOPOLOGY_HELP),
                                  cl::value_desc("name|file"), cl::sub(synthCommand));
cl::opt<std::string> algorithmName("algorithm", cl::desc("The algorithm (default: the cheapest)"),
                                   cl::value_desc("name"), cl::sub(synthCommand));
cl::opt<int64_t> rankCount("ranks", cl::value_desc("N"),
                           cl::desc("Ranks (default: every GPU of the topology)"), cl::init(0),
                           cl::sub(synthCommand));
cl::opt<int64_t> rootRank("root", cl::value_desc("rank"),
                          cl::desc("Root of broadcast and reduce (default 0)"), cl::init(0),
                          cl::sub(synthCommand));
cl::opt<std::string>
    messageSizeText("message-size",
                    cl::desc("Bytes per rank at which algorithms are costed (default 1 MiB; "
                             "K, M, G may follow)"),
                    cl::value_desc("bytes"), cl::init("1M"), cl::sub(synthCommand));
/// --message-size, read.
int64_t messageBytes = 0;
cl::opt<bool> listOnly("list",
                       cl::desc("Print the algorithms that apply, one per line, with "
                                "their estimated time, instead of a program"),
                       cl::sub(synthCommand));
cl::opt<std::string> outputPath("o", cl::desc("Output file (default: standard output)"),
                                cl::value_desc("file"), cl::init("-"), cl::sub(synthCommand));

int fail(const llvm::Twine &message) {
  llvm::errs() << "collc synth: error: " << message << "\n";
  return 1;
}

std::string formatBytes(int64_t bytes) {
  const char *units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  int u = 0;
  while (u < 4 && bytes >= 1024 && bytes % 1024 == 0) {
    bytes /= 1024;
    ++u;
  }
  return std::to_string(bytes) + " " + units[u];
}

std::string joinNames(llvm::ArrayRef<const Generator *> gens) {
  std::string names;
  for (const Generator *g : gens)
    names += (names.empty() ? "" : ", ") + g->name.str();
  return names;
}

/// A generated program, checked and costed.
struct Candidate {
  const Generator *generator;
  std::string text;
  coll::ProgramCost cost;
};

/// Parses and verifies `text` as collc would; on failure the diagnostics
/// have been printed. Costs it on `topo`.
std::optional<coll::ProgramCost> checkProgram(const std::string &text, llvm::StringRef name,
                                              const coll::Topology &topo) {
  llvm::SourceMgr sourceMgr;
  sourceMgr.AddNewSourceBuffer(llvm::MemoryBuffer::getMemBufferCopy(text, name), llvm::SMLoc());
  DialectRegistry registry;
  registry.insert<coll::CollDialect>();
  MLIRContext context(registry, MLIRContext::Threading::DISABLED);
  context.loadAllAvailableDialects();
  context.printOpOnDiagnostic(false);
  SourceMgrDiagnosticHandler handler(sourceMgr, &context);
  TimingScope timing;
  std::string unused;
  OwningOpRef<ModuleOp> module =
      coll::importColl(sourceMgr, &context, coll::ElaborateOptions{}, timing, &unused);
  if (!module)
    return std::nullopt;
  coll::CollLoweringOptions lowering;
  lowering.to = coll::LoweringStage::GlobalView;
  PassManager pm(&context);
  coll::buildCollLoweringPipeline(pm, lowering);
  if (failed(pm.run(*module)))
    return std::nullopt;
  auto alg = *module->getOps<coll::AlgorithmOp>().begin();
  return coll::estimateProgram(alg, topo, double(messageBytes));
}

std::optional<Candidate> build(const Generator &g, const Target &target,
                               const coll::Topology &topo) {
  std::string text = g.generate(target);
  std::optional<coll::ProgramCost> cost = checkProgram(text, "synth:" + g.name.str(), topo);
  // A generator's bug, or a rank count beyond the front end's limits: the
  // diagnostics above say which.
  if (!cost) {
    llvm::errs() << "collc synth: error: the " << g.name << " program for " << target.ranks
                 << " ranks does not compile\n";
    return std::nullopt;
  }
  return Candidate{&g, std::move(text), *cost};
}

std::string describeCost(const coll::ProgramCost &cost) {
  std::string s;
  llvm::raw_string_ostream os(s);
  os << llvm::format("%.1f", cost.micros) << " us (" << stringifyProtocol(cost.protocol) << ", "
     << cost.steps << (cost.steps == 1 ? " step)" : " steps)");
  return s;
}

/// The comment above the program: the command, the machine, the choice.
std::string header(const Candidate &chosen, llvm::ArrayRef<Candidate> considered,
                   const Target &target, const coll::Topology &topo) {
  std::string s;
  llvm::raw_string_ostream os(s);
  llvm::StringRef collective = stringifyCollective(target.collective);
  os << "// Generated by: collc synth " << collective << " --topology " << topologySpec
     << " --ranks " << target.ranks;
  if (target.collective == coll::Collective::broadcast ||
      target.collective == coll::Collective::reduce)
    os << " --root " << target.root;
  os << " --algorithm " << chosen.generator->name << "\n"
     << "// Machine: " << topo.name << ", " << topo.nodes << " node" << (topo.nodes == 1 ? "" : "s")
     << " of " << topo.gpusPerNode << " GPUs; " << target.ranks
     << " ranks (the estimate puts rank r on GPU r).\n"
     << "// Algorithm: " << chosen.generator->name << ", " << chosen.generator->summary << ".\n"
     << "// Alpha-beta estimate at " << formatBytes(messageBytes)
     << " per rank: " << describeCost(chosen.cost) << ".\n";
  if (considered.size() > 1) {
    os << "// Chosen as the cheapest at that size (us) of:";
    for (const Candidate &c : considered)
      os << " " << c.generator->name << " " << llvm::format("%.1f", c.cost.micros) << ",";
    s.back() = '.';
    os << "\n";
  }
  os << "// Compile with: collc FILE --topology " << topologySpec << "\n\n";
  return s;
}

} // namespace

bool collc::synthRequested() { return bool(synthCommand); }

int collc::runSynth() {
  std::optional<coll::Collective> collective = parseCollective(collectiveName);
  if (!collective) {
    llvm::SmallVector<llvm::StringRef> names;
    for (int i = 0; i <= int(coll::Collective::reduce); ++i)
      names.push_back(stringifyCollective(coll::Collective(i)));
    std::string hint = coll::didYouMean(collectiveName, names);
    return fail("unknown collective '" + collectiveName + "'" +
                (hint.empty() ? "; expected one of " + llvm::join(names, ", ") : hint));
  }
  if (topologySpec.empty())
    return fail("--topology is required: a preset (" + llvm::join(coll::presetNames(), ", ") +
                ") or a JSON file");
  llvm::Expected<coll::Topology> topo = coll::loadTopology(topologySpec);
  if (!topo)
    return fail("topology: " + llvm::toString(topo.takeError()));
  std::optional<int64_t> bytes = coll::parseCount(messageSizeText);
  if (!bytes)
    return fail("--message-size must be a number of bytes (K, M, G may follow), not " +
                messageSizeText);
  messageBytes = *bytes;

  Target target;
  target.collective = *collective;
  target.ranks = rankCount.getNumOccurrences() ? int64_t(rankCount) : topo->size();
  // A bare preset grows to the nodes the ranks need, as collc's placement
  // does.
  if (target.ranks > topo->size() && !llvm::StringRef(topologySpec).contains(':') &&
      llvm::is_contained(coll::presetNames(), topologySpec)) {
    int64_t nodes = (target.ranks + topo->gpusPerNode - 1) / topo->gpusPerNode;
    topo = coll::presetTopology(topologySpec + ":nodes=" + std::to_string(nodes));
    if (!topo)
      return fail("topology: " + llvm::toString(topo.takeError()));
  }
  if (target.ranks < 2)
    return fail("--ranks " + llvm::Twine(target.ranks) + ": a collective needs at least 2 ranks");
  if (target.ranks > topo->size())
    return fail("topology " + topo->name + " has " + llvm::Twine(topo->size()) +
                " GPUs, fewer than " + llvm::Twine(target.ranks) +
                " ranks; give a larger one (a preset takes :nodes=N)");
  // Hierarchical forms split ranks into NVLink domains: a node, or a rack.
  target.gpusPerNode = topo->nvlink == coll::Topology::NVLinkKind::None
                           ? topo->gpusPerNode
                           : std::max(topo->gpusPerNode, topo->nvlinkDomain);
  bool rooted =
      *collective == coll::Collective::broadcast || *collective == coll::Collective::reduce;
  if (rootRank.getNumOccurrences() && !rooted)
    return fail("--root applies to broadcast and reduce, not " + collectiveName);
  if (rootRank < 0 || rootRank >= target.ranks)
    return fail("--root " + llvm::Twine(rootRank.getValue()) + " is not a rank of 0 .. " +
                llvm::Twine(target.ranks - 1));
  target.root = rootRank;

  // The generators that serve this collective, and those of them that serve
  // this rank count.
  llvm::SmallVector<const Generator *> serving, applicable;
  for (const Generator &g : generators())
    if (g.serves(*collective)) {
      serving.push_back(&g);
      if (g.refuse(target).empty())
        applicable.push_back(&g);
    }
  if (!algorithmName.empty()) {
    const Generator *g = findGenerator(algorithmName);
    if (!g) {
      llvm::SmallVector<llvm::StringRef> names;
      for (const Generator &each : generators())
        names.push_back(each.name);
      std::string hint = coll::didYouMean(algorithmName, names);
      return fail("unknown algorithm '" + algorithmName + "'" +
                  (hint.empty() ? "; the algorithms for " + stringifyCollective(*collective) +
                                      " are " + joinNames(serving)
                                : hint));
    }
    if (!g->serves(*collective))
      return fail(g->name + " does not implement " + stringifyCollective(*collective) +
                  "; the algorithms for it are " + joinNames(serving));
    if (std::string why = g->refuse(target); !why.empty())
      return fail(why);
    applicable = {g};
  }

  llvm::SmallVector<Candidate> candidates;
  for (const Generator *g : applicable) {
    std::optional<Candidate> c = build(*g, target, *topo);
    if (!c)
      return 1;
    candidates.push_back(std::move(*c));
  }
  if (candidates.empty())
    return fail("no algorithm serves " + stringifyCollective(*collective) + " on " +
                llvm::Twine(target.ranks) + " ranks");

  std::string error;
  auto output = openOutputFile(outputPath, &error);
  if (!output)
    return fail(error);
  llvm::raw_ostream &os = output->os();
  if (listOnly) {
    for (const Candidate &c : candidates)
      os << llvm::left_justify(c.generator->name, 20) << " "
         << llvm::left_justify(describeCost(c.cost), 28) << " " << c.generator->summary << "\n";
  } else {
    const Candidate *best = &candidates.front();
    for (const Candidate &c : candidates)
      if (c.cost.micros < best->cost.micros)
        best = &c;
    os << header(*best, candidates, target, *topo) << best->text;
  }
  output->keep();
  return 0;
}
