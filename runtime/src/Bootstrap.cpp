//===- Bootstrap.cpp - Rendezvous of ranks over TCP ------------------------===//
#include "Bootstrap.h"

#include "Env.h"
#include "Socket.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <random>
#include <thread>

using namespace collrt;

namespace {

struct Hello {
  uint64_t magic;
  int32_t rank, nranks;
};

// Serves rounds of allgathers until a rank leaves or fails.
void serveRoot(int listener, uint64_t magic, double timeout) {
  std::vector<int> peers;
  int nranks = -1, arrived = 0;
  std::string ignored;
  while (nranks < 0 || arrived < nranks) {
    int fd = acceptWithin(listener, timeout, ignored);
    if (fd < 0)
      break;
    Hello h{};
    if (!readFull(fd, &h, sizeof h, timeout, ignored) || h.magic != magic || h.nranks < 1 ||
        (nranks >= 0 && h.nranks != nranks) || h.rank < 0 || h.rank >= h.nranks ||
        (nranks >= 0 && peers[h.rank] >= 0)) {
      close(fd);
      continue;
    }
    if (nranks < 0) {
      nranks = h.nranks;
      peers.assign(nranks, -1);
    }
    peers[h.rank] = fd;
    ++arrived;
  }
  close(listener);
  bool ok = nranks > 0 && arrived == nranks;
  // Rounds: one frame from every rank, then every frame to every rank. The
  // wait for a round has no deadline: ranks compute between exchanges.
  while (ok) {
    std::vector<std::string> blobs(nranks);
    for (int r = 0; r < nranks && ok; ++r)
      ok = readFrame(peers[r], blobs[r], -1, ignored);
    if (!ok)
      break;
    std::string all;
    for (const std::string &b : blobs)
      appendFrame(all, b);
    for (int r = 0; r < nranks && ok; ++r)
      ok = writeFrame(peers[r], all, ignored);
  }
  for (int fd : peers)
    if (fd >= 0)
      close(fd);
}

} // namespace

collResult_t collrt::startBootstrapRoot(UniqueIdData &id, std::string &error) {
  const Env &env = Env::get();
  in_addr addr{};
  if (inet_pton(AF_INET, env.bootstrapAddr.c_str(), &addr) != 1) {
    error = "COLL_BOOTSTRAP_ADDR '" + env.bootstrapAddr + "' is not an IPv4 address";
    return collInvalidArgument;
  }
  int listener = listenTcp(error);
  if (listener < 0)
    return collSystemError;
  sockaddr_in bound{};
  socklen_t len = sizeof bound;
  getsockname(listener, reinterpret_cast<sockaddr *>(&bound), &len);
  std::random_device rd;
  id.magic = (uint64_t(rd()) << 32) ^ rd() ^
             uint64_t(std::chrono::steady_clock::now().time_since_epoch().count());
  id.addr = addr.s_addr;
  id.port = bound.sin_port;
  std::thread(serveRoot, listener, id.magic, env.timeoutSeconds).detach();
  return collSuccess;
}

Bootstrap::~Bootstrap() {
  if (fd >= 0)
    close(fd);
}

collResult_t Bootstrap::connect(const UniqueIdData &id, int rank, int n, double t,
                                std::string &error) {
  nranks = n;
  timeout = t;
  magic_ = id.magic;
  fd = connectTcp(id.addr, id.port, timeout, error);
  if (fd < 0)
    return collSystemError;
  Hello h{id.magic, rank, nranks};
  if (!writeFull(fd, &h, sizeof h, error))
    return collSystemError;
  return collSuccess;
}

collResult_t Bootstrap::allgather(const std::string &mine, std::vector<std::string> &all,
                                  std::string &error) {
  std::string frame;
  if (!writeFrame(fd, mine, error) || !readFrame(fd, frame, timeout, error)) {
    error = "bootstrap: lost contact with the other ranks (" + error +
            "); a rank failed, left or never arrived";
    return collRemoteError;
  }
  all.clear();
  size_t at = 0;
  for (int r = 0; r < nranks; ++r) {
    std::string b;
    if (!takeFrame(frame, at, b)) {
      error = "bootstrap: malformed reply from the root";
      return collInternalError;
    }
    all.push_back(std::move(b));
  }
  return collSuccess;
}
