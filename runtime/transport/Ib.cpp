//===- Ib.cpp - RDMA writes and a proxy thread, between machines ----------===//
//
// The proxy engine (Proxy.h) over a wire of RDMA writes with immediate
// (Verbs.h): the ib transport. Each direction of a pair is a byte stream
// through a ring in the receiver's registered memory, as the socket wire is
// one through TCP. The sender copies what the engine posts into a staging
// ring at the offsets it will take in the peer's ring and writes it there,
// never across the ring's end, the immediate saying how many bytes. The
// receiver hands them to Proxy::receive, keeping a message that a write cut
// short until the rest comes, and returns the space with a zero-byte write
// whose immediate has kCredit set. A sender reuses a byte of its rings once
// its write has completed and the receiver has returned it.
//
// Where both ends registered their FIFOs (Wire::expose: host memory by its
// address, GPU memory through a dma-buf), a step's bytes go with a plain
// RDMA write from the sender's slot into the receiver's, posted in stream
// order before the header that says it landed; the receiver flushes the
// GPU's view of what the NIC wrote before its proxy moves the tail. This is
// GPUDirect RDMA where the slots are the GPU's, and saves the copies
// through the rings where they are the host's.
//
// A completion in error, a malformed message or a credit for space never
// used drops the peer, as Socket.cpp drops a broken connection: its waiters
// then time out naming it.
//
//===----------------------------------------------------------------------===//
#include "transport/Transport.h"

#include "support/Bootstrap.h"
#include "support/CudaDriver.h"
#include "support/Env.h"
#include "transport/IbSelect.h"
#include "transport/PeerTransports.h"
#include "transport/Proxy.h"
#include "transport/Verbs.h"

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <deque>
#include <map>
#include <sys/mman.h>
#include <unistd.h>

using namespace collrt;

namespace {

constexpr uint32_t kCredit = 1u << 31; // in an immediate: returned ring space
constexpr int kDepth = 64;             // writes outstanding per peer, NCCL's order

// A put waiting for the stream to reach the byte it goes before.
struct Put {
  uint64_t at; // the byte of this rank's stream to the peer it goes before
  const char *local;
  uint64_t key;
  size_t bytes;
  uint64_t remote, remoteKey;
};

struct Link {
  bool open = false;       // served, and not dropped
  char *ring = nullptr;    // the peer writes here
  char *staging = nullptr; // this rank's writes to the peer leave from here
  IbEndpoint theirs;
  std::string outbox; // posted, not yet staged from `staged` on
  size_t staged = 0;
  std::deque<Put> puts;
  uint64_t written = 0, completed = 0, returned = 0; // bytes of this rank's stream
  std::deque<size_t> inFlight; // bytes of each outstanding write, 0 for a credit
  uint64_t read = 0, owed = 0; // bytes of the peer's stream; owed: not yet returned
  std::string inbox;           // the start of a message cut by a write's end
};

class IbWireImpl : public IbWire {
public:
  IbWireImpl(int rank, std::unique_ptr<Verbs> verbs, size_t ringBytes)
      : rank(rank), ringBytes(ringBytes), verbs(std::move(verbs)) {}
  ~IbWireImpl() override {
    verbs.reset(); // no write may land once the memory goes
    if (memory)
      munmap(memory, memoryBytes);
  }

