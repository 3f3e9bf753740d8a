//===- SocketTest.cpp - The socket transport: steps and credits over TCP ---===//
//
// Two ranks as threads, each with its own bootstrap client and socket
// transport. The sender writes into its local mirror of the receiver's FIFO
// and never sees the receiver's memory; every step must still arrive, in
// order, and the receiver's credits must come back, or the sender stalls
// after two slots.
//
// Then who may connect: listeners bind only the address they publish, and
// the bootstrap root and both transports admit a connection only with the
// group's secret. There the test plays one rank by hand, as an intruder
// would, next to real ranks that must not notice.
//
//===----------------------------------------------------------------------===//
#include "collc/kernel.h"
#include "support/Bootstrap.h"
#include "support/Socket.h"
#include "transport/Frame.h"
#include "transport/Transport.h"
#include "WaitFor.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <arpa/inet.h>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <fstream>
#include <functional>
#include <future>
#include <memory>
#include <sys/resource.h>
#include <sys/socket.h>
#include <thread>
#include <unistd.h>
#include <vector>

namespace {

using Clock = std::chrono::steady_clock;

uint32_t loopback() { return htonl(INADDR_LOOPBACK); }

// Window 0 of a group of two, made as PeerTransports makes one, over `net`
// alone.
collResult_t makeWindow(collrt::Transport &net, int rank, size_t bytes, collrt::Window &w,
                        std::string &error) {
  if (collResult_t r = collrt::allocateWindow(bytes, rank, 2, w, error))
    return r;
  w.id = 0;
  collResult_t r = net.shareWindow(w, error);
  close(w.fd);
  w.fd = -1;
  return r;
}

// The local address (network order) of the TCP socket listening on `port`
// (network order), from the kernel's table; false if nobody listens there.
bool listeningAddress(uint16_t port, uint32_t &addr) {
  std::ifstream table("/proc/net/tcp");
  std::string line;
  std::getline(table, line); // the column names
  while (std::getline(table, line)) {
    unsigned local, localPort, state;
    if (sscanf(line.c_str(), " %*d: %8X:%4X %*8X:%*4X %2X", &local, &localPort, &state) == 3 &&
        localPort == ntohs(port) && state == 0x0A) { // TCP_LISTEN
      addr = local;                                  // printed as the raw network-order word
      return true;
    }
  }
  return false;
}

// True once the other end has closed `fd`; false if it stays open for 5 s.
bool closedByPeer(int fd) {
  char byte;
  std::string error;
  while (collrt::readFull(fd, &byte, 1, 5, error))
    ;
  return error == "connection closed";
}

collrt::PeerHello helloWithWrongSecret(const collrt::Bootstrap &boot, int rank) {
  collrt::PeerHello h = boot.hello(rank);
  h.secret[7] ^= 0x10;
  return h;
}

// Rank 1 of 2 runs a real transport on a thread; the test plays rank 0 by
// hand through `boot`, so that it can send what no real rank would. With
// `window`, rank 1 then makes a window (a barrier) with a Simple FIFO fed by
// rank 0 and publishes it. Last it waits at a barrier until the test is done.
// `before` runs once the group's id exists, before rank 1 starts.
struct HandPlayedRank0 {
  HandPlayedRank0(bool socket, bool window,
                  const std::function<void(const collrt::UniqueIdData &)> &before = nullptr) {
    std::string error;
    EXPECT_EQ(collrt::startBootstrapRoot(id, error), collSuccess) << error;
    if (before)
      before(id);
    rank1 = std::thread([this, socket, window] {
      std::string err;
      collrt::Bootstrap boot1;
      if (boot1.connect(id, 1, 2, 5, err) != collSuccess) {
        made.set_value("bootstrap: " + err);
        return;
      }
      collResult_t res;
      const collrt::TransportKind &kind = socket ? collrt::socketTransport : collrt::shmTransport;
      std::unique_ptr<collrt::Transport> net = kind.make(boot1, 1, {true, false}, 5, res, err);
      made.set_value(net ? "" : "transport: " + err);
      if (!net)
        return;
      collrt::Window w;
      if (window &&
          makeWindow(*net, 1, collrt::fifoBytes(kSlots, kSlotBytes), w, err) == collSuccess) {
        fifo = collrt::fifoAt(w.base[1], kSlots, kSlotBytes, collc::kSimple);
        net->recvFifo(w, 0, 0, fifo, err);
      }
      published.set_value();
      boot1.barrier(err);
      net.reset(); // stops its proxy before the window goes
      collrt::freeWindow(w, 1);
    });
    EXPECT_EQ(boot.connect(id, 0, 2, 5, error), collSuccess) << error;
  }
  ~HandPlayedRank0() {
    std::string error;
    boot.barrier(error); // lets rank 1 go
    for (int fd : fds)
      close(fd);
    rank1.join();
  }
  int keep(int fd) {
    fds.push_back(fd);
    return fd;
  }

