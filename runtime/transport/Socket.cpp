//===- Socket.cpp - TCP and a proxy thread, standing in for RDMA ----------===//
//
// Ranks share no memory: the proxy engine (Proxy.h) ships published steps
// and returns credits, and this file is its wire over TCP, one connection
// per peer: the setup, byte queues each way, and a close that loses nothing.
// This is the shape of NCCL's network transport, with TCP where it has RDMA
// writes.
//
// A peer's connection counts only once it has presented the group's secret,
// and every message is checked (Frame.h) before it is acted on: a peer that
// sends a malformed one loses its connection.
//
//===----------------------------------------------------------------------===//
#include "transport/Transport.h"

#include "support/Bootstrap.h"
#include "support/Env.h"
#include "support/Socket.h"
#include "transport/Proxy.h"

#include <algorithm>
#include <arpa/inet.h>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <thread>
#include <unistd.h>

using namespace collrt;

namespace {

struct Peer {
  int fd = -1;
  std::string inbox, outbox;
  size_t sent = 0;
};

class SocketWire : public Wire {
public:
  SocketWire(int rank, const std::vector<int> &fds) : rank(rank), peers(fds.size()) {
    for (size_t p = 0; p < fds.size(); ++p)
      peers[p].fd = fds[p];
  }
  ~SocketWire() override { closeGracefully(); }

  void limitClose(double seconds) override { closeSeconds = std::min(closeSeconds, seconds); }

  void post(int peer, const FrameHeader &m, const char *payload) override {
    Peer &p = peers[peer];
    p.outbox.append(reinterpret_cast<const char *>(&m), sizeof m);
    p.outbox.append(payload, payloadOf(m));
  }

  bool flushed() const override {
    for (const Peer &p : peers)
      if (p.fd >= 0 && !p.outbox.empty())
        return false;
    return true;
  }

  bool progress(Proxy &proxy, int waitMs) override {
    fds.clear();
    who.clear();
    for (int r = 0; r < int(peers.size()); ++r)
      if (peers[r].fd >= 0) {
        short events = POLLIN | (peers[r].sent < peers[r].outbox.size() ? POLLOUT : 0);
        fds.push_back({peers[r].fd, events, 0});
        who.push_back(r);
      }
    if (fds.empty() || poll(fds.data(), fds.size(), waitMs) < 0)
      return false;
    bool busy = false;
    for (size_t i = 0; i < fds.size(); ++i) {
      Peer &p = peers[who[i]];
      if (fds[i].revents & POLLIN) {
        ssize_t n = recv(p.fd, buffer, sizeof buffer, MSG_DONTWAIT);
        if (n > 0) {
          p.inbox.append(buffer, size_t(n));
          receive(proxy, who[i]);
          busy = true;
        } else if (n == 0 || (errno != EAGAIN && errno != EINTR)) {
          close(p.fd); // the peer is gone; its waiters time out with a message
          p.fd = -1;
        }
      }
      if (p.fd >= 0 && (fds[i].revents & POLLOUT)) {
        ssize_t n = send(p.fd, p.outbox.data() + p.sent, p.outbox.size() - p.sent,
                         MSG_DONTWAIT | MSG_NOSIGNAL);
        if (n > 0) {
          p.sent += size_t(n);
          busy = true;
          if (p.sent == p.outbox.size()) {
            p.outbox.clear();
            p.sent = 0;
          }
        }
      }
    }
    return busy;
  }

private:
  // Hands the whole messages of the peer's inbox to the proxy. A malformed
  // one closes the connection: nothing after it can be trusted to start
  // where it seems to, and the waiters for this peer then time out naming it.
  void receive(Proxy &proxy, int from) {
    Peer &p = peers[from];
    size_t used = 0;
    std::string error;
    if (proxy.receive(from, p.inbox.data(), p.inbox.size(), used, error)) {
      p.inbox.erase(0, used);
      return;
    }
    fprintf(stderr, "collrt: rank %d closes its connection from rank %d, which sent %s\n", rank,
            from, error.c_str());
    close(p.fd);
    p.fd = -1;
    p.inbox.clear();
  }

