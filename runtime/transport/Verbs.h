//===- Verbs.h - What the ib transport needs of an RDMA NIC ---------------===//
//
// The ib transport is the proxy engine (Proxy.h) over a wire of RDMA writes,
// and only the verbs calls are specific to ib: a few, behind the interface
// below, so that the wire runs unchanged over libibverbs (IbVerbs.cpp) and
// over an in-memory stand-in in the unit tests, where one rank's "remote
// memory" is the other's registered buffer in the same process.
//
// The wire (Ib.cpp) gives each peer a ring in the receiver's registered
// memory. The sender writes framed messages into it with RDMA writes that
// carry their byte count as an immediate; the receiver hands the ring's
// bytes to Proxy::receive and returns the space with a zero-byte write whose
// immediate says how much, as NCCL's receiver returns clear-to-send slots.
// Where both ends registered their FIFOs' memory, a step's bytes go with a
// plain write from the sender's slot straight into the receiver's, and only
// its header takes the ring (Wire::put).
//
//===----------------------------------------------------------------------===//
#ifndef COLLRT_VERBS_H
#define COLLRT_VERBS_H

#include "transport/Proxy.h"

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace collrt {

/// How a peer reaches one of this rank's queue pairs: what RTR needs.
struct VerbsAddress {
  uint32_t qpn = 0, psn = 0;
  uint16_t lid = 0;
  uint8_t gid[16] = {};
  /// The port's active MTU as enum ibv_mtu counts (1: 256 bytes, 2: 512,
  /// 3: 1024, 4: 2048, 5: 4096); 0 where unknown.
  uint8_t mtu = 0;
};

/// The MTU of a path between ports whose active MTUs are `a` and `b`
/// (VerbsAddress::mtu): the smaller, as a packet must pass both; the known
/// one where the other is 0.
inline uint8_t pathMtu(uint8_t a, uint8_t b) { return !a ? b : !b ? a : a < b ? a : b; }

/// A registered region: the key this rank's writes name it by, and the one
/// a peer's writes into it need.
struct VerbsRegion {
  uint32_t lkey = 0, rkey = 0;
};

/// One completion: a write this rank posted finished (`received` false), or
/// a peer's write with immediate landed here. `error` is empty on success;
/// otherwise the queue pair to `peer` is broken.
struct VerbsCompletion {
  int peer = -1;
  bool received = false;
  uint32_t imm = 0;
  std::string error;
};

/// One reliable, connected queue pair per peer, one completion queue.
/// Writes to one peer complete in the order they were posted, and land in
/// that order. Only the proxy's thread calls it after setup.
class Verbs {
public:
  virtual ~Verbs() = default;
  /// Makes the queue pair to `peer`, with room for `depth` outstanding
  /// writes and as many receives.
  virtual bool createQueuePair(int peer, int depth, VerbsAddress &self, std::string &error) = 0;
  /// Joins it to the peer's queue pair (INIT, RTR, RTS), sending packets of
  /// at most `mtu` (as VerbsAddress::mtu counts; 0: this port's).
  virtual bool connectQueuePair(int peer, const VerbsAddress &remote, uint8_t mtu,
                                std::string &error) = 0;
  /// Breaks the queue pair to `peer`: nothing more leaves or lands.
  virtual void closeQueuePair(int peer) = 0;
  /// Registers host memory for local use and for the peers' writes. The
  /// memory must outlive this object.
  virtual bool registerMemory(void *base, size_t bytes, VerbsRegion &region,
                              std::string &error) = 0;
  /// Registers device memory that the dma-buf `fd` exports, `bytes` from
  /// its start, which work requests name by the addresses from `iova` on
  /// (GPUDirect RDMA: the GPU's own addresses). The caller keeps `fd`.
  virtual bool registerDmabuf(int fd, size_t bytes, uint64_t iova, VerbsRegion &region,
                              std::string &error) = 0;
  /// An RDMA write with immediate of `bytes` at `local` (registered under
  /// `lkey`) to `remote` in the peer's region `rkey`; `bytes` may be 0.
  virtual bool postWrite(int peer, const void *local, uint32_t lkey, size_t bytes, uint64_t remote,
                         uint32_t rkey, uint32_t imm, std::string &error) = 0;
  /// An RDMA write without immediate: it consumes no receive and completes
  /// only here, and lands before the writes posted after it.
  virtual bool postPut(int peer, const void *local, uint32_t lkey, size_t bytes, uint64_t remote,
                       uint32_t rkey, std::string &error) = 0;
  /// A receive for one immediate from `peer`.
  virtual bool postReceive(int peer, std::string &error) = 0;
  /// Appends up to `max` completions to `out`; how many.
  virtual int poll(std::vector<VerbsCompletion> &out, int max) = 0;
  /// The device's name, for messages.
  virtual std::string device() const = 0;
};

/// libibverbs (IbVerbs.cpp): the first device, or `hca` ("mlx5_0", or
/// "mlx5_0:2" for port 2), as chooseIbHca (IbSelect.h) names it. Null,
/// saying why, when libibverbs cannot be loaded or no device opens.
std::unique_ptr<Verbs> openIbVerbs(const std::string &hca, std::string &error);

/// Whether this process opens an RDMA device, tried once with local rank
/// 0's choice (COLL_IB_HCA's first entry, or the first device): its name,
/// or empty with the reason in `why`.
std::string rdmaDevice(std::string &why);

/// What a rank tells a peer about its end of their ib connection.
struct IbEndpoint {
  VerbsAddress qp;
  uint64_t ring = 0; // the ring the peer writes into, and its key
  uint32_t ringKey = 0;
  uint32_t ringBytes = 0;
};

/// The ib transport's wire. Setup: make it, send each peer endpoint(peer),
/// connect with what the peer sent, and wait for every peer to connect
/// before anything is posted.
class IbWire : public Wire {
public:
  virtual IbEndpoint endpoint(int peer) const = 0;
  virtual bool connect(int peer, const IbEndpoint &theirs, std::string &error) = 0;
};

/// A wire for `rank` to the ranks marked in `peers`, over `verbs`, with a
/// receive ring of `ringBytes` for each. Messages of any size go, in pieces
/// where the ring is smaller.
std::unique_ptr<IbWire> makeIbWire(int rank, std::unique_ptr<Verbs> verbs,
                                   const std::vector<bool> &peers, size_t ringBytes,
                                   std::string &error);

} // namespace collrt

#endif // COLLRT_VERBS_H
