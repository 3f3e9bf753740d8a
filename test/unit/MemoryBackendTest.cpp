//===- MemoryBackendTest.cpp - Allocations a peer imports from a descriptor -===//
//
// What every memory backend must do, run on the host's (memfds). The CUDA
// backend needs a driver; where there is none it must say so.
//
//===----------------------------------------------------------------------===//
#include "transport/MemoryBackend.h"
#include "transport/Transport.h"

#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <unistd.h>

using namespace collrt;

TEST(MemoryBackend, HostAllocationsAreZeroedAndImportedByDescriptor) {
  const MemoryBackend &host = hostMemory();
  std::string error;
  Region mine, theirs;
  ASSERT_EQ(host.allocate(5000, mine, error), collSuccess) << error;
  EXPECT_EQ(mine.size, 8192u); // whole pages
  ASSERT_GE(mine.fd, 0);
  for (size_t i = 0; i < mine.size; ++i)
    ASSERT_EQ(mine.base[i], 0) << i;
  // A peer maps the same memory from the descriptor, somewhere else.
  ASSERT_EQ(host.import(mine.fd, mine.size, theirs, error), collSuccess) << error;
  EXPECT_NE(theirs.base, mine.base);
  EXPECT_EQ(theirs.fd, -1); // the descriptor stays the owner's
  memcpy(mine.base + 4000, "window", 7);
  EXPECT_STREQ(theirs.base + 4000, "window");
  theirs.base[8191] = 'x';
  EXPECT_EQ(mine.base[8191], 'x');
  host.unmap(theirs);
  EXPECT_EQ(theirs.base, nullptr);
  host.unmap(mine);
  EXPECT_EQ(mine.base, nullptr);
  EXPECT_EQ(mine.fd, -1);
}

TEST(MemoryBackend, HostImportOfABadDescriptorFails) {
  std::string error;
  Region r;
  EXPECT_EQ(hostMemory().import(-1, 4096, r, error), collSystemError);
  EXPECT_NE(error.find("cannot map 4096 bytes"), std::string::npos) << error;
  EXPECT_EQ(r.base, nullptr);
}

// A window whose parts are shared by descriptor and size, as shm shares
// them: the part of rank 1 imported by rank 0.
TEST(MemoryBackend, WindowPartsAreImportedAndReleased) {
  std::string error;
  Window owner, peer;
  ASSERT_EQ(allocateWindow(100, 1, 2, owner, error), collSuccess) << error;
  peer.base.assign(2, nullptr);
  peer.size.assign(2, 0);
  ASSERT_EQ(importPart(peer, 1, owner.fd, owner.size[1], error), collSuccess) << error;
  owner.base[1][99] = 7;
  EXPECT_EQ(peer.base[1][99], 7);
  EXPECT_EQ(peer.size[1], 4096u);
  releasePart(peer, 1);
  EXPECT_EQ(peer.base[1], nullptr);
  releasePart(peer, 1); // twice is harmless
  freeWindow(owner, 1);
  EXPECT_EQ(owner.base[1], nullptr);
  EXPECT_EQ(owner.fd, -1);
}

TEST(MemoryBackend, CudaSaysWhyItIsMissing) {
  std::string error;
  if (const MemoryBackend *cuda = cudaMemory(error)) {
    EXPECT_STREQ(cuda->name(), "cuda");
    GTEST_SKIP() << "this machine has a CUDA driver";
  }
  EXPECT_FALSE(error.empty());
}