  static constexpr int32_t kSlots = 2;
  static constexpr int64_t kSlotBytes = 256;
  collrt::UniqueIdData id{};
  collrt::Bootstrap boot;
  std::promise<std::string> made; // rank 1's transport: "" or why not
  std::promise<void> published;   // rank 1's window and FIFO
  collc::Fifo fifo{};
  std::thread rank1;
  std::vector<int> fds;
};

// Rank 0's side of the socket transport's setup: the address rank 1
// published, the test's own left empty (nobody dials rank 0).
void peerAddress(collrt::Bootstrap &boot, uint32_t &ip, uint16_t &port) {
  std::string error;
  std::vector<std::string> all;
  ASSERT_EQ(boot.allgather(std::string(6, '\0'), all, error), collSuccess) << error;
  ASSERT_EQ(all.size(), 2u);
  ASSERT_EQ(all[1].size(), 6u);
  memcpy(&ip, all[1].data(), 4);
  memcpy(&port, all[1].data() + 4, 2);
}

} // namespace

TEST(Socket, StepsAndCreditsCrossWithoutSharedMemory) {
  collrt::UniqueIdData id{};
  std::string error;
  ASSERT_EQ(collrt::startBootstrapRoot(id, error), collSuccess) << error;
  const int32_t slots = 2;
  const int64_t slotBytes = 256, steps = 7;
  std::vector<std::string> failures(2);

  auto rank = [&](int r) {
    std::string &fail = failures[r];
    std::string err;
    collrt::Bootstrap boot;
    if (boot.connect(id, r, 2, 5, err) != collSuccess) {
      fail = "bootstrap: " + err;
      return;
    }
    collResult_t res;
    auto net = collrt::socketTransport.make(boot, r, {r == 1, r == 0}, 5, res, err);
    if (!net) {
      fail = "transport: " + err;
      return;
    }
    EXPECT_STREQ(net->name(), "socket");
    collrt::Window w;
    if (makeWindow(*net, r, collrt::fifoBytes(slots, slotBytes), w, err) != collSuccess) {
      fail = "window: " + err;
      return;
    }
    EXPECT_NE(w.base[r], nullptr);
    EXPECT_EQ(w.base[1 - r], nullptr) << "no rank maps another's memory";
    if (r == 1) {
      collc::Fifo f = collrt::fifoAt(w.base[1], slots, slotBytes, collc::kSimple);
      net->recvFifo(w, 0, 0, f, err);
      for (int64_t s = 0; s < steps; ++s) {
        if (!waitFor(f.tail, s + 1)) {
          fail = "step " + std::to_string(s) + " never arrived";
          break;
        }
        const char *slot = f.slots + (s % slots) * slotBytes;
        int64_t size = f.sizes[s % slots];
        EXPECT_EQ(size, 10 + s);
        for (int64_t i = 0; i < size; ++i)
          if (slot[i] != char('a' + s + i % 3)) {
            fail = "step " + std::to_string(s) + " arrived wrong at byte " + std::to_string(i);
            break;
          }
        __atomic_store_n(f.head, uint64_t(s + 1), __ATOMIC_RELEASE);
      }
    } else {
      collc::Fifo f;
      if (net->sendFifo(w, 1, 0, slots, slotBytes, collc::kSimple, f, err) != collSuccess) {
        fail = "sendFifo: " + err;
      }
      for (int64_t s = 0; s < steps && fail.empty(); ++s) {
        // Room only once the receiver's credit for step s - slots is back.
        if (s >= slots && !waitFor(f.head, s + 1 - slots)) {
          fail = "no credit for step " + std::to_string(s);
          break;
        }
        char *slot = f.slots + (s % slots) * slotBytes;
        for (int64_t i = 0; i < 10 + s; ++i)
          slot[i] = char('a' + s + i % 3);
        f.sizes[s % slots] = 10 + s;
        __atomic_store_n(f.tail, uint64_t(s + 1), __ATOMIC_RELEASE);
      }
      // Every credit comes back, the last one too.
      if (fail.empty() && !waitFor(f.head, steps))
        fail = "the last credits never came back";
    }
    EXPECT_EQ(boot.barrier(err), collSuccess) << err;
    net.reset();
    collrt::freeWindow(w, r);
  };
  std::thread a(rank, 0), b(rank, 1);
  a.join();
  b.join();
  EXPECT_EQ(failures[0], "");
  EXPECT_EQ(failures[1], "");
}

