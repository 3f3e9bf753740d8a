//===- IbSelect.h - Which NIC, GID and ring size the ib transport takes ---===//
//
// The choices that NCCL's net_ib makes from sysfs before it opens a device,
// as pure functions of a sysfs tree (the root is an argument, so that tests
// feed them fake trees): the NIC nearest a rank's GPU on the PCI tree, the
// RoCE v2 GID of a port, and whether the rings fit the locked memory the
// process may pin. No <infiniband/verbs.h> here: they run, and are tested,
// where rdma-core's header is missing.
//
//===----------------------------------------------------------------------===//
#ifndef COLLRT_IBSELECT_H
#define COLLRT_IBSELECT_H

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace collrt {

/// An RDMA device as sysfs shows it: its name and the path of its PCI
/// function below <sysfs>/devices ("pci0000:00/0000:00:01.0/0000:01:00.0"),
/// empty where it is no PCI device (a software device such as rxe).
struct IbNic {
  std::string name;
  std::string pciPath;
};

/// The devices of <sysfs>/class/infiniband, by name.
std::vector<IbNic> listIbNics(const std::string &sysfs);

/// The PCI path (as IbNic's) of the PCI function `busId` ("0000:3B:00.0",
/// any case, as cuDeviceGetPCIBusId writes it); empty where sysfs has none.
std::string pciPathOf(const std::string &sysfs, const std::string &busId);

/// How far apart two PCI functions are, in NCCL's terms: "PIX" behind one
/// bridge, "PXB" behind several bridges of one root port, "PHB" through a
/// host bridge, "SYS" across root complexes (or unknown).
const char *pciDistance(const std::string &a, const std::string &b);

/// The device `localRank` opens: the entry localRank % n of `hcaList`
/// ("mlx5_0:1,mlx5_1:1", or one name for every rank) where it is set; else
/// of the NICs that share the longest PCI path with the GPU at `gpuPath`
/// (all of them where the GPU is unknown), the one at localRank % their
/// count, so that the local ranks spread over equally near NICs. Empty
/// where `nics` is empty: the first device libibverbs lists. `why` says how
/// the choice was made, for COLL_DEBUG.
std::string chooseIbHca(const std::string &hcaList, const std::vector<IbNic> &nics,
                        const std::string &gpuPath, int localRank, std::string &why);

/// One entry of a port's GID table, as <sysfs>/class/infiniband/<device>/
/// ports/<port>/gids/<index> and gid_attrs/types/<index> show it.
struct GidEntry {
  int index = 0;
  std::string type; // "RoCE v2", "IB/RoCE v1"; empty where unreadable
  uint8_t gid[16] = {};
};

/// The port's GID table, without unused (all-zero) entries.
std::vector<GidEntry> readGidTable(const std::string &sysfs, const std::string &device, int port);

/// The GID index a RoCE port uses, as NCCL chooses it: a RoCE v2 GID that
/// holds an IPv4 address (::ffff:a.b.c.d), else a RoCE v2 GID of a routable
/// IPv6 address (not link-local fe80::/10); `why` names it. False where
/// the table has neither: index 0 then, RoCE v1 and link-local, which a
/// RoCE v2 network does not route, and `why` says so.
bool chooseRoceGid(const std::vector<GidEntry> &table, int &index, std::string &why);

/// Whether `peers` rings of `ringBytes` each way (2 * ringBytes * peers
/// bytes, registered and so locked in memory) fit under RLIMIT_MEMLOCK; a
/// process with CAP_IPC_LOCK has no limit. False, saying what to raise,
/// where they do not.
bool ibRingsFitLockedMemory(size_t ringBytes, int peers, std::string &error);

} // namespace collrt

#endif // COLLRT_IBSELECT_H
