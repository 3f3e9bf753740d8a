//===- Bootstrap.h - Rendezvous of ranks over TCP --------------------------===//
//
// NCCL-style unique-id bootstrap: collGetUniqueId starts a root thread that
// listens on a TCP port; the id carries its address, a random magic that
// names the group, and a random secret. Every rank connects to the root, and
// the root then serves allgathers: it collects one blob per rank and sends
// everyone all of them. A rank that dies closes its socket, and the root
// then drops everyone, so the others fail at their next exchange instead of
// hanging.
//
// The secret is what makes a connection a member of the group: whoever holds
// the id may join, nobody else. Every connection between ranks, to the root
// or to a peer, presents it before anything else is read from it; the
// accepting side compares in constant time and closes the connection on a
// mismatch. It travels in the clear, so the network between the ranks must
// be one that only the job's own machines can read (loopback by default).
//
//===----------------------------------------------------------------------===//
#ifndef COLLRT_BOOTSTRAP_H
#define COLLRT_BOOTSTRAP_H

#include "collrt.h"
#include "support/Socket.h"

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace collrt {

/// The most ranks of one communicator: the root keeps a descriptor per
/// rank, and a larger count would only allocate for ranks that never come.
constexpr int kMaxRanks = 1 << 20;

/// 256 bits: far beyond guessing, and still small in a 128-byte id.
constexpr size_t kSecretBytes = 32;

struct UniqueIdData {
  uint64_t magic; // tells groups apart; public: no name a rank listens on derives from it
  uint32_t addr;  // IPv4, network order
  uint16_t port;  // network order
  uint8_t secret[kSecretBytes];
};
static_assert(sizeof(UniqueIdData) <= COLL_UNIQUE_ID_BYTES, "the id must fit in collUniqueId");

/// What a rank sends first on every connection to a peer.
struct PeerHello {
  int32_t rank;
  uint8_t secret[kSecretBytes];
};

/// Binds the root's socket and starts its thread.
collResult_t startBootstrapRoot(UniqueIdData &id, std::string &error);
/// The same at the address, port and secret that `id` already names (a
/// rendezvous every rank computes from its environment).
collResult_t startBootstrapRootAt(const UniqueIdData &id, std::string &error);

/// Fills `data` from the kernel's random source.
bool randomBytes(void *data, size_t size, std::string &error);
/// Whether the two secrets are equal, in time that does not depend on where
/// they differ.
bool sameSecret(const uint8_t *a, const uint8_t *b);

class Bootstrap {
public:
  ~Bootstrap();
  /// Joins the group; its exchanges then end early, with collAborted, once
  /// `abort` is set.
  collResult_t connect(const UniqueIdData &id, int rank, int nranks, double timeout,
                       std::string &error, AbortFlag abort = nullptr);
  /// Every rank passes one blob and gets everyone's, in rank order.
  collResult_t allgather(const std::string &mine, std::vector<std::string> &all,
                         std::string &error);
  collResult_t barrier(std::string &error) {
    std::vector<std::string> all;
    return allgather("", all, error);
  }
  /// The communicator's abort flag, for the transports' waits to watch too.
  AbortFlag abortFlag() const { return abort; }
  /// The hello this rank sends to its peers.
  PeerHello hello(int rank) const;
  /// The rank a peer's hello names if it carries the group's secret, else -1.
  int admit(const std::string &hello) const;

private:
  int fd = -1;
  int nranks = 0;
  double timeout = 60;
  AbortFlag abort = nullptr;
  uint8_t secret_[kSecretBytes] = {};
};

} // namespace collrt

#endif // COLLRT_BOOTSTRAP_H
