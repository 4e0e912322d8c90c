//===- PartitionParamsTest.cpp - Host constants of the partition decode --===//
//
// Part of Cleave. The multiply-shift divisors of cleave/rt/PartitionParams.h
// against real division, over the whole range the decode needs
// (numerators up to 2^32 - 2), and the decode of block indices against the
// x-fastest de-linearisation, for grids at CUDA's limits too.
//
//===----------------------------------------------------------------------===//
#include "cleave/rt/PartitionParams.h"

#include "gtest/gtest.h"

#include <cstdint>
#include <random>
#include <vector>

using namespace cleave::rt;

namespace {

// Usable in constant expressions (a runtime may build tables at compile
// time).
static_assert(fastDivide(4294967294u, makeFastDivisor(7)) == 4294967294u / 7);
static_assert(fastDivide(4294967294u, makeFastDivisor(1)) == 4294967294u);

constexpr uint32_t MaxNumerator = 0xFFFFFFFEu; // 2^32 - 2

// Numerators where a wrong magic number shows first: around multiples of
// D (q*D - 1, q*D, q*D + D - 1) near 0, near the top of the range, and at
// the top itself.
std::vector<uint32_t> edgeNumerators(uint32_t D) {
  std::vector<uint32_t> N;
  auto Near = [&](uint64_t Q) {
    for (int64_t Delta : {-1, 0, 1})
      for (uint64_t Off : {uint64_t(0), uint64_t(D) - 1}) {
        int64_t V = int64_t(Q * D + Off) + Delta;
        if (V >= 0 && uint64_t(V) <= MaxNumerator)
          N.push_back(uint32_t(V));
      }
  };
  for (uint64_t Q = 0; Q < 64; ++Q)
    Near(Q);
  uint64_t Top = MaxNumerator / D;
  for (uint64_t Q = Top >= 64 ? Top - 64 : 0; Q <= Top; ++Q)
    Near(Q);
  for (uint32_t K = 0; K < 64; ++K)
    N.push_back(MaxNumerator - K);
  return N;
}

void checkDivisor(uint32_t D, std::mt19937_64 &Rng, unsigned RandomCount) {
  FastDivisor F = makeFastDivisor(D);
  ASSERT_LE(F.Inc, 1u) << "d = " << D;
  ASSERT_LT(F.Shift, 31u) << "d = " << D;
  for (uint32_t N : edgeNumerators(D))
    ASSERT_EQ(fastDivide(N, F), N / D) << "n = " << N << ", d = " << D;
  std::uniform_int_distribution<uint32_t> Dist(0, MaxNumerator);
  for (unsigned I = 0; I < RandomCount; ++I) {
    uint32_t N = Dist(Rng);
    ASSERT_EQ(fastDivide(N, F), N / D) << "n = " << N << ", d = " << D;
  }
}

TEST(PartitionParams, EdgeDivisors) {
  std::mt19937_64 Rng(1);
  std::vector<uint32_t> Ds = {1,         2,          3,          5,
                              6,         7,          9,          10,
                              11,        12,         13,         25,
                              100,       641,        1000,       6700417,
                              65535,     65536,      65537,      0x7FFFFFFFu,
                              0x7FFFFFFEu, 0x40000000u, 0x40000001u,
                              0x3FFFFFFFu, 0x55555555u, 0x66666667u};
  for (unsigned L = 0; L < 31; ++L) {
    uint32_t P = uint32_t(1) << L;
    Ds.push_back(P);
    if (P > 2)
      Ds.push_back(P - 1);
    Ds.push_back(P + 1);
  }
  for (uint32_t D : Ds)
    checkDivisor(D, Rng, 20000);
}

TEST(PartitionParams, SmallDivisors) {
  std::mt19937_64 Rng(2);
  for (uint32_t D = 1; D <= 4096; ++D)
    checkDivisor(D, Rng, 500);
}

TEST(PartitionParams, RandomDivisors) {
  std::mt19937_64 Rng(3);
  std::uniform_int_distribution<uint32_t> Dist(1, 0x7FFFFFFFu);
  for (unsigned I = 0; I < 2000; ++I)
    checkDivisor(Dist(Rng), Rng, 200);
}

// Every numerator in the bottom and top 2^24 of the range, for divisors of
// both rounding methods and the largest error terms (every numerator up to
// 2^32 - 2 was checked for these once, outside the suite: ~5 s each at -O2).
TEST(PartitionParams, DenseNumerators) {
  constexpr uint32_t Span = 1u << 24;
  for (uint32_t D : {1u, 2u, 3u, 6u, 7u, 641u, 65535u, 0x7FFFFFFFu}) {
    FastDivisor F = makeFastDivisor(D);
    for (uint32_t N = 0; N < Span; ++N)
      if (fastDivide(N, F) != N / D) {
        ADD_FAILURE() << "n = " << N << ", d = " << D;
        return;
      }
    for (uint32_t N = MaxNumerator - Span + 1;; ++N) {
      if (fastDivide(N, F) != N / D) {
        ADD_FAILURE() << "n = " << N << ", d = " << D;
        return;
      }
      if (N == MaxNumerator)
        break;
    }
  }
}

TEST(PartitionParams, BothRoundingMethodsOccur) {
  // 7 needs a 33-bit round-up magic at this precision: round-down is used.
  EXPECT_EQ(makeFastDivisor(7).Inc, 1u);
  EXPECT_EQ(makeFastDivisor(3).Inc, 0u);
  EXPECT_EQ(makeFastDivisor(641).Inc, 0u);
}

BlockIndex reference(uint64_t L, uint32_t GX, uint32_t GY) {
  return {uint32_t(L % GX), uint32_t(L / GX % GY), uint32_t(L / GX / GY)};
}

// Decodes blocks [First, First + Count) of a grid, spot-checking the ends
// and Samples blocks in between.
void checkLaunch(uint64_t First, uint64_t Count, uint32_t GX, uint32_t GY,
                 uint32_t GZ, std::mt19937_64 &Rng, unsigned Samples) {
  ASSERT_TRUE(isValidPartitionLaunch(First, Count, GX, GY, GZ));
  uint32_t V[NumPartitionParams];
  ASSERT_TRUE(computePartitionParams(First, GX, GY, GZ, V));
  EXPECT_EQ(V[cleave::pp::GridX], GX);
  EXPECT_EQ(V[cleave::pp::GridY], GY);
  EXPECT_EQ(V[cleave::pp::GridZ], GZ);
  std::vector<uint64_t> Cs = {0, Count - 1, Count / 2};
  for (uint64_t K = 1; K < 4 && K < Count; ++K)
    Cs.push_back(K), Cs.push_back(Count - 1 - K);
  std::uniform_int_distribution<uint64_t> Dist(0, Count - 1);
  for (unsigned I = 0; I < Samples; ++I)
    Cs.push_back(Dist(Rng));
  for (uint64_t C : Cs) {
    BlockIndex Got = decodeBlockIndex(uint32_t(C), V);
    BlockIndex Want = reference(First + C, GX, GY);
    ASSERT_TRUE(Got.X == Want.X && Got.Y == Want.Y && Got.Z == Want.Z)
        << "block " << C << " of [" << First << ", +" << Count << ") in ("
        << GX << ", " << GY << ", " << GZ << "): got (" << Got.X << ", "
        << Got.Y << ", " << Got.Z << "), want (" << Want.X << ", " << Want.Y
        << ", " << Want.Z << ")";
  }
}

TEST(PartitionParams, DecodeEveryBlockOfSmallGrids) {
  for (uint32_t GX : {1u, 2u, 3u, 5u, 7u, 8u})
    for (uint32_t GY : {1u, 3u, 4u, 7u})
      for (uint32_t GZ : {1u, 2u, 5u}) {
        uint64_t Total = uint64_t(GX) * GY * GZ;
        uint32_t All[NumPartitionParams];
        for (uint64_t First = 0; First < Total; ++First) {
          ASSERT_TRUE(computePartitionParams(First, GX, GY, GZ, All));
          for (uint64_t C = 0; First + C < Total; ++C) {
            BlockIndex Got = decodeBlockIndex(uint32_t(C), All);
            BlockIndex Want = reference(First + C, GX, GY);
            ASSERT_TRUE(Got.X == Want.X && Got.Y == Want.Y && Got.Z == Want.Z)
                << First << " + " << C;
          }
        }
      }
}

TEST(PartitionParams, DecodeAtTheLimits) {
  std::mt19937_64 Rng(4);
  constexpr uint32_t MaxX = 0x7FFFFFFFu, MaxYZ = 0xFFFFu;
  constexpr uint64_t MaxCount = 0x7FFFFFFFu;
  uint64_t Huge = uint64_t(MaxX) * MaxYZ * MaxYZ;
  // The largest 1-D launch starting at the last column: n1 = 2^32 - 4.
  checkLaunch(MaxX - 1, MaxCount, MaxX, MaxYZ, MaxYZ, Rng, 2000);
  // The end of the largest grid (linear indices near 2^63).
  checkLaunch(Huge - MaxCount, MaxCount, MaxX, MaxYZ, MaxYZ, Rng, 2000);
  checkLaunch(Huge - 1, 1, MaxX, MaxYZ, MaxYZ, Rng, 0);
  // gx = 1: every block is a row, n1 / gx is the whole count.
  checkLaunch(uint64_t(MaxYZ) * MaxYZ - MaxCount, MaxCount, 1, MaxYZ, MaxYZ,
              Rng, 2000);
  checkLaunch(12345, MaxCount, 1, MaxYZ, MaxYZ, Rng, 2000);
  // Row lengths that are powers of two, and ones that need round-down.
  checkLaunch(1000, MaxCount, 1u << 20, MaxYZ, MaxYZ, Rng, 2000);
  checkLaunch(3, MaxCount - 7, 7, 65521, 65521, Rng, 2000);
  checkLaunch(uint64_t(1) << 40, MaxCount, 0x40000001u, 4097, 3, Rng, 2000);
  // Random grids and ranges.
  std::uniform_int_distribution<uint32_t> DX(1, MaxX), DYZ(1, MaxYZ);
  for (unsigned I = 0; I < 2000; ++I) {
    uint32_t GX = DX(Rng) >> (Rng() % 31), GY = DYZ(Rng) >> (Rng() % 16),
             GZ = DYZ(Rng) >> (Rng() % 16);
    GX = GX ? GX : 1, GY = GY ? GY : 1, GZ = GZ ? GZ : 1;
    uint64_t Total = uint64_t(GX) * GY * GZ;
    uint64_t First = std::uniform_int_distribution<uint64_t>(0, Total - 1)(Rng);
    uint64_t Left = Total - First;
    uint64_t Count = std::uniform_int_distribution<uint64_t>(
        1, Left < MaxCount ? Left : MaxCount)(Rng);
    checkLaunch(First, Count, GX, GY, GZ, Rng, 50);
  }
}

TEST(PartitionParams, RejectsInvalidLaunches) {
  uint32_t V[NumPartitionParams] = {};
  EXPECT_FALSE(computePartitionParams(0, 0, 1, 1, V));
  EXPECT_FALSE(computePartitionParams(0, 0x80000000u, 1, 1, V));
  EXPECT_FALSE(computePartitionParams(0, 1, 65536, 1, V));
  EXPECT_FALSE(computePartitionParams(0, 1, 1, 65536, V));
  EXPECT_FALSE(computePartitionParams(6, 2, 3, 1, V));
  EXPECT_TRUE(computePartitionParams(5, 2, 3, 1, V));
  EXPECT_FALSE(isValidPartitionLaunch(0, 0x80000000u, 0x7FFFFFFFu, 2, 1));
  EXPECT_FALSE(isValidPartitionLaunch(0, 0, 4, 1, 1));
  EXPECT_FALSE(isValidPartitionLaunch(3, 2, 4, 1, 1));
  EXPECT_TRUE(isValidPartitionLaunch(3, 1, 4, 1, 1));
}

} // namespace
