//===- ModelPartitioner.h - The model policy's partitioner -----*- C++ -*-===//
//
// Part of Cleave's runtime (no LLVM). The engine's `model` policy (issue 6
// §4): SKMD's partitioner (Partitioner.h) fed with real inputs.
//
//   * Performance tables per device and kernel (blocks/ms at wave-aligned
//     block counts), keyed by kernel, block dimensions, dynamic shared
//     memory and grid size class. Seeded from the device profile before any
//     measurement (a roofline: the bytes a wave of blocks moves over the
//     device's memory bandwidth, with a floor), refined from the launches'
//     measured range times (an exponential average per row; the seeded rows
//     of a table are rescaled by what the measurements say of the seed), and
//     persisted between runs (PerfCache.h).
//   * Transfer costs per device from the footprints and residency, through a
//     callback into the engine: the bytes a device is missing for a share,
//     evaluated at two block counts (its anchor share and the whole grid)
//     and fitted to ByteCost (Fixed + PerBlock n). Pieces coming over a
//     faster or slower path than the device's nominal link (a peer GPU, a
//     staged copy) count in proportion to their time.
//   * A merge cost when the writes are not exact, from the bytes written.
//
// Everything the planner needs from the engine is in SplitRequest, so the
// unit tests drive it with synthetic devices and byte functions.
// docs/partitioner.md describes the model, the seed and the log.
//
//===----------------------------------------------------------------------===//
#ifndef CLEAVE_RT_MODELPARTITIONER_H
#define CLEAVE_RT_MODELPARTITIONER_H

#include "cleave/rt/DeviceProfile.h"
#include "cleave/rt/Error.h"
#include "cleave/rt/Options.h"
#include "cleave/rt/Partitioner.h"
#include "cleave/rt/PerfCache.h"
#include "cleave/rt/Tpsm.h"

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