//===----------------------------------------------------------------------===//
// Who may connect
//===----------------------------------------------------------------------===//

TEST(Socket, ListenersBindOnlyTheAddressTheyPublish) {
  std::string error;
  int fd = collrt::listenTcp(loopback(), error);
  ASSERT_GE(fd, 0) << error;
  sockaddr_in bound{};
  socklen_t len = sizeof bound;
  ASSERT_EQ(getsockname(fd, reinterpret_cast<sockaddr *>(&bound), &len), 0);
  EXPECT_EQ(bound.sin_addr.s_addr, loopback());
  close(fd);

  // The root publishes loopback by default, and listens there only, not
  // on every interface (INADDR_ANY).
  collrt::UniqueIdData id{};
  ASSERT_EQ(collrt::startBootstrapRoot(id, error), collSuccess) << error;
  EXPECT_EQ(id.addr, loopback());
  uint32_t listening = 0;
  ASSERT_TRUE(listeningAddress(id.port, listening)) << "nobody listens on the root's port";
  EXPECT_EQ(listening, id.addr);
  EXPECT_NE(listening, htonl(INADDR_ANY));
}

TEST(Socket, LocalAddressComesFromTheAddressOrTheInterface) {
  uint32_t addr = 0;
  std::string error;
  EXPECT_TRUE(collrt::localAddress("127.0.0.1", "", addr, error)) << error;
  EXPECT_EQ(addr, loopback());
  addr = 0;
  EXPECT_TRUE(collrt::localAddress("10.1.2.3", "lo", addr, error)) << error;
  EXPECT_EQ(addr, loopback()) << "the interface wins over the address";
  EXPECT_FALSE(collrt::localAddress("localhost", "", addr, error));
  EXPECT_NE(error.find("COLL_BOOTSTRAP_ADDR"), std::string::npos) << error;
  EXPECT_FALSE(collrt::localAddress("127.0.0.1", "no-such-if9", addr, error));
  EXPECT_NE(error.find("COLL_SOCKET_IFNAME 'no-such-if9'"), std::string::npos) << error;
}

