//===- Socket.cpp - TCP and a proxy thread, standing in for RDMA ----------===//
//
// Ranks share no memory. A sender's threadblock writes into a local mirror
// of the receiver's FIFO; this rank's proxy thread ships every published
// step over TCP, and the receiver's proxy writes it into the real FIFO
// (LL and LL128 lines word by word, so that their flags stay atomic) and
// moves the tail. Credits flow back the same way: the receiver's proxy
// forwards head moves into the sender's mirror. This is the shape of
// NCCL's network transport, with TCP where it has RDMA writes.
//
// A peer's connection counts only once it has presented the group's secret,
// and every message is checked (Frame.h) before it is acted on: a peer that
// sends a malformed one loses its connection.
//
//===----------------------------------------------------------------------===//
#include "transport/Transport.h"

#include "src/Bootstrap.h"
#include "transport/Frame.h"
#include "src/Env.h"
#include "src/Socket.h"

#include <arpa/inet.h>
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <map>
#include <mutex>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <thread>
#include <tuple>
#include <unistd.h>

using namespace collrt;

namespace {

using Key = std::tuple<int, int, uint64_t>; // peer, window, offset

struct SendConn {
  int peer;
  collc::Fifo mirror;
  std::vector<char> memory;
  uint64_t shipped = 0;
};

struct RecvConn {
  int peer;
  collc::Fifo fifo;
  uint64_t credited = 0;
};

struct Peer {
  int fd = -1;
  std::string inbox, outbox;
  size_t sent = 0;
};

class SocketTransport : public Transport {
public:
  SocketTransport(Bootstrap &boot, int rank, int nranks)
      : boot(boot), rank(rank), peers(nranks) {}
  ~SocketTransport() override {
    stop.store(true, std::memory_order_release);
    if (proxy.joinable())
      proxy.join();
    closeGracefully();
  }

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
    // Each rank dials the ranks above it and answers the ones below.
    const PeerHello hello = boot.hello(rank);
    for (int p = rank + 1; p < int(peers.size()) && r == collSuccess; ++p) {
      uint32_t ip;
      uint16_t port;
      memcpy(&ip, all[p].data(), 4);
      memcpy(&port, all[p].data() + 4, 2);
      int fd = connectTcp(ip, port, timeout, error);
      if (fd < 0 || !writeFull(fd, &hello, sizeof hello, error))
        r = collSystemError;
      peers[p].fd = fd;
    }
    int arrived = 0;
    auto admit = [&](int fd, const std::string &bytes) {
      int from = boot.admit(bytes);
      if (from < 0 || from >= rank || peers[from].fd >= 0)
        return false;
      peers[from].fd = fd;
      ++arrived;
      return true;
    };
    if (r == collSuccess &&
        !admitConnections(listener, sizeof(PeerHello), timeout, admit,
                          [&] { return arrived == rank; }, error)) {
      error = "socket: a peer did not connect (" + error + ")";
      r = collRemoteError;
    }
    close(listener);
    if (r != collSuccess)
      return r;
    for (Peer &p : peers)
      if (p.fd >= 0) {
        int one = 1;
        setsockopt(p.fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
      }
    proxy = std::thread([this] { run(); });
    return collSuccess;
  }

  collResult_t exchangeWindow(size_t bytes, Window &w, std::string &error) override {
    {
      std::lock_guard<std::mutex> lock(mutex);
      w.id = int(windows.size());
      w.base.assign(peers.size(), nullptr);
      w.size.assign(peers.size(), 0);
      windows.emplace_back(std::max<size_t>(bytes, 64), 0);
      windowBytes.push_back(windows.back().size());
      w.base[rank] = windows.back().data();
      w.size[rank] = bytes;
    }
    // No step may arrive for a window its receiver has not made yet.
    return boot.barrier(error);
  }

