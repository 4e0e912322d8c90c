//===- Launch.h - Block ranges and what a launch did ------------*- C++ -*-===//
//
// Part of Cleave's runtime (no LLVM). A partition of a launch's blocks over
// devices (PartitionRange), and the record of what the engine (Engine.h)
// did with a launch (LaunchPlan): the runs, their variants and copies, the
// reconciliation of their writes, and any recovery. CLEAVE_LOG=plan prints
// LaunchPlan::describe() for every launch.
//
//===----------------------------------------------------------------------===//
#ifndef CLEAVE_RT_LAUNCH_H
#define CLEAVE_RT_LAUNCH_H

#include "cleave/rt/Buffers.h"
#include "cleave/rt/Error.h"

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
    /// (the GPU merge kernel) or "cpu-merge" (the CPU merge variant).
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

  /// A pipelined launch (docs/runtime.md, "Transfer pipelining"): each
  /// pipelined GPU range ran as chunks, in order, each one's inputs sent on
  /// the GPU's send stream, its blocks run on the compute stream once they
  /// arrived, and (when the program reads them back) its results sent back
  /// on the receive stream; bytes shared with an earlier chunk are not sent
  /// again. Several GPUs' ranges run their chunks at once.
  struct Chunk {
    uint64_t First = 0, Count = 0;
    uint64_t BytesSent = 0, BytesReceived = 0;
  };
  /// What the pipeliner did with one GPU range.
  struct Pipelined {
    std::string Device;
    /// Its chunks in order; empty when it was not pipelined (Plan says
    /// why).
    std::vector<Chunk> Chunks;
    /// The pipeline's time on the host's clock, from its first send queued
    /// to its three streams done (ms).
    double Ms = 0;
    /// The range's chunk plan, pipelined or not (ChunkPlan::describe():
    /// the TPSM case, the chunks, the predicted time per step and in all,
    /// or the provisional rule and why).
    std::string Plan;
    /// The model's times for the whole range (ms; 0 when it was not
    /// asked): sending alone, the kernel, receiving alone (the bound is
    /// their maximum), and the plan's prediction.
    double SendMs = 0, KernelMs = 0, ReceiveMs = 0;
    double PredictedMs = 0;
    /// The chunks' kernels as their events timed them, summed (ms; 0: not
    /// timed).
    double KernelMeasuredMs = 0;
    /// The measured pipeline against its prediction and the bound
    /// max(send, kernel, receive) (the chunks' measured kernels when
    /// timed), one line; empty without either.
    std::string outcome() const;
  };
  /// One entry per GPU range the pipeliner was asked about, in the order
  /// of the runs.
  std::vector<Pipelined> Pipelines;
  /// Every pipelined range's chunks, in the order of Pipelines.
  std::vector<Chunk> chunks() const;
  /// The reorganization step's account of a run (docs/reorganize.md,
  /// "The runtime step"): the counts' statistics, the model's prediction,
  /// the decision and what was measured, one line each.
  std::vector<std::string> Reorganize;
  /// The measured time of each run the model policy timed (ms): with two
  /// or more, the plan gives the actual balance ratio, min / max (digest
  /// 004 Eq 5.2), beside the balancer's estimate in the model's plan.
  std::vector<double> MeasuredMs;

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
  /// Why it went direct (beside CPU devices, per kernel).
  std::string DirectWhy;
  /// The launch ran as co-scheduled slices (docs/coschedule.md): how many,
  /// where, how many beside another launch, and why it was not sliced when
  /// it was not; empty otherwise.
  std::string CoSchedule;
};

} // namespace rt
} // namespace cleave

#endif