// Out of descriptors, accept() fails and the connection stays queued: the
// wait ends at once with that reason, instead of polling until the deadline
// and blaming a peer.
TEST(Socket, AdmittingOutOfDescriptorsFailsAtOnce) {
  std::string error;
  int listener = collrt::listenTcp(loopback(), error);
  ASSERT_GE(listener, 0) << error;
  sockaddr_in a{};
  socklen_t len = sizeof a;
  ASSERT_EQ(getsockname(listener, reinterpret_cast<sockaddr *>(&a), &len), 0);
  int client = collrt::connectTcp(loopback(), a.sin_port, 5, error);
  ASSERT_GE(client, 0) << error;
  rlimit saved{};
  ASSERT_EQ(getrlimit(RLIMIT_NOFILE, &saved), 0);
  rlimit low = saved;
  low.rlim_cur = std::min<rlim_t>(saved.rlim_cur, 256);
  ASSERT_EQ(setrlimit(RLIMIT_NOFILE, &low), 0);
  std::vector<int> filler;
  for (int fd; (fd = open("/dev/null", O_RDONLY | O_CLOEXEC)) >= 0;)
    filler.push_back(fd);
  collResult_t r = collrt::admitConnections(
      listener, 8, 3, [](int, const std::string &) { return true; }, [] { return false; }, error);
  for (int fd : filler)
    close(fd);
  setrlimit(RLIMIT_NOFILE, &saved);
  EXPECT_EQ(r, collSystemError);
  EXPECT_EQ(error, "accept: Too many open files (out of file descriptors: this process may open " +
                       std::to_string(low.rlim_cur) + "; raise ulimit -n)");
  close(client);
  close(listener);
}

// 0.0.0.0 listens on every interface: allowed, but said on stderr, once.
TEST(Socket, WildcardAddressWarnsOnce) {
  uint32_t addr = 1;
  std::string error;
  testing::internal::CaptureStderr();
  EXPECT_TRUE(collrt::localAddress("0.0.0.0", "", addr, error)) << error;
  EXPECT_TRUE(collrt::localAddress("0.0.0.0", "", addr, error)) << error;
  std::string said = testing::internal::GetCapturedStderr();
  EXPECT_EQ(addr, htonl(INADDR_ANY));
  const std::string warning = "collrt: warning: COLL_BOOTSTRAP_ADDR=0.0.0.0 listens on every "
                              "interface";
  EXPECT_EQ(said.find(warning), 0u) << said;
  EXPECT_EQ(said.find(warning, 1), std::string::npos) << said;
}

TEST(Socket, RootAdmitsOnlyRanksWithTheSecret) {
  collrt::UniqueIdData id{};
  std::string error;
  ASSERT_EQ(collrt::startBootstrapRoot(id, error), collSuccess) << error;
  // A connection that says nothing holds up nobody (a root that read one
  // hello at a time waited COLL_TIMEOUT, 2 s here, for it).
  int silent = collrt::connectTcp(id.addr, id.port, 5, error);
  ASSERT_GE(silent, 0) << error;
  // An intruder with everything but the secret claims rank 0 first.
  collrt::UniqueIdData wrong = id;
  wrong.secret[31] ^= 1;
  collrt::Bootstrap intruder;
  ASSERT_EQ(intruder.connect(wrong, 0, 2, 5, error), collSuccess) << error;
  std::vector<std::string> all;
  EXPECT_EQ(intruder.allgather("intruder", all, error), collRemoteError);

  auto t0 = Clock::now();
  std::vector<std::vector<std::string>> got(2);
  auto rank = [&](int r) {
    std::string err;
    collrt::Bootstrap boot;
    EXPECT_EQ(boot.connect(id, r, 2, 5, err), collSuccess) << err;
    EXPECT_EQ(boot.allgather("rank" + std::to_string(r), got[r], err), collSuccess) << err;
  };
  std::thread a(rank, 0), b(rank, 1);
  a.join();
  b.join();
  double took = std::chrono::duration<double>(Clock::now() - t0).count();
  for (int r = 0; r < 2; ++r)
    EXPECT_EQ(got[r], (std::vector<std::string>{"rank0", "rank1"})) << "rank " << r;
  EXPECT_LT(took, 1.5) << "the silent connection held up the real ranks";
  close(silent);
}

