//===- HierDirectGenerators.cpp - Two levels, direct on the rails ---------===//
//
// As HierGenerators.cpp inside each node, but across nodes each GPU sends
// straight to the same-index GPU of every other node instead of passing
// blocks around a ring: each NIC carries the same bytes, and a loop waits
// for one network hop instead of nodes - 1 of them, which a ring's loop
// must wait in turn. The cost is nodes - 1 connections per GPU on its rail,
// so rings stay the choice for many nodes. Each phase has a channel of its
// own, so that one loop's phases overlap the next loop's.
//
//===----------------------------------------------------------------------===//
#include "lib/Synthesis/Families.h"

#include "llvm/ADT/Twine.h"

using namespace coll;
using namespace coll::synth;

std::string coll::synth::refuseHierarchicalDirect(const Target &t) {
  return refuseTwoLevels(t, "hierarchical-direct");
}

std::string coll::synth::hierarchicalDirect(const Target &t) {
  std::string params = ("nodes = " + llvm::Twine(t.ranks / t.gpusPerNode) +
                        ", gpus = " + llvm::Twine(t.gpusPerNode) + ", ranks = nodes * gpus")
                           .str();
  static const char *shape = R"(  let N = nodes; let G = gpus;
  assert R == N * G, "ranks must equal nodes * gpus";
)";
  switch (t.collective) {
  case Collective::allreduce:
    return program(t, "hierarchical_direct",
                   "// Hierarchical allreduce, direct on the rails: GPU g of each node\n"
                   "// reduces shard g (chunks g*N .. g*N + N) over its node; piece m of\n"
                   "// shard g is reduced on node m from every node's GPU g, which sends\n"
                   "// it back to them; GPU g shares the result with its node.\n",
                   "ranks", true, std::string(shape) + R"(  @channel(0) for n in 0 .. N {
    for g in 0 .. G {
      in[n * G + g][g * N .. g * N + N] = reduce(j in 0 .. G) in[n * G + j][g * N .. g * N + N];
    }
  }
  @channel(1) for g in 0 .. G {    // rail g: piece m is reduced on node m
    for m in 0 .. N {
      in[m * G + g][g * N + m] = reduce(k in 0 .. N) in[k * G + g][g * N + m];
    }
  }
  @channel(2) for g in 0 .. G {
    for m in 0 .. N {
      for d in 1 .. N {
        in[((m + d) % N) * G + g][g * N + m] = in[m * G + g][g * N + m];
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
    return program(t, "hierarchical_direct",
                   "// Hierarchical reduce-scatter, in place, direct on the rails: GPU g of\n"
                   "// each node reduces over its node every block bound for rail g (blocks\n"
                   "// m*G + g), then GPU g of node m reduces block m*G + g from every\n"
                   "// node's GPU g.\n",
                   "", true, std::string(shape) + R"(  @channel(0) for n in 0 .. N {
    for g in 0 .. G {
      for m in 0 .. N {
        let b = m * G + g;
        in[n * G + g][b] = reduce(j in 0 .. G) in[n * G + j][b];
      }
    }
  }
  @channel(1) for g in 0 .. G {
    for m in 0 .. N {
      let b = m * G + g;
      in[m * G + g][b] = reduce(k in 0 .. N) in[k * G + g][b];
    }
  }
)",
                   params);
  case Collective::allgather:
    return program(t, "hierarchical_direct",
                   "// Hierarchical all-gather, in place, direct on the rails: GPU g of node\n"
                   "// m sends its slot to GPU g of every other node, then GPU g of every\n"
                   "// node shares the rail-g slots with its node.\n",
                   "", true, std::string(shape) + R"(  @channel(0) for g in 0 .. G {
    for m in 0 .. N {
      let b = m * G + g;
      for d in 1 .. N {
        out[((m + d) % N) * G + g][b] = out[m * G + g][b];
      }
    }
  }
  @channel(1) for n in 0 .. N {
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
