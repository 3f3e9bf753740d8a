//===- RankMemoryTest.cpp - The memory a run of emulated ranks may take ---===//
//
// cgroupRoom (tools/ranks/Memory.h) finds the tightest limit of a process's
// cgroups, in v1 and v2, at any level of nesting, and where a cgroup
// namespace hides the path.
//
//===----------------------------------------------------------------------===//

#include "ranks/Memory.h"

#include "FakeTree.h"

#include <gtest/gtest.h>

#include <cstdlib>

using collc_launch::cgroupRoom;

namespace {

/// A directory tree standing in for /sys/fs/cgroup and /proc/self/cgroup.
class FakeCgroups : public FakeTree {
protected:
  std::optional<double> room(const std::string &self) {
    write("self", self);
    return cgroupRoom(root + "/mnt", (root + "/self").c_str());
  }
};

} // namespace

// The parent's limit binds although the process's own cgroup has room.
TEST_F(FakeCgroups, V2TakesTheTightestLevel) {
  write("mnt/a/b/memory.max", "1000");
  write("mnt/a/b/memory.current", "100");
  write("mnt/a/memory.max", "500");
  write("mnt/a/memory.current", "300");
  write("mnt/memory.max", "max"); // the root sets no limit
  write("mnt/memory.current", "7");
  EXPECT_EQ(room("0::/a/b"), 200);
}

TEST_F(FakeCgroups, V1MemoryHierarchyNested) {
  write("mnt/memory/x/y/memory.limit_in_bytes", "9223372036854771712"); // unlimited
  write("mnt/memory/x/y/memory.usage_in_bytes", "5");
  write("mnt/memory/x/memory.limit_in_bytes", "4096");
  write("mnt/memory/x/memory.usage_in_bytes", "1024");
  EXPECT_EQ(room("9:name=systemd:/\n4:cpuset,memory:/x/y\n0::/"), 3072);
}

// Inside a cgroup namespace the path names a cgroup the mount does not
// show; its root is the process's own cgroup.
TEST_F(FakeCgroups, NamespacedPathReachesTheMountRoot) {
  write("mnt/memory.max", "2048");
  write("mnt/memory.current", "48");
  EXPECT_EQ(room("0::/gone/deeper"), 2000);
}

TEST_F(FakeCgroups, NoLimitAnywhere) {
  write("mnt/memory.max", "max");
  write("mnt/memory.current", "48");
  EXPECT_EQ(room("0::/\n3:cpu:/z"), std::nullopt);
  EXPECT_EQ(cgroupRoom(root + "/mnt", (root + "/missing").c_str()), std::nullopt);
}

// Usage over the limit (possible after the limit is lowered) leaves 0.
TEST_F(FakeCgroups, UsageOverTheLimitLeavesNothing) {
  write("mnt/unified/s/memory.max", "100");
  write("mnt/unified/s/memory.current", "150");
  EXPECT_EQ(room("0::/s"), 0);
}