TEST(Socket, TransportAdmitsOnlyPeersWithTheSecret) {
  HandPlayedRank0 group(true, false);
  uint32_t ip = 0;
  uint16_t port = 0;
  peerAddress(group.boot, ip, port);
  // Rank 1 publishes loopback and listens there only.
  EXPECT_EQ(ip, loopback());
  uint32_t listening = 0;
  EXPECT_TRUE(listeningAddress(port, listening));
  EXPECT_EQ(listening, loopback());

  std::string error;
  // Rank 0's number with a wrong secret: closed.
  int intruder = group.keep(collrt::connectTcp(ip, port, 5, error));
  collrt::PeerHello wrong = helloWithWrongSecret(group.boot, 0);
  ASSERT_TRUE(collrt::writeFull(intruder, &wrong, sizeof wrong, error)) << error;
  EXPECT_TRUE(closedByPeer(intruder)) << "a peer without the secret stays connected";
  // Rank 0's number alone (all the old handshake asked for): never admitted.
  int numberOnly = group.keep(collrt::connectTcp(ip, port, 5, error));
  int32_t zero = 0;
  ASSERT_TRUE(collrt::writeFull(numberOnly, &zero, sizeof zero, error)) << error;
  // The real rank 0 still gets in.
  int real = group.keep(collrt::connectTcp(ip, port, 5, error));
  collrt::PeerHello hello = group.boot.hello(0);
  ASSERT_TRUE(collrt::writeFull(real, &hello, sizeof hello, error)) << error;
  EXPECT_EQ(group.made.get_future().get(), "");
  EXPECT_TRUE(closedByPeer(numberOnly)) << "a half-said hello outlived the setup";
}

// Whether a Unix socket is bound to abstract name `name`, as any local
// process can see in the kernel's table.
bool unixNameBound(const std::string &name) {
  std::ifstream table("/proc/net/unix");
  std::string line;
  while (std::getline(table, line))
    if (line.size() > name.size() &&
        line.compare(line.size() - name.size() - 1, std::string::npos, "@" + name) == 0)
      return true;
  return false;
}

