//===- Shm.cpp - Shared memory between processes of one machine -----------===//
//
// Each rank's part of a window is a memfd (HostMemory.cpp). Its descriptor
// travels to every peer on the same host over a Unix
// socket with SCM_RIGHTS, the same flow as exporting a CUDA VMM allocation
// as a POSIX fd, and each peer maps it. Sockets are made once, at init.
// Their names are in the abstract namespace, which any local process can
// reach, so a connection counts as a peer's only once it has presented the
// group's secret. Any local process can also bind a name first, and see
// those bound (/proc/net/unix): so each rank listens on 128 random bits,
// which nobody can take before it, and tells its peers over the bootstrap.
//
//===----------------------------------------------------------------------===//
#include "transport/Transport.h"

#include "support/Bootstrap.h"
#include "support/Socket.h"

#include <cerrno>
#include <string_view>
#include <unistd.h>

using namespace collrt;

namespace {

constexpr size_t kNameBits = 128;
constexpr std::string_view kNamePrefix = "collc-";

/// A listener's name that no other process can compute: "collc-" and 128
/// random bits in hex.
bool randomName(std::string &name, std::string &error) {
  uint8_t bits[kNameBits / 8];
  if (!randomBytes(bits, sizeof bits, error))
    return false;
  static const char digits[] = "0123456789abcdef";
  name = kNamePrefix;
  for (uint8_t b : bits) {
    name += digits[b >> 4];
    name += digits[b & 15];
  }
  return true;
}

class ShmTransport : public Transport {
public:
  ShmTransport(int rank, const std::vector<bool> &peers, double timeout, AbortFlag abort)
      : rank(rank), nranks(int(peers.size())), timeout(timeout), abort(abort), peers(peers),
        out(nranks, -1), in(nranks, -1) {}
  ~ShmTransport() override {
    for (int fd : out)
      if (fd >= 0)
        close(fd);
    for (int fd : in)
      if (fd >= 0)
        close(fd);
  }

  const char *name() const override { return "shm"; }

  collResult_t connect(Bootstrap &boot, std::string &error) {
    std::string me;
    int listener = randomName(me, error) ? listenUnix(me, error) : -1;
    if (listener < 0) {
      error = "shm: " + error;
      return collSystemError;
    }
    // Every listener exists once its name has gone round.
    std::vector<std::string> names;
    collResult_t res = boot.allgather(me, names, error);
    const PeerHello hello = boot.hello(rank);
    int expected = 0;
    for (int p = 0; p < nranks && res == collSuccess; ++p) {
      if (!peers[p])
        continue;
      ++expected;
      if (names[p].size() != me.size() || names[p].compare(0, kNamePrefix.size(), kNamePrefix)) {
        error = "shm: rank " + std::to_string(p) + " named no socket of its own";
        res = collInternalError;
        break;
      }
      out[p] = connectUnix(names[p], timeout, error);
      if (out[p] < 0 || !writeFull(out[p], &hello, sizeof hello, error))
        res = collSystemError;
    }
    int arrived = 0;
    auto admit = [&](int fd, const std::string &bytes) {
      int from = boot.admit(bytes);
      if (from < 0 || from >= nranks || !peers[from] || in[from] >= 0)
        return false;
      in[from] = fd;
      ++arrived;
      return true;
    };
    if (res == collSuccess) {
      res = admittedPeers(admitConnections(
                              listener, sizeof(PeerHello), timeout, admit,
                              [&] { return arrived == expected; }, error),
                          name(), error);
    }
    close(listener);
    return res;
  }

  collResult_t sendFifo(Window &w, int owner, size_t offset, int32_t slots, int64_t slotBytes,
                        int32_t protocol, collc::Fifo &fifo, std::string &) override {
    fifo = fifoAt(w.base[owner] + offset, slots, slotBytes, protocol);
    return collSuccess;
  }

  // Each peer gets this rank's descriptor, then its size (a CUDA handle's
  // descriptor, unlike a memfd, does not tell it).
  collResult_t shareWindow(Window &w, std::string &error) override {
    collResult_t res = collSuccess;
    const uint64_t bytes = w.size[rank];
    for (int p = 0; p < nranks && res == collSuccess; ++p)
      if (peers[p] &&
          (!sendFd(out[p], w.fd, rank, error) || !writeFull(out[p], &bytes, sizeof bytes, error))) {
        res = errno == EPIPE || errno == ECONNRESET ? collRemoteError : collSystemError;
        error = "shm: cannot pass this rank's window to rank " + std::to_string(p) + ": " + error;
      }
    for (int p = 0; p < nranks && res == collSuccess; ++p) {
      if (!peers[p])
        continue;
      int32_t tag;
      uint64_t theirs = 0;
      int peerFd = recvFd(in[p], tag, timeout, error, abort);
      if (peerFd < 0 || tag != p ||
          !readFull(in[p], &theirs, sizeof theirs, timeout, error, abort)) {
        if (peerFd >= 0)
          close(peerFd);
        res = lost("no window from rank " + std::to_string(p), error);
        break;
      }
      res = importPart(w, p, peerFd, size_t(theirs), error);
      if (res != collSuccess)
        error = "shm: cannot map the window of rank " + std::to_string(p) + ": " + error;
      close(peerFd);
    }
    if (res != collSuccess)
      release(w);
    return res;
  }

  bool passesFds() const override { return true; }

  collResult_t passFd(int peer, int fd, std::string &error) override {
    if (sendFd(out[peer], fd, rank, error))
      return collSuccess;
    error = "shm: cannot pass a descriptor to rank " + std::to_string(peer) + ": " + error;
    return errno == EPIPE || errno == ECONNRESET ? collRemoteError : collSystemError;
  }

  collResult_t receiveFd(int peer, int &fd, std::string &error) override {
    int32_t tag;
    fd = recvFd(in[peer], tag, timeout, error, abort);
    if (fd >= 0 && tag == peer)
      return collSuccess;
    if (fd >= 0)
      close(fd);
    fd = -1;
    return lost("no descriptor from rank " + std::to_string(peer), error);
  }

  void release(Window &w) override {
    for (int p = 0; p < nranks; ++p)
      if (peers[p])
        releasePart(w, p);
  }

private:
  // A wait for a peer that ended without what it waited for: the peer's
  // failure, unless the communicator was aborted meanwhile.
  collResult_t lost(const std::string &what, std::string &error) const {
    if (aborted(abort)) {
      error = "the communicator was aborted";
      return collAborted;
    }
    error = "shm: " + what + " (" + error + ")";
    return collRemoteError;
  }

  int rank, nranks;
  double timeout;
  AbortFlag abort;
  std::vector<bool> peers;  // the ranks this transport serves
  std::vector<int> out, in; // sockets to and from each of them
};

} // namespace

namespace {

std::unique_ptr<Transport> makeShm(Bootstrap &boot, int rank, const std::vector<bool> &peers,
                                   double timeout, collResult_t &result, std::string &error) {
  auto t = std::make_unique<ShmTransport>(rank, peers, timeout, boot.abortFlag());
  result = t->connect(boot, error);
  if (result != collSuccess)
    return nullptr;
  return t;
}

// Abstract Unix sockets and memfds reach the processes of one kernel.
bool sameHost(const PeerInfo &self, const PeerInfo &peer) { return self.host == peer.host; }

} // namespace

const TransportKind collrt::shmTransport = {"shm", true, sameHost, makeShm};
