//===- HierGenerators.cpp - Two levels: inside nodes, then across on rails ===//
//
// Rank r is GPU r % gpus of node r / gpus. Inside a node (NVLink) each GPU
// reduces or shares its shard directly with its node's GPUs; across nodes
// only same-index GPUs talk, so each NIC carries 1/gpus of the data and no
// traffic crosses rails. `hierarchical` passes blocks around a ring per
// rail; `hierarchical-direct` sends them straight to every other node's
// GPU on the rail: the same bytes on each NIC, and a loop waits for one
// network hop instead of nodes - 1 in turn, for nodes - 1 connections per
// GPU (so rings stay the choice for many nodes). The two share their
// phases inside the nodes. `hierarchical-direct` also serves all-to-all,
// whose blocks are gathered per rail inside the node first.
// `hierarchical-halving` (allreduce, power-of-two nodes) runs recursive
// halving and doubling on each rail: the same bytes on each NIC in
// 2 log2(nodes) network hops, one peer per hop, so it scales to many nodes;
// its reduce-scatter is the first half, its all-gather the second.
// `hierarchical-grid` (all-to-all) routes each rail's blocks in two
// network hops, over a grid of rows x cols nodes: rows - 1 + cols - 1
// peers a GPU instead of nodes - 1, for twice the network bytes, so that
// all-to-all lowers where a threadblock per rail peer would not fit.
//
//===----------------------------------------------------------------------===//
#include "lib/Synthesis/Families.h"

#include "llvm/ADT/Twine.h"
#include "llvm/Support/MathExtras.h"

using namespace coll;
using namespace coll::synth;

std::string coll::synth::refuseTwoLevels(const Target &t, llvm::StringRef algorithm) {
  int64_t g = t.gpusPerNode;
  std::string why;
  if (g < 2)
    why = "the topology's nodes have one GPU each";
  else if (t.ranks % g)
    why = (llvm::Twine(t.ranks) + " ranks do not fill whole nodes of " + llvm::Twine(g) + " GPUs")
              .str();
  else if (t.ranks / g < 2)
    why = (llvm::Twine(t.ranks) + " ranks fill one node of " + llvm::Twine(g) + " GPUs").str();
  else
    return "";
  return algorithm.str() + " needs at least two nodes of at least two GPUs each, but " + why +
         "; " + (t.collective == Collective::allgather ? "bruck" : "ring") + " works for any";
}

std::string coll::synth::refuseHierarchical(const Target &t) {
  return refuseTwoLevels(t, "hierarchical");
}

std::string coll::synth::refuseHierarchicalDirect(const Target &t) {
  return refuseTwoLevels(t, "hierarchical-direct");
}

/// The rows of hierarchical-grid's grid of `nodes`: the largest divisor
/// not above the square root, so that rows - 1 + cols - 1 peers is least;
/// 1 where no grid of at least 2 x 2 exists.
static int64_t gridRows(int64_t nodes) {
  int64_t rows = 1;
  for (int64_t a = 2; a * a <= nodes; ++a)
    if (nodes % a == 0)
      rows = a;
  return rows;
}

std::string coll::synth::refuseHierarchicalGrid(const Target &t) {
  std::string why = refuseTwoLevels(t, "hierarchical-grid");
  if (why.empty() && gridRows(t.ranks / t.gpusPerNode) < 2)
    why = "hierarchical-grid needs a node count with a divisor from 2 to its square root, and " +
          std::to_string(t.ranks / t.gpusPerNode) + " has none; hierarchical-direct works for any";
  return why;
}

std::string coll::synth::refuseHierarchicalHalving(const Target &t) {
  std::string why = refuseTwoLevels(t, "hierarchical-halving");
  if (why.empty() && !llvm::isPowerOf2_64(uint64_t(t.ranks / t.gpusPerNode)))
    why = "hierarchical-halving needs a power-of-two node count, and " +
          std::to_string(t.ranks / t.gpusPerNode) + " is not one; hierarchical works for any";
  return why;
}

