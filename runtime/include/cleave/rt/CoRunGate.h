//===- CoRunGate.h - Co-scheduled launches of several streams --*- C++ -*-===//
//
// Part of Cleave's runtime (no LLVM). The co-scheduling phase
// (docs/coschedule.md): the launches that several threads (the API's stream
// workers) hand to one gate at the same time form the co-scheduler's window
// of pending launches. Each caller's launch runs as slices (block ranges,
// KernelLaunchRequest::Slice) that the co-scheduler (CoScheduler.h) picks:
// two launches' slices at the model's ratio on two co-run lanes of the GPU,
// or one launch's alone. The caller's launch is one engine launch that
// issues its slices as pieces (SliceRange::NextPiece) on its lane as the
// gate hands them out, a pair's pieces ordered after the partner's last by
// an event, and waits once at the end; the engine releases its lock while
// a piece is awaited and while the lane runs. With HoldRule::Predicted a
// launch is held only where the co-run model predicts a gain.
//
// Order. A launch reaches the gate only when everything its stream waits
// for is done (the stream's earlier work, events it waits on, the legacy
// stream's implicit synchronization: the API's stream workers see to that),
// and returns only when every one of its blocks has run; so no slice runs
// before what its stream waits for, and what waits for the launch waits for
// all its slices.
//
// Re-planning (Alg. 1): the gate keeps at most one co-schedule issued but
// not started; an arrival takes back the slices not started yet, so the
// next co-schedule is planned with it.
//
//===----------------------------------------------------------------------===//
#ifndef CLEAVE_RT_CORUNGATE_H
#define CLEAVE_RT_CORUNGATE_H

#include "cleave/rt/CoScheduler.h"
#include "cleave/rt/Engine.h"
#include "cleave/rt/KernelProfile.h"

#include <chrono>
#include <condition_variable>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

namespace cleave {
namespace rt {

struct CoRunGateOptions {
  CoScheduleOptions Scheduler;
  /// The SM of the device slices run on (CoRun.h); Sms is taken from the
  /// device when UseDeviceSms.
  corun::SmLimits Sm;
  bool UseDeviceSms = true;
  /// Co-run lanes (streams) of the GPU. A program's stream keeps the lane
  /// it was first given (streams take them in turn) unless another launch
  /// in the gate holds it; then a launch takes one that none holds, while
  /// there are.
  unsigned Lanes = 4;
  /// A launch without a known minimum slice runs in about this many
  /// slices, each a multiple of the SM count.
  unsigned DefaultSlices = 8;
  /// Whether a launch that finds the gate empty is sliced: Always; or
  /// AfterOverlap, only when one of the last OverlapMemory launches found
  /// another in the gate (a program whose streams do launch at once: a
  /// lone launch's slices cost their launches and gain nothing until
  /// another launch comes).
  enum class AloneRule { Always, AfterOverlap };
  AloneRule SliceAlone = AloneRule::Always;
  unsigned OverlapMemory = 16;
  /// The model inputs of a launch (none: it is never weighed by the
  /// model). Unset: what `cleave analyze` measured of the kernel when
  /// Measured has it (measuredModelInput), else the bundle's co-run
  /// estimate (bundleModelInput).
  std::function<std::optional<corun::KernelModelInput>(
      const KernelLaunchRequest &)>
      Inputs;
  /// `cleave analyze --json`'s report (CLEAVE_KERNEL_PROFILE), or null.
  std::shared_ptr<const KernelProfile> Measured;
  /// Which launches the gate holds and slices: All (every one it can, as
  /// CLEAVE_TUNE=coschedule=always), or Predicted: only a launch with model
  /// inputs for which the model predicts at least HoldProfit with a launch
  /// of another stream in the gate or the last modeled launch of another
  /// stream; the others run at once on the engine's plain path, unsliced
  /// and unheld.
  enum class HoldRule { All, Predicted };
  HoldRule Hold = HoldRule::All;
  double HoldProfit = 0.05;
  /// A kernel's minimum slice (§3.4) comes from the performance cache
  /// (Engine::cachedSliceBlocks) when it keeps one (ReadSliceCache). With
  /// MeasureSlices, a kernel the cache has none for has it measured
  /// (SliceSizeSearch) on its launches that run alone in the gate: one
  /// unsliced, then one per candidate size, each launch running once as
  /// the program asked; the result goes to the cache. Otherwise, and
  /// until then, a launch's minimum slice follows DefaultSlices.
  bool ReadSliceCache = true;
  bool MeasureSlices = false;
  /// Tests: the time (ms) to take for a measured launch of \p Blocks
  /// blocks run as \p Pieces pieces, given what the clock measured
  /// (\p Ms: the lane's events on a GPU, the host's clock otherwise).
  std::function<double(uint64_t Blocks, unsigned Pieces, double Ms)>
      MeasuredMs;
  /// CLEAVE_LOG=plan: each decision and each launch's slices on stderr.
  bool LogPlan = false;
  /// Tests: each slice as it starts and ends, in order ("start <id>
  /// [a, b)", "end <id> [a, b)").
  std::function<void(const std::string &)> Trace;
};

class CoRunGate {
public:
  CoRunGate(Engine &E, CoRunGateOptions O);
  ~CoRunGate();
  CoRunGate(const CoRunGate &) = delete;
  CoRunGate &operator=(const CoRunGate &) = delete;