namespace cleave {
namespace rt {

/// One performance table of one device.
struct PerfKey {
  /// The kernel's name and a hash of its program and footprints, so two
  /// programs with a kernel of the same name do not share a table.
  std::string Kernel;
  uint32_t Block[3] = {1, 1, 1};
  uint64_t SharedBytes = 0;
  /// floor(log2(grid blocks)): launches of very different sizes (a
  /// reduction's passes) get tables of their own.
  unsigned GridClass = 0;
  /// "name|256x1x1|s0|g12".
  std::string text() const;
};

/// floor(log2(Blocks)) (0 for 0 and 1).
unsigned gridClass(uint64_t Blocks);

/// PerfKey::Kernel for kernel \p Name: "name@<hash of Salt>" (Salt: the
/// program's source and the kernel's footprints).
std::string tableKernelName(const std::string &Name, const std::string &Salt);

/// A device that can run the launch, as the engine describes it.
struct SplitDevice {
  /// The runtime's name (gpu0, cpu1).
  std::string Name;
  /// Its table identity in the cache: devices of one identity share a
  /// table (the engine gives a GPU its description, so GPUs of one model
  /// pool their measurements; every CPU device the executor's).
  std::string Identity;
  bool Gpu = false;
  /// Blocks running at once: SMs x resident blocks per SM for this block
  /// size and shared memory (GPU), worker threads (CPU). Rows are at
  /// multiples of it.
  uint64_t Wave = 1;
  /// The seed: a wave moves Wave x BytesPerBlock bytes at SeedGBps (DRAM
  /// read bandwidth of a GPU, the CPU's triad bandwidth), and takes at
  /// least SeedMinWaveMs.
  double SeedGBps = 0;
  double SeedMinWaveMs = 0;
  /// Milliseconds added when the device gets work (launch, synchronization,
  /// the engine's per-range cost).
  double FixedMs = 0;
  /// The bandwidth its inputs arrive at (GB/s) from the host: effective
  /// bytes (SplitRequest::MissingBytes) are normalized to it.
  double LinkGBps = 0;
  /// Milliseconds a share with inputs to receive waits for its copies
  /// whatever their size (DeviceCost::InLatencyMs).
  double CopyLatencyMs = 0;
  /// Devices sharing one executor (CPU devices) have the same group.
  int SerialGroup = -1;
  /// The rates of the program's own copies into and out of this device's
  /// memory (ShareBytes::HostIn, HostOut), GB/s: a GPU's over its link, the
  /// CPU's into and out of the host copy.
  double HostInGBps = 0, HostOutGBps = 0;
  /// A GPU whose share the engine would pipeline when it moves at least
  /// PipelineMinBytes in (docs/runtime.md, "Transfer pipelining"): its
  /// host link as TPSM sees it. The share's time is then the TPSM plan's
  /// (DeviceCost::PipelineFactor), not send, run and receive in a row.
  std::optional<tpsm::LinkRates> PipelineLinks;
  uint64_t PipelineMinBytes = 0;
};

/// What a share of a launch moves (SplitRequest::MissingBytes).
struct ShareBytes {
  /// Bytes the device is missing, as counted (Raw) and with each piece
  /// scaled to the time it takes relative to the device's LinkGBps
  /// (Effective).
  double Raw = 0, Effective = 0;
  /// Bytes the program copies into the share before every launch and out
  /// of it after (DeviceCost::HostIn, HostOut), not counted in Raw.
  double HostIn = 0, HostOut = 0;
  /// Results the share writes that the last launch to read them read on
  /// another device (Buffer::lastReadBytes): copied there after every
  /// launch if that one runs again where it ran. Counted in HostOut, as
  /// the bytes that take as long at HostOutGBps as these take over their
  /// path.
  double Out = 0;
};

struct SplitRequest {
  PerfKey Key;
  uint64_t TotalBlocks = 0;
  /// Launches of this key before this one that the caller counted (also
  /// those it ran on a cached decision without asking); the planner counts
  /// its own decisions and uses the larger.
  uint64_t PriorLaunches = 0;
  std::vector<SplitDevice> Devices;
  /// Bytes one block reads and writes (the whole grid's footprint bytes /
  /// blocks): the seed's traffic.
  double BytesPerBlock = 0;
  /// False: the launch runs whole on one device (the best single one);
  /// WhyWhole says why (for the log).
  bool Splittable = true;
  std::string WhyWhole;
  /// Writes are not exact: splitting costs MergeMs.
  bool NeedsMerge = false;
  double MergeMs = 0;
  /// The host cost of any split (PartitionProblem::SplitMs).
  double SplitMs = 0;
  /// Aggregate host-link bandwidths with every GPU busy (0: none).
  double AggregateH2DGBps = 0, AggregateD2HGBps = 0;
  /// Irregular work (a kernel with per-item loops, docs/reorganize.md): the
  /// k-device balancer (Balancer.h) is consulted beside the greedy search,
  /// and the split that predicts the shorter launch is taken.
  bool Irregular = false;
  /// For irregular work: keep the faster of the two (Auto), or always the
  /// greedy search's (Greedy: the balancer is not consulted) or the
  /// balancer's split (Balancer), as CLEAVE_TUNE=balance says.
  BalanceMode Balance = BalanceMode::Auto;
  /// What device \p D moves to run blocks [First, First + Count). Null:
  /// nothing is missing and nothing recurs.
  std::function<void(size_t D, uint64_t First, uint64_t Count,
                     ShareBytes &Out)>
      MissingBytes;
};

/// What the planner used and predicted for one device.
struct SplitDeviceReport {
  uint64_t Blocks = 0;
  double PredictedMs = 0;
  double ExecMs = 0;
  /// Missing input bytes for its share (raw and effective) and the fit;
  /// the program's own copies of the share and their fits.
  double InBytes = 0, InEffective = 0;
  ByteCost In;
  /// Results its share hands to another device's reader (ShareBytes::Out).
  double OutBytes = 0;
  double HostInBytes = 0, HostOutBytes = 0;
  ByteCost HostIn, HostOut;
  /// Rows of its table: seeded (rescaled by Scale) and measured.
  size_t SeededRows = 0, MeasuredRows = 0;
  double Scale = 1;
  /// No row measured here: Scale is the other devices' of the same kind.
  bool ScaleBorrowed = false;
  /// > 0: its share with bytes in is pipelined, predicted at this factor
  /// times max(in, run, out) (DeviceCost::PipelineFactor).
  double PipelineFactor = 0;
  /// Every block on it alone, as predicted (ms).
  double SingleMs = 0;
  /// The row its share used, and whether it was measured.
  uint64_t Row = 0;
  bool RowMeasured = false;
  unsigned RowSamples = 0;
};

struct SplitResult {
  /// Blocks per request device (sums to the total).
  std::vector<uint64_t> Blocks;
  PartitionDecision Decision;
  std::vector<SplitDeviceReport> Devices;
  bool Splittable = true;
  /// > 0: not split, because the launch is shorter than this on its best
  /// device (ModelPartitioner::minSplitMs()).
  double TooShortBelowMs = 0;
  /// The steady-state decision was taken (see ModelPartitioner::plan).
  bool SteadyState = false;
  /// The part of the prediction that is the program's own copies around
  /// the launch (hostCopyMs).
  double HostCopyMs = 0;
  /// The previous decision was kept (the problem moved less than
  /// ModelPartitioner::ReuseTolerance).
  bool Reused = false;
  /// The decision in force was kept: the search's best predicts less than
  /// ModelPartitioner::HoldGain faster (HeldBestMs).
  bool Held = false;
  double HeldBestMs = 0;
  /// The last split of the key measured more than LossTolerance over the
  /// best single device's prediction (ModelPartitioner::recordOutcome()):
  /// this decision is that device, whole. LostMs: what the split measured;
  /// LostPredictedMs: that prediction.
  bool CorrectedLoss = false;
  double LostMs = 0, LostPredictedMs = 0;
  /// SplitRequest::Irregular: the balancer's split was predicted
  /// (BalancerMs, with its estimated balance ratio) against the greedy
  /// search's (GreedyMs), and taken when BalancerKept.
  bool BalancerTried = false, BalancerKept = false;
  double BalancerMs = 0, GreedyMs = 0, EstimatedBalance = 0;
  std::string BalancerWhy; ///< why the balancer gave no split
  /// For CLEAVE_LOG=plan: per device predicted ms, blocks, bytes in and
  /// written, the single-device alternative, seeded or measured rows.
  std::string describe(const SplitRequest &R) const;
};

/// Seed time of \p Blocks blocks on \p D: whole waves of the roofline time.
double seedMs(const SplitDevice &D, double BytesPerBlock, uint64_t Blocks);

class ModelPartitioner {
public:
  /// \p CacheFile: where measured rows persist (loaded now; a corrupt file
  /// is reported once on stderr and ignored); empty: not persisted.
  ModelPartitioner(DeviceProfile Profile, std::string CacheFile);
  ~ModelPartitioner();
  ModelPartitioner(const ModelPartitioner &) = delete;
  ModelPartitioner &operator=(const ModelPartitioner &) = delete;

