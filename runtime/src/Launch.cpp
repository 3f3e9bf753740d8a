//===- Launch.cpp - Pick a plan, connect its FIFOs, run it ----------------===//
//
// A launch picks the plan whose size range holds the input, makes the
// algorithm's FIFOs on first use (a collective step), lays the user's
// buffers out as the plan expects (in place or not, whatever the caller
// passed) and runs this rank's threadblocks, one thread for each replica
// that the plan's launch table asks for at this size.
//
//===----------------------------------------------------------------------===//
#include "src/Comm.h"

#include "src/BlockArgs.h"
#include "src/GpuLaunch.h"
#include "src/GpuPeers.h"
#include "src/Multicast.h"
#include "src/PeerLayout.h"
#include "src/Replicas.h"
#include "src/Windows.h"
#include "support/CudaDriver.h"
#include "support/Env.h"
#include "support/Names.h"
#include "support/Numeric.h"
#include "transport/MemoryBackend.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <optional>
#include <system_error>
#include <thread>

using namespace collrt;
using collc::AlgorithmDesc;
using collc::PlanDesc;

namespace {

const char *entryName(int32_t c) {
  static const char *names[] = {"collAllReduce", "collReduceScatter", "collAllGather",
                                "collAlltoAll",  "collBroadcast",     "collReduce"};
  return c >= 0 && c < 6 ? names[c] : "?";
}
const char *protocolName(int32_t p) {
  return p == collc::kLL ? "LL" : p == collc::kLL128 ? "LL128" : "Simple";
}

int64_t slotBytes(int32_t protocol) {
  const Env &e = Env::get();
  return protocol == collc::kLL ? e.llSlot : protocol == collc::kLL128 ? e.ll128Slot : e.simpleSlot;
}

int64_t inUnits(int32_t c, int r) {
  return c == collc::kReduceScatter || c == collc::kAllToAll ? r : 1;
}
int64_t outUnits(int32_t c, int r) {
  return c == collc::kAllGather || c == collc::kAllToAll ? r : 1;
}
bool reduces(int32_t c) {
  return c == collc::kAllReduce || c == collc::kReduceScatter || c == collc::kReduce;
}

/// The threadblock of `plan` at one end of the connection from rank `from`
/// to rank `to` on `channel`: the sender's or the receiver's; -1 if none.
int32_t matching(const PlanDesc &plan, int32_t from, int32_t to, int32_t channel, bool sender) {
  for (int32_t j = 0; j < plan.numThreadblocks; ++j) {
    const collc::ThreadblockDesc &o = plan.threadblocks[j];
    if (o.channel == channel &&
        (sender ? o.rank == from && o.sendPeer == to : o.rank == to && o.recvPeer == from))
      return j;
  }
  return -1;
}

/// Where a direct connection's credit words lie: its head and, beside it,
/// its ready word, on a cache line of their own.
constexpr size_t kCreditBytes = 128;
void creditsAt(collc::Fifo &fifo, char *at) {
  fifo.head = reinterpret_cast<uint64_t *>(at);
  fifo.ready = reinterpret_cast<uint64_t *>(at + 8);
}

/// The FIFOs of `alg` on every rank, made once per communicator: in
/// `memory` (host memory where null, for host kernels), and those of pairs
/// that a proxy joins in `staged` where it is given (GPU plans across
/// machines: pinned host memory, which the proxy reaches), their slots in
/// `memory` where the network can put steps there (GPUDirect RDMA).
collResult_t setUp(collComm *comm, const AlgorithmDesc *alg, AlgorithmSetup *&out,
                   const MemoryBackend *memory, const MemoryBackend *staged) {
  auto found = comm->setups.find(alg);
  if (found != comm->setups.end()) {
    out = &found->second;
    return collSuccess;
  }
  for (int32_t p = 0; p < alg->numPlans; ++p)
    if (alg->plans[p].ranks != comm->nranks)
      return comm->fail(collInvalidUsage,
                        std::string("algorithm ") + alg->name + " is compiled for " +
                            std::to_string(alg->plans[p].ranks) + " ranks, the communicator has " +
                            std::to_string(comm->nranks));
  PeerTransports &net = *comm->transport;
  const bool gpu = memory != nullptr;
  // Whether the FIFO that `from` sends to `to` through lies in `staged`.
  auto isStaged = [&](int from, int to) { return staged && net.proxied(from, to); };
  // Every rank computes every rank's layout: receive FIFOs in table order,
  // replica by replica (entry x * numThreadblocks + i is replica x of i),
  // in the window of their kind.
  std::vector<size_t> size[2] = {std::vector<size_t>(comm->nranks, 0),
                                 std::vector<size_t>(comm->nranks, 0)};
  // A connection without a proxy keeps the words its receiver writes for
  // the sender (head, ready) in the sender's window, so that every counter
  // a kernel polls is in its own memory, as NCCL keeps them; the sender
  // writes the tail into the receiver's. Through a proxy both ends poll
  // their own FIFO already.
  std::vector<std::vector<size_t>> offset(alg->numPlans), credits(alg->numPlans);
  for (int32_t p = 0; p < alg->numPlans; ++p) {
    const PlanDesc &plan = alg->plans[p];
    offset[p].assign(size_t(plan.numThreadblocks) * maxReplicas(plan), 0);
    credits[p].assign(offset[p].size(), 0);
    for (size_t e = 0; e < offset[p].size(); ++e) {
      const collc::ThreadblockDesc &tb = plan.threadblocks[e % plan.numThreadblocks];
      if (tb.recvPeer >= 0) {
        size_t &at = size[isStaged(tb.recvPeer, tb.rank)][tb.rank];
        offset[p][e] = at;
        at += fifoBytes(plan.slots, slotBytes(tb.protocol));
      }
      if (tb.sendPeer >= 0 && !net.proxied(tb.rank, tb.sendPeer)) {
        credits[p][e] = size[0][tb.rank];
        size[0][tb.rank] += kCreditBytes;
      }
    }
  }
  AlgorithmSetup setup;
  std::string error;
  if (collResult_t r = net.exchangeWindow(size[0][comm->rank], setup.window, error, memory))
    return comm->fail(r, error);
  auto unwind = [&](collResult_t r) {
    net.release(setup.window);
    if (!setup.staged.base.empty())
      net.release(setup.staged);
    return comm->fail(r, error);
  };
  const bool anyStaged =
      std::any_of(size[1].begin(), size[1].end(), [](size_t bytes) { return bytes > 0; });
  if (anyStaged)
    if (collResult_t r = net.exchangeWindow(size[1][comm->rank], setup.staged, error, staged,
                                            Env::get().gdr ? memory : nullptr))
      return unwind(r);
  Window *windows[2] = {&setup.window, &setup.staged};
  int fifos[2] = {0, 0}; // this rank's receive FIFOs in each
  setup.recv.resize(alg->numPlans);
  setup.send.resize(alg->numPlans);
  collResult_t r = collSuccess;
  for (int32_t p = 0; p < alg->numPlans && r == collSuccess; ++p) {
    const PlanDesc &plan = alg->plans[p];
    const size_t entries = offset[p].size(), tbs = size_t(plan.numThreadblocks);
    setup.recv[p].assign(entries, collc::Fifo{});
    setup.send[p].assign(entries, collc::Fifo{});
    for (size_t e = 0; e < entries && r == collSuccess; ++e) {
      const size_t i = e % tbs, replica = e - i;
      const collc::ThreadblockDesc &tb = plan.threadblocks[i];
      if (tb.rank != comm->rank)
        continue;
      if (tb.recvPeer >= 0) {
        const int kind = isStaged(tb.recvPeer, tb.rank);
        Window &w = *windows[kind];
        ++fifos[kind];
        setup.recv[p][e] =
            fifoIn(w, tb.rank, offset[p][e], plan.slots, slotBytes(tb.protocol), tb.protocol);
        r = net.recvFifo(w, tb.recvPeer, offset[p][e], setup.recv[p][e], error);
        if (r == collSuccess && !net.proxied(tb.recvPeer, tb.rank)) {
          const int32_t from = matching(plan, tb.recvPeer, tb.rank, tb.channel, true);
          char *sender = w.base[tb.recvPeer];
          if (from < 0 || !sender) {
            r = collInternalError;
            error = std::string("plan ") + plan.name + ": rank " + std::to_string(tb.rank) +
                    (from < 0 ? " receives from rank " + std::to_string(tb.recvPeer) +
                                    " on a channel where it does not send"
                              : " does not map the window of rank " + std::to_string(tb.recvPeer));
            break;
          }
          creditsAt(setup.recv[p][e], sender + credits[p][replica + from]);
        }
        if (!(tb.direct & collc::kTbDirectRecv))
          setup.recv[p][e].ready = nullptr;
      }
      if (tb.sendPeer < 0 || r != collSuccess)
        continue;
      const int32_t match = matching(plan, tb.rank, tb.sendPeer, tb.channel, false);
      if (match < 0) {
        r = collInternalError;
        error = std::string("plan ") + plan.name + ": rank " + std::to_string(tb.rank) +
                " sends to rank " + std::to_string(tb.sendPeer) +
                " on a channel where nobody receives";
        break;
      }
      r = net.sendFifo(*windows[isStaged(tb.rank, tb.sendPeer)], tb.sendPeer,
                       offset[p][replica + match], plan.slots, slotBytes(tb.protocol), tb.protocol,
                       setup.send[p][e], error);
      if (!net.proxied(tb.rank, tb.sendPeer))
        creditsAt(setup.send[p][e], setup.window.base[tb.rank] + credits[p][e]);
      // GPU senders publish each LL and LL128 step's tail and size only for
      // a proxy: their receivers read flags.
      if (gpu && tb.protocol != collc::kSimple && !net.proxied(tb.rank, tb.sendPeer))
        setup.send[p][e].sizes = nullptr;
      // Only the connections the plan made direct store into the receiver's
      // buffers: a shape shared with other threadblocks may name a direct
      // destination that this one's receiver does not have.
      if (!(tb.direct & collc::kTbDirectSend))
        setup.send[p][e].ready = nullptr;
    }
  }
  if (r != collSuccess)
    return unwind(r);
  if (anyStaged && Env::get().debug)
    fprintf(stderr,
            "collc INFO %s: rank %d receives on %d FIFOs in GPU memory and %d in "
            "pinned host memory, which the proxy reaches\n",
            alg->name, comm->rank, fifos[0], fifos[1]);
  out = &(comm->setups[alg] = std::move(setup));
  return collSuccess;
}

bool overlaps(const void *a, size_t na, const void *b, size_t nb) {
  auto x = reinterpret_cast<uintptr_t>(a), y = reinterpret_cast<uintptr_t>(b);
  return na && nb && x < y + nb && y < x + na;
}

void divideBy(collDataType_t type, void *data, int64_t n, int d) {
  dispatchType(type, [&](auto tag) {
    using T = decltype(tag);
    T *p = static_cast<T *>(data);
    for (int64_t i = 0; i < n; ++i)
      p[i] = Arith<T>::div(p[i], d);
  });
}

/// One call of collLaunch: its arguments, and what its stages work out.
struct LaunchCall {
  collComm *comm;
  const AlgorithmDesc *alg;
  const void *sendbuff;
  void *recvbuff;
  size_t count;
  collDataType_t datatype;
  collRedOp_t op;
  collStream_t stream;
  int R = 0, me = 0;
  int64_t es = 0, E = 0, inBytes = 0, outBytes = 0;
  int32_t coll = 0;
  bool gpu = false; // built by nvcc, not by a C++ compiler
  const PlanDesc *plan = nullptr;
  collc::LaunchShape shape{};
  bool peerSteps = false, direct = false; // multimem or peer-window steps; direct connections
  bool shm = false;                       // the transports map every rank's memory
  int64_t slice = 0;
  bool windows = false; // steps on other ranks' buffers: every rank's in a window
};

// After: the type, op and count are valid, and every plan has a kernel of
// the algorithm's build that this machine can run.
collResult_t checkCall(LaunchCall &c) {
  collComm *comm = c.comm;
  const AlgorithmDesc *alg = c.alg;
  c.R = comm->nranks;
  c.me = comm->rank;
  c.es = int64_t(collTypeSize(c.datatype));
  if (!c.es)
    return comm->fail(collInvalidArgument, "unknown data type " + std::to_string(int(c.datatype)));
  if (c.op < 0 || c.op >= collNumOps)
    return comm->fail(collInvalidArgument, "unknown reduction op " + std::to_string(int(c.op)));
  if (alg->numPlans < 1)
    return comm->fail(collInvalidArgument, std::string("algorithm ") + alg->name + " has no plan");
  // Built by a C++ compiler (host kernels) or by nvcc (GPU kernels), never both.
  const bool gpu = c.gpu = !alg->plans[0].hostKernel;
  for (int32_t p = 0; p < alg->numPlans; ++p) {
    const PlanDesc &plan = alg->plans[p];
    if (!plan.hostKernel != gpu || (gpu && !plan.cuda.launch))
      return comm->fail(collInvalidArgument, std::string("plan ") + plan.name +
                                                 " has no kernel of its algorithm's build");
    // The primitives find a step's slot with a mask.
    if (plan.slots < 1 || (plan.slots & (plan.slots - 1)))
      return comm->fail(collInvalidArgument,
                        std::string("plan ") + plan.name + " has " + std::to_string(plan.slots) +
                            " FIFO slots, not a power of two: compile it again with this collc");
  }
  if (gpu) {
    std::string why;
    if (!cudaDriver(why))
      return comm->fail(collInvalidUsage,
                        std::string("plan ") + alg->plans[0].name +
                            " has no host kernel: it was "
                            "built by nvcc for the GPU, and this machine has no usable GPU: " +
                            why +
                            ". To run the algorithm on the host, link the host build instead (the "
                            "output of collc --emit=cuda compiled with a C++ compiler)");
  } else if (!dispatchType(c.datatype, [](auto) {})) {
    return comm->fail(collInvalidArgument, "fp8 types need a GPU; the host emulation has none");
  }
  c.coll = alg->plans[0].collective;
  c.E = int64_t(c.count);
  if (c.E < 0 || c.E > (int64_t(1) << 40) / (c.R * c.es))
    return comm->fail(collInvalidArgument, "count " + std::to_string(c.count) + " is too large");
  c.inBytes = inUnits(c.coll, c.R) * c.E * c.es;
  c.outBytes = outUnits(c.coll, c.R) * c.E * c.es;
  return collSuccess;
}

// After: `plan` is the plan for this size and `shape` its launch, said
// under COLL_DEBUG unless `quiet`.
void pickPlan(LaunchCall &c, bool quiet = false) {
  const AlgorithmDesc *alg = c.alg;
  c.plan = &alg->plans[alg->numPlans - 1];
  for (int32_t p = 0; p < alg->numPlans; ++p)
    if (c.inBytes >= alg->plans[p].minBytes && c.inBytes < alg->plans[p].maxBytes) {
      c.plan = &alg->plans[p];
      break;
    }
  const PlanDesc *plan = c.plan;
  c.shape = launchFor(*plan, c.inBytes);
  if (Env::get().debug && c.me == 0 && !quiet)
    fprintf(stderr,
            "collc INFO %s: %lld bytes per rank -> plan %s (%s, [%lld, %lld)), "
            "%d replica(s)%s%s\n",
            alg->name, (long long)c.inBytes, plan->name, protocolName(plan->protocol),
            (long long)plan->minBytes, (long long)plan->maxBytes, c.shape.replicas,
            plan->why ? "; " : "", plan->why ? plan->why : "");
}

// After: the plan can run over this communicator's transports on this
// count, and `peerSteps`, `direct` and `shm` say how it reaches the peers.
collResult_t checkPlanRuns(LaunchCall &c, bool quiet = false) {
  collComm *comm = c.comm;
  const PlanDesc *plan = c.plan;
  bool multimem = false;
  for (int32_t i = 0; i < plan->numThreadblocks; ++i) {
    c.peerSteps |= (plan->threadblocks[i].direct & collc::kTbPeerSteps) != 0;
    c.direct |= (plan->threadblocks[i].direct & (collc::kTbDirectRecv | collc::kTbDirectSend)) != 0;
    multimem |= (plan->threadblocks[i].direct & collc::kTbMultimem) != 0;
  }
  // The host emulation has no multicast: multimem steps run their unicast
  // form over the peer windows (the GPU launch says what it does).
  if (multimem && !c.gpu && Env::get().debug && c.me == 0 && !quiet)
    fprintf(stderr,
            "collc INFO plan %s: multimem steps run as loads and stores over the peer "
            "windows: %s\n",
            plan->name, unicastReason(false, c.datatype, c.op, reduces(c.coll)).c_str());
  const bool shm = c.shm = comm->transport->mapsEveryRank();
  // A GPU reads an LL128 line whole only as NVLink delivers it; from the
  // host memory that a proxy writes, it may see a line's flag before its
  // data.
  for (int32_t i = 0; i < plan->numThreadblocks && c.gpu && !shm; ++i) {
    const collc::ThreadblockDesc &tb = plan->threadblocks[i];
    for (int peer : {tb.recvPeer, tb.sendPeer})
      if (tb.protocol == collc::kLL128 && peer >= 0 && comm->transport->proxied(tb.rank, peer))
        return comm->fail(collInvalidUsage,
                          std::string("plan ") + plan->name + " runs LL128 between rank " +
                              std::to_string(tb.rank) + " and rank " + std::to_string(peer) +
                              ", which are on different machines: on the GPU, LL128 needs "
                              "NVLink between its ranks. Compile for a topology that has every "
                              "machine (collc then picks LL or Simple between them), or with "
                              "--protocol=LL or Simple");
  }
  if (c.peerSteps && !shm)
    return comm->fail(collInvalidUsage,
                      std::string("plan ") + plan->name +
                          " reaches other ranks' buffers "
                          "(NVLink multicast or peer windows), which the host emulates over "
                          "shared memory: use the shm transport between every pair of ranks");
  if (plan->wholeChunks && c.E % plan->chunks)
    return comm->fail(collInvalidUsage, std::string("plan ") + plan->name +
                                            " moves chunks between positions, so "
                                            "it needs a count divisible by its " +
                                            std::to_string(plan->chunks) + " chunks, not " +
                                            std::to_string(c.E));
  return collSuccess;
}

// After: the algorithm's FIFOs are connected on every rank, in memory of
// the build's kind; `relaxed` lets a GPU launch being captured make them.
collResult_t connectFifos(LaunchCall &c, std::optional<RelaxedCapture> &relaxed,
                          AlgorithmSetup *&setup) {
  const MemoryBackend *memory = nullptr; // host memory
  const MemoryBackend *staged = nullptr; // where FIFOs that a proxy joins live, if apart
  if (c.gpu) {
    if (collResult_t r = checkGpuPeers(c.comm))
      return r;
    // GPU memory, which the ranks of a machine map; the FIFOs of pairs
    // that a proxy joins in pinned host memory, which it reaches too.
    relaxed.emplace();
    std::string why;
    if (!(memory = cudaMemory(why)) || (!c.shm && !(staged = pinnedMemory(why))))
      return c.comm->fail(collUnhandledCudaError, why);
  }
  return setUp(c.comm, c.alg, setup, memory, staged);
}

// After: the buffers are there, `slice` holds the elements of one chunk
// per loop for this launch, and `windows` whether steps reach other
// ranks' buffers through windows.
collResult_t chooseSlice(LaunchCall &c) {
  collComm *comm = c.comm;
  const PlanDesc *plan = c.plan;
  if ((!c.sendbuff && !(c.coll == collc::kBroadcast && c.me != plan->root)) ||
      (!c.recvbuff && !(c.coll == collc::kReduce && c.me != plan->root)))
    return comm->fail(collInvalidArgument, "null buffer for a nonzero count");
  // Slice: elements of one chunk per loop, the same on every rank.
  c.slice = sliceElements(*plan, c.es, slotBytes);
  if (c.slice < 1)
    return comm->fail(collInvalidUsage, std::string("plan ") + plan->name + " sends " +
                                            std::to_string(plan->widest) +
                                            " chunks in one step, more than a FIFO slot holds");
  c.slice = replicaSlice(c.slice, c.E, plan->chunks, c.shape.replicas, c.es);
  // Multimem and peer-window steps, and direct senders, reach other ranks'
  // buffers, between barriers, like NCCL's NVLS and LSA kernels: the user's
  // own where every rank's input and output lie in registered windows,
  // else copies in one symmetric window per rank. Direct connections use
  // their FIFOs instead over sockets, or unless COLL_DIRECT=1 asks for the
  // windows.
  c.windows = c.peerSteps || (c.direct && c.shm && Env::get().direct);
  return collSuccess;
}

/// Where a host launch's threadblocks read and write.
struct HostBuffers {
  char *in = nullptr, *out = nullptr;
  char *copyBack = nullptr; // where `out`'s first unit goes at the end, if anywhere
  char *userOut = nullptr;  // the output the caller sees
  int64_t unit = 0;         // bytes of one rank's unit of the buffer
  int64_t loops = 0;
  bool registered = false; // in and out are the user's own, in registered windows
  std::vector<char *> peers;
  std::vector<char *> scratchOf;
};

// After: `in` and `out` are laid out as the plan expects, through the
// communicator's staging where the caller's layout differs.
void layOutBuffers(const LaunchCall &c, HostBuffers &b) {
  collComm *comm = c.comm;
  const PlanDesc *plan = c.plan;
  const int me = c.me;
  const int64_t inBytes = c.inBytes;
  char *send = const_cast<char *>(static_cast<const char *>(c.sendbuff));
  char *recv = static_cast<char *>(c.recvbuff);
  char *in = send, *out = recv, *copyBack = nullptr;
  int64_t unit = c.E * c.es;
  auto staging = [&](int64_t bytes) {
    if (int64_t(comm->staging.size()) < bytes)
      comm->staging.resize(bytes);
    return comm->staging.data();
  };
  if (c.coll == collc::kBroadcast && me != plan->root && !send)
    in = send = staging(inBytes);
  if (c.coll == collc::kReduce && me != plan->root && !recv)
    out = recv = staging(c.outBytes);
  if (plan->inplace) {
    if (c.coll == collc::kAllGather) {
      in = recv + me * unit;
      if (send != in)
        memmove(in, send, unit);
    } else if (c.coll == collc::kReduceScatter) {
      if (recv != send + me * unit) {
        in = staging(inBytes);
        memcpy(in, send, inBytes);
        copyBack = recv;
      }
      out = in + me * unit;
    } else {
      if (send != recv)
        memmove(recv, send, inBytes);
      in = out = recv;
    }
  } else if (overlaps(send, inBytes, recv, c.outBytes)) {
    in = staging(inBytes);
    memcpy(in, send, inBytes);
  }
  b.in = in;
  b.out = out;
  b.copyBack = copyBack;
  b.unit = unit;
}

// After: the communicator's scratch buffers hold this launch's loops, and
// `scratchOf` points at them.
void growScratch(const LaunchCall &c, HostBuffers &b) {
  collComm *comm = c.comm;
  const PlanDesc *plan = c.plan;
  b.loops = (c.E + plan->chunks * c.slice - 1) / (plan->chunks * c.slice);
  if (comm->scratch.size() < size_t(plan->numScratch))
    comm->scratch.resize(plan->numScratch);
  for (int32_t k = 0; k < plan->numScratch; ++k) {
    size_t need = size_t(b.loops * plan->scratchChunks[k] * c.slice * c.es);
    if (comm->scratch[k].size() < need)
      comm->scratch[k].resize(need);
  }
  b.scratchOf.resize(plan->numScratch);
  for (int32_t k = 0; k < plan->numScratch; ++k)
    b.scratchOf[k] = comm->scratch[k].data();
}

// After: every rank's buffers lie in windows that every rank maps, named
// in `peers`, and every rank's input is in place.
collResult_t placeInWindows(const LaunchCall &c, HostBuffers &b) {
  collComm *comm = c.comm;
  const PlanDesc *plan = c.plan;
  const int me = c.me;
  const int64_t inBytes = c.inBytes, outBytes = c.outBytes;
  std::string err;
  LaunchPlaces places;
  if (collResult_t r =
          launchPlaces(comm, b.in, size_t(inBytes), b.out, size_t(outBytes), nullptr, places, err))
    return comm->fail(r, err);
  const bool registered = b.registered = places.registered;
  if (Env::get().debug && me == 0)
    fprintf(stderr, "collc INFO plan %s: steps on other ranks' buffers run %s\n", plan->name,
            registered ? "on the registered windows, without copies"
                       : ("on copies in the runtime's window: " + places.why).c_str());
  const PeerLayout layout =
      peerLayout(*plan, c.R, b.unit, inBytes, outBytes, b.loops, c.slice, c.es, registered);
  const std::vector<int64_t> &inAt = layout.inAt, &outAt = layout.outAt,
                             &scratchAt = layout.scratchAt;
  const int64_t total = layout.total;
  if (comm->symmetricBytes < size_t(total)) {
    if (comm->symmetricBytes)
      comm->transport->release(comm->symmetric);
    comm->symmetricBytes = 0;
    if (collResult_t r = comm->transport->exchangeWindow(size_t(total), comm->symmetric, err))
      return comm->fail(r, err);
    comm->symmetricBytes = size_t(total);
  }
  const std::vector<char *> &base = comm->symmetric.base;
  b.peers = peerTable(layout, base, plan->numScratch);
  if (registered && !pointAtUserBuffers(comm, places, b.peers, err)) // the user's own
    return comm->fail(collInvalidUsage, err);
  for (int32_t k = 0; k < plan->numScratch; ++k)
    b.scratchOf[k] = base[me] + scratchAt[k];
  if (!registered) {
    if (!plan->inplace) // what the plan leaves alone comes back unchanged
      memcpy(base[me] + outAt[me], b.out, outBytes);
    memcpy(base[me] + inAt[me], b.in, inBytes);
    b.in = base[me] + inAt[me];
    b.out = base[me] + outAt[me];
    if (collResult_t r = comm->bootstrap.barrier(err)) // every rank's input is in place
      return comm->fail(r, err);
  }
  return collSuccess;
}

// After: this rank's threadblocks, one thread per replica, have run to
// their end, or the first error is reported.
collResult_t runThreadblocks(const LaunchCall &c, const AlgorithmSetup &setup,
                             const HostBuffers &b) {
  collComm *comm = c.comm;
  const PlanDesc *plan = c.plan;
  const int32_t p = int32_t(plan - c.alg->plans);
  const int32_t tbs = plan->numThreadblocks;
  std::vector<uint64_t> progress(size_t(tbs) * c.shape.replicas, 0);
  int32_t error = 0;
  char errorText[256] = "";
  std::vector<collc::Args> args;
  for (int32_t e = 0; e < tbs * c.shape.replicas; ++e) {
    const int32_t i = e % tbs, replica = e / tbs;
    const collc::ThreadblockDesc &tb = plan->threadblocks[i];
    if (tb.rank != c.me)
      continue;
    collc::Args a = blockArgs(*comm, *plan, setup, p, e, c.shape.replicas, c.datatype, c.op, c.E,
                              c.slice, b.in, b.out, b.scratchOf.data());
    a.table = tb.table; // the host emulation reads host memory
    a.progress = progress.data() + size_t(replica) * tbs;
    a.peers = b.peers.empty() ? nullptr : b.peers.data();
    a.abort = &comm->abortFlag;
    a.timeoutSeconds = Env::get().timeoutSeconds;
    a.error = &error;
    a.errorText = errorText;
    args.push_back(a);
  }
  std::vector<std::thread> blocks;
  std::string noThread;
  try {
    for (size_t i = 1; i < args.size(); ++i)
      blocks.emplace_back(plan->hostKernel, &args[i]);
  } catch (const std::system_error &e) {
    // The blocks started wait for those that could not, until the timeout.
    noThread = std::string("cannot start a threadblock's thread: ") + e.what();
  }
  if (!args.empty() && noThread.empty())
    plan->hostKernel(&args[0]);
  for (std::thread &t : blocks)
    t.join();
  if (!noThread.empty())
    return comm->fail(collSystemError, noThread);
  if (__atomic_load_n(&comm->abortFlag, __ATOMIC_ACQUIRE))
    return comm->fail(collAborted, "the communicator was aborted");
  if (error)
    return comm->fail(collResult_t(error), errorText);
  return collSuccess;
}

// After: the caller's output holds the result, divided for avg.
collResult_t finishOnHost(const LaunchCall &c, HostBuffers &b) {
  collComm *comm = c.comm;
  char *out = b.out;
  if (c.windows) {
    std::string err;
    if (collResult_t r = comm->bootstrap.barrier(err)) // every rank's stores are done
      return comm->fail(r, err);
    if (!b.registered)
      memcpy(b.userOut, out, c.outBytes);
    out = b.userOut;
  }
  if (c.op == collAvg && reduces(c.coll) && (c.coll != collc::kReduce || c.me == c.plan->root))
    divideBy(c.datatype, out, c.E, c.R);
  if (b.copyBack)
    memcpy(b.copyBack, out, b.unit);
  return collSuccess;
}

// After: the launch has run on the host emulation, threadblocks as threads.
collResult_t runOnHost(const LaunchCall &c, const AlgorithmSetup &setup) {
  HostBuffers b;
  layOutBuffers(c, b);
  growScratch(c, b);
  b.userOut = b.out;
  if (c.windows)
    if (collResult_t r = placeInWindows(c, b))
      return r;
  if (collResult_t r = runThreadblocks(c, setup, b))
    return r;
  return finishOnHost(c, b);
}

} // namespace

