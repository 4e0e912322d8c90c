//===- CpuExecutor.cpp - Runs a kernel's CPU variant on all cores --------===//
#include "cleave/rt/CpuExecutor.h"

#include <tbb/blocked_range.h>
#include <tbb/enumerable_thread_specific.h>
#include <tbb/global_control.h>
#include <tbb/info.h>
#include <tbb/parallel_for.h>
#include <tbb/task_arena.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <new>

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

} // namespace

unsigned defaultCpuThreads() {
  if (const char *Env = std::getenv("CLEAVE_CPU_THREADS")) {
    char *End = nullptr;
    long N = std::strtol(Env, &End, 10);
    if (End != Env && *End == '\0' && N > 0)
      return static_cast<unsigned>(N);
  }
  return static_cast<unsigned>(
      std::max(1, tbb::info::default_concurrency()));
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

Status CpuExecutor::launch(const cleave_cpu_kernel_desc &Kernel, void **Args,
                           const cleave_cpu_launch &Launch) {
  uint64_t Blocks =
      uint64_t(Launch.grid[0]) * Launch.grid[1] * Launch.grid[2];
  return launch(Kernel, Args, Launch, 0, Blocks);
}

Status CpuExecutor::launch(const cleave_cpu_kernel_desc &Kernel, void **Args,
                           const cleave_cpu_launch &Launch,
                           uint64_t FirstBlock, uint64_t BlockCount) {
  if (!Kernel.fn)
    return Status::error(std::string("kernel ") +
                         (Kernel.name ? Kernel.name : "?") +
                         " has no CPU variant");
  uint64_t Threads =
      uint64_t(Launch.block[0]) * Launch.block[1] * Launch.block[2];
  uint64_t Grid = uint64_t(Launch.grid[0]) * Launch.grid[1] * Launch.grid[2];
  if (Threads == 0 || Threads > 1024)
    return Status::error("block of " + std::to_string(Threads) +
                         " threads (1 to 1024 allowed)");
  if (FirstBlock > Grid || BlockCount > Grid - FirstBlock)
    return Status::error("block range [" + std::to_string(FirstBlock) + ", " +
                         std::to_string(FirstBlock + BlockCount) +
                         ") outside a grid of " + std::to_string(Grid));
  if (BlockCount == 0)
    return Status::success();
  uint64_t Bytes = cleave_cpu_scratch_bytes(&Kernel, &Launch);
  // Chunks of a few blocks keep the per-chunk overhead small while leaving
  // enough chunks (8 per worker) to balance uneven blocks.
  uint64_t Grain = std::max<uint64_t>(1, BlockCount / (8 * P->Threads));
  bool OutOfMemory = false;
  P->Arena->execute([&] {
    tbb::parallel_for(
        tbb::blocked_range<uint64_t>(FirstBlock, FirstBlock + BlockCount,
                                     Grain),
        [&](const tbb::blocked_range<uint64_t> &R) {
          Scratch &S = P->Scratches.local();
          if (!S.reserve(Bytes)) {
            OutOfMemory = true;
            return;
          }
          Kernel.fn(Args, &Launch, R.begin(), R.end() - R.begin(), S.Data);
        });
  });
  if (OutOfMemory)
    return Status::error("cannot allocate " + std::to_string(Bytes) +
                         " bytes of scratch per worker");
  return Status::success();
}

} // namespace cleave::rt
