//===- CpuExecutor.cpp - Runs a kernel's CPU variant on all cores --------===//
#include "cleave/rt/CpuExecutor.h"
#include "cleave/ABI/CpuCheckABI.h"
#include "cleave/rt/KernelFault.h"
#include "cleave/rt/MemCheck.h"

#include <tbb/blocked_range.h>
#include <tbb/enumerable_thread_specific.h>
#include <tbb/global_control.h>
#include <tbb/info.h>
#include <tbb/parallel_for.h>
#include <tbb/task_arena.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <new>
#include <optional>
#include <string>

namespace cleave::rt {

namespace {

/// One worker's scratch: aligned, grown on demand, never shrunk.
struct Scratch {
  void *Data = nullptr;
  uint64_t Size = 0;
  Scratch() = default;
  Scratch(const Scratch &) {} // each worker gets its own, empty
  ~Scratch() { std::free(Data); }
  bool reserve(uint64_t Bytes) {
    if (Bytes <= Size)
      return true;
    std::free(Data);
    uint64_t Rounded = cleave_cpu_align_up(std::max<uint64_t>(Bytes, 4096),
                                           CLEAVE_CPU_SCRATCH_ALIGN);
    Data = std::aligned_alloc(CLEAVE_CPU_SCRATCH_ALIGN, Rounded);
    Size = Data ? Rounded : 0;
    return Data != nullptr;
  }
};

/// One range of blocks, as runGuarded calls it.
struct RangeCall {
  cleave_cpu_kernel_fn Fn;
  void **Args;
  const cleave_cpu_launch *Launch;
  uint64_t First, Count;
  void *Scratch;
  static void run(void *P) {
    auto *C = static_cast<RangeCall *>(P);
    C->Fn(C->Args, C->Launch, C->First, C->Count, C->Scratch);
  }
};

/// The first fault of a launch; later ranges are skipped once there is one.
struct LaunchFault {
  std::atomic<bool> Seen{false};
  std::mutex Mutex;
  KernelFault Fault;
  uint64_t First = 0, Count = 0;
  void record(const KernelFault &F, uint64_t Lo, uint64_t N) {
    std::lock_guard<std::mutex> Lock(Mutex);
    if (Seen.load(std::memory_order_relaxed))
      return;
    Fault = F;
    First = Lo;
    Count = N;
    Seen.store(true, std::memory_order_release);
  }
};

std::string kernelName(const cleave_cpu_kernel_desc &K) {
  return K.name ? K.name : "?";
}

} // namespace

unsigned defaultCpuThreads() {
  static const unsigned Cores =
      static_cast<unsigned>(std::max(1, tbb::info::default_concurrency()));
  return Cores;
}

struct CpuExecutor::Impl {
  unsigned Threads;
  std::unique_ptr<tbb::task_arena> Arena;
  tbb::enumerable_thread_specific<Scratch> Scratches;