  bool setup(const std::vector<bool> &peers, std::string &error) {
    if (ringBytes == 0 || ringBytes >= kCredit) {
      error = "ib: a ring holds 1 byte to 2 GiB, not " + std::to_string(ringBytes);
      return false;
    }
    links.resize(peers.size());
    memoryBytes = 2 * ringBytes * size_t(std::count(peers.begin(), peers.end(), true));
    if (!memoryBytes)
      return true;
    void *m =
        mmap(nullptr, memoryBytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (m == MAP_FAILED) {
      error = "ib: cannot allocate " + std::to_string(memoryBytes) + " bytes of rings";
      return false;
    }
    memory = static_cast<char *>(m);
    if (!verbs->registerMemory(memory, memoryBytes, region, error))
      return false;
    char *next = memory;
    for (size_t p = 0; p < peers.size(); ++p) {
      if (!peers[p])
        continue;
      Link &l = links[p];
      l.ring = next;
      l.staging = next + ringBytes;
      next += 2 * ringBytes;
      if (!verbs->createQueuePair(int(p), kDepth, addresses[p], error))
        return false;
    }
    return true;
  }

  IbEndpoint endpoint(int peer) const override {
    IbEndpoint e;
    auto a = addresses.find(peer);
    if (a == addresses.end())
      return e;
    e.qp = a->second;
    e.ring = reinterpret_cast<uintptr_t>(links[peer].ring);
    e.ringKey = region.rkey;
    e.ringBytes = uint32_t(ringBytes);
    return e;
  }

  bool connect(int peer, const IbEndpoint &theirs, std::string &error) override {
    Link &l = links[peer];
    if (!addresses.count(peer)) {
      error = "ib: rank " + std::to_string(peer) + " is not a peer of this wire";
      return false;
    }
    if (theirs.ringBytes != ringBytes) {
      error = "ib: rank " + std::to_string(peer) + " has rings of " +
              std::to_string(theirs.ringBytes) + " bytes, this rank of " +
              std::to_string(ringBytes);
      return false;
    }
    if (!verbs->connectQueuePair(peer, theirs.qp, pathMtu(addresses[peer].mtu, theirs.qp.mtu),
                                 error))
      return false;
    for (int i = 0; i < kDepth; ++i)
      if (!verbs->postReceive(peer, error))
        return false;
    l.theirs = theirs;
    l.open = true;
    return true;
  }

  void post(int peer, const FrameHeader &m, const char *payload) override {
    Link &l = links[peer];
    if (!l.open)
      return; // its waiters time out with a message
    l.outbox.append(reinterpret_cast<const char *>(&m), sizeof m);
    l.outbox.append(payload, payloadOf(m));
  }

  bool flushed() const override {
    for (const Link &l : links)
      if (l.open &&
          (l.staged < l.outbox.size() || !l.puts.empty() || !l.inFlight.empty() || l.owed))
        return false;
    return true;
  }

  bool direct() const override { return true; }

  // A key is the region's local key over its remote one: a peer needs only
  // the low half.
  bool expose(const Region &r, const MemoryBackend &memory, uint64_t &key,
              std::string &error) override {
    VerbsRegion v;
    if (memory.hostAccessible()) {
      if (!verbs->registerMemory(r.base, r.size, v, error))
        return false;
    } else {
      int fd = memory.dmabuf(r, error);
      if (fd < 0)
        return false;
      const bool ok =
          verbs->registerDmabuf(fd, r.size, reinterpret_cast<uintptr_t>(r.base), v, error);
      close(fd);
      if (!ok)
        return false;
      gpu.store(&memory, std::memory_order_release);
    }
    key = uint64_t(v.lkey) << 32 | v.rkey;
    return true;
  }

  void put(int peer, const char *local, uint64_t key, size_t bytes, uint64_t remote,
           uint64_t remoteKey) override {
    Link &l = links[peer];
    if (l.open)
      l.puts.push_back(
          {l.written + (l.outbox.size() - l.staged), local, key, bytes, remote, remoteKey});
  }

  // Completion queues are polled, not waited on, as NCCL's proxy polls;
  // the engine sleeps when nothing moves.
  bool progress(Proxy &proxy, int) override {
    bool busy = false;
    done.clear();
    verbs->poll(done, 64);
    for (VerbsCompletion &c : done) {
      if (c.peer < 0 || c.peer >= int(links.size()) || !links[c.peer].open)
        continue; // what was in flight to a dropped peer
      busy = true;
      if (!c.error.empty())
        drop(c.peer, "its queue pair failed (" + c.error + ")");
      else if (!c.received)
        sent(c.peer);
      else
        arrived(proxy, c.peer, c.imm);
    }
    for (int p = 0; p < int(links.size()); ++p)
      if (links[p].open)
        busy |= pump(p);
    return busy;
  }

private:
  void sent(int peer) {
    Link &l = links[peer];
    if (l.inFlight.empty())
      return drop(peer, "a write completed that was never posted");
    l.completed += l.inFlight.front();
    l.inFlight.pop_front();
  }

  void arrived(Proxy &proxy, int peer, uint32_t imm) {
    Link &l = links[peer];
    std::string error;
    if (!verbs->postReceive(peer, error))
      return drop(peer, error);
    const uint64_t bytes = imm & ~kCredit;
    if (imm & kCredit) {
      if (l.returned + bytes > l.written)
        return drop(peer, "it returned ring space that was never used");
      l.returned += bytes;
      return;
    }
    const size_t at = l.read % ringBytes;
    if (bytes == 0 || bytes > ringBytes - at)
      return drop(peer, "it wrote past the end of its ring");
    const char *data = l.ring + at;
    // Steps put into GPU memory before this message must be visible to
    // the kernels before their tails move.
    if (const MemoryBackend *m = gpu.load(std::memory_order_acquire)) {
      std::string why;
      if (!m->flushWrites(why))
        return drop(peer, "the GPU cannot see what the NIC wrote (" + why + ")");
    }
    l.read += bytes;
    l.owed += bytes; // the bytes are handed on or copied below
    size_t used = 0;
    bool ok;
    if (l.inbox.empty()) {
      ok = proxy.receive(peer, data, bytes, used, error);
      if (ok)
        l.inbox.assign(data + used, bytes - used);
    } else {
      l.inbox.append(data, bytes);
      ok = proxy.receive(peer, l.inbox.data(), l.inbox.size(), used, error);
      if (ok)
        l.inbox.erase(0, used);
    }
    if (!ok)
      drop(peer, "it sent " + error);
  }

  // Returns the space owed, then writes what fits of the outbox.
  bool pump(int peer) {
    Link &l = links[peer];
    bool moved = false;
    std::string error;
    if (l.owed && l.inFlight.size() < kDepth) {
      if (!verbs->postWrite(peer, nullptr, region.lkey, 0, l.theirs.ring, l.theirs.ringKey,
                            kCredit | uint32_t(l.owed), error)) {
        drop(peer, error);
        return true;
      }
      l.inFlight.push_back(0);
      l.owed = 0;
      moved = true;
    }
    while (l.inFlight.size() < kDepth) {
      if (!l.puts.empty() && l.puts.front().at <= l.written) {
        const Put &p = l.puts.front();
        if (!verbs->postPut(peer, p.local, uint32_t(p.key >> 32), p.bytes, p.remote,
                            uint32_t(p.remoteKey), error)) {
          drop(peer, error);
          return true;
        }
        l.inFlight.push_back(0);
        l.puts.pop_front();
        moved = true;
        continue;
      }
      // A byte of the rings is free again once its write has completed
      // (the staging copy) and the peer has returned it (the ring's).
      const uint64_t room = std::min(l.completed, l.returned) + ringBytes - l.written;
      const size_t at = l.written % ringBytes;
      const uint64_t beforePut = l.puts.empty() ? UINT64_MAX : l.puts.front().at - l.written;
      const size_t bytes = std::min({size_t(room), ringBytes - at, l.outbox.size() - l.staged,
                                     size_t(std::min<uint64_t>(beforePut, SIZE_MAX))});
      if (!bytes)
        break;
      memcpy(l.staging + at, l.outbox.data() + l.staged, bytes);
      if (!verbs->postWrite(peer, l.staging + at, region.lkey, bytes, l.theirs.ring + at,
                            l.theirs.ringKey, uint32_t(bytes), error)) {
        drop(peer, error);
        return true;
      }
      l.inFlight.push_back(bytes);
      l.written += bytes;
      l.staged += bytes;
      moved = true;
    }
    if (l.staged == l.outbox.size()) {
      l.outbox.clear();
      l.staged = 0;
    } else if (l.staged > l.outbox.size() / 2) {
      l.outbox.erase(0, l.staged);
      l.staged = 0;
    }
    return moved;
  }

  // Nothing after a failure can be trusted to start where it seems to.
  void drop(int peer, const std::string &why) {
    fprintf(stderr, "collrt: rank %d drops its ib connection to rank %d: %s\n", rank, peer,
            why.c_str());
    verbs->closeQueuePair(peer);
    Link &l = links[peer];
    l.open = false;
    l.outbox.clear();
    l.inbox.clear();
    l.inFlight.clear();
    l.puts.clear();
  }

  int rank;
  size_t ringBytes;
  char *memory = nullptr;
  size_t memoryBytes = 0;
  VerbsRegion region;
  std::vector<Link> links;
  std::map<int, VerbsAddress> addresses;
  std::vector<VerbsCompletion> done;
  std::unique_ptr<Verbs> verbs;
  std::atomic<const MemoryBackend *> gpu{nullptr}; // exposed GPU memory, if any
};

class IbTransport : public ProxyTransport {
public:
  using ProxyTransport::ProxyTransport;

