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

TEST(CalibrateStatsTest, FitLineGivesACopysFixedCost) {
  // 3 us + bytes at 50 GB/s: the intercept is the copy latency.
  std::vector<double> X = {4096, 65536, 1 << 20, 4 << 20}, Y;
  for (double B : X)
    Y.push_back(3e-6 + B / 50e9);
  Line L = fitLine(X, Y);
  EXPECT_NEAR(L.Intercept, 3e-6, 1e-15);
  EXPECT_NEAR(1 / L.Slope, 50e9, 1e3);
  Line Flat = fitLine({2, 2}, {1, 3});
  EXPECT_EQ(Flat.Slope, 0);
  EXPECT_EQ(Flat.Intercept, 2);
  EXPECT_EQ(fitLine({}, {}).Intercept, 0);
}
