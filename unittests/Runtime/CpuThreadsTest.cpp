//===- CpuThreadsTest.cpp - CLEAVE_CPU_THREADS's range --------------------===//
//
// Part of Cleave. A thread count that does not fit (4294967296 wrapped to 0
// threads and divided by it; 10^7 threads exhausted memory) falls back to
// the cores with a message instead.
//
//===----------------------------------------------------------------------===//
#include "cleave/rt/CpuExecutor.h"

#include "gtest/gtest.h"

using namespace cleave::rt;

namespace {

TEST(CpuThreads, InRangeCountsAreTaken) {
  std::string Why;
  EXPECT_EQ(parseCpuThreads("1", 8, Why), 1u);
  EXPECT_TRUE(Why.empty());
  EXPECT_EQ(parseCpuThreads("4096", 8, Why), 4096u);
  EXPECT_TRUE(Why.empty());
}

TEST(CpuThreads, OtherValuesFallBackWithAMessage) {
  for (const char *Bad : {"0", "4097", "10000000", "4294967296",
                          "18446744073709551616", "-1", "+4", " 4", "4x",
                          "", "four"}) {
    std::string Why;
    EXPECT_EQ(parseCpuThreads(Bad, 8, Why), 8u) << Bad;
    EXPECT_NE(Why.find("CLEAVE_CPU_THREADS=" + std::string(Bad) +
                       ": not a whole number from 1 to 4096; using 8"),
              std::string::npos)
        << Why;
  }
}

TEST(CpuThreads, AnExecutorHasAtLeastOneThread) {
  CpuExecutor Exec;
  EXPECT_GE(Exec.numThreads(), 1u);
  EXPECT_LE(Exec.numThreads(), MaxCpuThreads);
}

} // namespace
