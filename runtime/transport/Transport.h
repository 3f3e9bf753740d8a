//===- Transport.h - How ranks see each other's memory ---------------------===//
//
// One interface for every transport, and one transport per pair of ranks:
// PeerTransports.h picks, for each peer, the first transport of an ordered
// table whose canConnect accepts the pair (as NCCL's transport.cc does), and
// COLL_TRANSPORT can force one for every pair. The host has `shm` (memfd
// shared memory, descriptors passed over Unix sockets like CUDA VMM POSIX-fd
// handles) for ranks on one machine, `nvl` (the same memory, named by
// fabric handles) between machines of one NVLink domain, `ib` (RDMA writes
// and a proxy thread) between machines whose ranks all open an RDMA
// device, and `socket` (TCP and the same proxy) for the rest; GPU
// transports implement the same calls with device memory.
//
// A window is made collectively: each rank allocates its part (where its
// receive FIFOs live), and then every transport of the table, in order,
// gives the peers it serves access to it and maps what it can of theirs.
//
//===----------------------------------------------------------------------===//
#ifndef COLLRT_TRANSPORT_H
#define COLLRT_TRANSPORT_H

#include "collc/abi.h"
#include "collrt.h"
#include "support/FifoLayout.h"
#include "transport/MemoryBackend.h"

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace collrt {

class Bootstrap;

struct Window {
  int id = -1;              // the same on every rank: windows are made collectively
  std::vector<char *> base; // every rank's window where mapped here, else null
  std::vector<size_t> size;
  std::vector<uint64_t> handle; // the memory backend's, per rank mapped here
  int fd = -1;                  // this rank's part as a descriptor while it is being shared
  const MemoryBackend *memory = nullptr; // what every part is made of; null: host
  // Where this rank's FIFO slots lie when apart from its part, in the same
  // layout: GPU memory that only an RDMA NIC writes, while the headers stay
  // where the proxy moves the tails. slotMemory also makes the mirrors'
  // slots of the proxied sends into the window.
  Region slots;
  const MemoryBackend *slotMemory = nullptr;
};

/// This rank's part of a new window: `bytes` of zeroed memory, rounded up to
/// whole pages, with a descriptor that shm passes to its peers; host memory
/// unless `memory` says otherwise.
collResult_t allocateWindow(size_t bytes, int rank, int nranks, Window &window, std::string &error,
                            const MemoryBackend *memory = nullptr);
/// Unmaps this rank's part of `window` and closes its descriptor.
void freeWindow(Window &window, int rank);
/// Maps rank `owner`'s part of `window` from the descriptor it passed.
collResult_t importPart(Window &window, int owner, int fd, size_t bytes, std::string &error);
/// Maps rank `owner`'s part of `window` from the fabric handle it sent.
collResult_t importFabricPart(Window &window, int owner, const FabricHandle &handle, size_t bytes,
                              std::string &error);
/// Unmaps rank `owner`'s part of `window`, imported by importPart.
void releasePart(Window &window, int owner);

/// What a rank tells every other at init, so that each can work out which
/// transport joins every pair of ranks: the same answer on every rank.
struct PeerInfo {
  std::string host;   // hostname and boot id, or COLL_HOSTID
  std::string rdma;   // the RDMA device the rank opens; empty if none
  std::string noRdma; // why none
  std::string nvlink; // the NVLink domain its GPU is in (COLL_NVLINK_DOMAIN); empty if none
};

/// This rank's receive FIFO at `offset` of its part of `w`, with the slots
/// where the window keeps them.
inline collc::Fifo fifoIn(const Window &w, int rank, size_t offset, int32_t slots,
                          int64_t slotBytes, int32_t protocol) {
  collc::Fifo f = fifoAt(w.base[rank] + offset, slots, slotBytes, protocol);
  if (w.slots.base)
    f.slots = w.slots.base + offset + fifoHeaderBytes(slots);
  return f;
}

class Transport {
public:
  virtual ~Transport() = default;
  virtual const char *name() const = 0;
  /// Collective over every rank of the communicator: gives the peers this
  /// transport serves access to this rank's part of `window` (`base[rank]`,
  /// `size[rank]`, `fd`) and maps what it can of theirs into `base[peer]`.
  virtual collResult_t shareWindow(Window &window, std::string &error) = 0;
  /// The FIFO at `offset` in `owner`'s window, as this rank's sender uses it.
  virtual collResult_t sendFifo(Window &window, int owner, size_t offset, int32_t slots,
                                int64_t slotBytes, int32_t protocol, collc::Fifo &fifo,
                                std::string &error) = 0;
  /// Announces this rank's receive FIFO at `offset`, fed by `peer`.
  virtual collResult_t recvFifo(Window & /*window*/, int /*peer*/, size_t /*offset*/,
                                const collc::Fifo & /*fifo*/, std::string & /*error*/) {
    return collSuccess;
  }
  /// Unmaps what shareWindow mapped of the peers' windows.
  virtual void release(Window & /*window*/) {}
  /// Passes descriptor `fd` to `peer`, which takes it with receiveFd (the
  /// handle of a multicast object, say); only transports between processes
  /// of one machine can.
  virtual collResult_t passFd(int /*peer*/, int /*fd*/, std::string &error) {
    error = std::string(name()) + " cannot pass descriptors between processes";
    return collInvalidUsage;
  }
  /// Whether passFd and receiveFd work.
  virtual bool passesFds() const { return false; }
  /// A descriptor that `peer` passed with passFd; the caller owns it.
  virtual collResult_t receiveFd(int /*peer*/, int & /*fd*/, std::string &error) {
    error = std::string(name()) + " cannot pass descriptors between processes";
    return collInvalidUsage;
  }
  /// Whether a proxy thread ships the steps. Senders then publish every
  /// step's tail and wire size, whatever the protocol; and a peer's proxy
  /// may still write into this rank's part of a released window, which
  /// then lives as long as the transport.
  virtual bool proxied() const { return false; }
  /// Whether a proxy copies steps into this rank's FIFOs' slots: then they
  /// cannot lie apart, where only the network's puts reach (Window::slots).
  virtual bool copiesSteps() const { return false; }
  /// Bounds how long destroying the transport waits for its peers: to ship
  /// what is queued for them, and for them to close. After a failed wait a
  /// peer may be stopped, and waiting the whole timeout for it again would
  /// only delay the report of the failure.
  virtual void limitClose(double /*seconds*/) {}
};

/// Makes a transport on this rank for the peers marked in `peers` (one entry
/// per rank). Collective: every rank makes every transport that serves some
/// pair of the group, even one that serves none of its own peers.
using MakeTransport = std::unique_ptr<Transport> (*)(Bootstrap &bootstrap, int rank,
                                                     const std::vector<bool> &peers, double timeout,
                                                     collResult_t &result, std::string &error);

/// One row of the table of transports.
struct TransportKind {
  const char *name;
  /// Whether shareWindow maps the windows of the peers it serves (sets
  /// their `base`), so that this rank can reach into their memory.
  bool mapsPeers;
  /// Whether the transport can join ranks that said `self` and `peer` at
  /// init. Symmetric, so that both ends of a pair choose alike.
  bool (*canConnect)(const PeerInfo &self, const PeerInfo &peer);
  MakeTransport make;
  /// Why canConnect refuses the pair, for the error when COLL_TRANSPORT
  /// forces this transport; null where the pair's hosts say enough.
  std::string (*whyNot)(const PeerInfo &self, const PeerInfo &peer) = nullptr;
};

/// What admitConnections' `result` means to the setup of `transport`: a
/// timeout is a peer that never connected, the peer's failure
/// (collRemoteError); any other error is this process's. `error` gets the
/// transport's name in front.
inline collResult_t admittedPeers(collResult_t result, const char *transport, std::string &error) {
  if (result == collTimeout) {
    error = std::string(transport) + ": a peer did not connect (" + error + ")";
    return collRemoteError;
  }
  if (result != collSuccess)
    error = std::string(transport) + ": " + error;
  return result;
}

/// Ranks on one machine (Shm.cpp).
extern const TransportKind shmTransport;
/// Ranks on different hosts of one NVLink domain, by fabric handles
/// (Nvl.cpp).
extern const TransportKind nvlTransport;
/// Ranks that all open an RDMA device, in practice on different machines
/// (Ib.cpp).
extern const TransportKind ibTransport;
/// Any two ranks that can reach each other over TCP (Socket.cpp).
extern const TransportKind socketTransport;

} // namespace collrt

#endif // COLLRT_TRANSPORT_H