extern "C" collResult_t collLaunch(collComm_t comm, const void *algorithm, const void *sendbuff,
                                   void *recvbuff, size_t count, collDataType_t datatype,
                                   collRedOp_t op, collStream_t stream) {
  if (!comm || !algorithm)
    return refuse(comm, collInvalidArgument,
                  std::string("collLaunch: ") + (comm ? "algorithm" : "comm") + " is NULL");
  std::lock_guard<std::mutex> running(comm->launching);
  if (__atomic_load_n(&comm->abortFlag, __ATOMIC_ACQUIRE))
    return comm->fail(collAborted, "the communicator was aborted");
  LaunchCall c{
      comm,  static_cast<const AlgorithmDesc *>(algorithm), sendbuff, recvbuff, count, datatype, op,
      stream};
  if (collResult_t r = checkCall(c))
    return r;
  std::optional<ContextScope> device; // the GPU the communicator was made on
  if (c.gpu)
    device.emplace(comm->gpuContext());
  // Once per algorithm and communicator, at its first launch.
  if (c.gpu && !comm->setups.count(c.alg))
    if (collResult_t r = loadKernels(comm, c.alg))
      return r;
  pickPlan(c);
  if (collResult_t r = checkPlanRuns(c))
    return r;
  AlgorithmSetup *setup;
  std::optional<RelaxedCapture> relaxed; // held until the GPU launch is queued
  if (collResult_t r = connectFifos(c, relaxed, setup))
    return r;
  if (c.E == 0)
    return collSuccess;
  if (collResult_t r = chooseSlice(c))
    return r;
  if (c.gpu)
    return launchOnGpu(comm, GpuLaunch{c.alg, c.plan, setup, c.shape, sendbuff, recvbuff, c.E,
                                       c.slice, datatype, op, stream, c.windows});
  return runOnHost(c, *setup);
}

