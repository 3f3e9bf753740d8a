//===- Nvl.cpp - Ranks of one NVLink domain on different hosts ------------===//
//
// Multi-node NVLink (MNNVL, as in a GB200 NVL72 rack): GPUs of different
// hosts that one NVLink fabric joins map each other's memory as the GPUs
// of one host do. A descriptor cannot cross hosts, so each rank exports
// its part of a window as a fabric handle (MemoryBackend::exportFabric),
// the bootstrap carries the handles to every rank, and each peer imports
// and maps it. The kernels then reach peers' FIFOs and windows as over
// shm. Ranks state their domain at init (COLL_NVLINK_DOMAIN, which NCCL
// learns from NVML's fabric info or NCCL_MNNVL_UUID and its clique id);
// ranks on different hosts that state the same domain are joined here.
// The host emulation stands in for fabric handles with /proc paths.
//
//===----------------------------------------------------------------------===//
#include "transport/Transport.h"

#include "support/Bootstrap.h"

#include <algorithm>
#include <cstring>

using namespace collrt;

namespace {

// What a rank tells every other of its part of a window.
struct Offer {
  uint64_t bytes = 0;
  FabricHandle handle;
};

class NvlTransport : public Transport {
public:
  NvlTransport(Bootstrap &boot, int rank, const std::vector<bool> &peers)
      : boot(boot), rank(rank), peers(peers) {}

  const char *name() const override { return "nvl"; }

  collResult_t sendFifo(Window &w, int owner, size_t offset, int32_t slots, int64_t slotBytes,
                        int32_t protocol, collc::Fifo &fifo, std::string &) override {
    fifo = fifoAt(w.base[owner] + offset, slots, slotBytes, protocol);
    return collSuccess;
  }

  // Collective even where this rank serves no peer, so that a rank that
  // cannot export fails every rank with the reason.
  collResult_t shareWindow(Window &w, std::string &error) override {
    const MemoryBackend &memory = w.memory ? *w.memory : hostMemory();
    const Region part{w.base[rank], w.size[rank], w.fd,
                      size_t(rank) < w.handle.size() ? w.handle[rank] : 0};
    Offer offer;
    offer.bytes = w.size[rank];
    std::string why, mine = "+";
    const bool serves = std::find(peers.begin(), peers.end(), true) != peers.end();
    if (serves && !memory.exportFabric(part, offer.handle, why))
      mine = "-" + why;
    else
      mine.append(reinterpret_cast<const char *>(&offer), sizeof offer);
    std::vector<std::string> all;
    if (collResult_t r = boot.allgather(mine, all, error))
      return r;
    collResult_t res = collSuccess;
    for (size_t p = 0; p < all.size() && res == collSuccess; ++p) {
      if (!peers[p])
        continue;
      Offer theirs;
      if (all[p].size() != 1 + sizeof theirs || all[p][0] != '+') {
        error = "nvl: rank " + std::to_string(p) + " cannot export its window (" +
                all[p].substr(std::min<size_t>(1, all[p].size())) + ")";
        res = collRemoteError;
        break;
      }
      memcpy(&theirs, all[p].data() + 1, sizeof theirs);
      res = importFabricPart(w, int(p), theirs.handle, size_t(theirs.bytes), error);
      if (res != collSuccess)
        error = "nvl: cannot map the window of rank " + std::to_string(p) + ": " + error;
    }
    if (mine[0] == '-' && res == collSuccess) {
      error = "nvl: this rank cannot export its window (" + why + ")";
      res = collSystemError;
    }
    // An owner keeps what its handle names until every peer has it.
    std::string barrierError;
    if (collResult_t r = boot.barrier(barrierError); r != collSuccess && res == collSuccess) {
      error = barrierError;
      res = r;
    }
    if (res != collSuccess)
      release(w);
    return res;
  }

  void release(Window &w) override {
    for (size_t p = 0; p < peers.size(); ++p)
      if (peers[p])
        releasePart(w, int(p));
  }

private:
  Bootstrap &boot;
  int rank;
  std::vector<bool> peers; // the ranks this transport serves
};

std::unique_ptr<Transport> makeNvl(Bootstrap &boot, int rank, const std::vector<bool> &peers,
                                   double, collResult_t &result, std::string &) {
  result = collSuccess;
  return std::make_unique<NvlTransport>(boot, rank, peers);
}

bool oneDomain(const PeerInfo &self, const PeerInfo &peer) {
  return self.host != peer.host && !self.nvlink.empty() && self.nvlink == peer.nvlink;
}

std::string whyNot(const PeerInfo &self, const PeerInfo &peer) {
  if (self.nvlink.empty() || peer.nvlink.empty())
    return "a rank states no NVLink domain (COLL_NVLINK_DOMAIN)";
  if (self.nvlink != peer.nvlink)
    return "their NVLink domains differ ('" + self.nvlink + "', '" + peer.nvlink + "')";
  return "they are on one host, where shm joins them";
}

} // namespace

const TransportKind collrt::nvlTransport = {"nvl", true, oneDomain, makeNvl, whyNot};
