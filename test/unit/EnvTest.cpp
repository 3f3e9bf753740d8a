//===- EnvTest.cpp - The runtime's knobs: read strictly, refused clearly --===//
#include "support/Env.h"

#include <gtest/gtest.h>

#include <map>
#include <string>

using collrt::Env;

namespace {

Env readOf(const std::map<std::string, std::string> &vars) {
  return Env::read([&](const char *name) -> const char * {
    auto found = vars.find(name);
    return found == vars.end() ? nullptr : found->second.c_str();
  });
}

} // namespace

TEST(Env, DefaultsWhereNothingIsSet) {
  Env e = readOf({});
  EXPECT_EQ(e.error, "");
  EXPECT_EQ(e.timeoutSeconds, 60);
  EXPECT_FALSE(e.debug);
  EXPECT_EQ(e.bootstrapAddr, "127.0.0.1");
}

TEST(Env, TimeoutIsSecondsWithinTheMaximum) {
  EXPECT_EQ(readOf({{"COLL_TIMEOUT", "2.5"}}).timeoutSeconds, 2.5);
  EXPECT_EQ(readOf({{"COLL_TIMEOUT", "1000000"}}).error, "");
  // Each of these once became 60 without a word, or overflowed a deadline.
  for (const char *bad : {"abc", "-5", "0", "nan", "inf", "1e7", "9.3e9", "5s", "3 "}) {
    Env e = readOf({{"COLL_TIMEOUT", bad}});
    EXPECT_EQ(e.error, std::string("COLL_TIMEOUT='") + bad +
                           "': expected seconds, more than 0 and at most 1000000")
        << bad;
  }
}

TEST(Env, DebugTakesNcclsLevelsInAnyCase) {
  EXPECT_TRUE(readOf({{"COLL_DEBUG", "info"}}).debug);
  EXPECT_TRUE(readOf({{"COLL_DEBUG", "TRACE"}}).debug);
  Env warn = readOf({{"COLL_DEBUG", "Warn"}});
  EXPECT_FALSE(warn.debug);
  EXPECT_EQ(warn.error, "");
  Env bad = readOf({{"COLL_DEBUG", "verbose"}});
  EXPECT_FALSE(bad.debug);
  EXPECT_EQ(bad.error, "COLL_DEBUG='verbose': expected INFO, TRACE, WARN or VERSION");
}

TEST(Env, IntegersOutOfRangeAreRefused) {
  EXPECT_EQ(readOf({{"COLL_LL_SLOT", "4096"}}).llSlot, 4096);
  EXPECT_EQ(readOf({{"COLL_LL_SLOT", "12"}}).error,
            "COLL_LL_SLOT='12': expected an integer from 256 to 268435456");
  EXPECT_EQ(readOf({{"COLL_NVLS", "yes"}}).error,
            "COLL_NVLS='yes': expected an integer from 0 to 1");
  // The first refusal is the one reported.
  EXPECT_EQ(readOf({{"COLL_TIMEOUT", "x"}, {"COLL_NVLS", "2"}}).error.rfind("COLL_TIMEOUT", 0), 0u);
}