  const DeviceProfile &profile() const { return Profile; }
  const std::string &cacheFile() const { return CacheFile; }

  /// Decides the blocks of each device of \p R.
  ///
  /// A decision that leaves a device's inputs to move in may lose to the
  /// one that ignores bytes in (the steady state of a repeated launch):
  /// that one is taken when its extra cost now is repaid by its saving per
  /// launch within as many launches as the key has had (never for the
  /// first; SplitResult::SteadyState).
  SplitResult split(const SplitRequest &R);

  /// Relative change of every table and transfer figure under which the
  /// previous decision for a key is kept (SplitResult::Reused).
  static constexpr double ReuseTolerance = 0.03;
  /// A new decision replaces the one in force (the last one for the key,
  /// whose data is where it ran) only when it predicts at least this much
  /// less time: timings vary by a few percent between launches, and a
  /// decision that follows them moves data between devices for nothing
  /// (SplitResult::Held).
  static constexpr double HoldGain = 0.05;
  /// A helper device gets work only when it cuts the predicted time by at
  /// least this fraction (PartitionProblem::MinDeviceGain). On the 4x H200
  /// headline, CPU shares of 1-10 % beside one GPU predicted small gains
  /// and measured losses (0.72-0.95x; the 4x H200 headline run of
  /// 2026-11-21);
  /// a second GPU gains far more than this.
  static constexpr double MinDeviceGain = 0.10;
  /// A launch predicted to take less than MinSplitMs on its best device runs
  /// there whole, unsearched: split over two devices it would gain at most
  /// half of it, less than a split launch's host cost (about 30 us on the
  /// 16-core H200 host: the second range's footprints, copies and
  /// synchronization). On one H200 beside the CPU, a 65536-element
  /// relaxation step (3 us) split at every launch took 20 us of host time
  /// against 9 us on the GPU alone (bench/results/launch/).
  static constexpr double DefaultMinSplitMs = 0.1;
  void setMinSplitMs(double Ms) { MinSplitMs = Ms; }
  double minSplitMs() const { return MinSplitMs; }

  /// The table of device \p D of \p R: seeded rows (rescaled) and measured
  /// rows; fills \p Report's row counts and scale when given.
  PerfTable table(const SplitRequest &R, size_t D,
                  SplitDeviceReport *Report = nullptr) const;

  /// A measured range: \p Blocks blocks of \p Key ran on \p D in \p Ms.
  /// The row is the wave multiple at or above Blocks.
  void record(const SplitDevice &D, const PerfKey &Key, uint64_t Blocks,
              double Ms);

