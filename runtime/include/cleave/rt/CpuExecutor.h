//===- CpuExecutor.h - Runs a kernel's CPU variant on all cores -*- C++ -*-===//
//
// Part of Cleave's runtime (no LLVM). Spreads a range of blocks over the
// cores with oneTBB; each worker thread owns one scratch buffer (shared
// memory + per-thread storage, CpuKernelABI.h) that grows to the largest
// launch it has seen, so running a block allocates nothing.
//
//===----------------------------------------------------------------------===//
#ifndef CLEAVE_RT_CPUEXECUTOR_H
#define CLEAVE_RT_CPUEXECUTOR_H

#include "cleave/rt/CpuKernelABI.h"
#include "cleave/rt/Error.h"

#include <cstdint>
#include <memory>
#include <string>

namespace cleave::rt {

class CpuExecutor {
public:
  /// \p NumThreads workers; 0 means CLEAVE_CPU_THREADS when set, else every
  /// core.
  explicit CpuExecutor(unsigned NumThreads = 0);
  ~CpuExecutor();
  CpuExecutor(const CpuExecutor &) = delete;
  CpuExecutor &operator=(const CpuExecutor &) = delete;

  unsigned numThreads() const;
  /// Changes the number of workers for later launches (0: as above).
  void setNumThreads(unsigned NumThreads);

  /// Runs blocks [FirstBlock, FirstBlock + BlockCount) of \p Launch with
  /// \p Kernel's CPU variant and returns when all are done. \p Args is the
  /// kernelParams-style array. Blocks are independent by the CUDA model, so
  /// any worker runs any block, in chunks of consecutive blocks. A memory
  /// fault of the kernel fails the launch with IllegalAddress, naming the
  /// kernel, the address and the blocks (KernelFault.h); the blocks not run
  /// yet are skipped, and what the launch wrote is undefined.
  Result launch(const cleave_cpu_kernel_desc &Kernel, void **Args,
                const cleave_cpu_launch &Launch, uint64_t FirstBlock,
                uint64_t BlockCount);

  /// Every block of the grid.
  Result launch(const cleave_cpu_kernel_desc &Kernel, void **Args,
                const cleave_cpu_launch &Launch);

private:
  struct Impl;
  std::unique_ptr<Impl> P;
};

/// The number of cores the process may use: the executor's threads unless
/// told otherwise (Options::CpuThreads, CLEAVE_CPU_THREADS).
unsigned defaultCpuThreads();

/// More worker threads than any machine has cores: a larger count is a
/// typo, and its thread arena would exhaust the process's memory.
constexpr unsigned MaxCpuThreads = 4096;

} // namespace cleave::rt

#endif