TEST(Shm, UnixSocketsAdmitOnlyPeersWithTheSecret) {
  // A local process that knows the group's public values takes the names
  // that ranks once listened on, derived from the id's magic and the rank.
  std::vector<int> squatted;
  std::string oldName;
  HandPlayedRank0 group(false, false, [&](const collrt::UniqueIdData &id) {
    std::string error;
    oldName = "collc-" + std::to_string(id.magic) + "-";
    for (int r = 0; r < 2; ++r) {
      squatted.push_back(collrt::listenUnix(oldName + std::to_string(r), error));
      EXPECT_GE(squatted.back(), 0) << error;
    }
  });
  for (int fd : squatted)
    group.keep(fd);
  std::string error;
  // Rank 0 listens on a name of the same shape; they go round over the
  // bootstrap.
  char mine[64];
  snprintf(mine, sizeof mine, "collc-%032x", unsigned(getpid()));
  int listener = group.keep(collrt::listenUnix(mine, error));
  ASSERT_GE(listener, 0) << error;
  std::vector<std::string> names;
  ASSERT_EQ(group.boot.allgather(mine, names, error), collSuccess) << error;
  ASSERT_EQ(names.size(), 2u);
  // Rank 1's: 128 random bits, bound by now, and nothing like the old name.
  const std::string &theirs = names[1];
  ASSERT_EQ(theirs.size(), 6u + 32u) << theirs;
  EXPECT_EQ(theirs.substr(0, 6), "collc-");
  EXPECT_EQ(theirs.find_first_not_of("0123456789abcdef", 6), std::string::npos) << theirs;
  EXPECT_EQ(theirs.find(std::to_string(group.id.magic)), std::string::npos) << theirs;
  EXPECT_TRUE(unixNameBound(theirs)) << theirs;

  int intruder = group.keep(collrt::connectUnix(theirs, 5, error));
  collrt::PeerHello wrong = helloWithWrongSecret(group.boot, 0);
  ASSERT_TRUE(collrt::writeFull(intruder, &wrong, sizeof wrong, error)) << error;
  EXPECT_TRUE(closedByPeer(intruder)) << "a peer without the secret stays connected";
  int numberOnly = group.keep(collrt::connectUnix(theirs, 5, error));
  int32_t zero = 0;
  ASSERT_TRUE(collrt::writeFull(numberOnly, &zero, sizeof zero, error)) << error;

  int real = group.keep(collrt::connectUnix(theirs, 5, error));
  collrt::PeerHello hello = group.boot.hello(0);
  ASSERT_TRUE(collrt::writeFull(real, &hello, sizeof hello, error)) << error;
  int fromRank1 = group.keep(collrt::acceptWithin(listener, 5, error));
  ASSERT_GE(fromRank1, 0) << error;
  std::string said(sizeof(collrt::PeerHello), '\0');
  ASSERT_TRUE(collrt::readFull(fromRank1, said.data(), said.size(), 5, error)) << error;
  EXPECT_EQ(group.boot.admit(said), 1) << "rank 1 must present the secret too";
  EXPECT_EQ(group.made.get_future().get(), "");
  EXPECT_TRUE(closedByPeer(numberOnly)) << "a half-said hello outlived the setup";
}

TEST(Socket, MalformedFrameClosesTheConnectionAndWritesNothing) {
  HandPlayedRank0 group(true, true);
  uint32_t ip = 0;
  uint16_t port = 0;
  peerAddress(group.boot, ip, port);
  std::string error;
  int fd = group.keep(collrt::connectTcp(ip, port, 5, error));
  collrt::PeerHello hello = group.boot.hello(0);
  ASSERT_TRUE(collrt::writeFull(fd, &hello, sizeof hello, error)) << error;
  ASSERT_EQ(group.made.get_future().get(), "");
  ASSERT_EQ(group.boot.barrier(error), collSuccess) << error; // rank 1's window exists
  group.published.get_future().get();
  const collc::Fifo &f = group.fifo;
  ASSERT_NE(f.tail, nullptr);

  // A well-formed step arrives.
  collrt::FrameHeader m{
      collrt::kFrameData, collc::kSimple, group.kSlots, 0, 0, group.kSlotBytes, 0, 5};
  std::string frame(reinterpret_cast<const char *>(&m), sizeof m);
  frame += "hello";
  ASSERT_TRUE(collrt::writeFull(fd, frame.data(), frame.size(), error)) << error;
  ASSERT_TRUE(waitFor(f.tail, 1));
  EXPECT_EQ(std::string(f.slots, 5), "hello");

  // A FIFO 2^40 bytes below the window: offset + size wraps around to a
  // small number that the old bounds check let through.
  collrt::FrameHeader evil{collrt::kFrameData,
                           collc::kSimple,
                           1,
                           0,
                           uint64_t(0) - (uint64_t(1) << 40),
                           int64_t(1) << 40,
                           1,
                           8};
  frame.assign(reinterpret_cast<const char *>(&evil), sizeof evil);
  frame += "overflow";
  ASSERT_TRUE(collrt::writeFull(fd, frame.data(), frame.size(), error)) << error;
  EXPECT_TRUE(closedByPeer(fd)) << "the sender of a malformed frame stays connected";
  EXPECT_EQ(__atomic_load_n(f.tail, __ATOMIC_ACQUIRE), 1u);
  EXPECT_EQ(f.sizes[1], 0);
}