bool collrt::planRuns(collComm *comm, const AlgorithmDesc *alg, size_t count,
                      collDataType_t datatype, collRedOp_t op, std::string &why) {
  LaunchCall c{comm, alg, nullptr, nullptr, count, datatype, op, nullptr};
  std::string kept = std::move(comm->lastError);
  collResult_t r = checkCall(c);
  if (r == collSuccess) {
    pickPlan(c, true);
    r = checkPlanRuns(c, true);
  }
  if (r != collSuccess)
    why = comm->lastError;
  comm->lastError = std::move(kept);
  return r == collSuccess;
}

extern "C" collResult_t collRegisterAlgorithm(collComm_t comm, const void *algorithm) {
  if (!comm || !algorithm)
    return refuse(comm, collInvalidArgument,
                  std::string("collRegisterAlgorithm: ") + (comm ? "algorithm" : "comm") +
                      " is NULL");
  const auto *alg = static_cast<const AlgorithmDesc *>(algorithm);
  // nvcc's build: its kernels now, before any can spin. Where they do not
  // load (no GPU), the launch says why.
  if (alg->numPlans > 0 && !alg->plans[0].hostKernel) {
    ContextScope device(comm->gpuContext()); // modules load per context
    std::string kept = comm->lastError;
    if (loadKernels(comm, alg) != collSuccess)
      comm->lastError = kept;
  }
  comm->registered.push_back(alg);
  return collSuccess;
}

