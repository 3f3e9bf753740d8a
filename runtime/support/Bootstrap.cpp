//===- Bootstrap.cpp - Rendezvous of ranks over TCP ------------------------===//
#include "support/Bootstrap.h"

#include "support/Env.h"
#include "support/Socket.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <system_error>
#include <thread>

using namespace collrt;

namespace {

struct RootHello {
  int32_t rank, nranks;
  uint8_t secret[kSecretBytes];
};

using Secret = std::array<uint8_t, kSecretBytes>;

// Serves rounds of allgathers until a rank leaves or fails.
void serveRoot(int listener, Secret secret, double timeout) {
  std::vector<int> peers;
  int nranks = -1, arrived = 0;
  std::string ignored;
  // The first rank with the secret says how many ranks there are.
  auto admit = [&](int fd, const std::string &bytes) {
    RootHello h;
    memcpy(&h, bytes.data(), sizeof h);
    if (!sameSecret(h.secret, secret.data()) || h.nranks < 1 || h.nranks > kMaxRanks ||
        (nranks >= 0 && h.nranks != nranks) || h.rank < 0 || h.rank >= h.nranks ||
        (nranks >= 0 && peers[h.rank] >= 0))
      return false;
    if (nranks < 0) {
      nranks = h.nranks;
      peers.assign(nranks, -1);
    }
    peers[h.rank] = fd;
    ++arrived;
    return true;
  };
  std::string why;
  if (admitConnections(
          listener, sizeof(RootHello), timeout, admit,
          [&] { return nranks > 0 && arrived == nranks; }, why) == collSystemError)
    // The ranks only see their connections close: say why here, where the
    // root runs (out of file descriptors, as a rank may be).
    fprintf(stderr, "collrt: the bootstrap root stops: %s\n", why.c_str());
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
    // Rank 0 last: it is usually the rank whose process runs this root (it
    // made the unique id), and once it has the round it may exit, ending
    // this thread before the others have theirs.
    for (int r = nranks - 1; r >= 0 && ok; --r)
      ok = writeFrame(peers[r], all, ignored);
  }
  for (int fd : peers)
    if (fd >= 0)
      close(fd);
}

/// Serves the root on a thread of its own, or says why the system gave none.
collResult_t startRoot(int listener, const Secret &secret, double timeout, std::string &error) {
  try {
    std::thread(serveRoot, listener, secret, timeout).detach();
    return collSuccess;
  } catch (const std::system_error &e) {
    close(listener);
    error = std::string("cannot start the bootstrap root's thread: ") + e.what();
    return collSystemError;
  }
}

} // namespace

bool collrt::randomBytes(void *data, size_t size, std::string &error) {
  char *p = static_cast<char *>(data);
  while (size) {
    ssize_t n = getrandom(p, size, 0);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0) {
      error = std::string("getrandom: ") + strerror(errno);
      return false;
    }
    p += n;
    size -= size_t(n);
  }
  return true;
}

bool collrt::sameSecret(const uint8_t *a, const uint8_t *b) {
  // No early exit: every byte is looked at wherever the first difference is.
  volatile uint8_t diff = 0;
  for (size_t i = 0; i < kSecretBytes; ++i)
    diff = uint8_t(diff | (a[i] ^ b[i]));
  return diff == 0;
}

collResult_t collrt::startBootstrapRoot(UniqueIdData &id, std::string &error) {
  const Env &env = Env::get();
  uint32_t addr;
  if (!localAddress(env.bootstrapAddr, env.socketIfname, addr, error))
    return collInvalidArgument;
  if (!randomBytes(&id.magic, sizeof id.magic, error) ||
      !randomBytes(id.secret, sizeof id.secret, error))
    return collSystemError;
  int listener = listenTcp(addr, error);
  if (listener < 0)
    return collSystemError;
  sockaddr_in bound{};
  socklen_t len = sizeof bound;
  getsockname(listener, reinterpret_cast<sockaddr *>(&bound), &len);
  id.addr = addr;
  id.port = bound.sin_port;
  Secret secret;
  memcpy(secret.data(), id.secret, kSecretBytes);
  return startRoot(listener, secret, env.timeoutSeconds, error);
}

collResult_t collrt::startBootstrapRootAt(const UniqueIdData &id, std::string &error) {
  int listener = listenTcp(id.addr, error, ntohs(id.port));
  if (listener < 0)
    return collSystemError;
  Secret secret;
  memcpy(secret.data(), id.secret, kSecretBytes);
  return startRoot(listener, secret, Env::get().timeoutSeconds, error);
}

Bootstrap::~Bootstrap() {
  if (fd >= 0)
    close(fd);
}

collResult_t Bootstrap::connect(const UniqueIdData &id, int rank, int n, double t,
                                std::string &error, AbortFlag flag) {
  nranks = n;
  timeout = t;
  abort = flag;
  memcpy(secret_, id.secret, kSecretBytes);
  fd = connectTcp(id.addr, id.port, timeout, error);
  if (fd < 0)
    return collSystemError;
  RootHello h{rank, nranks, {}};
  memcpy(h.secret, id.secret, kSecretBytes);
  if (!writeFull(fd, &h, sizeof h, error))
    return collSystemError;
  return collSuccess;
}

PeerHello Bootstrap::hello(int rank) const {
  PeerHello h{rank, {}};
  memcpy(h.secret, secret_, kSecretBytes);
  return h;
}

int Bootstrap::admit(const std::string &bytes) const {
  PeerHello h;
  if (bytes.size() != sizeof h)
    return -1;
  memcpy(&h, bytes.data(), sizeof h);
  return sameSecret(h.secret, secret_) ? h.rank : -1;
}

collResult_t Bootstrap::allgather(const std::string &mine, std::vector<std::string> &all,
                                  std::string &error) {
  std::string frame;
  if (!writeFrame(fd, mine, error) || !readFrame(fd, frame, timeout, error, abort)) {
    if (aborted(abort)) {
      error = "the communicator was aborted";
      return collAborted;
    }
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
