//===- LoopbackVerbs.h - The verbs of Verbs.h between ranks of one process -===//
//
// What the ib wire is tested over, since no machine here has an RDMA NIC. A
// rank's "remote memory" is the peer's registered buffer in this process:
// a write lands there, with its immediate queued to the peer's completions,
// when some rank polls `delay` polls after it was posted, in the order
// posted, one per queue pair and poll, and only while the peer has a
// receive posted (else it waits, as an RC queue pair retries on RNR without
// end). Writes are checked against
// the regions their keys name, and a write can be made to fail; a failure
// breaks the queue pair at both ends, as on a NIC. Each rank's ports have
// the active MTU the test gives, and each end records the MTU it was
// joined with. A "dma-buf" here is any
// descriptor that mmap maps (a memfd): registering one maps it afresh, and
// writes to its addresses go through that mapping, so that they reach the
// memory only if the descriptor and addresses the wire gave agree.
//
//===----------------------------------------------------------------------===//
#ifndef COLLC_TEST_UNIT_LOOPBACKVERBS_H
#define COLLC_TEST_UNIT_LOOPBACKVERBS_H

#include "transport/Verbs.h"

#include <algorithm>
#include <cstring>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <sys/mman.h>
#include <vector>

namespace collrt::test {

class LoopbackFabric : public std::enable_shared_from_this<LoopbackFabric> {
public:
  /// Rank `rank`'s verbs; the fabric outlives them.
  std::unique_ptr<Verbs> open(int rank);

  /// Polls between a write's post and its landing.
  void setDelay(uint64_t polls) {
    std::lock_guard<std::mutex> lock(mutex);
    delay = polls;
  }
  /// The next write that `rank` posts fails, breaking its queue pair.
  void failNextWrite(int rank) {
    std::lock_guard<std::mutex> lock(mutex);
    failing[rank] = true;
  }
  /// What rank `rank` wrote that landed: bytes, writes with data and the
  /// largest, writes of no bytes (credits), and puts (writes without an
  /// immediate) with their bytes.
  struct Landed {
    uint64_t bytes = 0, writes = 0, largest = 0, empty = 0, puts = 0, putBytes = 0;
  };
  Landed landed(int rank) {
    std::lock_guard<std::mutex> lock(mutex);
    return stats[rank];
  }
  /// The active MTU that `rank`'s queue pairs report (VerbsAddress::mtu).
  void setMtu(int rank, uint8_t mtu) {
    std::lock_guard<std::mutex> lock(mutex);
    mtus[rank] = mtu;
  }
  /// The MTU that `rank` joined its queue pair to `peer` with; 0 before.
  uint8_t connectedMtu(int rank, int peer) {
    std::lock_guard<std::mutex> lock(mutex);
    return ends[{rank, peer}].mtu;
  }

private:
  friend class LoopbackVerbs;
  struct Write {
    const char *local;
    size_t bytes;
    uint32_t lkey;
    uint64_t remote;
    uint32_t rkey, imm;
    uint64_t due;
    bool notify; // with an immediate, which takes a receive
  };
  struct End { // of the queue pair (rank, peer), at rank
    bool made = false, connected = false, broken = false;
    int receives = 0;
    uint8_t mtu = 0;
    std::deque<Write> writes;
  };
  struct Region {
    int owner;
    char *base; // as work requests name it
    size_t bytes;
    char *mapped; // where its bytes are; a dma-buf's own mapping
  };

  bool inside(uint32_t key, int owner, uint64_t addr, size_t bytes) const {
    if (key == 0 || key > regions.size())
      return false;
    const Region &r = regions[key - 1];
    uint64_t base = reinterpret_cast<uintptr_t>(r.base);
    return r.owner == owner && addr >= base && bytes <= r.bytes && addr - base <= r.bytes - bytes;
  }
  char *at(uint32_t key, uint64_t addr) const {
    const Region &r = regions[key - 1];
    return r.mapped + (addr - reinterpret_cast<uintptr_t>(r.base));
  }

  void complete(int rank, int peer, bool received, uint32_t imm, std::string error) {
    VerbsCompletion c;
    c.peer = peer;
    c.received = received;
    c.imm = imm;
    c.error = std::move(error);
    completions[rank].push_back(std::move(c));
  }

  // Breaks the queue pair at both ends; the peer learns of it through a
  // flushed receive.
  void breakPair(int rank, int peer, const std::string &why) {
    End &mine = ends[{rank, peer}], &theirs = ends[{peer, rank}];
    complete(rank, peer, false, 0, why);
    if (theirs.connected && !theirs.broken)
      complete(peer, rank, true, 0, "work request flushed error");
    mine.broken = theirs.broken = true;
  }

  // Lands the first write of each queue pair if it is due: one per poll,
  // so that a receiver may act on one before the next lands, as on a NIC.
  void deliver() {
    for (auto &[key, end] : ends) {
      const auto [from, to] = key;
      if (!end.writes.empty() && end.writes.front().due <= clock) {
        Write w = end.writes.front();
        End &peer = ends[{to, from}];
        if (end.broken) {
          complete(from, to, false, 0, "work request flushed error");
        } else if (failing[from]) {
          failing[from] = false;
          breakPair(from, to, "transport retry counter exceeded");
        } else if (!peer.made || peer.broken) {
          breakPair(from, to, "transport retry counter exceeded");
        } else if (!(w.bytes == 0 || inside(w.lkey, from, uintptr_t(w.local), w.bytes)) ||
                   !inside(w.rkey, to, w.remote, w.bytes)) {
          breakPair(from, to, "remote access error");
        } else if (w.notify && peer.receives == 0) {
          continue; // receiver not ready: retried
        } else {
          if (w.bytes)
            memcpy(at(w.rkey, w.remote), at(w.lkey, uintptr_t(w.local)), w.bytes);
          if (w.notify) {
            --peer.receives;
            complete(to, from, true, w.imm, "");
          }
          complete(from, to, false, 0, "");
          Landed &s = stats[from];
          s.bytes += w.bytes;
          s.largest = std::max<uint64_t>(s.largest, w.bytes);
          if (!w.notify) {
            ++s.puts;
            s.putBytes += w.bytes;
          } else {
            ++(w.bytes ? s.writes : s.empty);
          }
        }
        end.writes.pop_front();
      }
    }
  }

