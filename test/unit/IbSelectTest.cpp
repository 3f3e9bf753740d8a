//===- IbSelectTest.cpp - The ib transport's NIC, GID and ring size -------===//
//
// The choices of IbSelect.h against fake sysfs trees in a temporary
// directory, as no machine here has an RDMA NIC: each GPU takes the NIC
// behind its own PCIe switch, COLL_IB_HCA lists give each local rank its
// entry, a RoCE port routes by a RoCE v2 GID. And the rings against a
// lowered RLIMIT_MEMLOCK, in a child process and in the transport.
//
//===----------------------------------------------------------------------===//
#include "support/Bootstrap.h"
#include "support/Env.h"
#include "transport/IbSelect.h"
#include "transport/Transport.h"

#include "FakeTree.h"

#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <functional>
#include <map>
#include <linux/capability.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

using namespace collrt;
namespace fs = std::filesystem;

namespace {

/// A directory tree standing in for /sys: PCI functions under devices/,
/// reached through the links of class/infiniband and bus/pci/devices as
/// the kernel lays them out.
class FakeSysfs : public FakeTree {
protected:
  // A PCI function at `path` below devices/, with its bus id's link.
  void pci(const std::string &path) {
    fs::create_directories(root + "/devices/" + path);
    fs::create_directories(root + "/bus/pci/devices");
    const std::string id = fs::path(path).filename().string();
    fs::create_directory_symlink(root + "/devices/" + path, root + "/bus/pci/devices/" + id);
  }
  // An RDMA device on the PCI function at `path`.
  void nic(const std::string &name, const std::string &path) {
    pci(path);
    fs::create_directories(root + "/class/infiniband/" + name);
    fs::create_directory_symlink(root + "/devices/" + path,
                                 root + "/class/infiniband/" + name + "/device");
  }
  void gid(const std::string &device, int index, const std::string &gid, const std::string &type) {
    const std::string port = "class/infiniband/" + device + "/ports/1/";
    write(port + "gids/" + std::to_string(index), gid);
    if (!type.empty())
      write(port + "gid_attrs/types/" + std::to_string(index), type);
  }
};

// Two PCIe switches, each with a GPU and a NIC below it, on root ports of
// one host bridge; the NIC listed first is the other GPU's.
constexpr const char *kSwitch0 = "pci0000:00/0000:00:01.0/0000:01:00.0";
constexpr const char *kSwitch1 = "pci0000:00/0000:00:03.0/0000:05:00.0";

} // namespace

TEST_F(FakeSysfs, EachGpuTakesTheNicBehindItsOwnSwitch) {
  pci(std::string(kSwitch0) + "/0000:02:00.0/0000:03:00.0"); // GPU 0
  pci(std::string(kSwitch1) + "/0000:06:00.0/0000:07:00.0"); // GPU 1
  nic("mlx5_0", std::string(kSwitch1) + "/0000:06:01.0/0000:08:00.0");
  nic("mlx5_1", std::string(kSwitch0) + "/0000:02:01.0/0000:04:00.0");
  const std::vector<IbNic> nics = listIbNics(root);
  ASSERT_EQ(nics.size(), 2u);
  EXPECT_EQ(nics[0].name, "mlx5_0");
  EXPECT_EQ(nics[0].pciPath, std::string(kSwitch1) + "/0000:06:01.0/0000:08:00.0");

  // Neither the first NIC nor the local rank decides: the PCI tree does.
  // The bus ids as cuDeviceGetPCIBusId writes them.
  std::string why;
  const std::string gpu0 = pciPathOf(root, "0000:03:00.0"), gpu1 = pciPathOf(root, "0000:07:00.0");
  ASSERT_EQ(gpu0, std::string(kSwitch0) + "/0000:02:00.0/0000:03:00.0");
  EXPECT_EQ(chooseIbHca("", nics, gpu0, 0, why), "mlx5_1");
  EXPECT_NE(why.find("PIX to the GPU"), std::string::npos) << why;
  EXPECT_EQ(chooseIbHca("", nics, gpu1, 1, why), "mlx5_0");
  EXPECT_EQ(chooseIbHca("", nics, gpu1, 0, why), "mlx5_0");
  EXPECT_EQ(chooseIbHca("", nics, gpu0, 1, why), "mlx5_1");
}

