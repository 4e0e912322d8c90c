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
// The launch engine (Engine.h) is the full launch path (GPUs, merges,
// recovery); this one stays for its tests and as the smallest example. It
// counts each range's launch for fault injection but does not recover.
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
    /// What ran: "cpu" (the CPU variant), "original" (the GPU kernel over
    /// the whole grid), "partition" (the partition-ready variant),
    /// "rebased" (the kernel's rebased variant on a slab), "merge"
    /// (the GPU merge kernel) or "cpu-merge" (the CPU merge variant). Empty
    /// for launchOnCpuDevices, which runs only CPU variants.
    std::string Variant;
    /// A merge run: the blocks [First, First + Count) that MergeFrom
    /// computed, merged on Device from MergeFrom's partial copy.
    bool IsMerge = false;
    std::string MergeFrom;
    /// The copies that made this run's inputs valid (bytes of one buffer,
    /// by allocation id); for a merge run, the partial copies.
    struct Copy {
      uint64_t BufferId = 0;
      Transfer T;
      std::string From, To; ///< "host", "cpu1", ...
    };
    std::vector<Copy> Copies;
    uint64_t BytesIn = 0;
  };
  /// A device that failed during the launch, and where its blocks went.
  struct Recovery {
    std::string Device;
    std::string Error;
    std::vector<std::pair<uint64_t, uint64_t>> Blocks; ///< [first, end)
    std::string To;
  };
  std::vector<Run> Runs;
  std::vector<Recovery> Recoveries;
  /// False when the partition was refused and the whole grid ran on one
  /// device; Reason says why.
  bool Split = true;
  std::string Reason;
  /// How the ranges' writes were reconciled when split over several
  /// devices: "exact" (disjoint exact footprints, validity only) or
  /// "merge" (merge kernels on MergeDevice); empty otherwise.
  std::string Reconcile;
  std::string MergeDevice;
  /// The combined outputs of a split (docs/runtime.md, "Combined
  /// outputs"): "argument 1 (add i32, 1024 bytes)", comma-separated; empty
  /// otherwise.
  std::string Combined;
  uint64_t BytesMoved = 0;
  /// Devices whose inputs moved at once, one thread each (0: the ranges
  /// moved their inputs one after the other).
  unsigned MovedAtOnce = 0;

  /// One line per run, plus the refusal and recoveries if any:
  ///   "launch <kernel>: split over 2 range(s), 1024 bytes moved"
  ///   "  cpu1 blocks [0, 8): 512 bytes in (buffer #1 [0, 512) host->cpu1)"
  std::string describe() const;
  std::string KernelName;
  /// The launch ran as the kernel's twin with the block index x and y
  /// swapped (docs/runtime.md, "Swapped grids"): its runs' block ranges
  /// count blocks y fastest. KernelName is still the launched kernel's.
  bool Swapped = false;
  /// The launch repeated the previous launch of the same request, which
  /// had changed no buffer's state, without planning it again
  /// (docs/runtime.md, "Repeated launches").
  bool Repeated = false;
  /// The launch replayed an earlier launch of the same request that found
  /// its buffers in the same state, and made the same copies without
  /// planning them again (docs/runtime.md, "Repeated launches"). Repeated
  /// is set too.
  bool Replayed = false;
  /// The launch returned once its GPU work was queued; the next operation
  /// that reads device memory waits for it (docs/runtime.md, "Deferred
  /// completion").
  bool Deferred = false;
  /// The launch went to its device's compute stream from the program's
  /// thread, without the engine: the only device is a GPU, every buffer is
  /// whole there, and nothing was queued before it (docs/runtime.md,
  /// "Direct launches").
  bool Direct = false;
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
