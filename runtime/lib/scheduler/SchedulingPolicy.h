//===- SchedulingPolicy.h - Which device runs which blocks ------*- C++ -*-===//
//
// Part of Cleave's runtime (no LLVM); internal. Every decision of which
// device runs which blocks of a launch, and in what pieces, is made behind
// this one interface. The engine asks the policy of its PartitionPolicy
// once per launch that has no explicit partition and more than one device
// that can run the kernel (one device runs the whole grid without asking:
// the single-GPU launch path stays a few microseconds). The answer is a
// list of PartitionRanges that covers [0, Blocks) exactly once, each on one
// of the query's devices; the engine then decides how the ranges' writes are
// reconciled (exact, merged, combined, or the whole grid on one device, and
// why), moves the inputs, issues the ranges and recovers from failures. A
// policy never sees the buffers' replicas change: it answers, the engine
// carries out.
//
// The policies (docs/runtime.md, "Partition policies"):
//
//   single        the first GPU, else the first device, runs everything;
//   even          equal shares;
//   proportional  shares in proportion to each device's nominal throughput;
//   weights       shares in proportion to the caller's weights
//                 (CLEAVE_SPLIT);
//   model         the SKMD partitioner over measured performance tables,
//                 the device profile and the launch's footprints
//                 (engine/ModelPolicy.cpp, docs/partitioner.md).
//
// Transfer pipelining is not a policy: once a policy (or the only device)
// gives one GPU the whole run, the engine's pipeline phase
// (engine/Pipeline.cpp) carries it out as chunks on the GPU's send, kernel
// and receive streams, sized by planChunks() (ChunkPlan.h).
//
// The policies of the next issues plug in here:
//
//   * a load balancer is a policy like the model's: it reads the query's
//     launch (footprints, buffers, measured tables) and answers ranges;
//   * a co-scheduler needs the other pending launches as well: it extends
//     ScheduleQuery with them rather than adding a second entry point.
//
//===----------------------------------------------------------------------===//
#ifndef CLEAVE_RT_SCHEDULER_SCHEDULINGPOLICY_H
#define CLEAVE_RT_SCHEDULER_SCHEDULINGPOLICY_H

#include "cleave/rt/Engine.h"

#include <cstdint>
#include <string_view>
#include <vector>

namespace cleave {
namespace rt {
namespace engine {
class LaunchContext;
} // namespace engine

/// What a policy is asked about one launch.
struct ScheduleQuery {
  std::string_view Kernel;
  /// The grid's blocks (linear ids, x fastest).
  uint64_t Blocks = 0;
  /// The devices that can run the kernel, in device order, with each one's
  /// nominal throughput (relative: a GPU's compute units and clock, a CPU
  /// device's threads).
  std::vector<Location> Devices;
  std::vector<double> Throughput;
  std::vector<bool> IsGpu;
  /// The request's weight per device location (the weights policy), and the
  /// number of locations it must have one for.
  const std::vector<double> *Weights = nullptr;
  size_t NumLocations = 0;
  /// The launch itself, for a policy that weighs its footprints, buffers and
  /// measured tables.
  engine::LaunchContext *Launch = nullptr;
};

class SchedulingPolicy {
public:
  virtual ~SchedulingPolicy() = default;
  /// Fills \p Out with ranges covering [0, Q.Blocks) once over Q.Devices,
  /// or returns why the launch cannot run.
  virtual Result schedule(const ScheduleQuery &Q,
                          std::vector<PartitionRange> &Out) = 0;
};

/// The policy that \p P names (stateless, shared by every engine; the model
/// policy's state is the engine's, reached through the query's launch).
SchedulingPolicy &schedulingPolicy(PartitionPolicy P);

/// The model policy (engine/ModelPolicy.cpp).
SchedulingPolicy &modelPolicy();

/// Shares of [0, Total) over \p Devs in proportion to \p Weights (all equal
/// when they sum to 0 and \p MustWeigh is false), in device order; the
/// remainder goes one block at a time to the largest weights first.
Result splitByWeights(uint64_t Total, const std::vector<Location> &Devs,
                      std::vector<double> Weights, bool MustWeigh,
                      std::vector<PartitionRange> &Out);

} // namespace rt
} // namespace cleave

#endif
