//===- StatsTest.cpp - Summaries of repeated measurements -----------------===//
#include "Stats.h"

#include <gtest/gtest.h>

using namespace cleave::calibrate;

TEST(CalibrateStatsTest, MedianOddEvenEmpty) {
  EXPECT_EQ(median({3, 1, 2}), 2);
  EXPECT_EQ(median({4, 1, 3, 2}), 2.5);
  EXPECT_EQ(median({}), 0);
}

TEST(CalibrateStatsTest, SummaryAndSpread) {
  Summary S = summarize({10, 12, 8, 11, 9});
  EXPECT_EQ(S.Count, 5u);
  EXPECT_EQ(S.Median, 10);
  EXPECT_EQ(S.Min, 8);
  EXPECT_EQ(S.Max, 12);
  EXPECT_DOUBLE_EQ(S.Mean, 10);
  EXPECT_DOUBLE_EQ(S.spread(), 0.4);
  EXPECT_EQ(summarize({}).Count, 0u);
  EXPECT_EQ(summarize({5}).spread(), 0);
}
