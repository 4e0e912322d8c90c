//===- MemCheckTest.cpp - CLEAVE_CHECK=memory in the executor -------------===//
//
// A hand-written variant and its checked twin (calling __cleave_rt_check as
// the compiled ones do): valid accesses (allocations, scratch, stack) pass,
// the first invalid one stops its range before it happens and fails the
// launch with IllegalAddress naming the thread, block, size and nearest
// allocation; without checks, or without a twin, the ordinary variant runs.
//
//===----------------------------------------------------------------------===//
#include "cleave/rt/MemCheck.h"
#include "cleave/rt/CpuExecutor.h"
#include "cleave/rt/GuardedMemory.h"

#include "gtest/gtest.h"

#include <atomic>
#include <cstring>

extern "C" void __cleave_rt_check(const void *Addr, uint64_t Bytes,
                                  uint32_t Kind, uint64_t Block,
                                  uint64_t Thread);

using namespace cleave::rt;

namespace {

constexpr uint32_t Store = 1, Load = 0; // CpuCheckABI.h
constexpr uint32_t HasChecked = 2;

std::atomic<int> PlainRuns{0}, CheckedRuns{0};

/// out[i] = i for every thread; thread `bad % 64` of block `bad / 64` also
/// writes out[n + extra]. Args: out, n, bad, extra.
template <bool Checked>
void body(void **Args, const cleave_cpu_launch *L, uint64_t First,
          uint64_t Count, void *Scratch) {
  (Checked ? CheckedRuns : PlainRuns)++;
  int *Out = *static_cast<int **>(Args[0]);
  int N = *static_cast<int *>(Args[1]);
  int64_t Bad = *static_cast<int64_t *>(Args[2]);
  int64_t Extra = *static_cast<int64_t *>(Args[3]);
  int Local = 0;
  for (uint64_t B = First; B < First + Count; ++B)
    for (uint32_t T = 0; T < L->block[0]; ++T) {
      int64_t I = int64_t(B) * L->block[0] + T;
      if (I >= N)
        continue;
      if (Checked) {
        __cleave_rt_check(Scratch, 4, Store, B, T);
        __cleave_rt_check(&Local, 4, Load, B, T);
        __cleave_rt_check(&Out[I], 4, Store, B, T);
      }
      static_cast<int *>(Scratch)[0] = int(I);
      Out[I] = int(I) + Local;
      if (I == Bad) {
        if (Checked)
          __cleave_rt_check(&Out[N + Extra], 4, Store, B, T);
        static_cast<volatile int *>(Out)[N + Extra] = -1;
      }
    }
}

const cleave_cpu_kernel_desc Twin = {"twin", body<false>, 64,        0,
                                     4,      HasChecked,  body<true>};
const cleave_cpu_kernel_desc NoTwin = {"no_twin", body<false>, 64, 0, 4, 0};

class MemCheckTest : public ::testing::Test {
protected:
  void SetUp() override { setMemoryChecks(true); }
  void TearDown() override { setMemoryChecks(false); }
};

TEST_F(MemCheckTest, ReportsTheFirstInvalidAccessBeforeItHappens) {
  const int N = 1021; // the last page's slack holds 12 bytes past the end
  char *Mem = allocateGuarded(N * sizeof(int));
  int *Out = reinterpret_cast<int *>(Mem);
  int Count = N;
  int64_t Bad = 5 * 64 + 3, Extra = 0;
  void *Args[] = {&Out, &Count, &Bad, &Extra};
  cleave_cpu_launch L = {{16, 1, 1}, {64, 1, 1}, 0};
  CpuExecutor Exec(2);

  // One past the end, in the slack: no guard sees it, the check does.
  Out[N] = 12345;
  PlainRuns = CheckedRuns = 0;
  Result R = Exec.launch(Twin, Args, L);
  ASSERT_EQ(R.code(), ErrorCode::IllegalAddress) << R.message();
  EXPECT_NE(R.message().find("invalid write of 4 byte(s) at "),
            std::string::npos)
      << R.message();
  EXPECT_NE(R.message().find("by thread (3,0,0) of block (5,0,0) of kernel "
                             "twin: it is 0 byte(s) past the end of the "
                             "4084-byte allocation"),
            std::string::npos)
      << R.message();
  EXPECT_EQ(Out[N], 12345); // stopped before the write
  EXPECT_EQ(PlainRuns, 0);
  EXPECT_GT(CheckedRuns, 0);

  // Far before the start: the nearest allocation is still named.
  Extra = -int64_t(N) - 4096;
  R = Exec.launch(Twin, Args, L);
  ASSERT_EQ(R.code(), ErrorCode::IllegalAddress) << R.message();
  EXPECT_NE(R.message().find("16384 byte(s) before the start of the "
                             "4084-byte allocation"),
            std::string::npos)
      << R.message();

  // A correct launch: scratch, stack and the allocation are valid.
  Bad = -1;
  R = Exec.launch(Twin, Args, L);
  ASSERT_TRUE(R.ok()) << R.message();
  for (int I = 0; I < N; ++I)
    ASSERT_EQ(Out[I], I);

  // Without checks the ordinary variant runs.
  setMemoryChecks(false);
  PlainRuns = CheckedRuns = 0;
  ASSERT_TRUE(Exec.launch(Twin, Args, L).ok());
  EXPECT_GT(PlainRuns, 0);
  EXPECT_EQ(CheckedRuns, 0);
  freeGuarded(Mem, N * sizeof(int));
}

TEST_F(MemCheckTest, WithoutATwinTheOrdinaryVariantRuns) {
  const int N = 1024;
  char *Mem = allocateGuarded(N * sizeof(int));
  int *Out = reinterpret_cast<int *>(Mem);
  int Count = N;
  int64_t Bad = -1, Extra = 0;
  void *Args[] = {&Out, &Count, &Bad, &Extra};
  cleave_cpu_launch L = {{16, 1, 1}, {64, 1, 1}, 0};
  CpuExecutor Exec(2);
  PlainRuns = 0;
  ASSERT_TRUE(Exec.launch(NoTwin, Args, L).ok());
  EXPECT_GT(PlainRuns, 0);
  freeGuarded(Mem, N * sizeof(int));
}

} // namespace