  collResult_t sendFifo(Window &w, int owner, size_t offset, int32_t slots, int64_t slotBytes,
                        int32_t protocol, collc::Fifo &fifo, std::string &) override {
    std::lock_guard<std::mutex> lock(mutex);
    SendConn &c = sends[{owner, w.id, offset}];
    c.peer = owner;
    c.memory.assign(fifoBytes(slots, slotBytes) + 64, 0);
    char *base = c.memory.data() + (64 - reinterpret_cast<uintptr_t>(c.memory.data()) % 64) % 64;
    c.mirror = fifoAt(base, slots, slotBytes, protocol);
    fifo = c.mirror;
    return collSuccess;
  }

  collResult_t recvFifo(Window &w, int peer, size_t offset, const collc::Fifo &fifo,
                        std::string &) override {
    std::lock_guard<std::mutex> lock(mutex);
    RecvConn &c = recvs[{peer, w.id, offset}];
    c.peer = peer;
    c.fifo = fifo;
    c.credited = __atomic_load_n(fifo.head, __ATOMIC_ACQUIRE);
    return collSuccess;
  }

  // Windows live as long as the transport: the proxy may still deliver.
  void release(Window &w) override {}

private:
  void post(int peer, const FrameHeader &m, const char *payload) {
    Peer &p = peers[peer];
    p.outbox.append(reinterpret_cast<const char *>(&m), sizeof m);
    if (m.size)
      p.outbox.append(payload, size_t(m.size));
  }

  // Acts on one checked message: data into this rank's FIFO, a credit into
  // the sender's mirror. False if it does not fit what this rank knows.
  bool apply(int from, const Frame &f, std::string &error) {
    const FrameHeader &m = f.header;
    if (m.kind == kFrameData)
      return deliverFrame(windows[m.window].data(), f, error);
    auto it = sends.find({from, m.window, m.offset});
    if (it == sends.end()) {
      error = "a credit for a FIFO that this rank does not feed";
      return false;
    }
    // The receiver frees only what it got, and never takes a slot back.
    SendConn &c = it->second;
    if (m.step < __atomic_load_n(c.mirror.head, __ATOMIC_RELAXED) || m.step > c.shipped) {
      error = "a credit for steps that were never sent";
      return false;
    }
    __atomic_store_n(c.mirror.head, m.step, __ATOMIC_RELEASE);
    return true;
  }

  // Moves what threadblocks published into outboxes; true if anything moved.
  bool collect() {
    std::lock_guard<std::mutex> lock(mutex);
    bool moved = false;
    for (auto &[key, c] : sends) {
      uint64_t tail = __atomic_load_n(c.mirror.tail, __ATOMIC_ACQUIRE);
      for (; c.shipped < tail; ++c.shipped, moved = true) {
        int64_t slot = int64_t(c.shipped % uint64_t(c.mirror.numSlots));
        FrameHeader m{kFrameData, c.mirror.protocol, c.mirror.numSlots, std::get<1>(key),
                      std::get<2>(key), c.mirror.slotBytes, c.shipped, c.mirror.sizes[slot]};
        post(c.peer, m, c.mirror.slots + slot * c.mirror.slotBytes);
      }
    }
    for (auto &[key, c] : recvs) {
      uint64_t head = __atomic_load_n(c.fifo.head, __ATOMIC_ACQUIRE);
      if (head > c.credited) {
        FrameHeader m{kFrameCredit, 0, 0, std::get<1>(key), std::get<2>(key), 0, head, 0};
        post(c.peer, m, nullptr);
        c.credited = head;
        moved = true;
      }
    }
    return moved;
  }

  // Acts on every whole message in the peer's inbox. A malformed one closes
  // the connection: nothing after it can be trusted to start where it seems
  // to, and the waiters for this peer then time out naming it.
  void receive(int from) {
    Peer &p = peers[from];
    size_t at = 0;
    std::string error;
    std::lock_guard<std::mutex> lock(mutex);
    for (;;) {
      Frame f;
      size_t length = 0;
      FrameStatus s = parseFrame(p.inbox.data() + at, p.inbox.size() - at, windowBytes.data(),
                                 windowBytes.size(), f, length, error);
      if (s == FrameStatus::kIncomplete)
        break;
      if (s == FrameStatus::kComplete && apply(from, f, error)) {
        at += length;
        continue;
      }
      fprintf(stderr, "collrt: rank %d closes its connection from rank %d, which sent %s\n",
              rank, from, error.c_str());
      close(p.fd);
      p.fd = -1;
      p.inbox.clear();
      return;
    }
    p.inbox.erase(0, at);
  }

