//===- Balancer.h - Min-makespan split of independent items -----*- C++ -*-===//
//
// Part of Cleave's runtime (no LLVM); internal. Splits N independent items
// (work items, rows, resamplings) over k devices, the CPU and any number of
// GPUs, so that the slowest device finishes first (issue 30, digest 004
// §4.1 generalised to k devices):
//
//   minimise  max_i t_i(x_i)   subject to  sum_i x_i = N,  x_i >= 0,
//
// where t_i(x) is the time device i needs for x items: its compute model
// plus the transfer of the items' inputs and outputs, and fixed costs that
// are paid only when x > 0 (a device with no items costs nothing). Every
// t_i must be nondecreasing in x; then the set of finish times T a split can
// reach is an interval [T*, inf), and T* is found by bisection on T: the
// most items device i can take by T (its capacity) is itself found by
// bisection on x, or in closed form for a linear model. When every model is
// linear the whole answer is closed form (water filling over the devices
// sorted by fixed cost). The printed gradient step of the thesis moves the
// wrong way when the GPU is the bottleneck and has no consistent scale, so
// it is not used.
//
// The CPU (any device marked Helper) is used only if it pays: the split
// without the helpers is computed too, and the helpers keep their items only
// when they shorten the makespan by more than MinHelperGain of it plus
// HelperOverhead seconds (digest 004 §6.3: noise plus the cost of driving
// one more device). A CPU 100 times slower than the GPU gets nothing.
//
// Pure arithmetic on models: no devices, no clocks. balancePartition runs it
// on the SKMD partitioner's problem (Partitioner.h), which the model policy
// does for kernels of irregular work beside SKMD's greedy search, keeping
// whichever predicts the shorter launch (ModelPartitioner::split).
//
//===----------------------------------------------------------------------===//
#ifndef CLEAVE_RT_SCHEDULER_BALANCER_H
#define CLEAVE_RT_SCHEDULER_BALANCER_H

#include "cleave/rt/Error.h"
#include "cleave/rt/Partitioner.h"

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace cleave {
namespace rt {

/// The time one device needs for x items, in seconds:
///   x == 0:  0
///   x >  0:  Fixed + TransferFixed + Compute(x) + TransferPerItem * x
/// Compute is either linear (PerItem * x, when Curve is empty) or the given
/// curve, which must be nondecreasing with Curve(0) >= 0.
struct BalanceDevice {
  std::string Name;
  /// A helper (the CPU) keeps items only when it pays (see the file comment).
  bool Helper = false;
  double Fixed = 0;   ///< launch and synchronisation, seconds
  double PerItem = 0; ///< linear compute model, seconds per item
  std::function<double(double)> Curve; ///< nonlinear compute model, if set
  double TransferFixed = 0;            ///< bytes every share moves, as seconds
  double TransferPerItem = 0; ///< each item's inputs and outputs, seconds

  bool isLinear() const { return !Curve; }
  /// t_i(X) as above.
  double time(double X) const;
};

struct BalanceOptions {
  /// Helpers must shorten the makespan by this fraction of the makespan
  /// without them ...
  double MinHelperGain = 0.05;
  /// ... plus this many seconds.
  double HelperOverhead = 0;
  /// Bisection stops when the bracket on T is this small relative to T.
  double RelTolerance = 1e-9;
  unsigned MaxIterations = 200;
};

struct BalanceResult {
  std::vector<uint64_t> Items; ///< per device, summing to N
  std::vector<double> Times;   ///< t_i(Items[i]) per device
  double Makespan = 0;         ///< max of Times
  /// min over devices with items of t_i / max: 1 is a perfect balance
  /// (digest 004 Eq 5.2, generalised to k devices).
  double BalanceRatio = 1;
  bool HelpersDropped = false; ///< helpers left out because they did not pay
  bool ClosedForm = false;     ///< every model linear: no bisection ran
  unsigned Iterations = 0;     ///< outer bisection steps
};

/// Splits N items over Devices. Errors: no devices, a negative or non-finite
/// cost, a curve that is negative or decreasing on a 17-point grid over
/// [0, N].
Result balance(const std::vector<BalanceDevice> &Devices, uint64_t N,
               const BalanceOptions &Options, BalanceResult &Out);

/// The balancer on the partitioner's problem: each device's time for x
/// blocks is predictPartition's for x blocks on it alone (its table, fixed
/// costs, transfers and the program's copies), taken as the monotone
/// envelope of that time sampled at PartitionSamples block counts and
/// interpolated between them; devices that share host memory (the CPU) are
/// helpers, kept when they gain P.MinDeviceGain. The split is then
/// predicted by predictPartition (merge and split costs included), so it
/// compares with partition()'s decision on the same model.
struct BalancedPartition {
  PartitionDecision Decision;
  /// The balancer's own estimate of min t_i / max t_i (digest 004 Eq 5.2).
  double EstimatedRatio = 1;
};
constexpr unsigned PartitionSamples = 128;
Result balancePartition(const PartitionProblem &P, BalancedPartition &Out);

/// Routing items sorted by trip count (digest 004 §9.6): the launch's
/// threads in the sorted order (heaviest first) are cut into contiguous
/// block ranges, one per device, so that each device gets the part of the
/// order it runs cheapest (the heaviest items to the device whose lanes
/// cost least per iteration, the light tail elsewhere). A device's time for
/// sorted blocks [a, b) is
///   Fixed + PerWork * (Prefix[b] - Prefix[a])   (0 when a == b),
/// Prefix being its lanes' work over the sorted blocks
/// (sortedWorkPrefix): on a GPU the sum of each warp's largest count, on a
/// CPU (one lane) the sum of the counts.
struct RouteDevice {
  std::string Name;
  bool Helper = false; ///< kept only when it pays (BalanceOptions)
  double Fixed = 0;    ///< per device with work
  double PerWork = 0;  ///< per unit of its lanes' work
  unsigned Lanes = 1;  ///< 32 on a GPU
  /// Its lanes' work prefix sums over the sorted blocks (Blocks + 1
  /// entries, nondecreasing, from 0).
  const std::vector<double> *Prefix = nullptr;
};

struct RouteResult {
  /// Per device: its range of sorted blocks (Count 0: nothing).
  std::vector<uint64_t> First, Count;
  std::vector<double> Times;
  double Makespan = 0;
  double BalanceRatio = 1;
  bool HelpersDropped = false;
};

/// The prefix sums of a launch's lane work over its blocks in sorted order:
/// sorted thread t runs item Perm[t] of trip count Counts[Perm[t]]; blocks
/// of \p BlockX threads, groups of \p Lanes threads from each block's
/// start (a warp never spans two blocks), each costing its largest count.
std::vector<double> sortedWorkPrefix(const int32_t *Counts, const int32_t *Perm,
                                     uint64_t Threads, uint32_t BlockX,
                                     unsigned Lanes);

/// The contiguous ranges of the sorted order (devices in any order) that
/// minimise the slowest device's time over \p Blocks blocks; helpers as in
/// balance(). Every device order is tried for up to 5 devices, else the
/// given one. Errors: no devices, a missing or short prefix, a negative
/// or non-finite cost.
Result routeSorted(const std::vector<RouteDevice> &Devices, uint64_t Blocks,
                   const BalanceOptions &Options, RouteResult &Out);

} // namespace rt
} // namespace cleave

#endif // CLEAVE_RT_SCHEDULER_BALANCER_H