TEST_F(FakeSysfs, TheNearestNicWinsByPciDistance) {
  // A GPU behind two levels of switches; NICs across the host bridge
  // (PHB), on another root complex (SYS), and behind the outer switch (PXB).
  pci(std::string(kSwitch0) + "/0000:02:00.0/0000:0a:00.0/0000:0B:00.0/0000:0c:00.0");
  nic("mlx5_0", "pci0000:80/0000:80:01.0/0000:81:00.0");
  nic("mlx5_1", "pci0000:00/0000:00:05.0/0000:09:00.0");
  nic("mlx5_2", std::string(kSwitch0) + "/0000:02:01.0/0000:04:00.0");
  const std::vector<IbNic> nics = listIbNics(root);
  ASSERT_EQ(nics.size(), 3u);
  const std::string gpu = pciPathOf(root, "0000:0C:00.0"); // any case
  ASSERT_NE(gpu, "");
  EXPECT_STREQ(pciDistance(gpu, nics[0].pciPath), "SYS");
  EXPECT_STREQ(pciDistance(gpu, nics[1].pciPath), "PHB");
  EXPECT_STREQ(pciDistance(gpu, nics[2].pciPath), "PXB");
  std::string why;
  for (int local = 0; local < 3; ++local)
    EXPECT_EQ(chooseIbHca("", nics, gpu, local, why), "mlx5_2") << local;
  EXPECT_NE(why.find("PXB to the GPU"), std::string::npos) << why;
}

TEST_F(FakeSysfs, EquallyNearNicsSpreadOverTheLocalRanks) {
  // Numbered as libibverbs numbers them, mlx5_10 last; a dual-port card's
  // two functions behind the GPU's switch, and the GPU unknown.
  pci(std::string(kSwitch0) + "/0000:02:00.0/0000:03:00.0");
  nic("mlx5_10", "pci0000:80/0000:80:01.0/0000:81:00.0");
  nic("mlx5_2", std::string(kSwitch0) + "/0000:02:01.0/0000:04:00.1");
  nic("mlx5_1", std::string(kSwitch0) + "/0000:02:01.0/0000:04:00.0");
  const std::vector<IbNic> nics = listIbNics(root);
  ASSERT_EQ(nics.size(), 3u);
  EXPECT_EQ(nics[2].name, "mlx5_10");
  const std::string gpu = pciPathOf(root, "0000:03:00.0");
  std::string why;
  EXPECT_EQ(chooseIbHca("", nics, gpu, 0, why), "mlx5_1");
  EXPECT_EQ(chooseIbHca("", nics, gpu, 1, why), "mlx5_2");
  EXPECT_EQ(chooseIbHca("", nics, gpu, 2, why), "mlx5_1");
  EXPECT_EQ(chooseIbHca("", nics, "", 2, why), "mlx5_10");
  EXPECT_NE(why.find("unknown"), std::string::npos) << why;
  // No device in sysfs: libibverbs's first.
  EXPECT_EQ(chooseIbHca("", {}, gpu, 1, why), "");
}

TEST(IbSelect, AnHcaListGivesLocalRankIEntryIModuloItsLength) {
  const std::vector<IbNic> nics = {{"mlx5_0", "pci0000:00/0000:00:01.0"},
                                   {"mlx5_1", "pci0000:00/0000:00:02.0"}};
  const std::vector<std::string> entries = {"mlx5_0:1", "mlx5_1:1", "mlx5_2:2"};
  std::string why;
  for (int local = 0; local < 5; ++local)
    EXPECT_EQ(
        chooseIbHca("mlx5_0:1,mlx5_1:1,mlx5_2:2", nics, "pci0000:00/0000:00:02.0", local, why),
        entries[local % 3])
        << local;
  EXPECT_NE(why.find("COLL_IB_HCA entry 1 for local rank 4"), std::string::npos) << why;
  // One name, every rank, whatever the PCI tree says.
  for (int local = 0; local < 3; ++local)
    EXPECT_EQ(chooseIbHca("mlx5_0:2", nics, "pci0000:00/0000:00:02.0", local, why), "mlx5_0:2");
}

//===----------------------------------------------------------------------===//
// The GID of a RoCE port
//===----------------------------------------------------------------------===//

