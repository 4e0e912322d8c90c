//===- LaunchSupportTest.cpp - Footprint regions as byte ranges ------------===//
//
// Part of Cleave's unit tests. The helpers that turn a range's footprint
// regions into the engine's byte sets (runtime/lib/engine/LaunchSupport.h): row
// counts, hulls, coarse sets and their refinement, against sets built row
// by row.
//
//===----------------------------------------------------------------------===//

#include "../../runtime/lib/engine/LaunchSupport.h"

#include "gtest/gtest.h"

using namespace cleave::rt;
using namespace cleave::rt::launch;

namespace {

/// Every byte of \p Regions at \p Offset, clipped to [0, Size), row by row.
RangeSet byRows(const std::vector<ByteRegion> &Regions, uint64_t Offset,
                uint64_t Size) {
  RangeSet S;
  for (const ByteRegion &R : Regions)
    for (int64_t P = 0; P < R.Planes; ++P)
      for (int64_t Row = 0; Row < R.Rows; ++Row) {
        int64_t Lo = int64_t(Offset) + R.Base + P * R.PlanePitch +
                     Row * R.Pitch;
        int64_t Hi = Lo + R.Bytes;
        Lo = std::max<int64_t>(Lo, 0);
        Hi = std::min<int64_t>(Hi, int64_t(Size));
        if (Lo < Hi)
          S.insert(uint64_t(Lo), uint64_t(Hi));
      }
  return S;
}

ByteRange hullOf(const RangeSet &S) {
  std::vector<ByteRange> Rs = S.ranges();
  return Rs.empty() ? ByteRange{0, 0} : ByteRange{Rs.front().Lo, Rs.back().Hi};
}

// An interior box of a 3-D grid: 30 planes of 20 rows of 40 bytes, pitch
// 48, plane pitch 48 * 22: rows with gaps, the stencil's write footprint.
std::vector<ByteRegion> box() {
  ByteRegion R;
  R.Base = 52;
  R.Bytes = 40;
  R.Rows = 20;
  R.Pitch = 48;
  R.Planes = 30;
  R.PlanePitch = 48 * 22;
  return {R};
}

TEST(LaunchSupportTest, RowsAndHull) {
  std::vector<ByteRegion> B = box();
  EXPECT_EQ(countRows(B), 600u);
  ByteRange H;
  ASSERT_TRUE(regionsHull(B, 8, 1 << 20, H));
  RangeSet Exact = byRows(B, 8, 1 << 20);
  std::vector<ByteRange> Rs = Exact.ranges();
  ASSERT_EQ(Rs.size(), 600u);
  EXPECT_EQ(H, (ByteRange{Rs.front().Lo, Rs.back().Hi}));
  // Clipped to the buffer.
  ASSERT_TRUE(regionsHull(B, 8, 1000, H));
  EXPECT_EQ(H, (ByteRange{60, 1000}));
  // Negative pitches reach below the base.
  ByteRegion Down;
  Down.Base = 1000;
  Down.Bytes = 8;
  Down.Rows = 4;
  Down.Pitch = -100;
  ASSERT_TRUE(regionsHull({Down}, 0, 1 << 20, H));
  EXPECT_EQ(H, (ByteRange{700, 1008}));
  // An offset past INT64_MAX is refused.
  EXPECT_FALSE(regionsHull(B, uint64_t(INT64_MAX) + 1, 1 << 20, H));
}

TEST(LaunchSupportTest, CoarseUseAndRefinement) {
  std::vector<ByteRegion> B = box();
  std::vector<ByteRegion> Reads = box();
  Reads[0].Base -= 4; // one element more on either side
  Reads[0].Bytes += 8;
  ParamFootprint PF;
  PF.ReadClass = FootprintClass::Exact;
  PF.WriteClass = FootprintClass::Exact;
  PF.Reads = Reads;
  PF.Writes = B;
  PtrArg P;
  P.ArgNo = 1;
  void *Ptr = nullptr;
  // A buffer of 64 KiB at offset 0 (the helper only reads its size).
  BufferManager Bufs({});
  ASSERT_TRUE(Bufs.allocate(1 << 16, Ptr).ok());
  BufferManager::Resolved Res;
  ASSERT_TRUE(Bufs.resolve(Ptr, Res).ok());
  P.Buf = Res.Buf;

  // Exact (no coarsening): the rows themselves.
  BufferUse Fine;
  addArgumentUse(P, &PF, true, 0, 1, Fine);
  EXPECT_EQ(Fine.Writes, byRows(B, 0, 1 << 16));
  EXPECT_EQ(Fine.Reads, byRows(Reads, 0, 1 << 16));
  EXPECT_FALSE(Fine.WritesCoarse);

  // Coarse above 64 rows: both hulls; refinement gives the exact rows back.
  BufferUse Coarse;
  addArgumentUse(P, &PF, true, 0, 1, Coarse, 64);
  EXPECT_TRUE(Coarse.WritesCoarse);
  EXPECT_TRUE(Coarse.WritesExact);
  ByteRange WH = hullOf(Fine.Writes), RH = hullOf(Fine.Reads);
  EXPECT_EQ(Coarse.Writes, RangeSet(WH.Lo, WH.Hi));
  EXPECT_EQ(Coarse.Reads, RangeSet(RH.Lo, RH.Hi));
  refineWrites(Coarse, 1 << 16);
  EXPECT_FALSE(Coarse.WritesCoarse);
  EXPECT_EQ(Coarse.Writes, Fine.Writes);

  // Under the limit nothing is coarse.
  BufferUse Small;
  addArgumentUse(P, &PF, true, 0, 1, Small, 1000);
  EXPECT_FALSE(Small.WritesCoarse);
  EXPECT_EQ(Small.Writes, Fine.Writes);

  // A bound (not exact) write stays the whole buffer, never coarse.
  PF.WriteClass = FootprintClass::Bounded;
  BufferUse Bound;
  addArgumentUse(P, &PF, true, 0, 1, Bound, 64);
  EXPECT_FALSE(Bound.WritesExact);
  EXPECT_FALSE(Bound.WritesCoarse);
  ASSERT_TRUE(Bufs.free(Ptr).ok());
}

} // namespace
