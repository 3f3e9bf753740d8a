//===- NoVerbsTest.cpp - collrt built without rdma-core's header ---------===//
//
// IbVerbs.cpp compiled here with COLLRT_WITHOUT_VERBS, as a machine without
// libibverbs-dev compiles it: the ib transport is unavailable and says why.
//
//===----------------------------------------------------------------------===//
#include "transport/Verbs.h"

#include <gtest/gtest.h>

TEST(NoVerbs, IbSaysItWasBuiltWithoutTheHeader) {
  std::string error;
  EXPECT_EQ(collrt::openIbVerbs("", error), nullptr);
  EXPECT_NE(error.find("built without rdma-core's <infiniband/verbs.h>"), std::string::npos)
      << error;
  std::string why;
  EXPECT_EQ(collrt::rdmaDevice(why), "");
  EXPECT_EQ(why, error);
}
