//===- Generators.cpp - The registry of algorithm generators --------------===//
//
// One row per family: its name, the collectives it serves, when it cannot
// serve a rank count (and what to use instead), and its program.
//
//===----------------------------------------------------------------------===//
#include "lib/Synthesis/Families.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/raw_ostream.h"

using namespace coll;
using namespace coll::synth;

namespace {

using C = Collective;
constexpr C kRing[] = {C::allreduce, C::reducescatter, C::allgather, C::broadcast, C::reduce};
constexpr C kBidirRing[] = {C::allreduce, C::reducescatter, C::allgather};
constexpr C kMultiRing[] = {C::allreduce, C::reducescatter, C::allgather};
constexpr C kDoubling[] = {C::allreduce, C::allgather};
constexpr C kHalving[] = {C::allreduce, C::reducescatter};
constexpr C kBruck[] = {C::reducescatter, C::allgather, C::alltoall};
constexpr C kPat[] = {C::reducescatter, C::allgather};
constexpr C kPairwise[] = {C::alltoall};
constexpr C kOneShot[] = {C::allreduce, C::reducescatter, C::allgather, C::broadcast, C::reduce};
constexpr C kTwoShot[] = {C::allreduce};
constexpr C kHier[] = {C::allreduce, C::reducescatter, C::allgather};
constexpr C kHierDirect[] = {C::allreduce, C::reducescatter, C::allgather, C::alltoall};
constexpr C kHierHalving[] = {C::allreduce, C::reducescatter, C::allgather};
constexpr C kHierGrid[] = {C::alltoall};
constexpr C kTree[] = {C::broadcast, C::reduce};
constexpr C kDoubleTree[] = {C::allreduce};

const Generator kGenerators[] = {
    {"ring", "one ring, R-1 steps per phase; bandwidth-optimal, latency linear in R", kRing,
     anyRanks, ring},
    {"bidir-ring",
     "two counter-rotating rings on channels 0 and 1, each on half the buffer; "
     "both directions of every link busy",
     kBidirRing, anyRanks, bidirRing},
    {"multi-ring",
     "k rings (default 2) over different rank orders, each on its own channel and "
     "1/k of the buffer; large messages where GPU pairs have links of their own",
     kMultiRing, refuseMultiRing, multiRing},
    {"recursive-doubling",
     "log2(R) pairwise exchanges of doubling distance; few steps, power-of-two ranks", kDoubling,
     [](const Target &t) { return needPowerOfTwo(t, "recursive-doubling"); }, recursiveDoubling},
    {"recursive-halving",
     "log2(R) halving exchanges (Rabenseifner: then doubling for allreduce); "
     "bandwidth-optimal in few steps, power-of-two ranks",
     kHalving, [](const Target &t) { return needPowerOfTwo(t, "recursive-halving"); },
     recursiveHalving},
    {"bruck", "ceil(log2 R) steps for any rank count; the small-message choice", kBruck, anyRanks,
     bruck},
    {"pat",
     "NCCL's PAT: shifted binomial trees, one peer per round, ceil(log2 R) rounds for "
     "any rank count; small and medium messages at scale",
     kPat, anyRanks, pat},
    {"pairwise", "one direct exchange per pair of ranks", kPairwise, anyRanks, pairwise},
    {"one-shot",
     "every rank reads (or the root writes) all peers at once: one step; NVLink "
     "multicast or peer windows where the topology has them",
     kOneShot, anyRanks, oneShot},
    {"two-shot", "direct reduce-scatter then direct all-gather: two steps, half one-shot's traffic",
     kTwoShot, anyRanks, twoShot},
    {"hierarchical", "direct steps inside each node, a ring across the nodes on each rail", kHier,
     refuseHierarchical, hierarchical},
    {"hierarchical-direct",
     "direct steps inside each node, and across the nodes on each rail: one network "
     "hop per loop instead of a ring's nodes - 1",
     kHierDirect, refuseHierarchicalDirect, hierarchicalDirect},
    {"hierarchical-halving",
     "direct steps inside each node, recursive halving and doubling across the nodes on "
     "each rail (reduce-scatter: halving; all-gather: doubling): log2(nodes) network hops a "
     "phase at full bandwidth; power-of-two nodes",
     kHierHalving, refuseHierarchicalHalving, hierarchicalHalving},
    {"hierarchical-grid",
     "direct steps inside each node, two hops across the nodes on each rail over a grid of "
     "rows x cols nodes: rows + cols - 2 network peers a GPU instead of nodes - 1, at twice "
     "the network bytes; all-to-all at many nodes",
     kHierGrid, refuseHierarchicalGrid, hierarchicalGrid},
    {"tree", "binomial tree from or to the root: ceil(log2 R) steps", kTree, anyRanks,
     binomialTree},
    {"double-binary-tree",
     "two complementary binary trees, each reducing and broadcasting half the buffer "
     "(NCCL's tree); logarithmic latency at full bandwidth",
     kDoubleTree, anyRanks, doubleBinaryTree},
};

/// The alternative that serves any rank count, for a refusal.
llvm::StringRef anyRankAlternative(Collective c) {
  return c == Collective::allgather ? "bruck" : "ring";
}

} // namespace

llvm::ArrayRef<Generator> coll::synth::generators() { return kGenerators; }

const Generator *coll::synth::findGenerator(llvm::StringRef name) {
  for (const Generator &g : kGenerators)
    if (g.name == name)
      return &g;
  return nullptr;
}

std::optional<Collective> coll::synth::parseCollective(llvm::StringRef name) {
  std::string plain;
  for (char c : name)
    if (c != '-' && c != '_')
      plain += llvm::toLower(c);
  return symbolizeCollective(plain);
}

std::string coll::synth::anyRanks(const Target &) { return ""; }

std::string coll::synth::needPowerOfTwo(const Target &t, llvm::StringRef algorithm) {
  if (llvm::isPowerOf2_64(t.ranks))
    return "";
  return (algorithm + " needs a power-of-two rank count, and " + llvm::Twine(t.ranks) +
          " is not one; " + anyRankAlternative(t.collective) + " works for any")
      .str();
}

std::string coll::synth::program(const Target &t, llvm::StringRef name, llvm::StringRef comment,
                                 llvm::StringRef chunks, bool inplace, llvm::StringRef body,
                                 llvm::StringRef params) {
  bool rooted = t.collective == Collective::broadcast || t.collective == Collective::reduce;
  llvm::StringRef collective = stringifyCollective(t.collective);
  std::string text;
  llvm::raw_string_ostream os(text);
  os << comment << "algorithm " << name << "_" << collective << " : " << collective << "(";
  if (params.empty()) {
    os << "ranks = " << t.ranks;
    if (rooted)
      os << ", root = " << t.root;
  } else {
    os << params;
  }
  os << ")";
  if (!chunks.empty())
    os << " chunks(" << chunks << ")";
  if (inplace)
    os << " inplace";
  os << " {\n  let R = ranks;\n";
  if (rooted)
    os << "  assert root >= 0 && root < R, \"root must be a rank\";\n";
  os << body << "}\n";
  return text;
}