  void run() {
    std::vector<pollfd> fds;
    std::vector<int> who;
    char buffer[1 << 16];
    int idle = 0;
    std::chrono::steady_clock::time_point deadline{};
    for (;;) {
      // Read the flag before collecting: the last launch's threadblocks
      // published everything before `stop` was set, so a collect that starts
      // after seeing it sees every step. Collecting first could miss a step
      // published between the two reads, and then quit without it.
      const bool stopping = stop.load(std::memory_order_acquire);
      bool busy = collect();
      // On destroy, finish shipping what this rank's last launch published.
      if (stopping) {
        auto now = std::chrono::steady_clock::now();
        if (deadline == std::chrono::steady_clock::time_point{})
          deadline = now + std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                               std::chrono::duration<double>(Env::get().timeoutSeconds));
        bool drained = !busy;
        for (const Peer &p : peers)
          drained &= p.fd < 0 || p.outbox.empty();
        if (drained || now > deadline)
          break;
      }
      fds.clear();
      who.clear();
      for (int r = 0; r < int(peers.size()); ++r)
        if (peers[r].fd >= 0) {
          short events = POLLIN | (peers[r].sent < peers[r].outbox.size() ? POLLOUT : 0);
          fds.push_back({peers[r].fd, events, 0});
          who.push_back(r);
        }
      if (fds.empty() || poll(fds.data(), fds.size(), busy || idle < 64 ? 0 : 1) < 0) {
        std::this_thread::yield();
        continue;
      }
      for (size_t i = 0; i < fds.size(); ++i) {
        Peer &p = peers[who[i]];
        if (fds[i].revents & POLLIN) {
          ssize_t n = recv(p.fd, buffer, sizeof buffer, MSG_DONTWAIT);
          if (n > 0) {
            p.inbox.append(buffer, size_t(n));
            receive(who[i]);
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
      idle = busy ? 0 : idle + 1;
      if (!busy && idle > 256)
        std::this_thread::sleep_for(std::chrono::microseconds(20));
      else if (!busy)
        std::this_thread::yield();
    }
  }

  // Closing a socket with unread input sends a reset, which can make the
  // peer drop data it has not read yet. So: stop writing, then read until
  // every peer has stopped writing too (or the timeout passes).
  void closeGracefully() {
    std::vector<pollfd> open;
    for (Peer &p : peers)
      if (p.fd >= 0) {
        shutdown(p.fd, SHUT_WR);
        open.push_back({p.fd, POLLIN, 0});
      }
    auto deadline = std::chrono::steady_clock::now() +
                    std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                        std::chrono::duration<double>(Env::get().timeoutSeconds));
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

  Bootstrap &boot;
  int rank;
  std::vector<Peer> peers;
  std::mutex mutex; // guards sends, recvs, windows and windowBytes
  std::map<Key, SendConn> sends;
  std::map<Key, RecvConn> recvs;
  std::vector<std::vector<char>> windows;
  std::vector<size_t> windowBytes; // of each window, for checking messages
  std::atomic<bool> stop{false};
  std::thread proxy;
};

} // namespace

std::unique_ptr<Transport> collrt::makeSocketTransport(Bootstrap &boot, int rank, int nranks,
                                                       double timeout, collResult_t &result,
                                                       std::string &error) {
  auto t = std::make_unique<SocketTransport>(boot, rank, nranks);
  result = t->connect(boot, timeout, error);
  if (result != collSuccess)
    return nullptr;
  return t;
}
