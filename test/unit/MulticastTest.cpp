//===- MulticastTest.cpp - When multimem steps fall back to unicast -------===//
#include "collrt.h"
#include "src/Multicast.h"

#include <gtest/gtest.h>

using collrt::unicastReason;

TEST(Multicast, RunsWhereTheSwitchReducesTheTypeAndOp) {
  for (collDataType_t t : {collFloat32, collFloat64, collFloat16, collBfloat16, collInt32,
                           collUint32, collInt64, collUint64})
    for (collRedOp_t op : {collSum, collAvg})
      EXPECT_EQ(unicastReason(true, t, op, true), "") << t << " " << op;
  for (collDataType_t t : {collFloat16, collBfloat16, collInt32, collUint64})
    for (collRedOp_t op : {collMax, collMin})
      EXPECT_EQ(unicastReason(true, t, op, true), "") << t << " " << op;
}

TEST(Multicast, FallsBackWhereTheSwitchCannotReduce) {
  EXPECT_EQ(unicastReason(true, collFloat32, collProd, true), "multimem has no prod of float32");
  EXPECT_EQ(unicastReason(true, collFloat32, collMax, true), "multimem has no max of float32");
  EXPECT_EQ(unicastReason(true, collFloat64, collMin, true), "multimem has no min of float64");
  EXPECT_EQ(unicastReason(true, collInt8, collSum, true), "multimem has no sum of int8");
  EXPECT_EQ(unicastReason(true, collUint8, collMax, true), "multimem has no max of uint8");
  EXPECT_EQ(unicastReason(true, collFloat8e4m3, collSum, true),
            "multimem has no sum of float8e4m3");
  EXPECT_EQ(unicastReason(true, collInt64, collProd, true), "multimem has no prod of int64");
}

TEST(Multicast, StoresNeedNoReduction) {
  // All-gather and broadcast only store: any type goes through the switch.
  EXPECT_EQ(unicastReason(true, collInt8, collSum, false), "");
  EXPECT_EQ(unicastReason(true, collFloat64, collProd, false), "");
}

TEST(Multicast, NoMulticastMeansUnicast) {
  EXPECT_EQ(unicastReason(false, collFloat32, collSum, true), "no NVLink multicast here");
  EXPECT_EQ(unicastReason(false, collInt8, collSum, false), "no NVLink multicast here");
}
