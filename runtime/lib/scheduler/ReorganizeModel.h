//===- ReorganizeModel.h - When sorting items by trip count pays -*- C++
//-*-===//
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
//   * itemStreamParams: the per-item streams a kernel's loop reads (from
//     its footprint text), for which sorting loses coalescing: refused;
//   * explorationPays and ReorganizeBudget: what learning (timing the
//     original, an exploring step on a sample of the grid) may cost, and
//     when it can pay;
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

/// E[max of W i.i.d. N(0,1)], by numerical integration (2.07 for W = 32),
/// done once per W and kept: an integration costs about 0.6 ms of host
/// time, which every step would otherwise pay (twice) on its launch.
double expectedNormalMax(unsigned W);
/// How many integrations expectedNormalMax has done in this process.
uint64_t expectedNormalMaxIntegrations();

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
  /// Launches of this kernel, device and size the model has seen before
  /// the current one (the engine's and the direct ones): the launches the
  /// program is expected to make again, over which exploring must pay.
  uint64_t Launches = 0;
  /// Why the model refuses the step for this kernel whatever the counts
  /// (itemStreamParams: its loop reads per-item streams), empty if not.
  std::string Refused;
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

/// The pointer parameters (by name) that the kernel's item loop reads as
/// a per-item stream, from its footprint text (docs/footprints.md): an
/// access whose address advances by at most MaxStreamStep bytes an
/// iteration from an item-dependent start (the CSR row `vals[rowptr[i] +
/// k]`, an `unknown` access whose offset is an add-recurrence), or an
/// affine access in a loop whose thread coefficient is the access's width
/// (`a[j * n + i]`). Neighbouring items' streams lie side by side in
/// memory, so a warp of neighbouring items reads few sectors an
/// iteration; sorted, a warp's items come from all over the input and
/// each lane reads its own sectors: the lane-max model's gain is lost to
/// traffic (sorted SpMV on the H200: 0.42-0.54x of the original at cv
/// 0.07-10, bench/results/reorganize/*fde4062*).
std::vector<std::string> itemStreamParams(const std::string &Footprints);
constexpr unsigned MaxStreamStep = 64;

/// What the model assumes before it has seen a kernel's counts, calibrated
/// on the H200 (bench/results/reorganize/reorganize-2026-11-29-h200-
/// fde4062*, the `force` plans and the kernel times):
/// the largest share of the original's time sorting has saved (option
/// pricing at 512 mean steps: 7.895 -> 1.866 ms, 4.23x) ...
constexpr double ReorganizeMaxGain = 0.77;
/// ... the inspector's time over the original's (bootstrap 0.60-0.72,
/// option pricing 0.19-0.43): the most, for the cost of exploring ...
constexpr double ReorganizeInspectorShare = 0.75;
/// ... the sort: a fixed part and per thread and digit pass (2M threads:
/// 0.10 ms for one pass at 6 key bits, 0.21 at 8, 0.27-0.34 for two) ...
constexpr double ReorganizeSortFixedMs = 0.03;
constexpr double ReorganizeSortMsPerThreadPass = 1.1e-7;
/// ... and what an exploring step adds beyond its kernels: its wait and
/// the statistics' copy, the engine's path instead of the direct launch
/// (0.2-0.4 ms for the H200's first engine launch of a kernel over a
/// direct one, the `on` runs).
constexpr double ReorganizeExploreFixedMs = 0.3;
/// Loading the sort's kernels on a GPU's first step: the runtime's cubin
/// (sm_90) ...
constexpr double ReorganizeSortLoadMs = 1.0;
/// ... or a JIT compilation of their PTX on other GPUs: 250 ms on the H200
/// when the driver's compute cache was empty (the `force` run's first
/// launch at fde4062), about 2 ms from the cache (the `on` run's first
/// exploring step); the model assumes the worst.
constexpr double ReorganizeSortJitMs = 250.0;
/// The exploring step runs the inspector on this share of the grid's
/// blocks (its first ones), at least ReorganizeSampleThreads threads.
constexpr unsigned ReorganizeSampleDivisor = 32;
constexpr uint64_t ReorganizeSampleThreads = 8192;

/// The blocks of a grid of \p Blocks blocks of \p BlockThreads that the
/// exploring step's inspector runs.
uint64_t reorganizeSampleBlocks(uint64_t Blocks, uint64_t BlockThreads);

/// The predicted sort time for \p Threads threads over \p KeyBits.
double predictedSortMs(uint64_t Threads, unsigned KeyBits);

/// The model's budget for what it spends to learn (timing the original,
/// exploring): the host time since the program's first launch of a kernel
/// with the variants, what the measuring and exploring launches were
/// predicted to cost so far, and the load of the sort's kernels a first
/// step on the GPU pays. Their cost stays within ReorganizeLearnShare of
/// the elapsed time, so that a program the step cannot help runs within
/// that share of its time without the step, however short it is.
struct ReorganizeBudget {
  double ElapsedMs = 0;
  double SpentMs = 0;
  double LoadMs = 0;
};
constexpr double ReorganizeLearnShare = 0.005;
/// The cost of timing the original: the engine's path and a wait instead
/// of the direct launch.
constexpr double ReorganizeMeasureMs = ReorganizeExploreFixedMs;

/// The predicted cost of the exploring step for a launch of \p Threads
/// threads in \p Blocks blocks: the sampled inspector (its share of the
/// original's time, at most ReorganizeInspectorShare), its sort, the wait
/// and the engine's path, and \p LoadMs to load the sort's kernels.
double explorationCostMs(const ReorganizeHistory &H, uint64_t Blocks,
                         uint64_t Threads, double LoadMs);

/// Whether exploring pays now: the largest gain sorting could give
/// (ReorganizeMaxGain of the original's time) over as many launches as
/// the program has made so far must exceed the exploring step's cost by
/// the margin, and the cost fit in the budget. Needs H.OriginalMs. \p Why
/// says why not.
bool explorationPays(const ReorganizeHistory &H, uint64_t Blocks,
                     uint64_t Threads, const ReorganizeBudget &B,
                     std::string *Why = nullptr);

/// \p S, of a sample of the launch's threads, scaled to the whole launch
/// of \p Threads threads (the warp-maximum sums grow with the threads).
TripStats scaleTripStats(const TripStats &S, uint64_t Threads);

enum class ReorganizeAction {
  Original,        ///< the original kernel, as without the step
  MeasureOriginal, ///< the original kernel, timed for the model
  Step,            ///< inspector, sort, then reorganized (or original)
};

/// A warp, on a GPU and in the CPU variants' model of one.
constexpr uint64_t ReorganizeWarpThreads = 32;

/// The action for a launch of \p Threads threads in \p Blocks blocks, in
/// groups of \p Lanes that wait for each other: never the step for a grid
/// of a single warp (ReorganizeWarpThreads: nothing to even out) or when
/// off; always with Force; never for lanes of one thread (no lane waits
/// for another) or a kernel the model refuses (H.Refused); never at a
/// kernel's first launch (nothing predicts a gain there); then the
/// original is timed once, when the budget \p B allows
/// (ReorganizeMeasureMs), then one step explores when exploring pays
/// (explorationPays), then the step runs only when the model said it pays
/// and no loss was measured.
ReorganizeAction chooseReorganizeAction(ReorganizeMode Mode,
                                        const ReorganizeHistory &H,
                                        uint64_t Threads, unsigned Lanes,
                                        uint64_t Blocks,
                                        const ReorganizeBudget &B);

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
