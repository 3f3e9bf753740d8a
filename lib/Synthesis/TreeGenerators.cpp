//===- TreeGenerators.cpp - Binomial trees and NCCL's double binary tree --===//
//
// Trees reach every rank in about log2(R) steps. A binomial tree serves
// broadcast and reduce; allreduce uses two binary trees at once, each on
// half the buffer, arranged so that a rank that is inner in one tree is a
// leaf in the other and every rank's links stay about equally loaded.
//
//===----------------------------------------------------------------------===//
#include "lib/Synthesis/Families.h"

using namespace coll;
using namespace coll::synth;

std::string coll::synth::binomialTree(const Target &t) {
  if (t.collective == Collective::broadcast)
    return program(t, "tree",
                   "// Binomial-tree broadcast, in place: in the round of distance d\n"
                   "// (largest first) every virtual rank v that is a multiple of 2d sends\n"
                   "// to v + d; virtual rank v is rank (v + root) % R. ceil(log2 R) rounds.\n",
                   "", true, R"(  for j in 0 .. 62 {
    let d = 1 << (61 - j);           // 2^61, ..., 2, 1; skipped while >= R
    if d < R {
      for v in 0 .. R step 2 * d {
        if v + d < R {
          in[(v + d + root) % R][0] = in[(v + root) % R][0];
        }
      }
    }
  }
)");
  return program(t, "tree",
                 "// Binomial-tree reduce, in place: in the round of distance d (smallest\n"
                 "// first) every virtual rank v that is a multiple of 2d adds the partial\n"
                 "// of v + d; virtual rank v is rank (v + root) % R. ceil(log2 R) rounds.\n",
                 "", true, R"(  for k in 0 .. 62 {
    let d = 1 << k;                  // 1, 2, 4, ... while < R
    if d < R {
      for v in 0 .. R step 2 * d {
        if v + d < R {
          in[(v + root) % R][0] += in[(v + d + root) % R][0];
        }
      }
    }
  }
)");
}

std::string coll::synth::doubleBinaryTree(const Target &t) {
  return program(t, "double_binary_tree",
                 "// Double binary tree allreduce: chunk t is reduced up and broadcast down\n"
                 "// tree t on channel t. In tree 0 the parent of position v, whose lowest\n"
                 "// set bit is b, is (v ^ b) | 2b, or v ^ b when that is not a rank:\n"
                 "// odd positions are leaves, position 0 is the root. Tree 1 puts position\n"
                 "// v on rank (v + 1) % R, so the leaves of one are inner in the other.\n",
                 "2", true, R"(  for t in 0 .. 2 {
    @channel(t) {
      // reduce: levels from the leaves (b = 1) up, so children come first
      for k in 0 .. 62 {
        let b = 1 << k;
        if b < R {
          for v in 1 .. R {
            if (v & -v) == b {
              let lo = v ^ b;
              let hi = lo | (b << 1);
              let up = hi - (hi >= R) * (hi - lo);
              in[(up + t) % R][t] += in[(v + t) % R][t];
            }
          }
        }
      }
      // broadcast: levels from the root down
      for j in 0 .. 62 {
        let b = 1 << (61 - j);
        if b < R {
          for v in 1 .. R {
            if (v & -v) == b {
              let lo = v ^ b;
              let hi = lo | (b << 1);
              let up = hi - (hi >= R) * (hi - lo);
              in[(v + t) % R][t] = in[(up + t) % R][t];
            }
          }
        }
      }
    }
  }
)");
}
