//===- MemCheck.h - CLEAVE_CHECK=memory: checked CPU variants --*- C++ -*-===//
//
// Part of Cleave's runtime (no LLVM). With CLEAVE_CHECK=memory, the executor
// runs each kernel's checked CPU variant (CpuKernelABI.h, checked_fn), whose
// every access to global or generic memory first calls __cleave_rt_check
// (include/cleave/ABI/CpuCheckABI.h). An access is valid when it lies wholly
// inside a live allocation of the CPU devices (host copies and replicas,
// registered by GuardedMemory.cpp while checking is on), the worker's
// scratch (shared memory) or the worker's stack. The first invalid access
// of a launch stops its range before it happens and fails the launch with
// cudaErrorIllegalAddress, naming the kernel, the block and thread, the
// address, the size and the nearest allocation, as compute-sanitizer's
// memcheck does. Without CLEAVE_CHECK the ordinary variant runs: nothing is
// checked and nothing is paid.
//
//===----------------------------------------------------------------------===//
#ifndef CLEAVE_RT_MEMCHECK_H
#define CLEAVE_RT_MEMCHECK_H

#include "cleave/rt/CpuKernelABI.h"

#include <atomic>
#include <cstdint>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

namespace cleave::rt {

/// Whether CPU devices run checked variants (off until set).
bool memoryChecksEnabled();
/// The runtime sets it from Options::MemoryChecks (CLEAVE_CHECK=memory)
/// when it starts, before any allocation it should register.
void setMemoryChecks(bool On);

/// The allocation registry that checks validate against (used by
/// GuardedMemory.cpp; no-ops while checking is off).
void noteAllocation(const void *P, uint64_t Bytes);
void noteFree(const void *P);

/// One checked launch: a snapshot of the live allocations, and the first
/// invalid access.
class MemCheckLaunch {
public:
  MemCheckLaunch(const cleave_cpu_kernel_desc &Kernel,
                 const cleave_cpu_launch &Launch);
  /// Makes this launch the calling thread's for the checks of one range,
  /// whose scratch is [Scratch, Scratch + Bytes).
  void enter(void *Scratch, uint64_t Bytes);
  void leave();
  /// Whether an invalid access was found (the range that found it was
  /// left through leaveGuarded).
  bool failed() const { return Failed.load(std::memory_order_acquire); }
  /// The report of the first invalid access.
  std::string describe() const;

  /// The check itself (__cleave_rt_check); false when invalid, recorded.
  bool check(uintptr_t Addr, uint64_t Bytes, uint32_t Kind, uint64_t Block,
             uint64_t Thread);
  /// A string that device printf reads (`%s`): its bytes up to the
  /// terminating zero, or \p MaxBytes of them if fewer, lie in one valid
  /// region; a string of a loaded object (a literal, a `__device__` array
  /// of the CPU object) is valid too. False when invalid, recorded.
  bool checkString(uintptr_t Addr, uint64_t MaxBytes, uint64_t Block,
                   uint64_t Thread);

private:
  std::string nearest(uintptr_t Addr, uint64_t Bytes) const;
  /// The end of the valid region that holds \p Addr (scratch, stack or an
  /// allocation), 0 when none does.
  uintptr_t regionEnd(uintptr_t Addr) const;

  std::string Kernel;
  cleave_cpu_launch Launch;
  std::vector<std::pair<uintptr_t, uint64_t>> Allocations; ///< sorted
  std::atomic<bool> Failed{false};
  std::mutex Mutex;
  struct {
    uintptr_t Addr = 0;
    uint64_t Bytes = 0, Block = 0, Thread = 0;
    uint32_t Kind = 0;
  } First;
};

/// The checked launch whose range the calling thread runs, null outside
/// checked ranges.
MemCheckLaunch *currentMemCheck();

} // namespace cleave::rt

#endif
