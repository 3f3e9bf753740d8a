//===- PeerTransports.h - One transport for each pair of ranks ------------===//
//
// At init every rank publishes what its peers need to judge it (PeerInfo),
// and every rank then works out the same choice for every pair of the group:
// the first transport of the table whose canConnect accepts the pair, or the
// one that COLL_TRANSPORT names, for every pair. Every transport that serves
// some pair is made on every rank, in table order, so that the collective
// steps of their setups line up on all ranks.
//
//===----------------------------------------------------------------------===//
#ifndef COLLRT_PEERTRANSPORTS_H
#define COLLRT_PEERTRANSPORTS_H

#include "transport/MemoryBackend.h"
#include "transport/Transport.h"

#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace collrt {

/// The transports in order of preference: those that share memory first
/// (p2p, when it exists, goes before shm), the network last (ib before
/// socket).
const std::vector<const TransportKind *> &transportTable();

/// Fills `choice[a][b]` with the index in `table` of the transport that
/// joins ranks a and b (-1 where a == b): the first that can, or `forced`
/// for every pair when it is not empty. False, saying why in `error`, when
/// `forced` is not in the table, cannot join some pair, or no transport can.
bool chooseTransports(const std::vector<const TransportKind *> &table,
                      const std::vector<PeerInfo> &ranks, const std::string &forced,
                      std::vector<std::vector<int>> &choice, std::string &error);

/// What this process tells its peers: its host is its hostname and boot id
/// (or COLL_HOSTID, where that is set), and whether it opens an RDMA device.
PeerInfo localPeerInfo();

/// Every transport of one rank, and which serves which peer.
class PeerTransports {
public:
  ~PeerTransports();

  /// Collective: exchanges PeerInfo, chooses, and makes the transports.
  collResult_t connect(Bootstrap &boot, int rank, int nranks, const PeerInfo &self,
                       const std::string &forced, double timeout, std::string &error);

  /// The transport that joins this rank with `peer`; "self" for this rank.
  const char *nameOf(int peer) const;
  /// Which transport serves which peers, in a line: "shm to 1-3, socket to 4 6".
  std::string describe() const;
  /// Whether every rank of the group maps every other's windows (every pair
  /// shares memory), as the host emulation of peer steps needs. The same
  /// answer on every rank.
  bool mapsEveryRank() const { return everyRankMapped; }
  /// Whether a proxy thread ships the steps between ranks `a` and `b`
  /// (any pair of the group, either way round: every rank knows every
  /// pair's one transport).
  bool proxied(int a, int b) const { return a != b && made[pairs[a][b]]->proxied(); }

  /// Collective: this rank's part of a new window of `bytes`, and each
  /// peer's where its transport maps it; host memory unless `memory` says.
  /// With `slotMemory`, the FIFO slots of proxied connections go there where
  /// the network transports can put steps into it (Window::slots).
  collResult_t exchangeWindow(size_t bytes, Window &window, std::string &error,
                              const MemoryBackend *memory = nullptr,
                              const MemoryBackend *slotMemory = nullptr);
  /// Collective: gives the peers this rank's part of `window` (`base[rank]`,
  /// `size[rank]`, `fd`), memory the caller owns, and maps theirs.
  collResult_t shareWindow(Window &window, std::string &error);
  /// Unmaps the peers' parts of a shared window; this rank's part stays.
  void unshare(Window &window);
  collResult_t sendFifo(Window &window, int owner, size_t offset, int32_t slots, int64_t slotBytes,
                        int32_t protocol, collc::Fifo &fifo, std::string &error);
  collResult_t recvFifo(Window &window, int peer, size_t offset, const collc::Fifo &fifo,
                        std::string &error);
  void release(Window &window);
  /// Bounds how long destroying the transports waits for the peers
  /// (Transport::limitClose).
  void limitClose(double seconds);
  /// Whether every pair of the group can pass descriptors (all on shm), as
  /// broadcastFd needs. The same answer on every rank.
  bool passesFdsEverywhere() const;
  /// Collective: rank `root`'s descriptor `fd` reaches every rank, as a
  /// descriptor of its own there (the caller owns it); root keeps its own.
  collResult_t broadcastFd(int root, int &fd, std::string &error);

private:
  int rank = 0;
  std::vector<std::unique_ptr<Transport>> made; // per table row; null if the group has no use
  std::vector<int> of;                          // per rank: the row that serves it, -1 for self
  std::vector<std::vector<int>> pairs;          // of every rank, as `of` is of this one
  bool everyRankMapped = false;
  int windows = 0;
  // This rank's parts of released windows that a transport may still
  // write, with what they are made of.
  std::vector<std::pair<Region, const MemoryBackend *>> retired;
};

} // namespace collrt

#endif // COLLRT_PEERTRANSPORTS_H
