//===- RingGenerators.cpp - Rings: one, or two counter-rotating -----------===//
//
// Every rank sends only to its successor, so each link carries one stream
// and each rank sends (R-1)/R of the data per phase: optimal bandwidth, R-1
// steps of latency. Broadcast and reduce use the ring as a chain from or to
// the root. All forms are in place and serve any rank count; multi-ring
// needs two different rank orders, so at least 3 ranks.
//
//===----------------------------------------------------------------------===//
#include "lib/Synthesis/Families.h"

#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/Twine.h"
#include "llvm/Support/raw_ostream.h"

#include <numeric>

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

/// The most rings a multi-ring program has rank orders for.
static constexpr size_t kMaxRings = 4;

/// The strides of the rings' rank orders on R ranks, in the order rings
/// take them: 1; the smallest other stride that is not -1, so that the
/// second ring uses other GPU pairs than the first; the reverses of both
/// (the same pairs, the other direction of each link); then more strides.
/// Every stride is coprime with R, so each ring visits every rank once.
static llvm::SmallVector<int64_t> ringStrides(int64_t R) {
  llvm::SmallVector<int64_t> strides;
  auto add = [&](int64_t m) {
    m = ((m % R) + R) % R;
    if (m != 0 && std::gcd(m, R) == 1 && strides.size() < kMaxRings &&
        !llvm::is_contained(strides, m))
      strides.push_back(m);
  };
  add(1);
  int64_t second = 0;
  for (int64_t m = 2; m < R - 1 && !second; ++m)
    if (std::gcd(m, R) == 1)
      second = m;
  if (second)
    add(second);
  add(R - 1);
  if (second)
    add(R - second);
  for (int64_t m = second + 1; m < R; ++m) {
    add(m);
    add(R - m);
  }
  return strides;
}

std::string coll::synth::refuseMultiRing(const Target &t) {
  if (ringStrides(t.ranks).size() >= 2)
    return "";
  return (llvm::Twine("multi-ring needs two different ring orders, and ") + llvm::Twine(t.ranks) +
          " ranks have only one; ring works for any")
      .str();
}

std::string coll::synth::multiRing(const Target &t) {
  llvm::SmallVector<int64_t> strides = ringStrides(t.ranks);
  std::string table, list, select;
  llvm::raw_string_ostream tableOs(table), listOs(list), selectOs(select);
  for (size_t j = 0; j < strides.size(); ++j) {
    listOs << (j ? ", " : "") << strides[j];
    selectOs << (j ? " + " : "") << "(j == " << j << ") * " << strides[j];
  }
  bool distinct = strides.size() > 1 && strides[1] != t.ranks - 1;
  tableOs << "// Ring j sends from rank x to rank x + m, where m, its stride, is\n"
          << "// " << list << " for rings 0, 1, ...; it visits the ranks in the order\n"
          << "// r -> r * m mod R, each once, since m is coprime with R. Different\n"
             "// strides pair different GPUs, so where pairs have links of their own\n"
             "// (PCIe switches, NVLink meshes, tori) the rings spread the traffic\n"
             "// over more links, as NCCL's channels do with their different ring\n"
             "// orders; a stride and its negative use the same links in opposite\n"
             "// directions.\n"
          << (distinct ? "// The default two rings use disjoint pairs of neighbours. On an\n"
                       : "// R has no stride but 1 and -1, so the second ring is the first\n"
                         "// reversed (as in bidir-ring), on each link's other direction. On an\n")
          << "// NVSwitch every order costs the same and the rings differ only in\n"
             "// their channels; across nodes a stride other than 1 or -1 leaves a\n"
             "// node more often than a ring does.\n";
  std::string params = ("ranks = " + llvm::Twine(t.ranks) + ", rings = 2").str();
  std::string head =
      "  assert rings >= 1 && rings <= " + std::to_string(strides.size()) +
      ", \"this program has rank orders for 1 to " + std::to_string(strides.size()) +
      " rings\";\n"
      "  for j in 0 .. rings {\n"
      "    let m = " +
      select +
      "; // ring j's stride\n"
      "    for i in 1 .. R {\n"
      "      assert (i * m) % R != 0, \"the stride of a ring must be coprime with ranks; "
      "generate the program for this rank count\";\n"
      "    }\n"
      "    @channel(j) {\n";
  static const char *tail = "    }\n  }\n";
  switch (t.collective) {
  case Collective::allreduce:
    return program(t, "multi_ring",
                   "// Multi-ring allreduce: `rings` ring allreduces at once, ring j on\n"
                   "// channel j and chunks j*R .. j*R + R, each over its own rank order.\n"
                   "// Each carries 1/rings of the buffer: the ring's bandwidth-optimal\n"
                   "// 2(R-1)/R per rank, over more links than one ring uses.\n" +
                       table,
                   "rings * ranks", true, head + R"(      for c in 0 .. R {
        let x = j * R + c;
        // chunk x starts at rank c + m and is complete at rank c + R*m = c
        for s in 1 .. R {
          in[(c + (s + 1) * m) % R][x] += in[(c + s * m) % R][x];
        }
        for s in 0 .. R - 1 {
          in[(c + (s + 1) * m) % R][x] = in[(c + s * m) % R][x];
        }
      }
)" + tail,
                   params);
  case Collective::reducescatter:
    return program(t, "multi_ring",
                   "// Multi-ring reduce-scatter, in place: each block is `rings` chunks;\n"
                   "// chunk j of block b goes around ring j on channel j and lands,\n"
                   "// complete, on rank b. Each ring carries 1/rings of the data.\n" +
                       table,
                   "rings", true, head + R"(      for b in 0 .. R {
        for s in 1 .. R {
          in[(b + (s + 1) * m) % R][b * rings + j] += in[(b + s * m) % R][b * rings + j];
        }
      }
)" + tail,
                   params);
  case Collective::allgather:
    return program(t, "multi_ring",
                   "// Multi-ring all-gather, in place: each slot is `rings` chunks; chunk\n"
                   "// j of rank b's slot goes around ring j on channel j. Each ring\n"
                   "// carries 1/rings of the data.\n" +
                       table,
                   "rings", true, head + R"(      for b in 0 .. R {
        for s in 0 .. R - 1 {
          out[(b + (s + 1) * m) % R][b * rings + j] = out[(b + s * m) % R][b * rings + j];
        }
      }
)" + tail,
                   params);
  default:
    return "";
  }
}
