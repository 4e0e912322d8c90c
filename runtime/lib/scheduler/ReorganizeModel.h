//===- ReorganizeModel.h - When sorting items by trip count pays -*- C++ -*-===//
//
// Part of Cleave's runtime (no LLVM); internal. The arithmetic of the
// reorganization step (issue 30, docs/reorganize.md): a kernel whose
// threads each run a loop of their own item's trip count runs as long, per
// warp, as its longest lane. Launching the items sorted by their trip count
// (which the kernel's inspector variant computes) fills the warps evenly.
//
//   * sortByTripCount: a counting sort (radix passes past 16 key bits) of
//     the launched threads by count, descending (the heaviest warps start
//     first, so they do not form the grid's tail; digest 004 §6.2), stable;
//   * tripStats: the counts' mean, spread and coefficient of variation, the
//     expected warp maximum of the normal approximation (mu + e_W sigma,
//     digest 004 §2.4 [D]), and the warp execution efficiency the counts
//     give in launch order and in sorted order;
//   * forecastReorganize: the lane-max time model, t = F + c * S with S the
//     sum over warps of the warp's largest count (digest 004 §2.4, the
//     digest's corrected form of Eq 7.9), with F and c calibrated from
//     measured launches: two points (the original and the reorganized
//     kernel, Eqs 7.10-7.13 in lane-max form) when both were measured,
//     else F = 0 and c from the original alone (the loop is all of the
//     kernel: the gain's upper bound). The step runs when the predicted
//     gain exceeds the inspector and sort cost by a margin;
//   * chooseReorganizeAction and noteReorganizeStep: the decision per
//     launch from what was measured before, and the loss switch.
//
// Pure arithmetic on counts and times: no devices, no clocks.
//
//===----------------------------------------------------------------------===//
#ifndef CLEAVE_RT_SCHEDULER_REORGANIZEMODEL_H
#define CLEAVE_RT_SCHEDULER_REORGANIZEMODEL_H

#include "cleave/rt/Options.h"

#include <cstdint>
#include <string>
#include <vector>