  std::mutex mutex;
  uint64_t clock = 0, delay = 0;
  std::map<std::pair<int, int>, End> ends;
  std::vector<Region> regions; // key - 1
  std::map<int, std::deque<VerbsCompletion>> completions;
  std::map<int, bool> failing;
  std::map<int, Landed> stats;
  std::map<int, uint8_t> mtus;
};

class LoopbackVerbs : public Verbs {
public:
  LoopbackVerbs(std::shared_ptr<LoopbackFabric> fabric, int rank)
      : fabric(std::move(fabric)), rank(rank) {}
  ~LoopbackVerbs() override {
    std::lock_guard<std::mutex> lock(fabric->mutex);
    for (auto &[key, end] : fabric->ends)
      if (key.first == rank) {
        end.made = false;
        end.broken = true;
        end.writes.clear();
      }
    for (LoopbackFabric::Region &r : fabric->regions)
      if (r.owner == rank) {
        r.owner = -1;
        if (r.mapped != r.base)
          munmap(r.mapped, r.bytes);
      }
    fabric->completions.erase(rank);
  }

  bool createQueuePair(int peer, int, VerbsAddress &self, std::string &) override {
    std::lock_guard<std::mutex> lock(fabric->mutex);
    fabric->ends[{rank, peer}].made = true;
    self.qpn = uint32_t(rank);
    self.mtu = fabric->mtus[rank];
    return true;
  }
  bool connectQueuePair(int peer, const VerbsAddress &remote, uint8_t mtu,
                        std::string &error) override {
    if (remote.qpn != uint32_t(peer)) {
      error = "not the peer's queue pair";
      return false;
    }
    std::lock_guard<std::mutex> lock(fabric->mutex);
    LoopbackFabric::End &end = fabric->ends[{rank, peer}];
    end.connected = true;
    end.mtu = mtu;
    return true;
  }
  void closeQueuePair(int peer) override {
    std::lock_guard<std::mutex> lock(fabric->mutex);
    fabric->ends[{rank, peer}].broken = true;
  }
  bool registerMemory(void *base, size_t bytes, VerbsRegion &region, std::string &) override {
    std::lock_guard<std::mutex> lock(fabric->mutex);
    fabric->regions.push_back({rank, static_cast<char *>(base), bytes, static_cast<char *>(base)});
    region.lkey = region.rkey = uint32_t(fabric->regions.size());
    return true;
  }
  bool registerDmabuf(int fd, size_t bytes, uint64_t iova, VerbsRegion &region,
                      std::string &error) override {
    void *m = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (m == MAP_FAILED) {
      error = "not a descriptor of " + std::to_string(bytes) + " bytes";
      return false;
    }
    std::lock_guard<std::mutex> lock(fabric->mutex);
    fabric->regions.push_back(
        {rank, reinterpret_cast<char *>(uintptr_t(iova)), bytes, static_cast<char *>(m)});
    region.lkey = region.rkey = uint32_t(fabric->regions.size());
    return true;
  }
  bool postWrite(int peer, const void *local, uint32_t lkey, size_t bytes, uint64_t remote,
                 uint32_t rkey, uint32_t imm, std::string &) override {
    return post(peer, local, lkey, bytes, remote, rkey, imm, true);
  }
  bool postPut(int peer, const void *local, uint32_t lkey, size_t bytes, uint64_t remote,
               uint32_t rkey, std::string &) override {
    return post(peer, local, lkey, bytes, remote, rkey, 0, false);
  }
  bool postReceive(int peer, std::string &) override {
    std::lock_guard<std::mutex> lock(fabric->mutex);
    ++fabric->ends[{rank, peer}].receives;
    return true;
  }
  int poll(std::vector<VerbsCompletion> &out, int max) override {
    std::lock_guard<std::mutex> lock(fabric->mutex);
    ++fabric->clock;
    fabric->deliver();
    std::deque<VerbsCompletion> &mine = fabric->completions[rank];
    int n = 0;
    for (; n < max && !mine.empty(); ++n) {
      out.push_back(std::move(mine.front()));
      mine.pop_front();
    }
    return n;
  }
  std::string device() const override { return "loopback"; }

private:
  bool post(int peer, const void *local, uint32_t lkey, size_t bytes, uint64_t remote,
            uint32_t rkey, uint32_t imm, bool notify) {
    std::lock_guard<std::mutex> lock(fabric->mutex);
    fabric->ends[{rank, peer}].writes.push_back({static_cast<const char *>(local), bytes, lkey,
                                                 remote, rkey, imm, fabric->clock + fabric->delay,
                                                 notify});
    return true;
  }

  std::shared_ptr<LoopbackFabric> fabric;
  int rank;
};

inline std::unique_ptr<Verbs> LoopbackFabric::open(int rank) {
  return std::make_unique<LoopbackVerbs>(shared_from_this(), rank);
}

} // namespace collrt::test

#endif // COLLC_TEST_UNIT_LOOPBACKVERBS_H
