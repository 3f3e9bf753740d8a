//===- Env.h - The runtime's environment knobs, read in one place ---------===//
//
//   COLL_DEBUG=INFO        say which plan each launch picks and why (INFO or
//                          TRACE, any case; WARN and VERSION say nothing)
//   COLL_TIMEOUT=60        seconds any wait may last before it fails, more
//                          than 0 and at most kMaxTimeoutSeconds
//   COLL_SIMPLE_SLOT=524288, COLL_LL_SLOT=65536, COLL_LL128_SLOT=614400
//                          bytes of one FIFO slot on the wire, per protocol
//   COLL_TRANSPORT=        unset: each pair of ranks gets the first transport
//                          that can join it, shm on one host, else nvl in one
//                          NVLink domain, else ib where both ranks open an
//                          RDMA device, else socket; shm, nvl, ib or socket:
//                          that one for every pair (tests)
//   COLL_NVLINK_DOMAIN=    unset; else the NVLink domain of this rank's GPU
//                          (MNNVL: cluster and clique): ranks on different
//                          hosts with equal ones join over nvl, mapping each
//                          other's memory by fabric handles
//   COLL_IB_HCA=           unset: ib uses the RDMA device nearest the rank's
//                          GPU on the PCI tree, port 1 (the local ranks spread
//                          over equally near ones); else this device,
//                          "mlx5_0" or "mlx5_0:2" for port 2, or a list
//                          "mlx5_0:1,mlx5_1:1" whose entry i % n local rank i takes
//   COLL_IB_GID_INDEX=     unset: on RoCE, a RoCE v2 GID with an IPv4, else a
//                          routable IPv6 address, else index 0; else this index
//   COLL_IB_TC=0           the traffic class of ib's packets (RoCE: DSCP << 2)
//   COLL_IB_SL=0           the service level of ib's packets
//   COLL_IB_RING=4194304   bytes of ib's ring per peer and direction: twice
//                          this per peer is locked in memory (RLIMIT_MEMLOCK)
//   COLL_HOSTID=           unset: a rank's host is its hostname and boot id;
//                          else this string (ranks with equal ones use shm)
//   COLL_DIRECT=0          1: direct connections store into the receiver's
//                          buffers. The host emulation must then copy every
//                          buffer into a shared window and back, which costs
//                          more than the FIFO copy it saves; for tests.
//   COLL_NVLS=1            0: multimem steps never use NVLink multicast on
//                          the GPU, only their unicast form (as NCCL_NVLS_ENABLE)
//   COLL_GDR=1             0: GPU plans across machines keep every FIFO slot
//                          in pinned host memory, never GPU memory that the
//                          RDMA NIC writes through a dma-buf (as NCCL_NET_GDR_LEVEL)
//   COLL_BOOTSTRAP_ADDR=127.0.0.1
//                          the IPv4 address that the bootstrap root and the
//                          socket transport listen on, the only one, and
//                          publish to the other ranks (0.0.0.0, every
//                          interface, is allowed with a warning)
//   COLL_SOCKET_IFNAME=    unset; else the network interface (eth0, ib0) whose
//                          IPv4 address they use instead of COLL_BOOTSTRAP_ADDR
//
// Deliberately shared beyond the runtime: collc run's memory estimate
// (tools/collc/RunLimits.cpp) takes the slot sizes' defaults from Env.
//
//===----------------------------------------------------------------------===//
#ifndef COLLRT_ENV_H
#define COLLRT_ENV_H

#include <cstdint>
#include <functional>
#include <string>

namespace collrt {

/// The longest COLL_TIMEOUT: about 11.6 days, far inside what a deadline of
/// steady_clock (int64 nanoseconds, 292 years) can hold.
constexpr double kMaxTimeoutSeconds = 1e6;

struct Env {
  bool debug = false;
  double timeoutSeconds = 60;
  int64_t simpleSlot = 524288, llSlot = 65536, ll128Slot = 614400; // NCCL's step sizes
  std::string bootstrapAddr = "127.0.0.1";
  std::string socketIfname;
  std::string transport; // empty: chosen per pair of ranks
  std::string hostId;
  std::string ibHca;   // empty: the device nearest the GPU
  int ibGidIndex = -1; // -1: chosen from the port's GID table
  int ibTc = 0, ibSl = 0;
  int64_t ibRing = 4 << 20;
  std::string nvlinkDomain;
  bool direct = false;
  bool nvls = true;
  bool gdr = true;
  bool sharedGpu = false; // several ranks of a machine may run on one GPU
  /// Why a knob was refused (the first one), empty if none was: the
  /// communicator's init then fails with it rather than guess a value.
  std::string error;

  /// The process's knobs, read once.
  static const Env &get();
  /// The knobs `lookup` gives (getenv's contract: null where unset).
  static Env read(const std::function<const char *(const char *)> &lookup);
};

} // namespace collrt

#endif // COLLRT_ENV_H