namespace {

/// The parameters of a two-level program: `t`'s nodes and GPUs a node.
std::string twoLevelParams(const Target &t) {
  return ("nodes = " + llvm::Twine(t.ranks / t.gpusPerNode) +
          ", gpus = " + llvm::Twine(t.gpusPerNode) + ", ranks = nodes * gpus")
      .str();
}

const char *const kShape = R"(  let N = nodes; let G = gpus;
  assert R == N * G, "ranks must equal nodes * gpus";
)";

// Allreduce, inside the nodes: GPU g reduces shard g, then shares it.
const char *const kReduceShard = R"(  @channel(0) for n in 0 .. N {
    for g in 0 .. G {
      in[n * G + g][g * N .. g * N + N] = reduce(j in 0 .. G) in[n * G + j][g * N .. g * N + N];
    }
  }
)";
const char *const kShareShard = R"(  @channel(3) for n in 0 .. N {
    for g in 0 .. G {
      for j in 0 .. G {
        if j != g {
          in[n * G + j][g * N .. g * N + N] = in[n * G + g][g * N .. g * N + N];
        }
      }
    }
  }
)";

// All-to-all, inside the nodes: GPU g gathers from its node every block
// bound for rail g (for node n itself, straight into out).
const char *const kGatherRails =
    R"(  scratch t[R];                    // t[n*G + g][m*G + j]: GPU j of node n, for GPU g of node m
  @channel(0) for n in 0 .. N {
    for g in 0 .. G {
      for j in 0 .. G {
        for d in 0 .. N {
          let m = (n + d) % N;
          if m == n {
            out[n * G + g][n * G + j] = in[n * G + j][n * G + g];
          } else {
            t[n * G + g][m * G + j] = in[n * G + j][m * G + g];
          }
        }
      }
    }
  }
)";

// Reduce-scatter and all-gather, inside the nodes: GPU g reduces, or
// shares, every block of rail g (blocks m*G + g). `at` annotates the phase.
// Node n takes the blocks in the order the ring across the nodes sends
// (n - 1 first) or delivers them (n first, then n - 1), so that every node
// runs the same steps, shifted.
std::string reduceRailBlocks(llvm::StringRef at) {
  return ("  " + at + R"(for n in 0 .. N {
    for g in 0 .. G {
      for d in 0 .. N {
        let m = (n + N - 1 - d) % N;
        let b = m * G + g;
        in[n * G + g][b] = reduce(j in 0 .. G) in[n * G + j][b];
      }
    }
  }
)")
      .str();
}
/// `order`: the node of the d-th block node n shares, as the rails deliver
/// them (a ring: n first, then n - 1).
std::string shareRailBlocks(llvm::StringRef at, llvm::StringRef order = "(n + N - d) % N") {
  return ("  " + at + R"(for n in 0 .. N {
    for g in 0 .. G {
      for j in 0 .. G {
        if j != g {
          for d in 0 .. N {
            let m = )" +
          order + R"(;
            out[n * G + j][m * G + g] = out[n * G + g][m * G + g];
          }
        }
      }
    }
  }
)")
      .str();
}

