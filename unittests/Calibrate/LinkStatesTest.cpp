//===- LinkStatesTest.cpp - Which host-link states are measured -----------===//
//
// Digest 000 §3.4: 4^n states; for 2 GPUs all 15 non-idle ones, for 4 GPUs
// the 34 classes up to permutation (Table A.4) in the full mode.
//
//===----------------------------------------------------------------------===//
#include "LinkStates.h"

#include <gtest/gtest.h>

#include <set>

using namespace cleave::calibrate;

namespace {
bool has(const std::vector<SystemState> &V, const std::string &Name) {
  for (const SystemState &S : V)
    if (systemStateName(S) == Name)
      return true;
  return false;
}

/// The state with its GPUs' states sorted: equal for permutations.
std::string canonical(SystemState S) {
  std::sort(S.begin(), S.end());
  return systemStateName(S);
}
} // namespace

TEST(LinkStatesTest, OneGpu) {
  auto V = statesToMeasure(1, true);
  ASSERT_EQ(V.size(), 3u);
  EXPECT_TRUE(has(V, "S"));
  EXPECT_TRUE(has(V, "R"));
  EXPECT_TRUE(has(V, "SR"));
  EXPECT_TRUE(statesToMeasure(0, false).empty());
}

TEST(LinkStatesTest, TwoGpusEveryCombination) {
  for (bool Quick : {true, false}) {
    auto V = statesToMeasure(2, Quick);
    EXPECT_EQ(V.size(), 15u);
    std::set<std::string> Names;
    for (auto &S : V)
      Names.insert(systemStateName(S));
    EXPECT_EQ(Names.size(), 15u);
    EXPECT_FALSE(Names.count("N/N"));
    for (const char *N : {"S/N", "N/S", "R/SR", "SR/R", "SR/SR", "S/R"})
      EXPECT_TRUE(Names.count(N)) << N;
  }
}

TEST(LinkStatesTest, FourGpus) {
  auto Quick = statesToMeasure(4, true);
  // Each GPU alone in S, R, SR, and all four alike.
  EXPECT_EQ(Quick.size(), 12u + 3u);
  EXPECT_TRUE(has(Quick, "N/N/SR/N"));
  EXPECT_TRUE(has(Quick, "R/R/R/R"));
  auto Full = statesToMeasure(4, false);
  std::set<std::string> Classes;
  for (auto &S : Full)
    Classes.insert(canonical(S));
  // 35 multisets of 4 states out of {N, S, R, SR}, less all idle.
  EXPECT_EQ(Classes.size(), 34u);
  // Table A.4's row with the misprint: SR/S/R/N.
  EXPECT_TRUE(has(Full, "SR/S/R/N"));
}

TEST(LinkStatesTest, EightGpusOneStatePerClass) {
  auto Quick = statesToMeasure(8, true);
  EXPECT_EQ(Quick.size(), 8u * 3u + 3u);
  auto V = statesToMeasure(8, false);
  EXPECT_TRUE(has(V, "S/S/S/N/N/N/N/N"));
  EXPECT_TRUE(has(V, "SR/SR/SR/SR/SR/SR/SR/SR"));
  EXPECT_TRUE(has(V, "SR/SR/S/S/R/N/N/N"));
  std::set<std::string> Classes;
  for (auto &S : V)
    Classes.insert(canonical(S));
  // 165 multisets of 8 states out of {N, S, R, SR}, less all idle.
  EXPECT_EQ(Classes.size(), 164u);
  // The alone states of GPUs 1..7 are their classes' second members.
  EXPECT_EQ(V.size(), 164u + 7u * 3u);
}

TEST(LinkStatesTest, MoreGpusScaleInsteadOfEnumerating) {
  auto V = statesToMeasure(9, false);
  EXPECT_TRUE(has(V, "S/S/S/N/N/N/N/N/N"));
  EXPECT_TRUE(has(V, "SR/SR/SR/SR/SR/SR/SR/SR/SR"));
  EXPECT_LT(V.size(), 64u);
}