TEST_F(FakeSysfs, RoceTakesTheRoceV2GidOfAnIpv4Address) {
  gid("mlx5_0", 0, "fe80:0000:0000:0000:0a5e:45ff:fe12:3456", "IB/RoCE v1");
  gid("mlx5_0", 1, "fe80:0000:0000:0000:0a5e:45ff:fe12:3456", "RoCE v2");
  gid("mlx5_0", 2, "2001:0db8:0000:0000:0000:0000:0000:0001", "RoCE v2");
  gid("mlx5_0", 3, "0000:0000:0000:0000:0000:ffff:0a00:0001", "IB/RoCE v1");
  gid("mlx5_0", 4, "0000:0000:0000:0000:0000:ffff:0a00:0001", "RoCE v2");
  gid("mlx5_0", 5, "0000:0000:0000:0000:0000:0000:0000:0000", ""); // unused
  const std::vector<GidEntry> table = readGidTable(root, "mlx5_0", 1);
  ASSERT_EQ(table.size(), 5u);
  EXPECT_EQ(table[4].type, "RoCE v2");
  int index = -1;
  std::string why;
  EXPECT_TRUE(chooseRoceGid(table, index, why));
  EXPECT_EQ(index, 4);
  EXPECT_NE(why.find("RoCE v2 with IPv4 address 10.0.0.1"), std::string::npos) << why;
}

TEST_F(FakeSysfs, RoceWithoutIpv4TakesARoutableIpv6RoceV2Gid) {
  gid("mlx5_0", 0, "fe80:0000:0000:0000:0a5e:45ff:fe12:3456", "IB/RoCE v1");
  gid("mlx5_0", 1, "fe80:0000:0000:0000:0a5e:45ff:fe12:3456", "RoCE v2");
  gid("mlx5_0", 2, "2001:0db8:0000:0000:0000:0000:0000:0001", "IB/RoCE v1");
  gid("mlx5_0", 3, "2001:0db8:0000:0000:0000:0000:0000:0001", "RoCE v2");
  int index = -1;
  std::string why;
  EXPECT_TRUE(chooseRoceGid(readGidTable(root, "mlx5_0", 1), index, why));
  EXPECT_EQ(index, 3);
  EXPECT_NE(why.find("2001:db8::1"), std::string::npos) << why;
}

TEST_F(FakeSysfs, RoceWithoutARoutableRoceV2GidFallsBackToIndexZeroSayingWhy) {
  gid("mlx5_0", 0, "fe80:0000:0000:0000:0a5e:45ff:fe12:3456", "IB/RoCE v1");
  gid("mlx5_0", 1, "fe80:0000:0000:0000:0a5e:45ff:fe12:3456", "RoCE v2");
  gid("mlx5_0", 2, "0000:0000:0000:0000:0000:ffff:0a00:0001", "IB/RoCE v1");
  int index = -1;
  std::string why;
  EXPECT_FALSE(chooseRoceGid(readGidTable(root, "mlx5_0", 1), index, why));
  EXPECT_EQ(index, 0);
  EXPECT_NE(why.find("GID index 0 (RoCE v1, link-local)"), std::string::npos) << why;
  EXPECT_NE(why.find("COLL_IB_GID_INDEX"), std::string::npos) << why;
  // No table at all (no such port): the same.
  EXPECT_FALSE(chooseRoceGid(readGidTable(root, "mlx5_0", 2), index, why));
  EXPECT_EQ(index, 0);
}

TEST(IbSelect, TheKnobsOfIbAreReadAndBounded) {
  auto env = [](std::map<std::string, std::string> vars) {
    return Env::read([vars](const char *name) -> const char * {
      auto it = vars.find(name);
      return it == vars.end() ? nullptr : it->second.c_str();
    });
  };
  Env e = env({});
  EXPECT_EQ(e.ibGidIndex, -1);
  EXPECT_EQ(e.ibTc, 0);
  EXPECT_EQ(e.ibSl, 0);
  EXPECT_EQ(e.ibRing, 4 << 20);
  e = env({{"COLL_IB_GID_INDEX", "3"},
           {"COLL_IB_TC", "106"},
           {"COLL_IB_SL", "5"},
           {"COLL_IB_RING", "65536"}});
  EXPECT_EQ(e.error, "");
  EXPECT_EQ(e.ibGidIndex, 3);
  EXPECT_EQ(e.ibTc, 106);
  EXPECT_EQ(e.ibSl, 5);
  EXPECT_EQ(e.ibRing, 65536);
  EXPECT_EQ(env({{"COLL_IB_SL", "16"}}).error, "COLL_IB_SL='16': expected an integer from 0 to 15");
  EXPECT_NE(env({{"COLL_IB_RING", "100"}}).error, "");
}

//===----------------------------------------------------------------------===//
// Locked memory
//===----------------------------------------------------------------------===//

