//===- DirectGenerators.cpp - One step to every peer: pairwise, one/two-shot ===//
//
// Every rank reaches every other directly, so latency is one or two steps
// whatever R is, and the compiler's coll-multimem pass turns the reads and
// writes of all peers into NVLink multicast or peer-window loads and stores
// where the topology has them. Written out of place, so that no input is
// overwritten while a peer may still read it.
//
//===----------------------------------------------------------------------===//
#include "lib/Synthesis/Families.h"

using namespace coll;
using namespace coll::synth;

std::string coll::synth::pairwise(const Target &t) {
  return program(t, "pairwise",
                 "// Pairwise all-to-all: in step s every rank sends its block for rank\n"
                 "// r + s straight there.\n",
                 "", false, R"(  for s in 0 .. R {
    for r in 0 .. R {
      let d = (r + s) % R;
      out[d][r] = in[r][d];
    }
  }
)");
}

std::string coll::synth::oneShot(const Target &t) {
  switch (t.collective) {
  case Collective::allreduce:
    return program(t, "one_shot",
                   "// One-shot allreduce: every rank reads all R inputs and reduces\n"
                   "// them; one step, the small-message choice on NVLink.\n",
                   "", false, R"(  for r in 0 .. R {
    out[r][0] = reduce(p in 0 .. R) in[p][0];
  }
)");
  case Collective::reducescatter:
    return program(t, "one_shot",
                   "// One-shot reduce-scatter: every rank reads its block from all R\n"
                   "// inputs and reduces it; one step.\n",
                   "", false, R"(  for r in 0 .. R {
    out[r][0] = reduce(p in 0 .. R) in[p][r];
  }
)");
  case Collective::allgather:
    return program(t, "one_shot",
                   "// One-shot all-gather: every rank's input goes straight to its slot\n"
                   "// on every rank; one step.\n",
                   "", false, R"(  for p in 0 .. R {
    for r in 0 .. R {
      out[r][p] = in[p][0];
    }
  }
)");
  case Collective::broadcast:
    return program(t, "one_shot",
                   "// One-shot broadcast: the root's input goes straight to every rank.\n", "",
                   false, R"(  for r in 0 .. R {
    out[r][0] = in[root][0];
  }
)");
  case Collective::reduce:
    return program(t, "one_shot",
                   "// One-shot reduce: the root reads all R inputs and reduces them.\n", "", false,
                   R"(  out[root][0] = reduce(p in 0 .. R) in[p][0];
)");
  default:
    return "";
  }
}

std::string coll::synth::twoShot(const Target &t) {
  return program(t, "two_shot",
                 "// Two-shot allreduce: shot 1, rank s reads chunk s from every rank and\n"
                 "// reduces it (a reduce-scatter); shot 2, every rank reads the reduced\n"
                 "// chunk s from rank s (an all-gather). Half one-shot's traffic for one\n"
                 "// more step. Each shot has a channel of its own, so that one loop's\n"
                 "// stores overlap the next loop's loads: they load different links.\n",
                 "ranks", false,
                 R"(  scratch red[1];                  // red[s][0]: the reduced chunk s, on rank s
  @channel(0) for s in 0 .. R {
    red[s][0] = reduce(p in 0 .. R) in[(s + p) % R][s];
  }
  @channel(1) for r in 0 .. R {
    for s in 0 .. R {
      out[r][s] = red[s][0];
    }
  }
)");
}
