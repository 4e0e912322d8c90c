//===- CoScheduler.h - Kernelet's slice co-scheduling decisions -*- C++ -*-===//
//
// Part of Cleave's runtime (no LLVM). The decisions of Kernelet's scheduler
// (digest 003 §5, docs/coschedule.md) as a pure component: it is told of
// pending launches and of finished slices, and answers which slices (block
// ranges of one or two launches) to issue next. It issues nothing itself;
// CoRunGate (CoRunGate.h) runs its answers in the engine.
//
//  - Readiness: a launch may start once every earlier launch of its stream
//    and every launch it waits for (an event recorded after it) has
//    finished all its blocks. Slices of a launch go in ascending block
//    order.
//  - Priorities: only ready launches of the highest priority present (the
//    lowest number, CUDA's convention) are scheduled; lower ones wait.
//  - Pairs (Alg. 1): among those, the pair of the highest co-scheduling
//    profit after PUR/MUR pruning (§5.2), at the model's per-SM ratio
//    (CoRun.h); a pair under the minimum profit runs alone, the oldest
//    first. Launches without model inputs are never weighed: with
//    PairUnmodeled, the two oldest ready ones run side by side, a minimum
//    slice each, when no modelled pair is chosen. The plan is kept until the
//    ready set changes (an arrival, a completion) or a kernel of the pair
//    runs out of blocks.
//  - Slice sizes: a pair's slice of kernel i is P_i x SMs blocks, repeated
//    k times per launch so that neither is below its minimum slice (§3.4);
//    a launch alone runs its minimum slice at a time (so that a
//    higher-priority arrival waits for one slice, not a whole grid).
//
// The §3.4 search for the minimum slice, over a measurement callback, is
// findSliceSize.
//
//===----------------------------------------------------------------------===//
#ifndef CLEAVE_RT_COSCHEDULER_H
#define CLEAVE_RT_COSCHEDULER_H