  /// Runs \p Req (the whole grid; no explicit partition) as co-scheduled
  /// slices on the gate's device, beside the launches other threads hand
  /// in meanwhile; returns when every block ran, or with the first error.
  /// \p Stream identifies the caller's stream, \p Priority its priority
  /// (lower is more urgent). A kernel whose blocks cannot run as slices
  /// runs whole, in its turn, and \p Plan says why.
  Result run(const KernelLaunchRequest &Req, uint64_t Stream, int Priority,
             LaunchPlan &Plan);

  /// The device slices run on: the first GPU, else the first CPU device
  /// (-1: none).
  Location device() const { return Dev; }
  /// Launches in the gate now (tests wait for an arrival with it).
  size_t pending();
  /// Whether \p Req on \p Stream would pass through unheld
  /// (HoldRule::Predicted), deciding as run() does; the API then launches
  /// it on its direct path, as without the gate. Counted as passed through.
  bool passesThrough(const KernelLaunchRequest &Req, uint64_t Stream);
  /// Launches passed through unheld (HoldRule::Predicted), and slices run.
  uint64_t passedThrough();
  uint64_t slicesRun();
  /// Engine launches the held launches took (each runs its slices).
  uint64_t engineLaunches();
  /// Waits until the predictor has made every queued prediction (tests).
  void settlePredictions();

private:
  struct Waiting {
    const KernelLaunchRequest *Req = nullptr;
    std::string Name;
    unsigned Lane = 0;
    int Priority = 0;
    std::deque<Slice> Queue;
    std::optional<corun::KernelModelInput> Model;
    /// The kernel and launch configuration (pair predictions' key).
    std::string Key;
    uint64_t Stream = 0;
    /// Slices run, those run as part of a pair, and the launch's time in
    /// the gate on the host's clock (ms): from its arrival to its return,
    /// its lane waited for.
    unsigned Slices = 0, Paired = 0;
    double Ms = 0;
    /// The piece handed out and not yet reported issued.
    std::optional<Slice> Out;
    /// On a GPU: recorded on the lane after each issued piece (Recorded
    /// once it was), for the partner's next piece to wait for.
    EventHandle Event = nullptr;
    bool Recorded = false;
    /// On a GPU: the stream the last piece was issued on when not the lane
    /// (an SM partition's), and the event that orders it with the lane.
    StreamHandle OutOn = nullptr;
    EventHandle SideEvent = nullptr;
    /// Where its model inputs come from: "measured" (cleave analyze),
  /// "estimate" (the bundle's), "given" (CoRunGateOptions::Inputs).
  std::string InputsFrom;
  /// Its minimum slice, where that came from (CLEAVE_LOG=plan), and the
    /// kernel's name in the performance cache.
    uint64_t MinSlice = 0;
    std::string SliceFrom, SliceName;
    /// §3.4's measurement this launch makes: none, the unsliced time, or
    /// a candidate slice size's. Disturbed when another launch came into
    /// the gate meanwhile (the time is then not the kernel's alone).
    enum class Measure { None, Whole, Candidate } Measuring = Measure::None;
    bool Disturbed = false;
    /// On a GPU, timing events on the lane around a measured launch's
    /// pieces.
    EventHandle TimeStart = nullptr, TimeEnd = nullptr;
  };
  /// A kernel's minimum slice by its name in the performance cache: kept
  /// there or measured (Blocks), and the search while it is measured
  /// (on launches of Grid blocks).
  struct SliceSize {
    /// The cache is being asked, or was.
    bool Asking = false, Asked = false;
    uint64_t Blocks = 0;
    std::string From;
    std::optional<SliceSizeSearch> Search;
    uint64_t Grid = 0;
    double WholeMs = 0;
  };
  uint64_t defaultSlice(uint64_t Blocks) const;
  /// The performance cache's name of \p Req's kernel: its name and block
  /// shape.
  static std::string sliceName(const KernelLaunchRequest &Req);
  /// Queues a question to the performance cache for \p Name's minimum
  /// slice, once: the predictor asks it (the engine's lock, which a
  /// running slice holds, is never taken on a launch's path).
  void lookUpSliceLocked(const std::string &Name);
  /// The predictor's part: asks the cache, or records in it.
  void sliceJob(const std::string &Name, uint64_t Record);
  void startPredictorLocked();
  /// \p W's minimum slice (of \p Blocks), and the measurement it makes
  /// when it is \p Alone in the gate.
  void chooseSliceLocked(Waiting &W, uint64_t Blocks, bool Alone,
                         const std::optional<corun::KernelModelInput> &Model);
  /// After a measured launch ran: folds its time into the search; the
  /// kernel's minimum slice when the search ends (to be recorded in the
  /// cache), else 0.
  uint64_t measuredLocked(Waiting &W, double HostMs);
  /// Why \p Req cannot be sliced (empty if it can), its model inputs and
  /// its key (kernel and configuration).
  void describeArrival(const KernelLaunchRequest &Req, std::string &Why,
                       std::optional<corun::KernelModelInput> &Model,
                       std::string &Key, std::string &InputsFrom);
  /// HoldRule::Predicted: why \p Req passes through (empty: it is held);
  /// remembers a modeled launch as \p Stream's last.
  std::string passLocked(const KernelLaunchRequest &Req,
                         const std::string &Key,
                         const std::optional<corun::KernelModelInput> &Model,
                         const std::string &Refusal, uint64_t Stream,
                         const std::string &InputsFrom);
  /// HoldRule::Predicted: whether \p Model on \p Stream is predicted to
  /// gain with a launch of another stream (why not, in \p Why).
  bool worthHoldingLocked(const std::string &Kernel,
                          const corun::KernelModelInput &Model,
                          uint64_t Stream, std::string &Why);
  /// The model's profit of the pair, once the predictor has made it (it
  /// is queued for the predictor otherwise: a launch never waits for the
  /// model).
  std::optional<double> profitLocked(const std::string &A,
                                     const corun::KernelModelInput &MA,
                                     const std::string &B,
                                     const corun::KernelModelInput &MB);
  /// The predictor thread: makes the queued pairs' predictions and hands
  /// them to the scheduler too.
  void predictorLoop();
  unsigned laneFor(uint64_t Stream);
  /// Plans the next co-schedule when no slice waits to start.
  Result pumpLocked();
  /// Takes back every slice not started (an arrival re-plans).
  void takeBackLocked();
  void logDecisionLocked();
  /// The modeled pair's line: ratio or SM split, IPCs, profit, and the
  /// predicted times of its remaining blocks interleaved, split and one
  /// after the other.
  std::string pairLineLocked(const CoSchedulePlan &P) const;
  /// Cycles of the SM clock in ms (0 without the device profile's clock).
  double cyclesMs(double Cycles) const;
  /// A launch finished: prints the predicted against the measured time of
  /// the pair decision it completes (CLEAVE_LOG=plan).
  void checkCoRunLocked(uint64_t Id);
  std::string describeLocked(uint64_t Id) const;
  Result runSlices(uint64_t Id, std::unique_lock<std::mutex> &Lock,
                   LaunchPlan &Plan);
  /// SliceRange::NextPiece of launch \p Id: reports its last piece issued
  /// (records the lane's event), then waits for its next slice, making the
  /// lane wait for the partner's last issued piece; Count 0 when every
  /// block was handed out.
  Result nextPiece(uint64_t Id, StreamHandle Lane, uint64_t &First,
                   uint64_t &Count, StreamHandle &On);
  /// A piece of an SM partition's side (Slice::Side): the side's stream in
  /// \p On, ordered after the lane's work; on failure the lane, and the
  /// plan says why.
  Result partitionStreamLocked(Waiting &W, const Slice &S, Device &D,
                               StreamHandle Lane, StreamHandle &On);
  Result takeEventLocked(Device &D, EventHandle &Out);