/// The program of `t` over two levels, across the nodes by rings or
/// `direct`ly.
std::string twoLevels(const Target &t, bool direct) {
  std::string params = twoLevelParams(t);
  const char *name = direct ? "hierarchical_direct" : "hierarchical";
  switch (t.collective) {
  case Collective::allreduce:
    return program(
        t, name,
        direct ? "// Hierarchical allreduce, direct on the rails: GPU g of each node\n"
                 "// reduces shard g (chunks g*N .. g*N + N) over its node; piece m of\n"
                 "// shard g is reduced on node m from every node's GPU g, which sends\n"
                 "// it back to them; GPU g shares the result with its node. Each phase\n"
                 "// has a channel of its own, so that one loop's phases overlap the\n"
                 "// next loop's instead of queueing behind them on the same\n"
                 "// threadblocks.\n"
               : "// Hierarchical allreduce: GPU g of each node reduces shard g\n"
                 "// (chunks g*N .. g*N + N) over its node, the N pieces of shard g run\n"
                 "// a ring allreduce across the nodes on rail g, and GPU g shares the\n"
                 "// result with its node. Each phase has a channel of its own, so that\n"
                 "// one loop's phases overlap the next loop's instead of queueing\n"
                 "// behind them on the same threadblocks.\n",
        "ranks", true,
        std::string(kShape) + kReduceShard +
            (direct ? R"(  @channel(1) for g in 0 .. G {    // rail g: piece m is reduced on node m
    for m in 0 .. N {
      in[m * G + g][g * N + m] = reduce(d in 0 .. N) in[((m + d) % N) * G + g][g * N + m];
    }
  }
  @channel(2) for g in 0 .. G {
    for m in 0 .. N {
      for d in 1 .. N {
        in[((m + d) % N) * G + g][g * N + m] = in[m * G + g][g * N + m];
      }
    }
  }
)"
                    : R"(  for g in 0 .. G {                // rail g: piece m starts on node m + 1
    for m in 0 .. N {
      let c = g * N + m;
      @channel(1) for s in 1 .. N {
        in[((m + s + 1) % N) * G + g][c] += in[((m + s) % N) * G + g][c];
      }
      @channel(2) for s in 0 .. N - 1 {
        in[((m + s + 1) % N) * G + g][c] = in[((m + s) % N) * G + g][c];
      }
    }
  }
)") + kShareShard,
        params);
  case Collective::reducescatter:
    return program(
        t, name,
        direct ? "// Hierarchical reduce-scatter, in place, direct on the rails: GPU g of\n"
                 "// each node reduces over its node every block bound for rail g (blocks\n"
                 "// m*G + g), then GPU g of node m reduces block m*G + g from every\n"
                 "// node's GPU g.\n"
               : "// Hierarchical reduce-scatter, in place: GPU g of each node reduces\n"
                 "// over its node every block bound for rail g (blocks m*G + g), then\n"
                 "// a ring across the nodes on rail g brings block m*G + g, complete,\n"
                 "// to node m.\n",
        "", true,
        std::string(kShape) + reduceRailBlocks(direct ? "@channel(0) " : "") +
            (direct
                 ? R"(  @channel(1) for g in 0 .. G {
    for m in 0 .. N {
      let b = m * G + g;
      in[m * G + g][b] = reduce(d in 0 .. N) in[((m + d) % N) * G + g][b];
    }
  }
)"
                 : R"(  for g in 0 .. G {                // rail g: block m*G + g starts on node m + 1
    for m in 0 .. N {
      let b = m * G + g;
      for s in 1 .. N {
        in[((m + s + 1) % N) * G + g][b] += in[((m + s) % N) * G + g][b];
      }
    }
  }
)"),
        params);
  case Collective::allgather:
    return program(
        t, name,
        direct ? "// Hierarchical all-gather, in place, direct on the rails: GPU g of node\n"
                 "// m sends its slot to GPU g of every other node, then GPU g of every\n"
                 "// node shares the rail-g slots with its node.\n"
               : "// Hierarchical all-gather, in place: the slot of GPU g of node m goes\n"
                 "// around the nodes on rail g, then GPU g of every node shares the\n"
                 "// rail-g slots with its node.\n",
        "", true,
        std::string(kShape) +
            (direct ? R"(  @channel(0) for g in 0 .. G {
    for m in 0 .. N {
      let b = m * G + g;
      for d in 1 .. N {
        out[((m + d) % N) * G + g][b] = out[m * G + g][b];
      }
    }
  }
)"
                    : R"(  for g in 0 .. G {
    for m in 0 .. N {
      let b = m * G + g;
      for s in 0 .. N - 1 {
        out[((m + s + 1) % N) * G + g][b] = out[((m + s) % N) * G + g][b];
      }
    }
  }
)") + shareRailBlocks(direct ? "@channel(1) " : ""),
        params);
  case Collective::alltoall:
    if (!direct)
      return "";
    return program(t, name,
                   "// Hierarchical all-to-all, direct on the rails (as NCCL's PXN): inside\n"
                   "// each node, GPU j hands GPU g every block bound for rail g; then GPU g\n"
                   "// of node n sends each other node m, on rail g, the G blocks its node has\n"
                   "// for m's GPU g, in one step. Each GPU talks to nodes - 1 peers across\n"
                   "// the network instead of ranks - gpus, one step of G blocks each.\n",
                   "", false,
                   std::string(kShape) + kGatherRails + R"(  @channel(1) for g in 0 .. G {
    for n in 0 .. N {
      for d in 1 .. N {
        let m = (n + d) % N;
        out[m * G + g][n * G .. n * G + G] = t[n * G + g][m * G .. m * G + G];
      }
    }
  }
)",
                   params);
  default:
    return "";
  }
}

} // namespace