namespace {
collResult_t dispatch(collComm_t comm, int32_t coll, int root, const void *send, void *recv,
                      size_t count, collDataType_t type, collRedOp_t op, collStream_t stream) {
  if (!comm)
    return refuse(nullptr, collInvalidArgument, std::string(entryName(coll)) + ": comm is NULL");
  for (const AlgorithmDesc *alg : comm->registered) {
    const PlanDesc &first = alg->plans[0];
    if (alg->numPlans < 1 || first.collective != coll || first.ranks != comm->nranks ||
        ((coll == collc::kBroadcast || coll == collc::kReduce) && first.root != root))
      continue;
    if (Env::get().debug && comm->rank == 0)
      fprintf(stderr,
              "collc INFO %s of %zu elements: algorithm %s (%s), the first registered "
              "for %d ranks\n",
              collectiveName(coll), count, alg->name, alg->source, comm->nranks);
    return collLaunch(comm, alg, send, recv, count, type, op, stream);
  }
  return comm->fail(collInvalidUsage, std::string("no registered algorithm does ") +
                                          collectiveName(coll) + " on " +
                                          std::to_string(comm->nranks) + " ranks" +
                                          (root >= 0 ? " from root " + std::to_string(root) : ""));
}
} // namespace

extern "C" {
collResult_t collAllReduce(const void *s, void *r, size_t n, collDataType_t t, collRedOp_t op,
                           collComm_t c, collStream_t st) {
  return dispatch(c, collc::kAllReduce, -1, s, r, n, t, op, st);
}
collResult_t collAllGather(const void *s, void *r, size_t n, collDataType_t t, collComm_t c,
                           collStream_t st) {
  return dispatch(c, collc::kAllGather, -1, s, r, n, t, collSum, st);
}
collResult_t collReduceScatter(const void *s, void *r, size_t n, collDataType_t t, collRedOp_t op,
                               collComm_t c, collStream_t st) {
  return dispatch(c, collc::kReduceScatter, -1, s, r, n, t, op, st);
}
collResult_t collAlltoAll(const void *s, void *r, size_t n, collDataType_t t, collComm_t c,
                          collStream_t st) {
  return dispatch(c, collc::kAllToAll, -1, s, r, n, t, collSum, st);
}
collResult_t collBroadcast(const void *s, void *r, size_t n, collDataType_t t, int root,
                           collComm_t c, collStream_t st) {
  return dispatch(c, collc::kBroadcast, root, s, r, n, t, collSum, st);
}
collResult_t collReduce(const void *s, void *r, size_t n, collDataType_t t, collRedOp_t op,
                        int root, collComm_t c, collStream_t st) {
  return dispatch(c, collc::kReduce, root, s, r, n, t, op, st);
}
}