  Engine &E;
  CoRunGateOptions Opts;
  Location Dev = -1;
  bool OnGpu = false;
  std::mutex Mutex;
  std::condition_variable Cond;
  /// Why SM partitions were asked for (CoScheduleOptions::Partition) and
  /// the device offers none; said once in the plan.
  std::string PartitionWhy;
  bool PartitionWhySaid = false;
  CoScheduler Sched;
  uint64_t NextId = 0;
  /// Launches handed in since the last one that found another in the gate
  /// (AloneRule::AfterOverlap); none yet: the memory's length.
  unsigned SinceOverlap = ~0u;
  std::map<uint64_t, Waiting> Launches;
  std::map<std::string, SliceSize> SliceSizes;
  /// Each program stream's lane, and the lane the next new stream gets.
  std::map<uint64_t, unsigned> StreamLanes;
  unsigned NextLane = 0;
  /// The plan last logged (launches), so that a decision is printed once;
  /// when it was made and how many co-schedules it issued (its measured
  /// time is printed with the next decision).
  std::vector<uint64_t> Logged;
  std::chrono::steady_clock::time_point LoggedAt;
  unsigned LoggedRounds = 0;
  /// The SM clock of the device profile (0: none), turning the model's
  /// cycles into time.
  double ClockMHz = 0;
  /// Pair decisions whose co-run is being timed: the pair, its predicted
  /// time (ms, 0 without a clock) and cycles, since when, and how many of
  /// the two launches are done.
  struct CoRunCheck {
    uint64_t Launch[2] = {0, 0};
    std::string Names;
    double PredictedMs = 0, Cycles = 0;
    std::chrono::steady_clock::time_point Start;
    unsigned Done = 0;
  };
  std::vector<CoRunCheck> Checks;
  Result PumpError;
  /// The last modeled launch of each stream: kernel and inputs.
  std::map<uint64_t, std::pair<std::string, corun::KernelModelInput>> Recent;
  /// Pair profits by kernel keys (ordered), and the pairs queued for the
  /// predictor.
  std::map<std::pair<std::string, std::string>, double> Profits;
  struct PairJob {
    std::string A, B;
    corun::KernelModelInput MA, MB;
  };
  std::deque<PairJob> Jobs;
  /// Performance-cache work for the predictor: a kernel's minimum slice
  /// to look up (0) or to record.
  std::deque<std::pair<std::string, uint64_t>> SliceJobs;
  std::set<std::pair<std::string, std::string>> Queued;
  std::thread Predictor;
  std::condition_variable JobCond;
  bool Stopping = false;
  /// A job taken by the predictor and not yet stored.
  bool Predicting = false;
  uint64_t PassedThrough = 0, SlicesRun = 0, EngineLaunches = 0;
  /// Lane events of finished launches, for the next ones.
  std::vector<EventHandle> FreeEvents;
};

/// The co-run model's inputs of \p Req from its kernel's bundle record
/// (BundleKernel::CoRun, a static estimate) and its launch: none for a
/// version-5 bundle or a kernel without an estimate. Registers come from
/// the bundle's cubin when it has one (else 0: not a limit).
std::optional<corun::KernelModelInput>
bundleModelInput(const Engine &E, const KernelLaunchRequest &Req);

/// The co-run model's inputs of \p Req from what `cleave analyze`
/// measured of its kernel (\p P's entry of the kernel, block shape and
/// dynamic shared memory, the launch's grid preferred): none when \p P has
/// no such entry. Registers the report does not give come from the
/// bundle's cubin.
std::optional<corun::KernelModelInput>
measuredModelInput(const Engine &E, const KernelLaunchRequest &Req,
                   const KernelProfile &P);

} // namespace rt
} // namespace cleave

#endif