  // Closing a socket with unread input sends a reset, which can make the
  // peer drop data it has not read yet. So: stop writing, then read until
  // every peer has stopped writing too (or `closeSeconds` pass).
  void closeGracefully() {
    std::vector<pollfd> open;
    for (Peer &p : peers)
      if (p.fd >= 0) {
        shutdown(p.fd, SHUT_WR);
        open.push_back({p.fd, POLLIN, 0});
      }
    auto deadline = std::chrono::steady_clock::now() +
                    std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                        std::chrono::duration<double>(closeSeconds));
    char sink[4096];
    while (!open.empty() && std::chrono::steady_clock::now() < deadline) {
      if (poll(open.data(), open.size(), 100) < 0 && errno != EINTR)
        break;
      for (size_t i = 0; i < open.size();) {
        ssize_t n = (open[i].revents & (POLLIN | POLLHUP | POLLERR))
                        ? recv(open[i].fd, sink, sizeof sink, MSG_DONTWAIT)
                        : 1;
        if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR)) {
          close(open[i].fd);
          open[i] = open.back();
          open.pop_back();
        } else {
          ++i;
        }
      }
    }
    for (pollfd &p : open)
      close(p.fd);
  }

  int rank;
  double closeSeconds = Env::get().timeoutSeconds;
  std::vector<Peer> peers;
  std::vector<pollfd> fds;
  std::vector<int> who;
  char buffer[1 << 16];
};

class SocketTransport : public ProxyTransport {
public:
  using ProxyTransport::ProxyTransport;

  const char *name() const override { return "socket"; }

  collResult_t connect(Bootstrap &boot, double timeout, std::string &error) {
    uint32_t addr;
    if (!localAddress(Env::get().bootstrapAddr, Env::get().socketIfname, addr, error))
      return collInvalidArgument;
    int listener = listenTcp(addr, error);
    if (listener < 0)
      return collSystemError;
    sockaddr_in a{};
    socklen_t len = sizeof a;
    getsockname(listener, reinterpret_cast<sockaddr *>(&a), &len);
    std::string mine(sizeof(uint32_t) + sizeof(uint16_t), '\0');
    memcpy(mine.data(), &addr, 4);
    memcpy(mine.data() + 4, &a.sin_port, 2);
    std::vector<std::string> all;
    collResult_t r = boot.allgather(mine, all, error);
    // Each rank dials the peers above it and answers the ones below.
    const PeerHello hello = boot.hello(rank);
    std::vector<int> fds(peers.size(), -1);
    for (int p = rank + 1; p < int(peers.size()) && r == collSuccess; ++p) {
      if (!peers[p])
        continue;
      uint32_t ip;
      uint16_t port;
      memcpy(&ip, all[p].data(), 4);
      memcpy(&port, all[p].data() + 4, 2);
      int fd = connectTcp(ip, port, timeout, error);
      if (fd < 0 || !writeFull(fd, &hello, sizeof hello, error))
        r = collSystemError;
      fds[p] = fd;
    }
    int arrived = 0, below = int(std::count(peers.begin(), peers.begin() + rank, true));
    auto admit = [&](int fd, const std::string &bytes) {
      int from = boot.admit(bytes);
      if (from < 0 || from >= rank || !peers[from] || fds[from] >= 0)
        return false;
      fds[from] = fd;
      ++arrived;
      return true;
    };
    if (r == collSuccess) {
      r = admittedPeers(
          admitConnections(
              listener, sizeof(PeerHello), timeout, admit, [&] { return arrived == below; }, error),
          name(), error);
    }
    close(listener);
    if (r != collSuccess) {
      for (int fd : fds)
        if (fd >= 0)
          close(fd);
      return r;
    }
    for (int fd : fds)
      if (fd >= 0) {
        int one = 1;
        setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
      }
    return start(makeSocketWire(rank, fds), error);
  }
};

std::unique_ptr<Transport> makeSocket(Bootstrap &boot, int rank, const std::vector<bool> &peers,
                                      double timeout, collResult_t &result, std::string &error) {
  auto t = std::make_unique<SocketTransport>(boot, rank, peers);
  result = t->connect(boot, timeout, error);
  if (result != collSuccess)
    return nullptr;
  return t;
}

// TCP reaches any rank the bootstrap reached.
bool anyHost(const PeerInfo &, const PeerInfo &) { return true; }

} // namespace

std::unique_ptr<Wire> collrt::makeSocketWire(int rank, const std::vector<int> &fds) {
  return std::make_unique<SocketWire>(rank, fds);
}

const TransportKind collrt::socketTransport = {"socket", false, anyHost, makeSocket};
