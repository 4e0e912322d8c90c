//===- PerfCacheSliceTest.cpp - Minimum slices kept in the cache ----------===//
//
// Digest 003 §3.4: a kernel's minimum slice is measured once per device and
// kept in the performance cache.
//
//===----------------------------------------------------------------------===//

#include "cleave/rt/CoScheduler.h"
#include "cleave/rt/PerfCache.h"

#include <gtest/gtest.h>

using namespace cleave::rt;

namespace {

TEST(PerfCacheSlices, KeptByKernelAndDevice) {
  PerfCache C;
  EXPECT_EQ(C.sliceBlocks("gpu0 H200", "vecadd"), 0u);
  C.recordSliceBlocks("gpu0 H200", "vecadd", 396);
  C.recordSliceBlocks("gpu1 H100", "vecadd", 264);
  C.recordSliceBlocks("gpu0 H200", "ignored", 0);
  EXPECT_TRUE(C.dirty());
  EXPECT_EQ(C.sliceBlocks("gpu0 H200", "vecadd"), 396u);
  EXPECT_EQ(C.sliceBlocks("gpu1 H100", "vecadd"), 264u);
  EXPECT_EQ(C.sliceBlocks("gpu0 H200", "ignored"), 0u);
  EXPECT_EQ(C.sliceBlocks("gpu0 H200", "other"), 0u);
}

TEST(PerfCacheSlices, RoundTrip) {
  PerfCache C;
  C.record("gpu0 H200", "k", 132, 10.0);
  C.recordSliceBlocks("gpu0 H200", "k", 396);
  PerfCache D;
  ASSERT_TRUE(D.parse(C.serialize()).ok());
  EXPECT_EQ(D.sliceBlocks("gpu0 H200", "k"), 396u);
  ASSERT_NE(D.find("gpu0 H200", "k"), nullptr);
  EXPECT_FALSE(D.dirty());
}

TEST(PerfCacheSlices, OlderCachesWithoutSlicesStillParse) {
  PerfCache C;
  ASSERT_TRUE(C.parse(R"({"schema": "cleave-perf-cache", "version": 1,
                          "devices": {}})")
                  .ok());
  EXPECT_EQ(C.sliceBlocks("gpu0", "k"), 0u);
}

TEST(PerfCacheSlices, MalformedSlicesRefused) {
  PerfCache C;
  C.recordSliceBlocks("gpu0", "k", 8);
  Result R = C.parse(R"({"schema": "cleave-perf-cache", "version": 1,
                         "devices": {}, "slices": {"gpu0": {"k": 0}}})");
  EXPECT_FALSE(R.ok());
  EXPECT_NE(R.message().find("slices"), std::string::npos);
  // Unchanged on error.
  EXPECT_EQ(C.sliceBlocks("gpu0", "k"), 8u);
}

TEST(PerfCacheSlices, SearchResultKept) {
  // The §3.4 search over a synthetic curve, its answer cached for the next
  // submission of the kernel.
  PerfCache C;
  uint64_t Size = 0;
  ASSERT_TRUE(findSliceSize(
                  132, 32, 1u << 20,
                  [](uint64_t B, double &O) {
                    O = 0.05 / double(B / 132);
                    return Result::success();
                  },
                  Size)
                  .ok());
  EXPECT_EQ(Size, 3u * 132u);
  C.recordSliceBlocks("gpu0 H200", "stencil", Size);
  PerfCache D;
  ASSERT_TRUE(D.parse(C.serialize()).ok());
  EXPECT_EQ(D.sliceBlocks("gpu0 H200", "stencil"), 396u);
}

} // namespace
