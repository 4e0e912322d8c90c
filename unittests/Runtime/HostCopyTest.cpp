//===- HostCopyTest.cpp - Large host copies on every core -----------------===//
//
// hostCopy and hostFill against memcpy and memset, at sizes around the
// parallel threshold and the task grain, at unaligned offsets.
//
//===----------------------------------------------------------------------===//
#include "cleave/rt/HostCopy.h"

#include "gtest/gtest.h"

#include <cstring>
#include <random>
#include <vector>

using namespace cleave::rt;

namespace {

TEST(HostCopyTest, MatchesMemcpyAndMemset) {
  const uint64_t Sizes[] = {0,
                            1,
                            ParallelCopyBytes - 1,
                            ParallelCopyBytes,
                            ParallelCopyBytes + 1,
                            (uint64_t(9) << 20) + 123};
  std::mt19937 Rng(3);
  for (uint64_t Size : Sizes)
    for (uint64_t Skew : {0, 3}) {
      std::vector<uint8_t> Src(Size + 8), Got(Size + 8, 0xAA),
          Want(Size + 8, 0xAA);
      for (uint8_t &B : Src)
        B = uint8_t(Rng());
      hostCopy(Got.data() + Skew, Src.data() + 5, Size);
      std::memcpy(Want.data() + Skew, Src.data() + 5, Size);
      EXPECT_TRUE(Got == Want) << "copy of " << Size << " at +" << Skew;
      hostFill(Got.data() + Skew, 0x5C, Size);
      std::memset(Want.data() + Skew, 0x5C, Size);
      EXPECT_TRUE(Got == Want) << "fill of " << Size << " at +" << Skew;
    }
}

} // namespace
