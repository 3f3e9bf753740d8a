//===- LogGenerators.cpp - Logarithmic exchanges: recursive, Bruck --------===//
//
// Recursive doubling and halving pair rank r with r ^ d, so they need a
// power-of-two rank count; Bruck sends to r - d (or r + d), which works for
// any. All take about log2(R) steps, the choice for small messages.
//
//===----------------------------------------------------------------------===//
#include "lib/Synthesis/Families.h"

using namespace coll;
using namespace coll::synth;

std::string coll::synth::recursiveDoubling(const Target &t) {
  if (t.collective == Collective::allgather)
    return program(
        t, "recursive_doubling",
        "// Recursive-doubling all-gather, in place: in step k rank r and\n"
        "// rank r ^ 2^k swap everything they hold, so the data doubles each\n"
        "// step; log2(R) steps.\n",
        "", true,
        R"(  assert ispow2(R), "recursive doubling needs a power-of-two rank count; bruck works for any";
  for k in 0 .. log2(R) {
    let d = 1 << k;
    for r in 0 .. R {
      let base = (r / d) * d;          // the first slot rank r holds
      out[r ^ d][base .. base + d] = out[r][base .. base + d];
    }
  }
)");
  return program(
      t, "recursive_doubling",
      "// Recursive-doubling allreduce: in step k rank r adds the whole\n"
      "// partial of rank r ^ 2^k to its own; log2(R) steps that each move\n"
      "// the whole buffer, for small messages. acc[r][k] holds the sum over\n"
      "// the 2^(k+1) ranks that agree with r above bit k.\n",
      "", false,
      R"(  assert ispow2(R), "recursive doubling needs a power-of-two rank count; ring works for any";
  let L = log2(R);
  scratch acc[L];
  for k in 0 .. L {
    let d = 1 << k;
    for r in 0 .. R {
      if k == 0 {
        if L == 1 { out[r][0] = in[r][0] + in[r ^ d][0]; }
        else { acc[r][0] = in[r][0] + in[r ^ d][0]; }
      } else {
        if k == L - 1 { out[r][0] = acc[r][k - 1] + acc[r ^ d][k - 1]; }
        else { acc[r][k] = acc[r][k - 1] + acc[r ^ d][k - 1]; }
      }
    }
  }
)");
}

std::string coll::synth::recursiveHalving(const Target &t) {
  // Both collectives start with the same reduce-scatter.
  static const char *halving =
      R"(  assert ispow2(R), "recursive halving needs a power-of-two rank count; ring works for any";
  let L = log2(R);
  // in step k rank r keeps the half of its 2d chunks that holds chunk r and
  // adds its partner's copy of that half
  for k in 0 .. L {
    let d = R >> (k + 1);
    for r in 0 .. R {
      let keep = (r / d) * d;
      in[r][keep .. keep + d] += in[r ^ d][keep .. keep + d];
    }
  }
)";
  if (t.collective == Collective::reducescatter)
    return program(t, "recursive_halving",
                   "// Recursive-halving reduce-scatter, in place: in step k ranks r and\n"
                   "// r ^ (R >> (k + 1)) each keep half of what they still reduce; every\n"
                   "// rank sends (R-1)/R of its buffer in log2(R) steps.\n",
                   "", true, halving);
  return program(t, "recursive_halving",
                 "// Rabenseifner allreduce: a recursive-halving reduce-scatter, then a\n"
                 "// recursive-doubling all-gather; bandwidth-optimal in 2 log2(R) steps.\n",
                 "ranks", true,
                 std::string(halving) +
                     R"(  // now chunk r is complete on rank r; gather by recursive doubling
  for k in 0 .. L {
    let d = 1 << k;
    for r in 0 .. R {
      let base = (r / d) * d;
      in[r ^ d][base .. base + d] = in[r][base .. base + d];
    }
  }
)");
}

std::string coll::synth::bruck(const Target &t) {
  if (t.collective == Collective::allgather)
    return program(t, "bruck",
                   "// Bruck all-gather: ceil(log2 R) steps for any rank count. In the\n"
                   "// step of distance d every rank sends the first min(d, R - d) blocks\n"
                   "// of its rotated copy to rank r - d; a local rotation ends it.\n",
                   "", false,
                   R"(  scratch tmp[R];                  // tmp[r][j] = in[(r + j) % R][0]
  for r in 0 .. R { tmp[r][0] = in[r][0]; }
  for k in 0 .. 62 {               // steps while 2^k < R
    let d = 1 << k;
    if d < R {
      let n = min(d, R - d);
      for r in 0 .. R {
        tmp[(r - d) % R][d .. d + n] = tmp[r][0 .. n];
      }
    }
  }
  for r in 0 .. R {                // tmp[r][j] belongs in out[r][(r + j) % R]
    out[r][r .. R] = tmp[r][0 .. R - r];
    if r > 0 {
      out[r][0 .. r] = tmp[r][R - r .. R];
    }
  }
)");
  if (t.collective == Collective::reducescatter)
    return program(t, "bruck",
                   "// Bruck reduce-scatter: the all-gather's steps backwards, ceil(log2 R)\n"
                   "// steps for any rank count. acc[r][j] is a partial of block r + j; in\n"
                   "// the step of distance d (largest first) rank r adds the partials of\n"
                   "// its first min(d, R - d) blocks that rank r - d holds at d .. d + n.\n"
                   "// Rank r reads only slots at d or above and writes only those below,\n"
                   "// so no rank overwrites what another still reads.\n",
                   "", false, R"(  scratch acc[R];
  for r in 0 .. R {
    for j in 0 .. R { acc[r][j] = in[r][(r + j) % R]; }
  }
  for k in 0 .. 62 {               // distances 2^61, ..., 2, 1; skipped while >= R
    let d = 1 << (61 - k);
    if d < R {
      let n = min(d, R - d);
      for r in 0 .. R {
        if d == 1 {                // the last step completes block r
          out[r][0] = acc[r][0] + acc[(r - 1) % R][1];
        } else {
          acc[r][0 .. n] += acc[(r - d) % R][d .. d + n];
        }
      }
    }
  }
)");
  return program(t, "bruck",
                 "// Bruck all-to-all: ceil(log2 R) steps for any rank count. tmp[r][j]\n"
                 "// holds a block that still has j ranks to go; in the step of distance\n"
                 "// d every block whose j has bit d moves d ranks on (through `stage`,\n"
                 "// as its receiver is sending its own), and a local rotation ends it.\n",
                 "", false, R"(  scratch tmp[R];
  scratch stage[R];
  for r in 0 .. R {
    for j in 0 .. R { tmp[r][j] = in[r][(r + j) % R]; }
  }
  for k in 0 .. 62 {               // steps while 2^k < R
    let d = 1 << k;
    if d < R {
      for r in 0 .. R {
        for j in 0 .. R {
          if (j & d) != 0 { stage[(r + d) % R][j] = tmp[r][j]; }
        }
      }
      for r in 0 .. R {
        for j in 0 .. R {
          if (j & d) != 0 { tmp[r][j] = stage[r][j]; }
        }
      }
    }
  }
  for r in 0 .. R {                // tmp[r][j] came from rank r - j
    for j in 0 .. R { out[r][(r - j) % R] = tmp[r][j]; }
  }
)");
}
