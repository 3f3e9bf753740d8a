//===- PatGenerators.cpp - NCCL's PAT: Parallel Aggregated Trees ----------===//
//
// PAT (NCCL 2.23+) runs one binomial tree per block, every rank's tree the
// same shape shifted to start at that rank, so each rank talks to one peer,
// 2^k away, per round. Rank r sits at position p = (b - r) mod R of block
// b's tree, and the parent of position p clears p's lowest set bit. That
// tree exists for any rank count (positions >= R simply have no node), so
// PAT needs ceil(log2 R) rounds whatever R is, and every block lands in its
// final slot: no rotation, no scratch.
//
//===----------------------------------------------------------------------===//
#include "lib/Synthesis/Families.h"

using namespace coll;
using namespace coll::synth;

std::string coll::synth::pat(const Target &t) {
  if (t.collective == Collective::allgather)
    return program(t, "pat",
                   "// PAT all-gather (NCCL's Parallel Aggregated Trees), in place. Block b\n"
                   "// goes down a binomial tree: rank b - p holds it at position p, and the\n"
                   "// children of position p are p + 2^j for every 2^j below p's lowest set\n"
                   "// bit. In the round of distance d (largest first) each rank sends to\n"
                   "// rank r - d every block it has gathered so far, those at positions that\n"
                   "// are multiples of 2d, if position p + d is a rank. Each round uses one\n"
                   "// peer and the rounds double what is sent: 1, 2, 4, ... blocks, R - 1 in\n"
                   "// all, in ceil(log2 R) rounds for any R (a block at a position with few\n"
                   "// bits set can leave before its round, so the compiler's dependent\n"
                   "// steps may be fewer). NCCL streams a round through its connection\n"
                   "// buffer one chunk at a time (aggregating chunks when they are small);\n"
                   "// here every block goes straight to its output slot.\n"
                   "// The choice for small and medium messages at scale: log2 latency with\n"
                   "// ring-like bandwidth (no block is sent twice), unlike recursive\n"
                   "// doubling without a power-of-two rank count, and unlike Bruck without\n"
                   "// a final rotation.\n",
                   "", true, R"(  for k in 0 .. 62 {
    let d = 1 << (61 - k);           // 2^61, ..., 2, 1; skipped while >= R
    if d < R {
      for r in 0 .. R {
        // rank r holds the blocks at positions 0, 2d, 4d, ...; the one at p
        // goes to rank r - d, for which it is at position p + d
        for p in 0 .. R - d step 2 * d {
          out[(r - d) % R][(r + p) % R] = out[r][(r + p) % R];
        }
      }
    }
  }
)");
  return program(t, "pat",
                 "// PAT reduce-scatter (NCCL's Parallel Aggregated Trees), in place: the\n"
                 "// all-gather's trees run upwards. Rank b - p holds block b at position\n"
                 "// p; in the round of distance d (smallest first) each rank adds its\n"
                 "// partial of every block at a position whose lowest set bit is d (d,\n"
                 "// 3d, 5d, ... below R) into rank r + d, the parent, which holds that\n"
                 "// block at position p - d. Children have lower bits, so every partial\n"
                 "// is complete when sent, and block b ends complete on rank b. Each round\n"
                 "// uses one peer and halves what is sent: R - 1 blocks in all, in\n"
                 "// ceil(log2 R) rounds for any R (fewer dependent steps where a position\n"
                 "// has few children). NCCL streams a round through its connection\n"
                 "// buffer one chunk at a time (aggregating chunks when they are small);\n"
                 "// here partials accumulate in place. The choice for small and medium\n"
                 "// messages at scale: log2 latency with ring-like bandwidth, without\n"
                 "// recursive halving's power-of-two rank count.\n",
                 "", true, R"(  for k in 0 .. 62 {
    let d = 1 << k;                  // 1, 2, 4, ... while < R
    if d < R {
      for r in 0 .. R {
        for p in d .. R step 2 * d {
          in[(r + d) % R][(r + p) % R] += in[r][(r + p) % R];
        }
      }
    }
  }
)");
}
