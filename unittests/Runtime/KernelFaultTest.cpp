//===- KernelFaultTest.cpp - CPU kernels' memory faults as errors ---------===//
//
// Guarded allocations (their layout, and that accesses past either end
// fault), runGuarded (a fault returns, the process survives; a fault outside
// it still kills), and the executor's and the engine's IllegalAddress: the
// launch fails, no other device re-runs it, the next launch works.
//
//===----------------------------------------------------------------------===//
#include "cleave/rt/KernelFault.h"
#include "../TestInputs.h"
#include "cleave/rt/CpuExecutor.h"
#include "cleave/rt/Engine.h"
#include "cleave/rt/GuardedMemory.h"

#include "gtest/gtest.h"

#include <atomic>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <sys/resource.h>
#include <unistd.h>

using namespace cleave::rt;

namespace {

uint64_t page() { return uint64_t(sysconf(_SC_PAGESIZE)); }

/// Writes one byte at the address it is given.
void poke(void *P) { *static_cast<volatile char *>(P) = 1; }
/// Reads one byte.
void peek(void *P) { (void)*static_cast<volatile char *>(P); }

bool faults(void (*Fn)(void *), void *At, KernelFault &F) {
  return !runGuarded(Fn, At, F);
}

TEST(GuardedMemoryTest, LayoutAndGuards) {
  for (uint64_t Bytes :
       {uint64_t(1), uint64_t(255), uint64_t(256), uint64_t(4096),
        uint64_t(4100), uint64_t(3) << 20, (uint64_t(3) << 20) + 8}) {
    char *P = allocateGuarded(Bytes);
    ASSERT_NE(P, nullptr) << Bytes;
    EXPECT_EQ(reinterpret_cast<uintptr_t>(P) % 256, 0u) << Bytes;
    std::memset(P, 0x5A, Bytes);
    uintptr_t End = reinterpret_cast<uintptr_t>(P) + Bytes;
    uint64_t Slack = (page() - End % page()) % page();
    EXPECT_LT(Slack, 256u) << Bytes;
    KernelFault F;
    // The first byte past the data's page, far past it, before it.
    EXPECT_TRUE(faults(poke, P + Bytes + Slack, F)) << Bytes;
    EXPECT_EQ(F.Signal, SIGSEGV);
    EXPECT_EQ(F.Address, End + Slack);
    EXPECT_TRUE(faults(peek, P + Bytes + Slack + 4096 * 4, F)) << Bytes;
    char *FirstPage = guardedPages(P, Bytes).Start;
    EXPECT_TRUE(faults(poke, FirstPage - 1, F)) << Bytes;
    EXPECT_TRUE(faults(peek, FirstPage - 64 * 1024, F)) << Bytes;
    // The slack is ordinary memory (only the checked mode sees it).
    EXPECT_FALSE(faults(poke, FirstPage, F)) << Bytes;
    EXPECT_EQ(guardedPages(P, Bytes).Bytes % page(), 0u);
    EXPECT_GE(guardedPages(P, Bytes).Bytes, Bytes);
    freeGuarded(P, Bytes);
  }
}

/// The process's address space in use (VmSize), in bytes.
uint64_t addressSpaceInUse() {
  FILE *F = std::fopen("/proc/self/status", "r");
  char Line[256];
  unsigned long long Kb = 0;
  while (F && std::fgets(Line, sizeof Line, F))
    if (std::sscanf(Line, "VmSize: %llu kB", &Kb) == 1)
      break;
  if (F)
    std::fclose(F);
  return Kb * 1024;
}

// When the guard mappings cannot be made (vm.max_map_count exhausted; here,
// an address-space limit too small for the guards), small allocations still
// succeed, unguarded, 256-byte aligned, and are freed as such.
TEST(GuardedMemoryDeathTest, FallsBackWhenMappingsRunOut) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        struct rlimit L;
        L.rlim_cur = L.rlim_max = addressSpaceInUse() + GuardBytes / 2;
        setrlimit(RLIMIT_AS, &L);
        char *P = allocateGuarded(1000);
        bool Ok = P && reinterpret_cast<uintptr_t>(P) % 256 == 0;
        if (Ok) {
          std::memset(P, 1, 1000);
          freeGuarded(P, 1000);
        }
        std::exit(Ok ? 0 : 1);
      },
      ::testing::ExitedWithCode(0), "cannot map guard regions");
}

