//===- CpuThreadsTest.cpp - The CPU executor's thread count ---------------===//
//
// Part of Cleave. CLEAVE_CPU_THREADS's range check is the options parser's
// (OptionsTest.CpuThreads*); the executor takes the count it is given.
//
//===----------------------------------------------------------------------===//
#include "cleave/rt/CpuExecutor.h"

#include "gtest/gtest.h"

using namespace cleave::rt;

namespace {

TEST(CpuThreads, AnExecutorHasAtLeastOneThread) {
  CpuExecutor Exec;
  EXPECT_GE(Exec.numThreads(), 1u);
  EXPECT_LE(Exec.numThreads(), MaxCpuThreads);
  EXPECT_EQ(Exec.numThreads(), defaultCpuThreads());
}

TEST(CpuThreads, AnExecutorTakesTheCountItIsGiven) {
  CpuExecutor Exec(3);
  EXPECT_EQ(Exec.numThreads(), 3u);
}

} // namespace
