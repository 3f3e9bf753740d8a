//===- Bootstrap.h - Rendezvous of ranks over TCP --------------------------===//
//
// NCCL-style unique-id bootstrap: collGetUniqueId starts a root thread that
// listens on a TCP port; the id carries its address and a random magic.
// Every rank connects to the root, and the root then serves allgathers: it
// collects one blob per rank and sends everyone all of them. A rank that
// dies closes its socket, and the root then drops everyone, so the others
// fail at their next exchange instead of hanging.
//
//===----------------------------------------------------------------------===//
#ifndef COLLRT_BOOTSTRAP_H
#define COLLRT_BOOTSTRAP_H

#include "collrt.h"

#include <cstdint>
#include <string>
#include <vector>

namespace collrt {

struct UniqueIdData {
  uint64_t magic;
  uint32_t addr; // IPv4, network order
  uint16_t port; // network order
};

/// Binds the root's socket and starts its thread.
collResult_t startBootstrapRoot(UniqueIdData &id, std::string &error);

class Bootstrap {
public:
  ~Bootstrap();
  collResult_t connect(const UniqueIdData &id, int rank, int nranks, double timeout,
                       std::string &error);
  /// Every rank passes one blob and gets everyone's, in rank order.
  collResult_t allgather(const std::string &mine, std::vector<std::string> &all,
                         std::string &error);
  collResult_t barrier(std::string &error) {
    std::vector<std::string> all;
    return allgather("", all, error);
  }
  uint64_t magic() const { return magic_; }

private:
  int fd = -1;
  int nranks = 0;
  double timeout = 60;
  uint64_t magic_ = 0;
};

} // namespace collrt

#endif // COLLRT_BOOTSTRAP_H