// With a CPU device, buffers' host copies and the other CPU devices'
// replicas are guarded: one element past the end faults.
TEST(GuardedMemoryTest, HostCopiesAndCpuReplicasAreGuarded) {
  std::unique_ptr<DeviceRegistry> Reg;
  ASSERT_TRUE(
      DeviceRegistry::create("cpu,cpu", Reg, RegistryOptions{"none"}).ok());
  BufferManager Bufs(Reg->devices());
  void *P = nullptr;
  ASSERT_TRUE(Bufs.allocate(4096, P).ok());
  KernelFault F;
  EXPECT_FALSE(faults(poke, static_cast<char *>(P) + 4095, F));
  EXPECT_TRUE(faults(poke, static_cast<char *>(P) + 4096, F));
  DeviceAddr R = 0;
  ASSERT_TRUE(Reg->device(1).allocate(4096, R).ok());
  EXPECT_TRUE(faults(poke, reinterpret_cast<char *>(R) + 4096, F));
  EXPECT_TRUE(Reg->device(1).free(R).ok());
  EXPECT_TRUE(Bufs.free(P).ok());
}

TEST(KernelFaultTest, NullAndRepeatedFaultsReturn) {
  KernelFault F;
  for (int I = 0; I < 3; ++I) {
    ASSERT_TRUE(faults(poke, nullptr, F));
    EXPECT_EQ(F.Address, 0u);
    EXPECT_NE(F.describe().find("address 0x0 (not mapped)"), std::string::npos)
        << F.describe();
  }
  int X = 0;
  EXPECT_TRUE(runGuarded(poke, &X, F));
  EXPECT_EQ(X, 1);
}

/// Recurses until the stack runs out.
int deep(volatile int *Prev, int Depth) {
  volatile int Frame[256];
  Frame[0] = Prev ? Prev[0] + 1 : Depth;
  return deep(Frame, Depth + 1) + Frame[0];
}
void overflowCpu(void **, const cleave_cpu_launch *, uint64_t, uint64_t,
                 void *) {
  (void)deep(nullptr, 0);
}
const cleave_cpu_kernel_desc OverflowDesc = {"overflow", overflowCpu, 0,
                                             0,          0,           0};

// A kernel that overflows its stack faults on the stack's guard page; the
// handler runs on the alternate stack and the launch fails, on the calling
// thread and on workers alike.
TEST(KernelFaultTest, StackOverflowIsCaught) {
  CpuExecutor Exec(2);
  cleave_cpu_launch L = {{4, 1, 1}, {1, 1, 1}, 0};
  for (int I = 0; I < 2; ++I) {
    Result R = Exec.launch(OverflowDesc, nullptr, L);
    EXPECT_EQ(R.code(), ErrorCode::IllegalAddress) << R.message();
  }
}

TEST(KernelFaultDeathTest, FaultOutsideAKernelStillCrashes) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  KernelFault F;
  ASSERT_TRUE(faults(poke, nullptr, F)); // the handler is installed
  EXPECT_EXIT(poke(nullptr), ::testing::KilledBySignal(SIGSEGV), "");
  EXPECT_EXIT(raise(SIGBUS), ::testing::KilledBySignal(SIGBUS), "");
}

/// A CPU variant whose block `bad` stores at args[1] + args[2] ints.
void storeCpu(void **Args, const cleave_cpu_launch *L, uint64_t First,
              uint64_t Count, void *) {
  int *Out = *static_cast<int **>(Args[0]);
  int *Bad = *static_cast<int **>(Args[1]);
  int64_t Index = *static_cast<int64_t *>(Args[2]);
  uint64_t BadBlock = *static_cast<uint64_t *>(Args[3]);
  for (uint64_t B = First; B < First + Count; ++B) {
    for (uint32_t T = 0; T < L->block[0]; ++T)
      static_cast<volatile int *>(Out)[B * L->block[0] + T] = int(B);
    if (B == BadBlock)
      static_cast<volatile int *>(Bad)[Index] = 7;
  }
}
const cleave_cpu_kernel_desc StoreDesc = {"store_kernel", storeCpu, 0, 0, 4, 0};

TEST(KernelFaultTest, ExecutorReportsIllegalAddressAndGoesOn) {
  CpuExecutor Exec(4);
  const uint64_t Blocks = 64, Threads = 64, N = Blocks * Threads;
  char *Mem = allocateGuarded(N * sizeof(int));
  int *Out = reinterpret_cast<int *>(Mem);
  cleave_cpu_launch L = {
      {uint32_t(Blocks), 1, 1}, {uint32_t(Threads), 1, 1}, 0};
  struct Case {
    int *Bad;
    int64_t Index;
    const char *Address;
  } Cases[] = {{nullptr, 0, "address 0x0 (not mapped)"},
               {Out, int64_t(N), "(no access: a guard region"},
               {Out, int64_t(N) + 4096, "(no access: a guard region"},
               {Out, -int64_t(page()), "(no access: a guard region"}};
  for (const Case &C : Cases) {
    int *Bad = C.Bad;
    int64_t Index = C.Index;
    uint64_t BadBlock = 37;
    void *Args[] = {&Out, &Bad, &Index, &BadBlock};
    Result R = Exec.launch(StoreDesc, Args, L);
    ASSERT_EQ(R.code(), ErrorCode::IllegalAddress) << R.message();
    EXPECT_NE(R.message().find("kernel store_kernel"), std::string::npos)
        << R.message();
    EXPECT_NE(R.message().find(C.Address), std::string::npos) << R.message();
    // The range that faulted (ranges of 64 / (8 * 4) blocks).
    EXPECT_NE(R.message().find("in blocks [36, 38)"), std::string::npos)
        << R.message();
    // The executor is intact: a correct launch runs every block.
    BadBlock = Blocks;
    std::memset(Out, 0xFF, N * sizeof(int));
    R = Exec.launch(StoreDesc, Args, L);
    ASSERT_TRUE(R.ok()) << R.message();
    for (uint64_t I = 0; I < N; ++I)
      ASSERT_EQ(Out[I], int(I / Threads)) << I;
  }
  freeGuarded(Mem, N * sizeof(int));
}


