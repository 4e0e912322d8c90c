//===- SplitWeightsTest.cpp - The Weights policy and CLEAVE_SPLIT ---------===//
//
// Part of Cleave. The Weights policy (a benchmarking and diagnostic control:
// shares proportional to one caller-given weight per device) and the parser
// of CLEAVE_SPLIT's value. The API layer's use of the variable runs end to
// end in test/Runtime/Api/split.test.
//
//===----------------------------------------------------------------------===//
#include "cleave/rt/Engine.h"

#include "gtest/gtest.h"

#include <random>

using namespace cleave::rt;

namespace {

uint64_t blocksOf(const std::vector<PartitionRange> &P, Location D) {
  uint64_t N = 0;
  for (const PartitionRange &R : P)
    if (R.Device == D)
      N += R.Count;
  return N;
}

TEST(SplitWeights, PolicySplits) {
  std::vector<PartitionRange> P;
  // 5 % on the CPU, the rest 1:1 over two GPUs.
  ASSERT_TRUE(computePolicyPartition(PartitionPolicy::Weights, 1000, {0, 1, 2},
                                     {0.05, 0.475, 0.475}, P)
                  .ok());
  ASSERT_EQ(P.size(), 3u);
  EXPECT_EQ(P[0].Device, 0);
  EXPECT_EQ(P[0].First, 0u);
  EXPECT_EQ(P[0].Count, 50u);
  EXPECT_EQ(P[1].First, 50u);
  EXPECT_EQ(P[1].Count, 475u);
  EXPECT_EQ(P[2].First, 525u);
  EXPECT_EQ(P[2].Count, 475u);

  // Weight 0 leaves a device out; the weights need not sum to 1.
  ASSERT_TRUE(computePolicyPartition(PartitionPolicy::Weights, 10, {0, 1, 2},
                                     {0, 3, 1}, P)
                  .ok());
  ASSERT_EQ(P.size(), 2u);
  EXPECT_EQ(blocksOf(P, 0), 0u);
  EXPECT_EQ(P[0].Device, 1);
  EXPECT_EQ(P[0].First, 0u);
  // 7.5 : 2.5, the remainder to the largest weight.
  EXPECT_EQ(P[0].Count, 8u);
  EXPECT_EQ(P[1].Device, 2);
  EXPECT_EQ(P[1].Count, 2u);

  // No device with a share: refused, not silently split evenly.
  Result R = computePolicyPartition(PartitionPolicy::Weights, 10, {0, 1},
                                    {0, 0}, P);
  EXPECT_FALSE(R.ok());
  EXPECT_NE(R.message().find("no device"), std::string::npos) << R.message();

  // Random weights: contiguous, covering, in device order, every device
  // within one block of its exact share, zero weights left out.
  std::mt19937 Rng(11);
  for (int Rep = 0; Rep < 500; ++Rep) {
    uint64_t Blocks = 1 + Rng() % 100000;
    unsigned N = 1 + Rng() % 6;
    std::vector<Location> D;
    std::vector<double> W;
    double Sum = 0;
    for (unsigned I = 0; I < N; ++I) {
      D.push_back(Location(I));
      W.push_back(Rng() % 3 ? double(Rng() % 1000) / 7.0 : 0.0);
      Sum += W.back();
    }
    if (Sum <= 0) {
      W[0] = 1;
      Sum = 1;
    }
    ASSERT_TRUE(
        computePolicyPartition(PartitionPolicy::Weights, Blocks, D, W, P).ok());
    uint64_t Next = 0;
    Location Last = -1;
    for (const PartitionRange &X : P) {
      EXPECT_EQ(X.First, Next);
      EXPECT_GT(X.Count, 0u);
      EXPECT_GT(X.Device, Last);
      EXPECT_GT(W[size_t(X.Device)], 0.0);
      Last = X.Device;
      Next += X.Count;
    }
    EXPECT_EQ(Next, Blocks);
    for (unsigned I = 0; I < N; ++I) {
      double Exact = double(Blocks) * W[I] / Sum;
      EXPECT_LE(std::abs(double(blocksOf(P, Location(I))) - Exact), 1.0);
    }
  }
}

TEST(SplitWeights, Parse) {
  std::vector<double> W;
  std::string Why;
  ASSERT_TRUE(parseSplitWeights("0.05,0.475, 0.475", 3, W, Why)) << Why;
  ASSERT_EQ(W.size(), 3u);
  EXPECT_DOUBLE_EQ(W[0], 0.05);
  EXPECT_DOUBLE_EQ(W[2], 0.475);
  ASSERT_TRUE(parseSplitWeights("0,1", 2, W, Why)) << Why;
  ASSERT_TRUE(parseSplitWeights("3", 1, W, Why)) << Why;
  EXPECT_DOUBLE_EQ(W[0], 3.0);

  EXPECT_FALSE(parseSplitWeights("1,1", 3, W, Why));
  EXPECT_NE(Why.find("2 weight(s) for 3 selected device(s)"),
            std::string::npos)
      << Why;
  EXPECT_FALSE(parseSplitWeights("1,-1", 2, W, Why));
  EXPECT_NE(Why.find("weight 1 ('-1')"), std::string::npos) << Why;
  EXPECT_FALSE(parseSplitWeights("1,x", 2, W, Why));
  EXPECT_NE(Why.find("weight 1 ('x')"), std::string::npos) << Why;
  EXPECT_FALSE(parseSplitWeights("1,,1", 3, W, Why));
  EXPECT_NE(Why.find("weight 1 ('')"), std::string::npos) << Why;
  EXPECT_FALSE(parseSplitWeights("1,inf", 2, W, Why));
  EXPECT_FALSE(parseSplitWeights("nan,1", 2, W, Why));
  EXPECT_FALSE(parseSplitWeights("0,0", 2, W, Why));
  EXPECT_NE(Why.find("every weight is 0"), std::string::npos) << Why;
}

} // namespace