  /// A launch of \p Key that ran as its last decision took \p Ms (the
  /// engine's clock, from its decision to its results). When that decision
  /// was a split and \p Ms exceeds the best single device's prediction at
  /// it by more than LossTolerance, the next split() of the key runs whole
  /// on that device (SplitResult::CorrectedLoss), once, and true is
  /// returned: the caller searches again at its next launch.
  bool recordOutcome(const PerfKey &Key, double Ms);
  static constexpr double LossTolerance = 0.10;
  /// Launches whose best single device is predicted under this are not
  /// judged: their measured time is mostly the engine's host work, which
  /// varies with the host's load more than the tolerance.
  static constexpr double MinJudgedMs = 1.0;

  /// Writes the cache when it changed (and persistence is on).
  Result flush();
  /// flush() at most every 2 s (after measurements).
  void maybeFlush();

  const PerfCache &cache() const { return Cache; }
  /// The reorganization step of \p Kernel measured a loss on \p Device
  /// (PerfCache::recordReorganizeOff), written with the next flush.
  void recordReorganizeOff(const std::string &Device,
                           const std::string &Kernel);
  /// \p Kernel's minimum slice on \p Device (PerfCache::sliceBlocks; 0
  /// when none is kept), and keeping one, written with the next flush.
  uint64_t sliceBlocks(const std::string &Device,
                       const std::string &Kernel) const;
  void recordSliceBlocks(const std::string &Device, const std::string &Kernel,
                         uint64_t Blocks);

private:
  DeviceProfile Profile;
  std::string CacheFile;
  double MinSplitMs = DefaultMinSplitMs;
  PerfCache Cache;
  /// The last decision per table key: device name -> blocks, the
  /// anchors of the next byte evaluation.
  std::map<std::string, std::map<std::string, uint64_t>> Last;
  /// The problem and decision of the last search per table key: a problem
  /// within ModelPartitioner::ReuseTolerance of it reuses the decision (the search
  /// runs at every launch; measurements move the tables by noise).
  struct Reusable {
    std::vector<double> Signature;
    /// With the bytes in charged (SKMD's).
    PartitionDecision Decision;
    /// With no bytes in (when some device misses some), and its time when
    /// taken now.
    bool HasSteady = false;
    PartitionDecision Steady;
    double SteadyNowMs = 0;
    /// SplitResult's balancer fields of the search.
    bool BalancerTried = false, BalancerKept = false;
    double BalancerMs = 0, GreedyMs = 0, EstimatedBalance = 0;
    std::string BalancerWhy;
  };
  std::map<std::string, Reusable> LastSearch;
  /// Per table key: whether its last decision was a split, and the best
  /// single device's predicted time then; the keys whose split measured a
  /// loss (measured, that prediction), for recordOutcome() and split().
  std::map<std::string, std::pair<bool, double>> Outcomes;
  std::map<std::string, std::pair<double, double>> Lost;
  /// The steps of split(): the partitioner's problem (tables, links, fixed
  /// costs), each device's anchor share, the bytes each device misses
  /// fitted to its share, the decision among the search's, the steady
  /// state's and the one in force, and the report of each device's share.
  PartitionProblem problemFor(const SplitRequest &R, SplitResult &Out) const;
  std::vector<uint64_t> anchorShares(const SplitRequest &R,
                                     const PartitionProblem &P) const;
  void chargeBytes(const SplitRequest &R, const std::vector<uint64_t> &Anchor,
                   PartitionProblem &P, SplitResult &Out);
  /// Irregular work: the balancer's split replaces the greedy one in
  /// \p Search when it predicts less time.
  static void consultBalancer(const PartitionProblem &P, BalanceMode Mode,
                              Reusable &Search);
  void chooseDecision(const SplitRequest &R, const PartitionProblem &P,
                      const Reusable &Search, SplitResult &Out);
  void reportShares(const SplitRequest &R, const PartitionProblem &P,
                    SplitResult &Out);
  /// DeviceCost::PipelineFactor of \p Dev for the whole grid of \p N
  /// blocks missing \p AtN: 0 when its share would not be pipelined.
  static double pipelineFactor(const SplitDevice &Dev, const DeviceCost &C,
                               uint64_t N, const ShareBytes &AtN);
  /// Decisions made per table key.
  std::map<std::string, unsigned> Launches;
  std::chrono::steady_clock::time_point LastSave;
  bool Saved = false;
  bool SaveFailed = false;
  mutable std::mutex Mutex;
};

/// The cache file for \p Profile and the devices \p Identities:
/// <dir>/perf-<profile tag>-<hash of the identities>.json; empty when
/// \p Dir is.
std::string perfCacheFile(const std::string &Dir, const DeviceProfile &Profile,
                          const std::vector<std::string> &Identities);

} // namespace rt
} // namespace cleave

#endif
