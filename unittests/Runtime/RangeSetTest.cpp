//===- RangeSetTest.cpp - The byte-range set behind replica validity -----===//
//
// Part of Cleave. Hand-picked cases for coalescing, splitting and queries at
// the edges, then long random sequences of operations checked against a
// bitmap model after every step.
//
//===----------------------------------------------------------------------===//
#include "cleave/rt/RangeSet.h"

#include "gtest/gtest.h"

#include <algorithm>
#include <bitset>
#include <random>

using namespace cleave::rt;

namespace {

std::vector<ByteRange> R(std::initializer_list<ByteRange> L) { return L; }

TEST(RangeSetTest, InsertCoalescesOverlappingAndAdjacent) {
  RangeSet S;
  S.insert(0, 4);
  S.insert(4, 8); // adjacent
  EXPECT_EQ(S.ranges(), R({{0, 8}}));
  S.insert(10, 12);
  S.insert(20, 30);
  EXPECT_EQ(S.numRanges(), 3u);
  S.insert(11, 21); // bridges two
  EXPECT_EQ(S.ranges(), R({{0, 8}, {10, 30}}));
  S.insert(8, 10); // fills the gap exactly
  EXPECT_EQ(S.ranges(), R({{0, 30}}));
  S.insert(5, 6); // inside
  EXPECT_EQ(S.ranges(), R({{0, 30}}));
  S.insert(7, 7); // empty
  S.insert(9, 3); // inverted: empty
  EXPECT_EQ(S.ranges(), R({{0, 30}}));
  EXPECT_EQ(S.totalBytes(), 30u);
  EXPECT_EQ(S.toString(), "{[0,30)}");
}

TEST(RangeSetTest, InsertCoveringManyAndBeforeFirst) {
  RangeSet S;
  for (uint64_t I = 10; I < 100; I += 10)
    S.insert(I, I + 2);
  EXPECT_EQ(S.numRanges(), 9u);
  S.insert(0, 5);
  EXPECT_EQ(S.numRanges(), 10u);
  S.insert(3, 95);
  EXPECT_EQ(S.ranges(), R({{0, 95}}));
}

TEST(RangeSetTest, EraseSplitsAndTrims) {
  RangeSet S(0, 100);
  S.erase(10, 20);
  EXPECT_EQ(S.ranges(), R({{0, 10}, {20, 100}}));
  S.erase(0, 5); // head of the first range, starting at its start
  EXPECT_EQ(S.ranges(), R({{5, 10}, {20, 100}}));
  S.erase(8, 25); // tail of one, head of the next
  EXPECT_EQ(S.ranges(), R({{5, 8}, {25, 100}}));
  S.erase(25, 100); // exactly one range
  EXPECT_EQ(S.ranges(), R({{5, 8}}));
  S.erase(5, 8);
  EXPECT_TRUE(S.empty());
  S.erase(0, 10); // erasing from empty is fine
  EXPECT_TRUE(S.empty());
}

TEST(RangeSetTest, EraseAtStartOfRangeLeavesNoEmptyRange) {
  RangeSet S(10, 20);
  S.erase(10, 15);
  EXPECT_EQ(S.ranges(), R({{15, 20}}));
  S.insert(10, 12);
  S.erase(10, 30);
  EXPECT_TRUE(S.empty());
}

TEST(RangeSetTest, Queries) {
  RangeSet S;
  S.insert(10, 20);
  S.insert(30, 40);
  EXPECT_TRUE(S.contains(10, 20));
  EXPECT_TRUE(S.contains(12, 13));
  EXPECT_FALSE(S.contains(9, 11));
  EXPECT_FALSE(S.contains(15, 35));
  EXPECT_TRUE(S.contains(5, 5)); // empty range
  EXPECT_TRUE(S.contains(19));
  EXPECT_FALSE(S.contains(20));
  EXPECT_TRUE(S.intersects(19, 31));
  EXPECT_TRUE(S.intersects(0, 11));
  EXPECT_FALSE(S.intersects(20, 30));
  EXPECT_FALSE(S.intersects(40, 50));
  EXPECT_FALSE(S.intersects(15, 15));
  EXPECT_EQ(S.intersection(15, 35), R({{15, 20}, {30, 35}}));
  EXPECT_EQ(S.gaps(0, 50), R({{0, 10}, {20, 30}, {40, 50}}));
  EXPECT_EQ(S.gaps(12, 18), R({}));
  EXPECT_EQ(S.gaps(15, 35), R({{20, 30}}));
  EXPECT_EQ(S.gaps(7, 7), R({}));
}

TEST(RangeSetTest, SetOperations) {
  RangeSet A, B;
  A.insert(0, 10);
  A.insert(20, 30);
  B.insert(5, 25);
  RangeSet I = A.intersection(B);
  EXPECT_EQ(I.ranges(), R({{5, 10}, {20, 25}}));
  RangeSet U = A;
  U.insert(B);
  EXPECT_EQ(U.ranges(), R({{0, 30}}));
  RangeSet D = A;
  D.erase(B);
  EXPECT_EQ(D.ranges(), R({{0, 5}, {25, 30}}));
  EXPECT_NE(A, B);
  RangeSet A2(0, 10);
  A2.insert(20, 30);
  EXPECT_EQ(A, A2);
}

TEST(RangeSetTest, ExtremesOfTheAddressSpace) {
  const uint64_t Max = ~uint64_t(0);
  RangeSet S;
  S.insert(Max - 10, Max);
  S.insert(0, 1);
  EXPECT_TRUE(S.contains(Max - 1));
  EXPECT_EQ(S.gaps(Max - 20, Max), R({{Max - 20, Max - 10}}));
  S.erase(Max - 5, Max);
  EXPECT_EQ(S.ranges(), R({{0, 1}, {Max - 10, Max - 5}}));
  S.insert(0, Max);
  EXPECT_EQ(S.ranges(), R({{0, Max}}));
  EXPECT_EQ(S.totalBytes(), Max);
}

/// A bitmap over [0, N) with the same operations.
constexpr unsigned N = 256;
using Bits = std::bitset<N>;

void checkAgainst(const RangeSet &S, const Bits &M) {
  // Coalesced: disjoint, non-adjacent, non-empty, sorted.
  auto Rs = S.ranges();
  for (size_t I = 0; I < Rs.size(); ++I) {
    ASSERT_LT(Rs[I].Lo, Rs[I].Hi);
    if (I)
      ASSERT_LT(Rs[I - 1].Hi, Rs[I].Lo) << S.toString();
  }
  Bits FromSet;
  for (ByteRange X : Rs)
    for (uint64_t B = X.Lo; B < X.Hi; ++B)
      FromSet.set(B);
  ASSERT_EQ(FromSet, M) << S.toString();
  ASSERT_EQ(S.totalBytes(), M.count());
}

TEST(RangeSetTest, RandomAgainstBitmap) {
  for (unsigned Seed = 1; Seed <= 20; ++Seed) {
    std::mt19937_64 Rng(Seed);
    RangeSet S;
    Bits M;
    for (int Step = 0; Step < 2000; ++Step) {
      uint64_t A = Rng() % (N + 1), B = Rng() % (N + 1);
      // Mostly short ranges, so the set stays fragmented.
      if (Rng() % 4)
        B = std::min<uint64_t>(N, A + Rng() % 12);
      uint64_t Lo = std::min(A, B), Hi = std::max(A, B);
      switch (Rng() % 6) {
      case 0:
      case 1:
        S.insert(Lo, Hi);
        for (uint64_t I = Lo; I < Hi; ++I)
          M.set(I);
        break;
      case 2:
      case 3:
        S.erase(Lo, Hi);
        for (uint64_t I = Lo; I < Hi; ++I)
          M.reset(I);
        break;
      case 4: {
        bool All = true, Any = false;
        for (uint64_t I = Lo; I < Hi; ++I)
          All &= M[I], Any |= M[I];
        ASSERT_EQ(S.contains(Lo, Hi), All) << Lo << " " << Hi;
        ASSERT_EQ(S.intersects(Lo, Hi), Any) << Lo << " " << Hi;
        break;
      }
      case 5: {
        // gaps and intersection partition [Lo, Hi) between them.
        Bits G, In;
        for (ByteRange X : S.gaps(Lo, Hi))
          for (uint64_t I = X.Lo; I < X.Hi; ++I)
            G.set(I);
        for (ByteRange X : S.intersection(Lo, Hi))
          for (uint64_t I = X.Lo; I < X.Hi; ++I)
            In.set(I);
        for (uint64_t I = 0; I < N; ++I) {
          bool InRange = I >= Lo && I < Hi;
          ASSERT_EQ(G[I], InRange && !M[I]) << I;
          ASSERT_EQ(In[I], InRange && M[I]) << I;
        }
        break;
      }
      }
      checkAgainst(S, M);
      if (HasFatalFailure())
        return;
    }
  }
}

/// Intersection, union and difference of \p A and \p B (the sets of
/// \p MA and \p MB) against the bitmaps'.
void checkAlgebra(const RangeSet &A, const Bits &MA, const RangeSet &B,
                  const Bits &MB) {
  checkAgainst(A.intersection(B), MA & MB);
  RangeSet U = A;
  U.insert(B);
  checkAgainst(U, MA | MB);
  RangeSet D = A;
  D.erase(B);
  checkAgainst(D, MA & ~MB);
}

TEST(RangeSetTest, RandomSetAlgebraAgainstBitmap) {
  std::mt19937_64 Rng(42);
  auto RandomSet = [&](Bits &M) {
    RangeSet S;
    for (int I = 0; I < 12; ++I) {
      uint64_t Lo = Rng() % N, Hi = std::min<uint64_t>(N, Lo + Rng() % 30);
      S.insert(Lo, Hi);
      for (uint64_t B = Lo; B < Hi; ++B)
        M.set(B);
    }
    return S;
  };
  for (int Trial = 0; Trial < 500; ++Trial) {
    Bits MA, MB;
    RangeSet A = RandomSet(MA), B = RandomSet(MB);
    checkAlgebra(A, MA, B, MB);
    if (HasFatalFailure())
      return;
  }
}

} // namespace