std::string coll::synth::hierarchical(const Target &t) { return twoLevels(t, false); }

std::string coll::synth::hierarchicalDirect(const Target &t) { return twoLevels(t, true); }

std::string coll::synth::hierarchicalGrid(const Target &t) {
  if (t.collective != Collective::alltoall)
    return "";
  // Node offsets factor as x*B + y (x < rows, y < B): the first hop moves
  // a block x*B nodes on, the second y, so that every node runs the same
  // steps shifted and the plan folds onto one node.
  return program(t, "hierarchical_grid",
                 "// Hierarchical all-to-all in two hops on the rails: inside each node,\n"
                 "// GPU j hands GPU g every block bound for rail g (as hierarchical-direct);\n"
                 "// with B = nodes / rows, GPU g of node n sends node n + x*B (x = 1 ..\n"
                 "// rows - 1) the blocks for nodes n + x*B .. n + x*B + B - 1, and each\n"
                 "// node p then sends node p + y (y = 1 .. B - 1) the blocks for it from\n"
                 "// nodes p, p - B, ... Each GPU talks to rows - 1 + B - 1 peers across\n"
                 "// the network instead of nodes - 1, and sends most blocks twice.\n",
                 "", false,
                 std::string(kShape) +
                     R"(  let A = rows; let B = N / A;
  assert A > 1 && B > 1 && A * B == N, "rows must split the nodes into a grid of at least 2 x 2";
  scratch u[R];                    // u[p*G + g][(x*B + y)*G + j]: GPU j of node p - x*B, for node p + y
)" + kGatherRails + R"(  @channel(1) for g in 0 .. G {
    for n in 0 .. N {
      for x in 1 .. A {
        let p = (n + x * B) % N;
        for y in 0 .. B {
          let m = (p + y) % N;
          u[p * G + g][(x * B + y) * G .. (x * B + y + 1) * G] = t[n * G + g][m * G .. m * G + G];
        }
      }
    }
  }
  @channel(2) for g in 0 .. G {
    for p in 0 .. N {
      for y in 0 .. B {
        let m = (p + y) % N;
        for x in 0 .. A {
          let s = (p + N - x * B) % N;
          if x != 0 {
            out[m * G + g][s * G .. s * G + G] = u[p * G + g][(x * B + y) * G .. (x * B + y + 1) * G];
          } else {
            if y != 0 {
              out[m * G + g][s * G .. s * G + G] = t[p * G + g][m * G .. m * G + G];
            }
          }
        }
      }
    }
  }
)",
                 twoLevelParams(t) +
                     ", rows = " + std::to_string(gridRows(t.ranks / t.gpusPerNode)));
}