  explicit Impl(unsigned N) { setThreads(N); }
  void setThreads(unsigned N) {
    Threads = N ? N : defaultCpuThreads();
    Arena = std::make_unique<tbb::task_arena>(static_cast<int>(Threads));
  }
};

CpuExecutor::CpuExecutor(unsigned NumThreads)
    : P(std::make_unique<Impl>(NumThreads)) {}
CpuExecutor::~CpuExecutor() = default;

unsigned CpuExecutor::numThreads() const { return P->Threads; }
void CpuExecutor::setNumThreads(unsigned NumThreads) {
  P->setThreads(NumThreads);
}

Result CpuExecutor::launch(const cleave_cpu_kernel_desc &Kernel, void **Args,
                           const cleave_cpu_launch &Launch) {
  uint64_t Blocks = uint64_t(Launch.grid[0]) * Launch.grid[1] * Launch.grid[2];
  return launch(Kernel, Args, Launch, 0, Blocks);
}

Result CpuExecutor::launch(const cleave_cpu_kernel_desc &Kernel, void **Args,
                           const cleave_cpu_launch &Launch, uint64_t FirstBlock,
                           uint64_t BlockCount) {
  if (!Kernel.fn)
    return Result::error(ErrorCode::LaunchFailure, "kernel " +
                                                       kernelName(Kernel) +
                                                       " has no CPU variant");
  uint64_t Threads =
      uint64_t(Launch.block[0]) * Launch.block[1] * Launch.block[2];
  uint64_t Grid = uint64_t(Launch.grid[0]) * Launch.grid[1] * Launch.grid[2];
  if (Threads == 0 || Threads > 1024)
    return Result::error(ErrorCode::LaunchFailure,
                         "block of " + std::to_string(Threads) +
                             " threads (1 to 1024 allowed)");
  if (FirstBlock > Grid || BlockCount > Grid - FirstBlock)
    return Result::error(ErrorCode::LaunchFailure,
                         "block range [" + std::to_string(FirstBlock) + ", " +
                             std::to_string(FirstBlock + BlockCount) +
                             ") outside a grid of " + std::to_string(Grid));
  if (BlockCount == 0)
    return Result::success();
  uint64_t Bytes = cleave_cpu_scratch_bytes(&Kernel, &Launch);
  // Chunks of a few blocks keep the per-chunk overhead small while leaving
  // enough chunks (8 per worker) to balance uneven blocks.
  uint64_t Grain = std::max<uint64_t>(1, BlockCount / (8 * P->Threads));
  // CLEAVE_CHECK=memory: the checked twin, when the bundle has one.
  cleave_cpu_kernel_fn Fn = Kernel.fn;
  std::optional<MemCheckLaunch> Check;
  if (memoryChecksEnabled() && (Kernel.flags & CLEAVE_CPU_HAS_CHECKED) &&
      Kernel.checked_fn) {
    Fn = Kernel.checked_fn;
    Check.emplace(Kernel, Launch);
  }
  std::atomic<bool> OutOfMemory{false};
  LaunchFault Fault;
  P->Arena->execute([&] {
    tbb::parallel_for(
        tbb::blocked_range<uint64_t>(FirstBlock, FirstBlock + BlockCount,
                                     Grain),
        [&](const tbb::blocked_range<uint64_t> &R) {
          // After a fault the launch has failed: the rest need not run.
          if (Fault.Seen.load(std::memory_order_acquire))
            return;
          Scratch &S = P->Scratches.local();
          if (!S.reserve(Bytes)) {
            OutOfMemory = true;
            return;
          }
          RangeCall C{Fn,    Args, &Launch, R.begin(), R.end() - R.begin(),
                      S.Data};
          if (Check)
            Check->enter(S.Data, Bytes);
          KernelFault F;
          if (!runGuarded(&RangeCall::run, &C, F))
            Fault.record(F, C.First, C.Count);
          if (Check)
            Check->leave();
        });
  });
  if (Check && Check->failed())
    return Result::error(ErrorCode::IllegalAddress, Check->describe());
  if (Fault.Seen.load(std::memory_order_acquire)) {
    std::string Blocks =
        Fault.Count == 1 ? "block " + std::to_string(Fault.First)
                         : "blocks [" + std::to_string(Fault.First) + ", " +
                               std::to_string(Fault.First + Fault.Count) + ")";
    if (Fault.Fault.Assertion)
      return Result::error(ErrorCode::Assert,
                           "device-side assertion failed in kernel " +
                               kernelName(Kernel) + " in " + Blocks);
    return Result::error(ErrorCode::IllegalAddress,
                         "illegal memory access by kernel " +
                             kernelName(Kernel) + " at " +
                             Fault.Fault.describe() + " in " + Blocks);
  }
  if (OutOfMemory)
    return Result::error(ErrorCode::LaunchFailure,
                         "cannot allocate " + std::to_string(Bytes) +
                             " bytes of scratch per worker");
  return Result::success();
}

} // namespace cleave::rt
