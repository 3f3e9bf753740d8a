//===- RankSetTest.cpp - Sets of contributing ranks -----------------------===//
#include "lib/Analysis/RankSet.h"

#include <gtest/gtest.h>

using coll::RankSet;

TEST(RankSet, UniteMergesAdjacentRuns) {
  RankSet a = RankSet::range(0, 3), b = RankSet::range(3, 5);
  ASSERT_FALSE(a.firstCommon(b).has_value());
  RankSet u = RankSet::unite(a, b);
  EXPECT_EQ(u, RankSet::range(0, 5));
  EXPECT_EQ(u.getRuns().size(), 1u);
  EXPECT_EQ(u.size(), 5u);
}

TEST(RankSet, WrappedRingAccumulationStaysTwoRuns) {
  // A ring chunk that starts at rank 6 of 8 accumulates 6, 7, 0, 1, ...
  RankSet acc = RankSet::single(6);
  for (uint32_t s = 1; s < 8; ++s) {
    RankSet next = RankSet::single((6 + s) % 8);
    ASSERT_FALSE(acc.firstCommon(next).has_value()) << "step " << s;
    acc = RankSet::unite(acc, next);
    EXPECT_LE(acc.getRuns().size(), 2u);
  }
  EXPECT_EQ(acc, RankSet::range(0, 8));
}

TEST(RankSet, FirstCommonFindsTheSmallestShared) {
  RankSet a = RankSet::unite(RankSet::range(0, 2), RankSet::range(5, 9));
  RankSet b = RankSet::unite(RankSet::range(3, 4), RankSet::range(7, 12));
  ASSERT_TRUE(a.firstCommon(b).has_value());
  EXPECT_EQ(*a.firstCommon(b), 7u);
  EXPECT_FALSE(RankSet::range(0, 3).firstCommon(RankSet::range(3, 6)).has_value());
}

TEST(RankSet, MissingListsRanksInOrderUpToTheLimit) {
  RankSet all = RankSet::range(0, 8);
  RankSet some = RankSet::unite(RankSet::range(0, 2), RankSet::single(5));
  auto missing = all.missingFrom(some, 3);
  ASSERT_EQ(missing.size(), 3u);
  EXPECT_EQ(missing[0], 2u);
  EXPECT_EQ(missing[1], 3u);
  EXPECT_EQ(missing[2], 4u);
  EXPECT_TRUE(some.missingFrom(all, 8).empty());
}

TEST(RankSet, PrintsHalfOpenRunsLikeTheLanguage) {
  EXPECT_EQ(RankSet::single(3).str(), "3");
  EXPECT_EQ(RankSet::range(0, 7).str(), "0 .. 7");
  EXPECT_EQ(RankSet::unite(RankSet::range(0, 3), RankSet::single(5)).str(), "0 .. 3, 5");
}
