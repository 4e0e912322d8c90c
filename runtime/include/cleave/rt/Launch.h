//===- Launch.h - Splitting a launch over CPU devices -----------*- C++ -*-===//
//
// Part of Cleave's runtime (no LLVM). The first launch path (issue 4, section
// 4), for CPU devices only (CLEAVE_DEVICES=cpu,cpu,cpu): a kernel's CPU
// variant, its footprint program and a partition of the grid's blocks over
// devices. For each device's range the footprints say which bytes of each
// pointer argument are read and written; the reads are made valid on that
// device (BufferManager's transfer planner: only missing bytes move), the
// pointer arguments are translated to that device's replica addresses and
// the CPU executor runs the range. Writes are reconciled without copies:
// when every range's write footprint of every written buffer is Exact and
// the ranges of different devices are pairwise disjoint, each device marks
// its ranges written (valid there, stale elsewhere). Otherwise the split is
// refused for this launch and the whole grid runs on the partition's first
// device (merge kernels on CPU devices are not implemented), and the plan
// says so.
//
// Phases: every device's inputs move first, then every range runs (one after
// the other; each run uses every core), then the writes are marked, so each
// range sees the buffers as they were before the launch.
//
//===----------------------------------------------------------------------===//
#ifndef CLEAVE_RT_LAUNCH_H
#define CLEAVE_RT_LAUNCH_H

#include "cleave/rt/Buffers.h"
#include "cleave/rt/CpuExecutor.h"
#include "cleave/rt/CpuKernelABI.h"
#include "cleave/rt/Error.h"
#include "cleave/rt/Footprint.h"

#include <cstdint>
#include <string>
#include <vector>

namespace cleave {
namespace rt {

/// Blocks [First, First + Count) (linear ids, x fastest) run on Device (an
/// index in the BufferManager's device list).
struct PartitionRange {
  Location Device = 0;
  uint64_t First = 0;
  uint64_t Count = 0;
};

/// One launch of a kernel's CPU variant over several CPU devices.
struct CpuLaunchRequest {
  const cleave_cpu_kernel_desc *Kernel = nullptr;
  /// The kernel's parsed footprint text (docs/footprints.md).
  const FootprintProgram *Footprints = nullptr;
  uint32_t Grid[3] = {1, 1, 1};
  uint32_t Block[3] = {1, 1, 1};
  uint64_t DynamicSharedBytes = 0;
  /// kernelParams-style: Args[i] points to the value of parameter i. Pointer
  /// parameters hold virtual pointers (BufferManager host-copy addresses) or
  /// null (passed through unchanged, nothing moved).
  void **Args = nullptr;
  /// The size in bytes of each parameter's value (the bundle's "param ...
  /// size"): integer arguments of 1, 2, 4 or 8 bytes are read and
  /// sign-extended for the footprint evaluation. Pointer parameters' entries
  /// are not used.
  std::vector<uint32_t> ArgSizes;
  /// Must cover [0, grid blocks) exactly once, each Count >= 1, each device
  /// a CPU device.
  std::vector<PartitionRange> Partition;
};

/// What a launch did, for CLEAVE_LOG=plan.
struct LaunchPlan {
  struct Run {
    Location Device = 0;
    std::string DeviceName;
    uint64_t First = 0;
    uint64_t Count = 0;
    /// The copies that made this run's inputs valid (bytes of one buffer,
    /// by allocation id).
    struct Copy {
      uint64_t BufferId = 0;
      Transfer T;
      std::string From, To; ///< "host", "cpu1", ...
    };
    std::vector<Copy> Copies;
    uint64_t BytesIn = 0;
  };
  std::vector<Run> Runs;
  /// False when the partition was refused and the whole grid ran on one
  /// device; Reason says why.
  bool Split = true;
  std::string Reason;
  uint64_t BytesMoved = 0;

  /// One line per run, plus the refusal if any:
  ///   "launch <kernel>: split over 2 device(s), 1024 bytes moved"
  ///   "  cpu1 blocks [0, 8): 512 bytes in (buffer #1 [0, 512) host->cpu1)"
  std::string describe() const;
  std::string KernelName;
};

/// Runs \p Req on the CPU devices of \p Bufs with \p Exec, filling \p Plan.
/// Errors (the data of the buffers is untouched unless a run failed):
/// InvalidValue for a malformed request (null kernel or footprints, a
/// parameter count mismatch, zero dimensions, a partition that does not
/// cover the grid exactly once, a pointer argument that is in no
/// allocation), InvalidDevice for a partition device that does not exist,
/// NotSupported for one that is not a CPU device, the transfer's error when
/// an input cannot be moved, LaunchFailure when the executor fails (the
/// bytes the launch writes are then undefined).
Result launchOnCpuDevices(BufferManager &Bufs, CpuExecutor &Exec,
                          const CpuLaunchRequest &Req, LaunchPlan &Plan);

} // namespace rt
} // namespace cleave

#endif
