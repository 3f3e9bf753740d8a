//===- HierGenerators.cpp - Two levels: inside nodes, then across on rails ===//
//
// Rank r is GPU r % gpus of node r / gpus. Inside a node (NVLink) each GPU
// reduces or shares its shard directly with its node's GPUs; across nodes
// only same-index GPUs talk, in a ring per rail, so each NIC carries 1/gpus
// of the data and no traffic crosses rails.
//
//===----------------------------------------------------------------------===//
#include "lib/Synthesis/Families.h"

#include "llvm/ADT/Twine.h"

using namespace coll;
using namespace coll::synth;

std::string coll::synth::refuseTwoLevels(const Target &t, llvm::StringRef algorithm) {
  int64_t g = t.gpusPerNode;
  std::string why;
  if (g < 2)
    why = "the topology's nodes have one GPU each";
  else if (t.ranks % g)
    why = (llvm::Twine(t.ranks) + " ranks do not fill whole nodes of " + llvm::Twine(g) +
           " GPUs")
              .str();
  else if (t.ranks / g < 2)
    why = (llvm::Twine(t.ranks) + " ranks fill one node of " + llvm::Twine(g) + " GPUs").str();
  else
    return "";
  return algorithm.str() + " needs at least two nodes of at least two GPUs each, but " + why +
         "; " + (t.collective == Collective::allgather ? "bruck" : "ring") +
         " works for any";
}

std::string coll::synth::refuseHierarchical(const Target &t) {
  return refuseTwoLevels(t, "hierarchical");
}

std::string coll::synth::hierarchical(const Target &t) {
  std::string params = ("nodes = " + llvm::Twine(t.ranks / t.gpusPerNode) +
                        ", gpus = " + llvm::Twine(t.gpusPerNode) + ", ranks = nodes * gpus")
                           .str();
  static const char *shape = R"(  let N = nodes; let G = gpus;
  assert R == N * G, "ranks must equal nodes * gpus";
)";
  switch (t.collective) {
  case Collective::allreduce:
    return program(t, "hierarchical",
                   "// Hierarchical allreduce: GPU g of each node reduces shard g\n"
                   "// (chunks g*N .. g*N + N) over its node, the N pieces of shard g run\n"
                   "// a ring allreduce across the nodes on rail g, and GPU g shares the\n"
                   "// result with its node. Each phase has a channel of its own, so that\n"
                   "// one loop's phases overlap the next loop's instead of queueing\n"
                   "// behind them on the same threadblocks.\n",
                   "ranks", true, std::string(shape) + R"(  @channel(0) for n in 0 .. N {
    for g in 0 .. G {
      in[n * G + g][g * N .. g * N + N] = reduce(j in 0 .. G) in[n * G + j][g * N .. g * N + N];
    }
  }
  for g in 0 .. G {                // rail g: piece m starts on node m + 1
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
  @channel(3) for n in 0 .. N {
    for g in 0 .. G {
      for j in 0 .. G {
        if j != g {
          in[n * G + j][g * N .. g * N + N] = in[n * G + g][g * N .. g * N + N];
        }
      }
    }
  }
)",
                   params);
  case Collective::reducescatter:
    return program(t, "hierarchical",
                   "// Hierarchical reduce-scatter, in place: GPU g of each node reduces\n"
                   "// over its node every block bound for rail g (blocks m*G + g), then\n"
                   "// a ring across the nodes on rail g brings block m*G + g, complete,\n"
                   "// to node m.\n",
                   "", true, std::string(shape) + R"(  for n in 0 .. N {
    for g in 0 .. G {
      for m in 0 .. N {
        let b = m * G + g;
        in[n * G + g][b] = reduce(j in 0 .. G) in[n * G + j][b];
      }
    }
  }
  for g in 0 .. G {                // rail g: block m*G + g starts on node m + 1
    for m in 0 .. N {
      let b = m * G + g;
      for s in 1 .. N {
        in[((m + s + 1) % N) * G + g][b] += in[((m + s) % N) * G + g][b];
      }
    }
  }
)",
                   params);
  case Collective::allgather:
    return program(t, "hierarchical",
                   "// Hierarchical all-gather, in place: the slot of GPU g of node m goes\n"
                   "// around the nodes on rail g, then GPU g of every node shares the\n"
                   "// rail-g slots with its node.\n",
                   "", true, std::string(shape) + R"(  for g in 0 .. G {
    for m in 0 .. N {
      let b = m * G + g;
      for s in 0 .. N - 1 {
        out[((m + s + 1) % N) * G + g][b] = out[((m + s) % N) * G + g][b];
      }
    }
  }
  for n in 0 .. N {
    for g in 0 .. G {
      for j in 0 .. G {
        if j != g {
          for m in 0 .. N {
            out[n * G + j][m * G + g] = out[n * G + g][m * G + g];
          }
        }
      }
    }
  }
)",
                   params);
  default:
    return "";
  }
}