  const char *name() const override { return "ib"; }

  // Collective even where this rank cannot start, so that every rank fails
  // with the reason instead of waiting for it.
  collResult_t connect(std::string &error) {
    const int n = int(peers.size());
    const int served = int(std::count(peers.begin(), peers.end(), true));
    const bool serves = served > 0;
    const Env &env = Env::get();
    // The local ranks, in rank order, share out the NICs.
    std::vector<std::string> hosts;
    if (collResult_t r = boot.allgather(localPeerInfo().host, hosts, error))
      return r;
    int localRank = 0;
    for (int p = 0; p < rank; ++p)
      localRank += hosts[p] == hosts[rank];
    std::string why;
    std::unique_ptr<IbWire> wire;
    std::unique_ptr<Verbs> verbs;
    // A rank with no ib peers needs no device.
    if (serves && ibRingsFitLockedMemory(size_t(env.ibRing), served, why)) {
      std::string how;
      const std::string hca = chooseIbHca(env.ibHca, listIbNics("/sys"),
                                          pciPathOf("/sys", currentGpuPciBusId()), localRank, how);
      verbs = openIbVerbs(hca, why);
      if (verbs && env.debug)
        fprintf(stderr, "collrt: rank %d takes RDMA device %s (%s)\n", rank,
                verbs->device().c_str(), how.c_str());
    }
    if (verbs)
      wire = makeIbWire(rank, std::move(verbs), peers, size_t(env.ibRing), why);
    const bool ok = !serves || wire;
    std::string mine = ok ? std::string(1, '+') : "-" + why;
    for (int p = 0; wire && p < n; ++p) {
      IbEndpoint e = wire->endpoint(p);
      mine.append(reinterpret_cast<const char *>(&e), sizeof e);
    }
    std::vector<std::string> all;
    if (collResult_t r = boot.allgather(mine, all, error))
      return r;
    if (ok)
      why.clear();
    for (int p = 0; p < n && why.empty(); ++p) {
      if (all[p].empty() || all[p][0] != '+')
        why = "rank " + std::to_string(p) + " cannot start (" +
              (all[p].empty() ? "" : all[p].substr(1)) + ")";
      else if (!peers[p])
        continue;
      else if (all[p].size() != 1 + n * sizeof(IbEndpoint))
        why = "rank " + std::to_string(p) + " sent a malformed endpoint";
      else {
        IbEndpoint theirs;
        memcpy(&theirs, all[p].data() + 1 + rank * sizeof(IbEndpoint), sizeof theirs);
        wire->connect(p, theirs, why);
      }
    }
    // Nobody writes before every queue pair is ready to receive.
    if (collResult_t r = boot.allgather(why, all, error))
      return r;
    for (int p = 0; p < n; ++p)
      if (!all[p].empty()) {
        error = "ib: " + (all[rank].empty() ? "rank " + std::to_string(p) + ": " + all[p] : why);
        return ok ? collRemoteError : collSystemError;
      }
    return wire ? start(std::move(wire), error) : collSuccess;
  }
};

std::unique_ptr<Transport> makeIb(Bootstrap &boot, int rank, const std::vector<bool> &peers, double,
                                  collResult_t &result, std::string &error) {
  auto t = std::make_unique<IbTransport>(boot, rank, peers);
  result = t->connect(error);
  if (result != collSuccess)
    return nullptr;
  return t;
}

// A rank on one host with its peer still opens a device, and can loop back
// through it; shm comes first in the table there.
bool bothRdma(const PeerInfo &self, const PeerInfo &peer) {
  return !self.rdma.empty() && !peer.rdma.empty();
}

std::string whyNoRdma(const PeerInfo &a, const PeerInfo &b) {
  std::string why;
  for (const PeerInfo *r : {&a, &b})
    if (r->rdma.empty() && why.find(r->noRdma) == std::string::npos)
      why += (why.empty() ? "" : "; ") + (r->noRdma.empty() ? "no RDMA device" : r->noRdma);
  return why;
}

} // namespace

std::unique_ptr<IbWire> collrt::makeIbWire(int rank, std::unique_ptr<Verbs> verbs,
                                           const std::vector<bool> &peers, size_t ringBytes,
                                           std::string &error) {
  auto w = std::make_unique<IbWireImpl>(rank, std::move(verbs), ringBytes);
  if (!w->setup(peers, error))
    return nullptr;
  return w;
}

const TransportKind collrt::ibTransport = {"ib", false, bothRdma, makeIb, whyNoRdma};