namespace cleave {
namespace rt {

/// E[max of W i.i.d. N(0,1)], by numerical integration (2.07 for W = 32).
double expectedNormalMax(unsigned W);

/// The bits a count of \p Max needs (0 for 0).
unsigned tripCountKeyBits(uint32_t Max);

/// Sorts the threads [0, N) by Counts (negative counts as 0), largest
/// first, ties in thread order: Perm[i] is the thread whose item the i-th
/// thread runs. KeyBits: the bits the largest count needs.
void sortByTripCount(const int32_t *Counts, uint64_t N,
                     std::vector<int32_t> &Perm, unsigned &KeyBits);

struct TripStats {
  uint64_t Threads = 0;
  unsigned Lanes = 32; ///< threads per warp (SIMD group)
  double Mean = 0, StdDev = 0, Cv = 0;
  uint32_t Max = 0;
  unsigned KeyBits = 0;
  /// mu + e_W sigma: the normal approximation's expected warp maximum.
  double ExpectedWarpMax = 0;
  /// mu / ExpectedWarpMax: the warp execution efficiency it predicts.
  double PredictedWee = 1;
  /// Sum over warps of the warp's largest count, in launch order and in
  /// sorted order (the lane-max model's work), and the efficiency each
  /// gives: sum of counts / (Lanes * that sum).
  double WarpMaxOriginal = 0, WarpMaxSorted = 0;
  double WeeOriginal = 1, WeeSorted = 1;
};

/// The statistics of \p Counts over the threads of a 1-D launch of blocks
/// of \p BlockThreads threads (a warp never spans two blocks); \p Perm (N
/// entries) gives the sorted order, null for launch order only.
TripStats tripStats(const int32_t *Counts, uint64_t N, const int32_t *Perm,
                    unsigned Lanes, unsigned BlockThreads);

/// The same from sums the GPU's sort kernels give: the counts' sum and sum
/// of squares, the largest count, and the two warp-maximum sums.
TripStats tripStatsFromSums(uint64_t N, unsigned Lanes, double Sum,
                            double SumSq, uint32_t Max, double WarpMaxOriginal,
                            double WarpMaxSorted);

/// What was measured for one kernel, device and launch size (ms; negative:
/// not yet).
struct ReorganizeHistory {
  double OriginalMs = -1;    ///< the original kernel, whole grid
  double InspectorMs = -1;   ///< the inspector
  double SortMs = -1;        ///< the sort and its copies
  double ReorganizedMs = -1; ///< the reorganized kernel
  /// The lane-max work of the launch whose reorganized kernel was timed.
  double WarpMaxOriginal = 0, WarpMaxSorted = 0;
  /// An inspector ran and the model gave its verdict for the next
  /// launches (Pays).
  bool Explored = false;
  bool Pays = false;
  /// A measured loss: the step took longer than the original. Kept in the
  /// performance cache.
  bool Off = false;
  uint64_t Steps = 0;
  /// The key bits a GPU sort plans for (at most 16): the bits the last
  /// step's largest count needed. Counts that outgrow them share keys
  /// within 2^(bits - KeyBits) for that launch (the sort stays a stable
  /// permutation).
  unsigned KeyBits = 16;
};

struct ReorganizeForecast {
  /// The lane-max fit: per unit of S (ms) and fixed (ms); TwoPoint when
  /// calibrated from the original and the reorganized kernel.
  double PerWarpIterMs = 0, FixedMs = 0;
  bool TwoPoint = false;
  double OriginalMs = 0, ReorganizedMs = 0, GainMs = 0;
  double CostMs = 0;
  bool Pays = false;
};

/// The step's margin: the predicted gain must exceed the cost by this
/// fraction of the cost ...
constexpr double ReorganizeMargin = 0.25;
/// ... and be at least this fraction of the original's time (timing noise).
constexpr double ReorganizeMinGain = 0.02;

/// The gain of running the launch whose counts are \p S reorganized, and
/// whether it pays for \p CostMs (the inspector and the sort, or the sort
/// alone once the inspector ran). Needs H.OriginalMs.
ReorganizeForecast forecastReorganize(const TripStats &S,
                                      const ReorganizeHistory &H,
                                      double CostMs);

enum class ReorganizeAction {
  Original,        ///< the original kernel, as without the step
  MeasureOriginal, ///< the original kernel, timed for the model
  Step,            ///< inspector, sort, then reorganized (or original)
};

/// A warp, on a GPU and in the CPU variants' model of one.
constexpr uint64_t ReorganizeWarpThreads = 32;

/// The action for a launch of \p Threads threads in groups of \p Lanes
/// that wait for each other: never the step for a grid of a single warp
/// (ReorganizeWarpThreads: nothing to even out) or when off;
/// always with Force; never for lanes of one thread (no lane waits for
/// another); otherwise the original is measured first, then one
/// step explores (the inspector's counts give the model its statistics),
/// then the step runs only when the model said it pays and no loss was
/// measured.
ReorganizeAction chooseReorganizeAction(ReorganizeMode Mode,
                                        const ReorganizeHistory &H,
                                        uint64_t Threads, unsigned Lanes);

/// After a step ran the reorganized kernel: its times into \p H, the
/// verdict for the next launches from the measured kernel gain (H.Pays:
/// the original's time minus the reorganized kernel's must cover the
/// inspector and sort by the margin), and the loss switch (the
/// reorganized kernel alone, or the whole step, took longer than the
/// original: off). Returns the measured gain in ms (original minus the
/// whole step), 0 when the original was never measured.
double noteReorganizeStep(ReorganizeHistory &H, const TripStats &S,
                          double InspectorMs, double SortMs,
                          double ReorganizedMs, bool Force);

} // namespace rt
} // namespace cleave

#endif // CLEAVE_RT_SCHEDULER_REORGANIZEMODEL_H