/// The block whose CPU run also stores one element past the end (-1: none).
std::atomic<int64_t> FillFaultBlock{-1};

void fillCpu(void **Args, const cleave_cpu_launch *L, uint64_t First,
             uint64_t Count, void *) {
  int *Out = *static_cast<int **>(Args[0]);
  int N = *static_cast<int *>(Args[1]);
  for (uint64_t B = First; B < First + Count; ++B) {
    for (uint32_t T = 0; T < L->block[0]; ++T) {
      int64_t I = int64_t(B) * L->block[0] + T;
      if (I < N)
        Out[I] = int(I);
    }
    if (int64_t(B) == FillFaultBlock.load())
      static_cast<volatile int *>(Out)[N] = -1;
  }
}
const cleave_cpu_kernel_desc FillDesc = {"fill", fillCpu, 0, 0, 2, 0};

// On three CPU devices (cpu1 and cpu2 on replicas of their own), a range
// that faults fails the launch with IllegalAddress: not re-run elsewhere
// (no recovery), and the buffers stay consistent: a correct launch after it
// gives the right result everywhere.
TEST(KernelFaultTest, EngineLaunchFailsWithoutRecovery) {
  static const std::string Bundle = 
      cleave::test::testBundle("kernel_fault_test");
  ASSERT_FALSE(Bundle.empty());
  std::unique_ptr<DeviceRegistry> Reg;
  ASSERT_TRUE(
      DeviceRegistry::create("cpu,cpu,cpu", Reg, RegistryOptions{"none"}).ok());
  BufferManager Bufs(Reg->devices());
  CpuExecutor Exec(2);
  Engine Eng(Bufs, Exec, PartitionPolicy::Even);
  ASSERT_TRUE(Eng.addProgram(Bundle.data(), Bundle.size(),
                             {{"__cleave_cpu_fill_desc", (void *)&FillDesc}})
                  .ok());
  int N = 64 * 256; // a multiple of 256 bytes: out[n] is in the guard
  void *P = nullptr;
  ASSERT_TRUE(Bufs.allocate(N * sizeof(int), P).ok());
  int *Out = static_cast<int *>(P);
  void *Args[] = {&Out, &N};
  for (int64_t Bad : {50, 10, 30}) { // on cpu2, cpu0 and cpu1
    FillFaultBlock = Bad;
    KernelLaunchRequest Req;
    Req.Kernel = Eng.findKernel("fill");
    ASSERT_NE(Req.Kernel, nullptr);
    Req.Grid[0] = 64;
    Req.Block[0] = 256;
    Req.Args = Args;
    Req.Partition = {{0, 0, 21}, {1, 21, 21}, {2, 42, 22}};
    LaunchPlan Plan;
    testing::internal::CaptureStderr();
    Result R = Eng.launch(Req, Plan);
    std::string Log = testing::internal::GetCapturedStderr();
    EXPECT_EQ(R.code(), ErrorCode::IllegalAddress) << R.toString();
    EXPECT_NE(R.message().find("illegal memory access by kernel fill"),
              std::string::npos)
        << R.message();
    EXPECT_TRUE(Plan.Recoveries.empty()) << Plan.describe();
    EXPECT_EQ(Log.find("re-running"), std::string::npos) << Log;

    FillFaultBlock = -1;
    Req.Partition = {{2, 0, 30}, {0, 30, 4}, {1, 34, 30}};
    R = Eng.launch(Req, Plan);
    ASSERT_TRUE(R.ok()) << R.toString();
    std::vector<int> Got(N);
    ASSERT_TRUE(
        Bufs.memcpy(Got.data(), Out, N * sizeof(int), MemcpyKind::DeviceToHost)
            .ok());
    for (int I = 0; I < N; ++I)
      ASSERT_EQ(Got[I], I) << I << " after a fault in block " << Bad;
  }
  ASSERT_TRUE(Bufs.free(Out).ok());
}

} // namespace