namespace {

// For its scope, this process's RLIMIT_MEMLOCK is `limit` bytes (the soft
// limit; the hard one stays) and the calling thread, with the threads it
// starts, lacks CAP_IPC_LOCK, which lifts the limit.
class LockedMemoryLimit {
public:
  explicit LockedMemoryLimit(uint64_t limit) {
    getrlimit(RLIMIT_MEMLOCK, &saved);
    rlimit lowered{limit, saved.rlim_max};
    __user_cap_data_struct caps[2] = {};
    if (setrlimit(RLIMIT_MEMLOCK, &lowered) != 0)
      error = "setrlimit failed";
    else if (syscall(SYS_capget, &header, savedCaps) != 0)
      error = "capget failed";
    else {
      memcpy(caps, savedCaps, sizeof caps);
      caps[0].effective &= ~(1u << CAP_IPC_LOCK);
      if (syscall(SYS_capset, &header, caps) != 0)
        error = "capset failed";
    }
  }
  ~LockedMemoryLimit() {
    syscall(SYS_capset, &header, savedCaps);
    setrlimit(RLIMIT_MEMLOCK, &saved);
  }
  std::string error;

private:
  rlimit saved{};
  __user_cap_header_struct header{_LINUX_CAPABILITY_VERSION_3, 0};
  __user_cap_data_struct savedCaps[2] = {};
};

// Runs `body` in a child whose RLIMIT_MEMLOCK is `limit` bytes and which
// lacks CAP_IPC_LOCK; what it returns comes back.
std::string withLockedMemoryLimit(uint64_t limit, const std::function<std::string()> &body) {
  int out[2];
  if (pipe(out) != 0)
    return "pipe failed";
  const pid_t child = fork();
  if (child == 0) {
    close(out[0]);
    std::string said;
    {
      LockedMemoryLimit lowered(limit);
      said = lowered.error.empty() ? body() : lowered.error;
    }
    (void)!::write(out[1], said.data(), said.size());
    _exit(0);
  }
  close(out[1]);
  std::string said;
  char buffer[4096];
  for (ssize_t n; (n = read(out[0], buffer, sizeof buffer)) > 0;)
    said.append(buffer, size_t(n));
  close(out[0]);
  int status = 0;
  waitpid(child, &status, 0);
  return said;
}

} // namespace

TEST(IbSelect, RingsBeyondRlimitMemlockFailNamingTheLimitAndTheNeed) {
  const std::string said = withLockedMemoryLimit(64 << 10, [] {
    std::string error, fits;
    if (ibRingsFitLockedMemory(4096, 8, fits)) // 64 KiB: just fits
      error = ibRingsFitLockedMemory(4 << 20, 3, error) ? "fit" : error;
    else
      error = "4096-byte rings for 8 peers did not fit: " + fits;
    return error;
  });
  EXPECT_EQ(said, "ib needs 24 MiB of locked memory for its rings to 3 peers (2 x "
                  "COLL_IB_RING=4194304 bytes each); RLIMIT_MEMLOCK is 64 KiB: raise it (ulimit "
                  "-l, memlock in limits.conf, docker --ulimit memlock=-1) or lower COLL_IB_RING "
                  "(to 8192 or less)");
}

// The transport itself checks before it pins anything, and every rank
// fails with the reason rather than at ibv_reg_mr. In this process, the
// limit restored after: a child forked from the sanitizers' runs, which
// may have threads left, must start none.
TEST(IbSelect, TheIbTransportChecksRlimitMemlockBeforeItOpensADevice) {
  std::string failure[2];
  {
    LockedMemoryLimit lowered(1 << 20);
    ASSERT_EQ(lowered.error, "");
    UniqueIdData id{};
    std::string error;
    ASSERT_EQ(startBootstrapRoot(id, error), collSuccess) << error;
    std::vector<std::thread> ranks;
    for (int r = 0; r < 2; ++r)
      ranks.emplace_back([&, r] {
        Bootstrap boot;
        std::string err;
        collResult_t result;
        if (boot.connect(id, r, 2, 5, err) != collSuccess)
          failure[r] = "bootstrap: " + err;
        else if (!ibTransport.make(boot, r, {r == 1, r == 0}, 5, result, err))
          failure[r] = std::to_string(int(result)) + " " + err;
      });
    for (std::thread &t : ranks)
      t.join();
  }
  const std::string expected =
      std::to_string(int(collSystemError)) +
      " ib: ib needs 8 MiB of locked memory for its rings to 1 peer (2 x COLL_IB_RING=4194304 "
      "bytes each); RLIMIT_MEMLOCK is 1 MiB: raise it (ulimit -l, memlock in limits.conf, docker "
      "--ulimit memlock=-1) or lower COLL_IB_RING (to 524288 or less)";
  EXPECT_EQ(failure[0], expected);
  EXPECT_EQ(failure[1], expected);
}