std::string coll::synth::hierarchicalHalving(const Target &t) {
  std::string params = twoLevelParams(t);
  // In place over whole nodes, a power-of-two count of them.
  auto onRails = [&](llvm::StringRef name, llvm::StringRef comment, const std::string &body) {
    return program(t, name, comment, "", true,
                   std::string(kShape) + "  assert ispow2(N), \"" + name.str() +
                       " needs a power-of-two node count\";\n" + body,
                   params);
  };
  if (t.collective == Collective::allgather)
    return onRails("hierarchical_doubling",
                   "// Hierarchical all-gather, in place, by recursive doubling on the rails:\n"
                   "// step k pairs node n with node n ^ 2^k on rail g, which swap the\n"
                   "// rail-g blocks (m*G + g) they hold, 2^k each; then GPU g of every node\n"
                   "// shares the rail-g blocks with its node, in the order they arrived.\n"
                   "// Orders are xors of the node, so every node runs the same steps.\n",
                   R"(  @channel(0) for k in 0 .. log2(N) {
    let d = 1 << k;
    for n in 0 .. N {
      for g in 0 .. G {
        for i in 0 .. d {
          let b = ((n / d) * d + (i ^ (n % d))) * G + g;
          out[(n ^ d) * G + g][b] = out[n * G + g][b];
        }
      }
    }
  }
)" + shareRailBlocks("@channel(1) ", "n ^ d"));
  if (t.collective == Collective::reducescatter)
    return onRails("hierarchical_halving",
                   "// Hierarchical reduce-scatter, in place, by recursive halving on the\n"
                   "// rails: GPU g of each node reduces the rail-g blocks (m*G + g) over its\n"
                   "// node; then step k pairs node n with node n ^ 2^k on rail g, and node n\n"
                   "// adds its partner's copies of the blocks m = n mod 2^(k+1), until it\n"
                   "// holds its own complete. Orders are xors of the node, so every node\n"
                   "// runs the same steps.\n",
                   R"(  @channel(0) for n in 0 .. N {
    for g in 0 .. G {
      for d in 0 .. N {
        let b = (n ^ d) * G + g;
        in[n * G + g][b] = reduce(j in 0 .. G) in[n * G + j][b];
      }
    }
  }
  @channel(1) for k in 0 .. log2(N) {
    let d = 1 << k;
    for n in 0 .. N {
      for g in 0 .. G {
        for i in 0 .. N / (2 * d) {
          let b = ((i ^ (n / (2 * d))) * 2 * d + n % (2 * d)) * G + g;
          in[n * G + g][b] += in[(n ^ d) * G + g][b];
        }
      }
    }
  }
)");
  if (t.collective != Collective::allreduce)
    return "";
  // Chunk g*N + m is piece m of shard g. Every order below is an xor of
  // the node, so that node n ^ x runs node n's steps on chunks m ^ x: the
  // plan is the same on every node, as the simulator's folding needs.
  return program(t, "hierarchical_halving",
                 "// Hierarchical allreduce by recursive halving on the rails: GPU g of\n"
                 "// each node reduces shard g (chunks g*N .. g*N + N) over its node, in\n"
                 "// steps of at most 8 chunks; on rail g, step k pairs node n with node\n"
                 "// n ^ 2^k, and each keeps half of what it holds (the pieces m = n mod\n"
                 "// 2^(k+1)) and adds its partner's copy, until node n holds piece n\n"
                 "// complete; recursive doubling gathers the pieces back, and GPU g\n"
                 "// shares shard g with its node. 2 log2(N) network hops, each NIC\n"
                 "// carrying 1/gpus of the buffer; each phase on a channel of its own.\n",
                 "ranks", true,
                 std::string(kShape) +
                     R"(  assert ispow2(N), "hierarchical halving needs a power-of-two node count";
  let W = min(N, 8);               // chunks a step inside the node
  @channel(0) for n in 0 .. N {
    for g in 0 .. G {
      for i in 0 .. N / W {
        let c = g * N + (i ^ (n / W)) * W;
        in[n * G + g][c .. c + W] = reduce(j in 0 .. G) in[n * G + j][c .. c + W];
      }
    }
  }
  @channel(1) for k in 0 .. log2(N) {
    let d = 1 << k;
    for n in 0 .. N {
      for g in 0 .. G {
        for i in 0 .. N / (2 * d) {
          let c = g * N + (i ^ (n / (2 * d))) * 2 * d + n % (2 * d);
          in[n * G + g][c] += in[(n ^ d) * G + g][c];
        }
      }
    }
  }
  @channel(2) for k in 0 .. log2(N) {
    let d = N >> (k + 1);
    for n in 0 .. N {
      for g in 0 .. G {
        for i in 0 .. N / (2 * d) {
          let c = g * N + (i ^ (n / (2 * d))) * 2 * d + n % (2 * d);
          in[(n ^ d) * G + g][c] = in[n * G + g][c];
        }
      }
    }
  }
  @channel(3) for n in 0 .. N {
    for g in 0 .. G {
      for i in 0 .. N / W {
        let c = g * N + (i ^ (n / W)) * W;
        for j in 0 .. G {
          if j != g {
            in[n * G + j][c .. c + W] = in[n * G + g][c .. c + W];
          }
        }
      }
    }
  }
)",
                 params);
}
