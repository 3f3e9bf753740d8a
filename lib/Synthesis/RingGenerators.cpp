//===- RingGenerators.cpp - Rings: one, or two counter-rotating -----------===//
//
// Every rank sends only to its successor, so each link carries one stream
// and each rank sends (R-1)/R of the data per phase: optimal bandwidth, R-1
// steps of latency. Broadcast and reduce use the ring as a chain from or to
// the root. All forms are in place and serve any rank count.
//
//===----------------------------------------------------------------------===//
#include "lib/Synthesis/Families.h"

using namespace coll;
using namespace coll::synth;

std::string coll::synth::ring(const Target &t) {
  switch (t.collective) {
  case Collective::allreduce:
    return program(t, "ring",
                   "// Ring allreduce: a reduce-scatter then an all-gather around one ring.\n"
                   "// Every rank sends 2(R-1)/R of its buffer, in 2(R-1) steps.\n",
                   "ranks", true, R"(  for c in 0 .. R {
    // chunk c starts at rank c + 1, gathers one rank's input per hop and is
    // complete at rank c
    for s in 1 .. R {
      in[(c + s + 1) % R][c] += in[(c + s) % R][c];
    }
    // then it travels on from rank c around the ring
    for s in 0 .. R - 1 {
      in[(c + s + 1) % R][c] = in[(c + s) % R][c];
    }
  }
)");
  case Collective::reducescatter:
    return program(t, "ring",
                   "// Ring reduce-scatter, in place: block b starts at rank b + 1 and\n"
                   "// gathers one rank's input per hop until it lands, complete, on\n"
                   "// rank b (whose output is its own block b of `in`).\n",
                   "", true, R"(  for b in 0 .. R {
    for s in 1 .. R {
      in[(b + s + 1) % R][b] += in[(b + s) % R][b];
    }
  }
)");
  case Collective::allgather:
    return program(t, "ring",
                   "// Ring all-gather, in place: the slot of rank b travels R-1 hops\n"
                   "// around the ring.\n",
                   "", true, R"(  for b in 0 .. R {
    for s in 0 .. R - 1 {
      out[(b + s + 1) % R][b] = out[(b + s) % R][b];
    }
  }
)");
  case Collective::broadcast:
    return program(t, "ring",
                   "// Chain broadcast along the ring from the root: root, root + 1, ...\n"
                   "// The runtime cuts the buffer into slices that follow each other\n"
                   "// down the chain, so its time is the buffer's plus R-1 hops.\n",
                   "", true, R"(  for k in 1 .. R {
    in[(root + k) % R][0] = in[(root + k - 1) % R][0];
  }
)");
  case Collective::reduce:
    return program(t, "ring",
                   "// Chain reduce along the ring to the root: the partial starts at\n"
                   "// root + 1 and picks up one rank's input per hop (other ranks'\n"
                   "// buffers end holding partials, which reduce allows).\n",
                   "", true, R"(  for k in 1 .. R {
    in[(root + k + 1) % R][0] += in[(root + k) % R][0];
  }
)");
  default:
    return "";
  }
}

std::string coll::synth::bidirRing(const Target &t) {
  switch (t.collective) {
  case Collective::allreduce:
    return program(t, "bidir_ring",
                   "// Bidirectional ring allreduce: chunks 0 .. R run the ring clockwise\n"
                   "// on channel 0, chunks R .. 2R counter-clockwise on channel 1, so\n"
                   "// both directions of every link are busy.\n",
                   "2 * ranks", true, R"(  @channel(0) {
    for c in 0 .. R {
      for s in 1 .. R {
        in[(c + s + 1) % R][c] += in[(c + s) % R][c];
      }
      for s in 0 .. R - 1 {
        in[(c + s + 1) % R][c] = in[(c + s) % R][c];
      }
    }
  }
  @channel(1) {
    for c in 0 .. R {
      for s in 1 .. R {
        in[(c - s - 1) % R][R + c] += in[(c - s) % R][R + c];
      }
      for s in 0 .. R - 1 {
        in[(c - s - 1) % R][R + c] = in[(c - s) % R][R + c];
      }
    }
  }
)");
  case Collective::reducescatter:
    return program(t, "bidir_ring",
                   "// Bidirectional ring reduce-scatter, in place: each block is two\n"
                   "// chunks; chunk 2b reaches rank b clockwise (channel 0), chunk 2b + 1\n"
                   "// counter-clockwise (channel 1).\n",
                   "2", true, R"(  @channel(0) {
    for b in 0 .. R {
      for s in 1 .. R {
        in[(b + s + 1) % R][2 * b] += in[(b + s) % R][2 * b];
      }
    }
  }
  @channel(1) {
    for b in 0 .. R {
      for s in 1 .. R {
        in[(b - s - 1) % R][2 * b + 1] += in[(b - s) % R][2 * b + 1];
      }
    }
  }
)");
  case Collective::allgather:
    return program(t, "bidir_ring",
                   "// Bidirectional ring all-gather, in place: each slot is two chunks;\n"
                   "// chunk 2b leaves rank b clockwise (channel 0), chunk 2b + 1\n"
                   "// counter-clockwise (channel 1).\n",
                   "2", true, R"(  @channel(0) {
    for b in 0 .. R {
      for s in 0 .. R - 1 {
        out[(b + s + 1) % R][2 * b] = out[(b + s) % R][2 * b];
      }
    }
  }
  @channel(1) {
    for b in 0 .. R {
      for s in 0 .. R - 1 {
        out[(b - s - 1) % R][2 * b + 1] = out[(b - s) % R][2 * b + 1];
      }
    }
  }
)");
  default:
    return "";
  }
}