#include "cleave/rt/CoRun.h"

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace cleave {
namespace rt {

/// §3.4, one measurement at a time: candidates k x \p Sms blocks for k = 1
/// up to MaxBlocksPerSm (and below \p GridBlocks) are tried in ascending
/// order, and the first whose measured overhead (T_sliced / T_unsliced - 1)
/// is at most \p MaxOverhead is the minimum slice; GridBlocks (the kernel
/// unsliced) when none is, or when the grid is no larger than one SM row.
/// The runtime measures a candidate when a launch of the kernel runs anyway
/// (CoRunGate), so the search advances across launches.
class SliceSizeSearch {
public:
  SliceSizeSearch(unsigned Sms, unsigned MaxBlocksPerSm, uint64_t GridBlocks,
                  double MaxOverhead = 0.02);
  /// The slice size to measure next; 0 once decided.
  uint64_t candidate() const { return Done ? 0 : uint64_t(K) * Sms; }
  /// The measured overhead of candidate().
  void report(double Overhead);
  bool done() const { return Done; }
  /// The minimum slice, once done().
  uint64_t result() const { return Size; }

private:
  void settle();
  unsigned Sms, MaxBlocksPerSm, K = 1;
  uint64_t GridBlocks, Size = 0;
  double MaxOverhead;
  bool Done = false;
};

/// SliceSizeSearch driven by a callback that measures each candidate
/// (\p Measure gives T_sliced / T_unsliced - 1 of a slice size). Also
/// InvalidValue for no SMs or no blocks; a measurement error is returned
/// as is.
using SliceOverheadFn =
    std::function<Result(uint64_t SliceBlocks, double &Overhead)>;
Result findSliceSize(unsigned Sms, unsigned MaxBlocksPerSm, uint64_t GridBlocks,
                     const SliceOverheadFn &Measure, uint64_t &Out,
                     double MaxOverhead = 0.02);

struct PendingLaunch {
  /// Unique, increasing in submission order.
  uint64_t Id = 0;
  /// Identifies the kernel and launch configuration: pair predictions are
  /// cached by it.
  std::string Kernel;
  uint64_t Stream = 0;
  /// CUDA's convention: lower is more urgent.
  int Priority = 0;
  uint64_t Blocks = 0;
  /// Launches (ids) that must finish first besides the stream's earlier
  /// ones (cudaStreamWaitEvent on an event recorded after them).
  std::vector<uint64_t> WaitsFor;
  /// The minimum slice of §3.4 (0: the whole grid).
  uint64_t MinSliceBlocks = 0;
  /// Model inputs; without them the launch is never paired.
  std::optional<corun::KernelModelInput> Model;
};

struct Slice {
  uint64_t Launch = 0;
  uint64_t Begin = 0, End = 0; ///< block range [Begin, End)
  /// Blocks of this launch per SM in the co-schedule (0 alone).
  unsigned BlocksPerSm = 0;
  /// On an SM partition (CoSchedulePlan::Partitioned): the SMs of the
  /// split's first side (the split's key), and the side this launch runs
  /// on, 1 (those SMs) or 2 (the rest); 0 when not partitioned.
  unsigned SplitSms = 0, Side = 0;
};

struct CoScheduleOptions {
  /// Pruning thresholds of §5.2: a pair is skipped when both its PUR and
  /// its MUR differences are below them; when every pair is, none is.
  double PurThreshold = 0.4, MurThreshold = 0.1;
  /// A pair runs only if the model predicts at least this profit: slicing
  /// itself may cost up to the 2 % that §3.4 allows.
  double MinProfit = 0.02;
  /// Two ready launches that the model cannot weigh (no inputs) run side
  /// by side, a minimum slice each, rather than one after the other: what
  /// concurrent streams would do, at slice granularity.
  bool PairUnmodeled = false;
  corun::PairOptions Pair;
  /// SM partitions (green contexts): the multiple of SMs the device's
  /// partitions come in (0: it has none). A modeled pair runs on a split
  /// of the SMs, each launch unsliced at its own occupancy, instead of
  /// interleaved slices: Never; Better, when the model predicts the split
  /// shorter than interleaving; Always (forced: benchmarks, tests).
  unsigned PartitionGranularity = 0;
  enum class PartitionRule { Never, Better, Always };
  PartitionRule Partition = PartitionRule::Never;
};

/// The current decision, for logs and tests.
struct CoSchedulePlan {
  std::vector<uint64_t> Launches; ///< one or two
  corun::PairPrediction Pair;     ///< when two and Modeled
  /// Two launches side by side without a prediction (PairUnmodeled).
  bool Modeled = true;
  /// A modeled pair: the predicted cycles of the launches' remaining
  /// blocks interleaved, one after the other, and on the best SM split
  /// (Split.PairCycles 0 when there is none); Partitioned when the pair
  /// runs on Split.
  double InterleaveCycles = 0, SerialCycles = 0;
  corun::PartitionPrediction Split;
  bool Partitioned = false;
  unsigned Pruned = 0, Evaluated = 0;
};

class CoScheduler {
public:
  CoScheduler(const corun::SmLimits &Sm, const CoScheduleOptions &O = {});

  /// Adds a launch. InvalidValue for an id already seen, no blocks, or a
  /// wait on an unknown launch.
  Result submit(const PendingLaunch &L);
  /// Reports \p Blocks of launch \p Id finished (of slices issued).
  Result finished(uint64_t Id, uint64_t Blocks);
  /// Takes back slice \p S, issued but not started: true when it was the
  /// last one issued of its launch (its blocks are then issued again
  /// later), false (nothing changed) otherwise.
  bool unissue(const Slice &S);
  /// Forgets launch \p Id (it failed): launches waiting for it are
  /// released, as after a completion.
  void abandon(uint64_t Id);
  /// The slices of the next co-schedule: empty when nothing can be issued
  /// now (all done, or every remaining launch waits for running slices).
  /// A model error is returned, not hidden.
  Result next(std::vector<Slice> &Out);

  /// Predictions made elsewhere (the gate's predictor), kept as if made
  /// here: kernel \p K's solo prediction; the pair of kernels \p A and
  /// \p B (P's first kernel is A).
  void knownSolo(const std::string &K, const corun::SoloPrediction &S);
  void knownPair(const std::string &A, const std::string &B,
                 const corun::PairPrediction &P);

  const CoSchedulePlan &plan() const { return Plan; }
  bool done() const;
  /// Whether launch \p Id has finished every block.
  bool complete(uint64_t Id) const;

private:
  struct Entry {
    PendingLaunch L;
    uint64_t Issued = 0, Finished = 0;
    std::optional<corun::SoloPrediction> Solo;
  };
  bool ready(const Entry &E) const;
  std::vector<uint64_t> readySet() const;
  Result replan(const std::vector<uint64_t> &Ready);
  Result pairOf(const Entry &A, const Entry &B, corun::PairPrediction &P);
  /// \p Plan's cycles (interleaved, serial, split) for the pair \p A,
  /// \p B at \p P; whether the split is taken, and the pair's score
  /// (the profit it is ranked by).
  bool weigh(const Entry &A, const Entry &B, const corun::PairPrediction &P,
             CoSchedulePlan &Times, double &Score) const;
  bool pruned(const Entry &A, const Entry &B) const;
  uint64_t take(Entry &E, uint64_t Blocks, unsigned PerSm,
                std::vector<Slice> &Out);

  corun::SmLimits Sm;
  CoScheduleOptions Opts;
  std::map<uint64_t, Entry> Launches;
  std::set<uint64_t> Completed;
  CoSchedulePlan Plan;
  std::vector<uint64_t> PlannedFor;
  std::map<std::pair<std::string, std::string>, corun::PairPrediction> Pairs;
  std::map<std::string, corun::SoloPrediction> Solos;
};

} // namespace rt
} // namespace cleave

#endif