namespace {

TEST(RangeSetTest, WholeSetMergesAgainstBitmap) {
  // Sets of many short ranges (more than the whole-set operations handle
  // range by range), so union, difference and intersection run as merges.
  std::mt19937_64 Rng(99);
  auto Fragmented = [&](Bits &M) {
    RangeSet S;
    for (uint64_t Lo = Rng() % 3; Lo < N; Lo += 2 + Rng() % 6) {
      uint64_t Hi = std::min<uint64_t>(N, Lo + 1 + Rng() % 3);
      S.insert(Lo, Hi);
      for (uint64_t B = Lo; B < Hi; ++B)
        M.set(B);
    }
    return S;
  };
  for (int Trial = 0; Trial < 300; ++Trial) {
    Bits MA, MB;
    RangeSet A = Fragmented(MA), B = Fragmented(MB);
    ASSERT_GT(A.numRanges(), 16u);
    ASSERT_GT(B.numRanges(), 16u);
    checkAlgebra(A, MA, B, MB);
    if (HasFatalFailure())
      return;
  }
}

TEST(RangeSetTest, InsertSortedAgainstBitmap) {
  // Sorted by Lo, overlapping and touching, into empty and non-empty sets
  // (the fast path appends; anything before the last range goes through
  // insert()).
  std::mt19937_64 Rng(7);
  for (int Trial = 0; Trial < 500; ++Trial) {
    RangeSet S;
    Bits M;
    for (int I = 0; I < int(Rng() % 4); ++I) {
      uint64_t Lo = Rng() % N, Hi = std::min<uint64_t>(N, Lo + Rng() % 20);
      S.insert(Lo, Hi);
      for (uint64_t B = Lo; B < Hi; ++B)
        M.set(B);
    }
    std::vector<ByteRange> Sorted;
    for (int I = 0; I < 10; ++I) {
      uint64_t Lo = Rng() % N, Hi = std::min<uint64_t>(N, Lo + Rng() % 25);
      Sorted.push_back({Lo, Hi});
    }
    std::sort(Sorted.begin(), Sorted.end(),
              [](ByteRange A, ByteRange B) { return A.Lo < B.Lo; });
    for (ByteRange X : Sorted)
      for (uint64_t B = X.Lo; B < X.Hi; ++B)
        M.set(B);
    S.insertSorted(Sorted);
    checkAgainst(S, M);
    if (HasFatalFailure())
      return;
  }
}

} // namespace
