//===- DevicePrintfTest.cpp - Device printf and assert on CPU devices -----===//
//
// The formatter of device printf (Clang's packed argument buffer, CUDA's
// argument sizes, every conversion, the count it returns, what it does with
// malformed or short input), and a device assertion in a CPU variant: the
// launch fails with cudaErrorAssert, the executor goes on.
//
//===----------------------------------------------------------------------===//
#include "cleave/rt/DevicePrintf.h"
#include "cleave/ABI/CpuReportABI.h"
#include "cleave/rt/CpuExecutor.h"

#include "gtest/gtest.h"

#include <atomic>
#include <cstring>
#include <vector>

extern "C" [[noreturn]] void
__cleave_rt_assertfail(const char *Msg, const char *File, uint32_t Line,
                       const char *Func, uint64_t CharSize, uint32_t Bx,
                       uint32_t By, uint32_t Bz, uint32_t Tx, uint32_t Ty,
                       uint32_t Tz);

using namespace cleave::rt;

namespace {

/// Builds an argument buffer as Clang does for NVPTX: each value at its
/// natural alignment after the previous one.
class ArgBuffer {
public:
  template <typename T> ArgBuffer &add(T V) {
    static_assert(sizeof(T) == 4 || sizeof(T) == 8, "promoted arguments");
    size_t At = (Bytes.size() + sizeof(T) - 1) / sizeof(T) * sizeof(T);
    Bytes.resize(At + sizeof(T));
    std::memcpy(&Bytes[At], &V, sizeof(T));
    return *this;
  }
  const void *data() const { return Bytes.data(); }
  uint64_t size() const { return Bytes.size(); }

private:
  std::vector<unsigned char> Bytes;
};

std::string format(const char *Fmt, const ArgBuffer &A, int *Count = nullptr) {
  std::string Out;
  int N = formatDevicePrintf(Fmt, A.data(), A.size(), Out);
  if (Count)
    *Count = N;
  return Out;
}

TEST(DevicePrintf, IntegersAndTheirSizes) {
  int N;
  EXPECT_EQ(
      format(
          "%d|%i|%u|%x|%X|%o",
          ArgBuffer().add(-5).add(7).add(4000000000u).add(255).add(255).add(8),
          &N),
      "-5|7|4000000000|ff|FF|10");
  EXPECT_EQ(N, 6);
  // 8-byte integers after a 4-byte one: aligned to 8.
  EXPECT_EQ(format("%d %lld %llu %ld %zu %jd %td %lx",
                   ArgBuffer()
                       .add(1)
                       .add(-9223372036854775807ll - 1)
                       .add(18446744073709551615ull)
                       .add(-3l)
                       .add(size_t(8))
                       .add(int64_t(-1))
                       .add(int64_t(2))
                       .add(0xdeadbeefcafeull),
                   &N),
            "1 -9223372036854775808 18446744073709551615 -3 8 -1 2 "
            "deadbeefcafe");
  EXPECT_EQ(N, 8);
  // hh and h convert the promoted int.
  EXPECT_EQ(format("%hhd %hd %hhu %hu",
                   ArgBuffer().add(300).add(70000).add(257).add(-1)),
            "44 4464 1 65535");
}

TEST(DevicePrintf, FlagsWidthsPrecisionsAndStars) {
  EXPECT_EQ(
      format(
          "|%5d|%-5d|%05d|%+d|% d|%#x|%#o|%.3d|",
          ArgBuffer().add(12).add(12).add(12).add(5).add(5).add(255).add(8).add(
              7)),
      "|   12|12   |00012|+5| 5|0xff|010|007|");
  int N;
  EXPECT_EQ(format("|%*d|%-*d|%.*f|%*.*f|",
                   ArgBuffer()
                       .add(6)
                       .add(1)
                       .add(6)
                       .add(2)
                       .add(3)
                       .add(3.14159)
                       .add(-8)
                       .add(2)
                       .add(2.5),
                   &N),
            "|     1|2     |3.142|2.50    |");
  EXPECT_EQ(N, 9);
  // A negative precision through * is as if omitted.
  EXPECT_EQ(format("%.*f", ArgBuffer().add(-1).add(0.5)), "0.500000");
}

TEST(DevicePrintf, FloatingPointCharsStringsPointers) {
  EXPECT_EQ(format("%f %.2f %e %E %g %G %a %8.3f|%-8.1f|%lf %Lf",
                   ArgBuffer()
                       .add(1.5)
                       .add(1.5)
                       .add(-2.718281828)
                       .add(-2.718281828)
                       .add(-2.718281828)
                       .add(1e-10)
                       .add(1.0)
                       .add(-2.718281828)
                       .add(1.5)
                       .add(0.25)
                       .add(0.75)),
            "1.500000 1.50 -2.718282e+00 -2.718282E+00 -2.71828 1E-10 0x1p+0 "
            "  -2.718|1.5     |0.250000 0.750000");
  const char *S = "hello";
  const char *Null = nullptr;
  EXPECT_EQ(
      format("%c%c %s|%.3s|%8s|%-8s|%s",
             ArgBuffer().add(int('a')).add(66).add(S).add(S).add(S).add(S).add(
                 Null)),
      "aB hello|hel|   hello|hello   |(null)");
  void *P = reinterpret_cast<void *>(uintptr_t(0x1234));
  char Expected[32];
  std::snprintf(Expected, sizeof Expected, "%p", P);
  EXPECT_EQ(format("%p", ArgBuffer().add(P)), Expected);
}

TEST(DevicePrintf, PercentCountsAndMalformedInput) {
  int N;
  EXPECT_EQ(format("100%% done", ArgBuffer(), &N), "100% done");
  EXPECT_EQ(N, 0);
  std::string Out;
  EXPECT_EQ(formatDevicePrintf("no arguments\n", nullptr, 0, Out), 0);
  EXPECT_EQ(Out, "no arguments\n");
  EXPECT_EQ(formatDevicePrintf(nullptr, nullptr, 0, Out), -1);
  // An unknown conversion and a trailing '%' are printed as written; an
  // argument past the buffer's end is not read.
  EXPECT_EQ(format("%y %d %", ArgBuffer().add(3), &N), "%y 3 %");
  EXPECT_EQ(N, 1);
  EXPECT_EQ(format("%d %d %lld", ArgBuffer().add(1), &N), "1 %d %lld");
  EXPECT_EQ(N, 1);
  // %n reads its pointer and writes nothing.
  int Target = 17;
  EXPECT_EQ(format("a%nb", ArgBuffer().add(&Target), &N), "ab");
  EXPECT_EQ(Target, 17);
  EXPECT_EQ(N, 1);
  // Long output goes past the formatter's small buffer.
  std::string Long(1000, 'x');
  EXPECT_EQ(format("[%s]", ArgBuffer().add(Long.c_str())), "[" + Long + "]");
}

TEST(DevicePrintf, StringCheckSeesEveryStringAndItsBound) {
  struct Seen {
    std::vector<std::pair<std::string, uint64_t>> Strings;
    const void *Refuse = nullptr;
  } S;
  cleave::rt::StringCheck Check{
      [](const void *Str, uint64_t Max, void *P) {
        auto *S = static_cast<Seen *>(P);
        S->Strings.push_back({static_cast<const char *>(Str), Max});
        return Str != S->Refuse;
      },
      &S};
  const char *A = "alpha", *B = "beta";
  std::string Out;
  ArgBuffer Args;
  Args.add(A).add(2).add(B).add(A);
  EXPECT_EQ(
      formatDevicePrintf("%s %.*s %p", Args.data(), Args.size(), Out, &Check),
      4);
  EXPECT_EQ(Out, "alpha be " + format("%p", ArgBuffer().add(A)));
  ASSERT_EQ(S.Strings.size(), 2u); // %p reads no string
  EXPECT_EQ(S.Strings[0].second, ~0ull);
  EXPECT_EQ(S.Strings[1], std::make_pair(std::string("beta"), uint64_t(2)));
  S.Refuse = B;
  Out.clear();
  EXPECT_EQ(
      formatDevicePrintf("%s %.*s %p", Args.data(), Args.size(), Out, &Check),
      -2);
}

/// A CPU variant whose block `bad`, thread 3, fails an assertion; the
/// others count the blocks that ran.
std::atomic<uint64_t> BlocksRun{0};
void assertingCpu(void **Args, const cleave_cpu_launch *L, uint64_t First,
                  uint64_t Count, void *) {
  uint64_t Bad = *static_cast<uint64_t *>(Args[0]);
  for (uint64_t B = First; B < First + Count; ++B) {
    for (uint32_t T = 0; T < L->block[0]; ++T)
      if (B == Bad && T == 3)
        __cleave_rt_assertfail("x > 0", "k.cu", 12, "void k(int)", 1,
                               uint32_t(B), 0, 0, T, 0, 0);
    ++BlocksRun;
  }
}
const cleave_cpu_kernel_desc AssertingDesc = {
    "asserting", assertingCpu, 0, 0, 1, 0};

TEST(DeviceAssert, LaunchFailsWithAssertAndTheExecutorGoesOn) {
  CpuExecutor Exec(2);
  cleave_cpu_launch L = {{64, 1, 1}, {8, 1, 1}, 0};
  uint64_t Bad = 37;
  void *Args[] = {&Bad};
  testing::internal::CaptureStderr();
  Result R = Exec.launch(AssertingDesc, Args, L);
  std::string Err = testing::internal::GetCapturedStderr();
  ASSERT_EQ(R.code(), ErrorCode::Assert) << R.message();
  EXPECT_NE(R.message().find("kernel asserting"), std::string::npos)
      << R.message();
  EXPECT_EQ(Err, "k.cu:12: void k(int): block: [37,0,0], thread: [3,0,0] "
                 "Assertion `x > 0` failed.\n");
  EXPECT_LT(BlocksRun.load(), 64u);
  BlocksRun = 0;
  Bad = 64;
  R = Exec.launch(AssertingDesc, Args, L);
  ASSERT_TRUE(R.ok()) << R.message();
  EXPECT_EQ(BlocksRun.load(), 64u);
}

} // namespace
