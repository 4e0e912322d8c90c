//===- LaunchContext.h - The engine's state and a launch's phases -*- C++ -*-===//
//
// Part of Cleave's runtime (no LLVM); internal to runtime/lib/engine. The
// engine's registered programs, the state it keeps between launches (the
// model policy's, combine scratch, repeated launches) and LaunchContext, one
// launch as it goes through its phases. Each phase is defined in its own
// file:
//
//   Decide.cpp      checkRequest(), the policy's ranges, decide()
//   Transfers.cpp   stage(), moveIn(), finish(), prepareAll(): what moves
//   Issue.cpp       issue(), launchOne(), runCpu(): the runs start
//   Combine.cpp     combined outputs and merge kernels
//   Finish.cpp      writes and reads marked; repeated and deferred launches
//   Recover.cpp     where a failed device's blocks go
//   Attempt.cpp     run() and attempt(): the phases in order
//   ModelPolicy.cpp the model policy's decision (scheduleByModel()) and timing
//   Pipeline.cpp    one GPU run as chunks on send, kernel, receive streams
//   PipelineModel.cpp  the chunk plan's inputs (TPSM) and the chunks' times
//
//===----------------------------------------------------------------------===//
#ifndef CLEAVE_RT_ENGINE_LAUNCHCONTEXT_H
#define CLEAVE_RT_ENGINE_LAUNCHCONTEXT_H

#include "cleave/rt/Engine.h"

#include "../scheduler/Balancer.h"
#include "../scheduler/ReorganizeModel.h"
#include "../scheduler/SchedulingPolicy.h"

#include "IssuePool.h"
#include "LaunchSupport.h"

#include "cleave/rt/Fault.h"
#include "cleave/rt/Footprint.h"
#include "cleave/rt/ModelPartitioner.h"
#include "cleave/rt/MultiGpuTpsm.h"
#include "cleave/rt/Options.h"
#include "cleave/rt/PartitionParams.h"

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <optional>
#include <set>
#include <thread>
#include <map>
#include <tuple>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace cleave {
namespace rt {

struct ChunkQuery;

// Programs
//===----------------------------------------------------------------------===//

class Program {
public:
  Bundle B;
  std::map<std::string, void *> Syms;
  /// One per B.Kernels entry; never resized after addProgram.
  std::vector<KernelHandle> Kernels;
  std::vector<std::unique_ptr<FootprintProgram>> Footprints;
  std::vector<std::string> FootprintErrors;

  /// A `__device__`/`__constant__` variable: the host value the API wrote
  /// or read, the CPU copy (shared by every CPU device), and which copies
  /// hold the current value. At first every device copy holds its
  /// initializer, which is current.
  struct Var {
    std::vector<char> Host;
    bool HostValid = false;
    void *Cpu = nullptr;
    bool CpuValid = true;
    std::vector<bool> DevValid; ///< per device index (GPUs)
  };
  std::vector<Var> Vars;

  /// The program's module on one GPU, loaded on first use.
  struct Gpu {
    bool Loaded = false;
    ModuleHandle M = nullptr;
    std::map<std::string, FunctionHandle> Fns;
    /// Variable index -> its address in the module (gpuGlobal).
    std::map<size_t, DeviceAddr> Globals;
  };
  std::map<Location, Gpu> Gpus;
};


namespace engine {

using namespace launch;

/// The hull [lo, hi) of a set, empty for an empty set.
inline ByteRange hull(const RangeSet &S) {
  std::vector<ByteRange> R = S.ranges();
  if (R.empty())
    return {};
  return {R.front().Lo, R.back().Hi};
}

/// The launch's arguments as the footprint evaluator takes them: integer
/// parameters sign-extended, 0 for the others.
inline std::vector<int64_t> integerArgs(const BundleKernel &Info,
                                         void *const *Args) {
  std::vector<int64_t> Out(Info.Params.size(), 0);
  for (size_t A = 0; A < Out.size(); ++A) {
    const BundleParam &BP = Info.Params[A];
    if (BP.Kind != ParamKind::Scalar || !Args || !Args[A])
      continue;
    switch (BP.Size) {
    case 1: { int8_t X; std::memcpy(&X, Args[A], 1); Out[A] = X; break; }
    case 2: { int16_t X; std::memcpy(&X, Args[A], 2); Out[A] = X; break; }
    case 4: { int32_t X; std::memcpy(&X, Args[A], 4); Out[A] = X; break; }
    case 8: { int64_t X; std::memcpy(&X, Args[A], 8); Out[A] = X; break; }
    default: break;
    }
  }
  return Out;
}

/// The model policy's state: the planner (made at the first launch that
/// uses it, with the device profile of Options::ProfilePath and the cache
/// file of this profile and device set) and the events that time GPU
/// ranges.
struct ModelState {
  explicit ModelState(const Options &Opts) : Opts(Opts) {}
  const Options &Opts;
  std::unique_ptr<ModelPartitioner> P;
  /// Per GPU, events reused by every launch (two per range).
  std::map<Location, std::vector<EventHandle>> Events;
  /// (device, table key) pairs timed once: the first range of a kernel on
  /// a GPU pays for loading its code (lazy module loading happens inside
  /// the first launch, between the events), so it is not recorded.
  std::set<std::pair<Location, std::string>> Warm;
  /// The split's host bookkeeping estimate (SplitRequest::SplitMs) per
  /// table key, grid and scalar arguments: evaluated once.
  std::map<std::string, double> SplitMs;
  /// Per kernel: its table name (a hash of the program's source and the
  /// kernel's footprints).
  std::map<const void *, std::string> TableNames;
  /// The last decision per launch shape (table key, which has the grid's
  /// size class; buffers; device set; LaunchContext::scheduleByModel), run again
  /// without a new decision until NextSearch launches (docs/partitioner.md,
  /// "Cached decisions").
  struct CachedDecision {
    std::vector<PartitionRange> Ranges;
    /// The grid's blocks when Ranges were decided.
    uint64_t Total = 0;
    std::map<Location, SplitDevice> Devs;
    uint64_t Launches = 0;
    uint64_t NextSearch = 0;
    /// The launch (1, 2, ...) whose search made Ranges.
    uint64_t PlannedAt = 0;
    /// A search found inputs staged in the host copy (Buffer::stagedBytes):
    /// from the next one on, they are uploads that recur and are charged.
    bool SawStaged = false;
    /// The launches before the last search, and its buffers' counts of
    /// the program's copies into and out of them then (per pointer
    /// argument, Buffer::programWrites, programReads).
    uint64_t LaunchesAtSearch = 0;
    std::vector<uint64_t> WritesAtSearch, ReadsAtSearch;
    /// Launches per upload and per read-back of the key's buffers, as
    /// counted between its last two searches that saw any: the program's
    /// copies are charged once per as many launches (1 until counted).
    double InPeriod = 1, OutPeriod = 1;
    /// The last search counted at least QuietLaunches launches since the
    /// one before without any of the program's copies into or out of the
    /// key's buffers. Kept launches then watch for copies (CopiesSeen, the
    /// buffers' count at the last launch; CopiedBefore, the last launch
    /// that copies preceded): copies before two launches in a row end the
    /// quiet stretch, and the second searches at once.
    bool Quiet = false;
    uint64_t CopiesSeen = 0;
    uint64_t CopiedBefore = ~uint64_t(0);
  };
  std::map<std::string, CachedDecision> Decisions;
  static constexpr size_t MaxCachedDecisions = 4096;
  /// The reorganization step's measurements per kernel, device and launch
  /// size (Reorganize.cpp).
  std::map<std::string, ReorganizeHistory> Reorganize;
  /// Per kernel, its name in the performance cache (a hash of the
  /// program's source): the direct launches ask for the history each time.
  std::map<const BundleKernel *, std::string> ReorganizeNames;
  /// The histories by kernel, device, blocks and block size, without
  /// building the key's string (the direct launches ask at every launch).
  std::map<std::tuple<const BundleKernel *, Location, uint64_t, uint32_t>,
           ReorganizeHistory *>
      ReorganizeIndex;
  /// The reorganization model's budget (ReorganizeBudget): the program's
  /// first launch of a kernel with the variants, and what timing originals
  /// and exploring were predicted to cost since.
  std::chrono::steady_clock::time_point ReorganizeStart;
  bool ReorganizeStarted = false;
  double ReorganizeSpentMs = 0;
  /// Per GPU, the step's sort kernels (ReorganizeSort.cu), loaded at the
  /// first step there, and their memory (counts, permutation, sums and
  /// histogram), grown to the largest launch; both kept for the process.
  /// Why says why there are no kernels (the host sorts then).
  struct GpuSort {
    bool Tried = false;
    ModuleHandle M = nullptr;
    FunctionHandle Max = nullptr, Hist = nullptr, Scan = nullptr,
                   Scatter = nullptr, Stats = nullptr;
    std::string Why;
    /// How long loading them took (the plan says so once).
    double LoadMs = -1;
    bool LoadReported = false;
    /// Counts, the permutation, the first pass's output, the per-tile
    /// histograms, and the sums and largest count.
    DeviceAddr Counts = 0, Perm = 0, Tmp = 0, Histograms = 0, Aux = 0;
    uint64_t Threads = 0; ///< what Counts, Perm and Tmp hold
    /// Splitting the step's time: before the inspector, after it, after
    /// the sort.
    EventHandle Marks[3] = {nullptr, nullptr, nullptr};
  };
  std::map<Location, GpuSort> Sorts;
  /// Routing a reorganized launch over devices (ReorganizeRoute.cpp), per
  /// kernel, grid and block size: each device's measured time per unit of
  /// its lanes' work, the devices probed once (an unmeasured device is
  /// given a sliver of the light tail), the merge's measured time.
  struct RouteHistory {
    std::map<Location, double> PerWorkMs;
    std::set<Location> Probed;
    double MergeMs = -1;
    /// The last routed step: its device and its whole time (inspector,
    /// sort, the ranges and the merge), ms.
    Location Home = 0;
    double StepMs = -1;
  };
  std::map<std::tuple<const BundleKernel *, uint64_t, uint32_t>, RouteHistory>
      Routes;

  ModelPartitioner &planner(BufferManager &Bufs);
  /// Says which profile and cache the model uses (Log.Plan), once,
  /// at the first decision.
  void announce();
  bool Announced = false;
  /// Event \p Index of GPU \p L, created on first use; null if that fails.
  EventHandle event(BufferManager &Bufs, Location L, size_t Index);
  void release(BufferManager &Bufs);
};



/// Transfer pipelining's switches and the events its launches chain their
/// streams with, per GPU, kept between launches (Pipeline.cpp).
struct PipelineState {
  PipelineOptions Opt;
  std::map<Location, std::vector<EventHandle>> Events;
  /// The host-link states of each set of GPU ordinals that pipelined at
  /// once (tpsm::symmetricGroup() reads the profile's state tables).
  std::map<std::vector<int>, tpsm::GpuGroup> Groups;
  /// Ordering event \p Index of GPU \p L, created on first use; null if
  /// that fails.
  EventHandle event(BufferManager &Bufs, Location L, size_t Index);
  void release(BufferManager &Bufs);
};

/// Memory for the partial results of combined outputs (docs/runtime.md,
/// "Combined outputs"), per device: an area of device memory that the
/// device's blocks update instead of the buffer, and host memory (pinned on
/// a GPU) that the partial comes back to. Kept between launches, grown as
/// needed: allocating either costs more than a histogram's whole launch.
struct CombineScratch {
  struct Slot {
    DeviceAddr Dev = 0;
    uint64_t DevBytes = 0;
    void *Host = nullptr;
    uint64_t HostBytes = 0;
  };
  /// Per device, one slot per run it has in a launch.
  std::map<std::pair<Location, unsigned>, Slot> Slots;

  /// Slot \p Index of location \p L with at least \p Bytes of each.
  Result get(BufferManager &Bufs, Location L, unsigned Index, uint64_t Bytes,
             Slot *&Out) {
    Slot &S = Slots[{L, Index}];
    Device &D = Bufs.device(L);
    if (S.DevBytes < Bytes) {
      if (S.DevBytes)
        (void)D.free(S.Dev);
      S.Dev = 0;
      S.DevBytes = 0;
      Result R = D.allocate(Bytes, S.Dev);
      if (!R.ok())
        return R;
      S.DevBytes = Bytes;
    }
    if (S.HostBytes < Bytes) {
      if (S.Host)
        (void)D.freeHost(S.Host);
      S.Host = nullptr;
      S.HostBytes = 0;
      Result R = D.allocateHost(Bytes, S.Host);
      if (!R.ok())
        return R;
      S.HostBytes = Bytes;
    }
    Out = &S;
    return Result::success();
  }

  void release(BufferManager &Bufs) {
    for (auto &[Key, S] : Slots) {
      if (S.DevBytes)
        (void)Bufs.device(Key.first).free(S.Dev);
      if (S.Host)
        (void)Bufs.device(Key.first).freeHost(S.Host);
    }
    Slots.clear();
  }
};



/// The last launch of a kernel, kept when it changed no buffer's state
/// (docs/runtime.md, "Repeated launches"): the same request, finding the
/// buffers as that launch left them (BufferManager::stateChanges()) and
/// given the same ranges, moves nothing and changes nothing either, so it
/// runs the kept runs without evaluating footprints, planning copies or
/// marking writes again.
struct RepeatMemo {
  /// The request: everything the launch's decisions depend on.
  uint32_t Grid[3] = {0, 0, 0}, Block[3] = {0, 0, 0};
  uint64_t SharedBytes = 0;
  std::vector<char> Args;
  std::vector<PartitionRange> Partition;
  std::vector<double> Weights;
  PartitionPolicy Policy = PartitionPolicy::Proportional;
  bool SwapOff = false;
  /// The kernel it ran as (the request's, or its twin).
  const KernelHandle *Ran = nullptr;
  /// stateChanges() after it.
  uint64_t Changes = 0;
  /// The ranges the policy gave, and the runs decide() made of them.
  std::vector<PartitionRange> Given;
  struct Run {
    Location Dev = 0;
    uint64_t First = 0, Count = 0;
    size_t PlanIndex = 0;
    /// Per parameter: the device address of a pointer argument, else null.
    std::vector<void *> Values;
    RangeUse Uses;
  };
  std::vector<Run> Runs;
  bool Whole = false; ///< decide() refused the split (Mode::Whole)
  LaunchPlan Plan;
  /// A launch that changed its buffers' state, kept to be replayed: the
  /// state of each of its buffers (by id) as it found them. A launch that
  /// finds them so again decides the same runs and copies, and makes the
  /// copies in Plan without planning them (LaunchContext::attempt).
  bool Replay = false;
  struct Found {
    uint64_t Id = 0;
    std::weak_ptr<Buffer> Buf;
    Buffer::State State;
  };
  std::vector<Found> Before;

  /// Whether every buffer of the kept launch is live and as it found it.
  bool buffersAsFound() const {
    for (const Found &F : Before) {
      std::shared_ptr<Buffer> B = F.Buf.lock();
      if (!B || !B->inState(F.State))
        return false;
    }
    return true;
  }
  bool sameStart(const RepeatMemo &O) const {
    if (Before.size() != O.Before.size())
      return false;
    for (size_t I = 0; I < Before.size(); ++I)
      if (Before[I].Id != O.Before[I].Id ||
          !(Before[I].State == O.Before[I].State))
        return false;
    return true;
  }
};


inline bool sameRanges(const std::vector<PartitionRange> &A,
                const std::vector<PartitionRange> &B) {
  if (A.size() != B.size())
    return false;
  for (size_t I = 0; I < A.size(); ++I)
    if (A[I].Device != B[I].Device || A[I].First != B[I].First ||
        A[I].Count != B[I].Count)
      return false;
  return true;
}

/// The split-refusal rules of kernel \p K of \p P (LaunchContext::
/// whyNotSplit, Engine::sliceRefusal); empty when it may be split.
std::string splitRefusal(const Program &P, const KernelHandle &K,
                         bool GpuGetsPart);

// Programs.cpp: a program's modules, functions and variables on a device.
Result gpuModule(BufferManager &Bufs, Program &P, Location L,
                 Program::Gpu *&Out);
Result gpuFunction(BufferManager &Bufs, Program &P, Location L,
                   const std::string &Entry, FunctionHandle &Out);
Result gpuGlobal(BufferManager &Bufs, Program &P, Location L, size_t V,
                 DeviceAddr &Addr);
Result fetchVariable(BufferManager &Bufs, Program &P, size_t V);
Result syncVariableTo(BufferManager &Bufs, Program &P, size_t V, Location L,
                      bool Queue = false);
void variableWritten(BufferManager &Bufs, Program &P, size_t V, Location L);

// Reorganize.cpp: the CPU descriptor of the program named \p Symbol with
// \p Params parameters, or null; why a launch of this shape cannot go
// through the reorganization step (empty when it can).
const cleave_cpu_kernel_desc *
cpuDesc(const Program &P, const std::string &Symbol, size_t Params);
std::string whyNotForShape(const uint32_t Grid[3], const uint32_t Block[3]);


enum class Mode { Whole, Exact, Merge };

/// One range of blocks on one device, with its footprints.
struct RunState {
  Location Dev = 0;
  uint64_t First = 0;
  uint64_t Count = 0;
  RangeUse Uses;
  /// Ranges (per buffer) that must be valid on Dev before the run besides
  /// its reads: non-exact write bounds, and everything written on M.
  std::map<uint64_t, RangeSet> MustHold;
  bool Failed = false;
  bool Issued = false;
  size_t PlanIndex = 0;
  /// Argument storage for an asynchronous GPU launch.
  std::vector<void *> Values;
  std::vector<void *> ArgPtrs;
  std::vector<uint32_t> PartParams;
  /// By-value arguments whose buffer addresses were translated for Dev
  /// (argsFor(), ArgumentPointer), per argument.
  std::map<size_t, std::vector<char>> ByValue;
  /// Partial buffers on M (merge mode, non-M runs): buffer id -> (M's
  /// allocation, hull of this run's writes).
  std::map<uint64_t, std::pair<DeviceAddr, ByteRange>> Partials;
  /// The model policy's timing of a GPU range: events recorded around its
  /// launch on the compute stream.
  EventHandle TimeStart = nullptr, TimeEnd = nullptr;
  /// Issued and waited for by an IssuePool worker: the two results and the
  /// range's time (negative: not timed).
  bool Pooled = false;
  /// Issued without being waited for (LaunchContext::Defer).
  bool Deferred = false;
  Result PoolIssue, PoolWait;
  float PoolMs = -1;
  /// Between stage() and finish(): the run's entry of the plan, and the
  /// copies (per buffer id) that make its inputs valid, not yet run.
  LaunchPlan::Run PlanRun;
  std::vector<std::pair<uint64_t, std::vector<Transfer>>> MoveIn;
  /// Copies from other GPUs queued on Dev's compute stream ahead of its
  /// kernel (moveIn), per buffer id, until settlePulls() sees them land.
  std::vector<std::pair<uint64_t, Transfer>> Pulled;
  /// CLEAVE_LOG=phases: the time spent queueing them.
  double PullUs = 0;
  /// Combined outputs: the device's scratch, which its blocks update
  /// instead of the buffers (LaunchContext::Combines gives the layout).
  CombineScratch::Slot *Scratch = nullptr;
  /// A pipelined run: its results sent back eagerly, per buffer id,
  /// claimed on the host once its writes are committed (Pipeline.cpp).
  std::vector<std::pair<uint64_t, std::vector<Transfer>>> Received;
  /// A run of a repeated launch: its footprints are the kept launch's,
  /// taken into Uses only if something fails (usesOf()).
  const RangeUse *Repeat = nullptr;
};

/// The footprints of \p R.
inline const RangeUse &usesOf(const RunState &R) {
  return R.Repeat && R.Uses.empty() ? *R.Repeat : R.Uses;
}

/// A device failure to recover from.
struct Failure {
  Location Dev = 0;
  Result Err;
};

class LaunchContext {
  /// The model policy's schedule() is scheduleByModel().
  friend class ModelPolicy;

public:
  LaunchContext(BufferManager &Bufs, CpuExecutor &Exec, Program &Prog,
                const KernelHandle &K, const KernelLaunchRequest &Req,
                LaunchPlan &Plan, PartitionPolicy Policy, ModelState &Model,
                IssuePool &Pool, CombineScratch &Scratch, PipelineState &Pipe,
                const RepeatMemo *Memo, const Options &Opts)
      : Bufs(Bufs), Exec(Exec), Prog(Prog), K(K), Info(*K.Info), Req(Req),
        Plan(Plan), Policy(Policy), Model(Model), Pool(Pool), Scratch(Scratch),
        Pipe(Pipe), Memo(Memo), Opts(Opts), LogTime(Opts.Log.Time),
        Phases(Opts.Log.Phases) {}

  Result run();
  /// A slice (KernelLaunchRequest::Slice) runs on \p Lane, a stream of the
  /// slice's GPU, and \p Lock (the engine's, held) is released while its
  /// GPU work runs (CoRunSlices.cpp).
  void setSliceLane(StreamHandle Lane, std::unique_lock<std::mutex> *Lock) {
    SliceLane = Lane;
    EngineLock = Lock;
  }
  /// After run(): whether it repeated Memo's runs, and the launch to keep
  /// for the next one when it may be repeated (its runs, without the
  /// request and the count, which Engine::launch fills in).
  bool repeated() const { return Repeated; }
  std::optional<RepeatMemo> &kept() { return Kept; }

private:
  BufferManager &Bufs;
  CpuExecutor &Exec;
  Program &Prog;
  const KernelHandle &K;
  const BundleKernel &Info;
  const KernelLaunchRequest &Req;
  LaunchPlan &Plan;
  PartitionPolicy Policy;
  ModelState &Model;
  IssuePool &Pool;
  CombineScratch &Scratch;
  PipelineState &Pipe;
  /// The request's last launch, when it changed nothing and the buffers
  /// are as it left them (else null); see RepeatMemo.
  const RepeatMemo *Memo;
  const Options &Opts;
  bool Repeated = false;
  /// setSliceLane().
  StreamHandle SliceLane = nullptr;
  /// The stream of the piece being issued when it is not the lane (an SM
  /// partition's, SliceRange::NextPiece).
  StreamHandle PieceStream = nullptr;
  std::unique_lock<std::mutex> *EngineLock = nullptr;
  /// The stream a run on \p Dev is issued on and waited for: the slice's
  /// lane, else the device's compute stream.
  StreamHandle runStream(Location Dev) const;
  /// runSlice(): the request's slice as one range (CoRunSlices.cpp);
  /// waitSlice(): the lane waited for without the engine's lock.
  Result runSlice();
  /// A slice with pieces (SliceRange::NextPiece): each piece issued on the
  /// lane (or run, on a CPU device) as it is handed out.
  Result issuePieces(RunState &R);
  Result waitStream(Device &D, StreamHandle S);
  /// This attempt leaves its GPU work running when it returns
  /// (mayDefer(), docs/runtime.md, "Deferred completion").
  bool Defer = false;
  std::optional<RepeatMemo> Kept;
  /// The launch's buffers' states before its first attempt, for a kept
  /// launch that changes them (RepeatMemo::Before).
  std::vector<RepeatMemo::Found> Before;

  /// The model policy: the table key and the devices as the planner saw
  /// them (ranges on these are timed and recorded), events used per GPU.
  bool Timed = false;
  PerfKey Key;
  /// The model policy's decision this launch runs (searched or kept), and
  /// noteModelOutcome(), which gives the planner its measured time: a
  /// split measured to lose against the best single device is corrected
  /// at the next launch (ModelPartitioner::recordOutcome).
  ModelState::CachedDecision *Decided = nullptr;
  void noteModelOutcome(double Ms);
  std::map<Location, SplitDevice> SplitDevs;
  std::map<Location, size_t> EventsUsed;
  /// CLEAVE_LOG=time: every range's time on stderr (GPU ranges timed with
  /// the model policy's events).
  bool LogTime;

public:
  /// CLEAVE_LOG=phases: the host time between the steps of the launch, one
  /// stderr line per launch (docs/runtime.md). Off, mark() is one test.
  struct PhaseTrace {
    explicit PhaseTrace(bool On) : On(On) {}
    bool On;
    std::chrono::steady_clock::time_point Start =
        On ? std::chrono::steady_clock::now()
           : std::chrono::steady_clock::time_point();
    std::chrono::steady_clock::time_point Last = Start;
    std::string Line;
    void mark(std::string_view Step, std::string_view Dev = {}) {
      if (!On)
        return;
      auto Now = std::chrono::steady_clock::now();
      char Us[32];
      std::snprintf(Us, sizeof(Us), "=%.1f",
                    std::chrono::duration<double, std::micro>(Now - Last)
                        .count());
      Line += ' ';
      Line += Step;
      if (!Dev.empty()) {
        Line += ':';
        Line += Dev;
      }
      Line += Us;
      Last = Now;
    }
    /// Work another thread did: \p Step on \p Dev began \p Wait us after
    /// it was handed over and took \p Took us ("Step:Dev=Wait+Took").
    void note(std::string_view Step, std::string_view Dev, double Wait,
              double Took) {
      if (!On)
        return;
      char Us[48];
      std::snprintf(Us, sizeof(Us), "=%.1f+%.1f", Wait, Took);
      Line += ' ';
      Line += Step;
      Line += ':';
      Line += Dev;
      Line += Us;
    }
    /// The line, with the whole launch's time; empty when off.
    std::string finish(std::string_view Kernel) const {
      if (!On)
        return {};
      char Us[48];
      std::snprintf(Us, sizeof(Us), " total=%.1f us\n",
                    std::chrono::duration<double, std::micro>(
                        std::chrono::steady_clock::now() - Start)
                        .count());
      return "cleave phases " + std::string(Kernel) + ":" + Line + Us;
    }
  };
  PhaseTrace Phases;

private:

  const FootprintProgram *Fp = nullptr;
  uint64_t Total = 0;
  LaunchConfig Config;
  std::vector<PtrArg> Ptrs;
  /// The buffer addresses in the by-value arguments, when the kernel
  /// dereferences them (runWithArgumentPointers()); argsFor() translates.
  std::vector<ArgumentPointer> ArgPointers;
  std::map<uint64_t, std::shared_ptr<Buffer>> BufById;
  std::set<Location> Excluded;
  bool Explicit = false;

  /// The decision for the current ranges.
  Mode M = Mode::Whole;
  Location MergeDev = -1;
  /// Combined outputs (docs/runtime.md): set when the ranges are on more
  /// than one device and the kernel has combined parameters. evaluate()
  /// then leaves those parameters out; each run updates its device's
  /// scratch at Offset, and the partials are combined into the host copy.
  struct CombineUse {
    const BundleCombined *C = nullptr;
    const PtrArg *P = nullptr;
    ByteRange Bytes; ///< of the buffer: every byte the kernel may touch
    uint64_t Offset = 0; ///< in the scratch
  };
  bool Combining = false;
  std::vector<CombineUse> Combines;
  uint64_t CombineBytes = 0;
  /// The footprints decide() evaluated (coarse sets resolved) for the
  /// ranges it kept, for attempt() to take instead of evaluating again.
  std::vector<PartitionRange> DecidedRanges;
  std::vector<RangeUse> DecidedUses;

  // Steps.
  Result checkRequest();
  bool canRun(Location L) const;
  bool canMergeOn(Location L) const;
  double throughput(Location L) const;
  Location bestDevice(const std::vector<PartitionRange> &Ranges) const;
  Result checkPartition(const std::vector<PartitionRange> &P) const;
  /// Footprints of a range; write and read sets of more rows than this are
  /// coarse (LaunchSupport.h, BufferUse).
  static constexpr uint64_t CoarseRows = 64;
  Result evaluate(uint64_t First, uint64_t Count, RangeUse &Out) const;
  void resolveCoarse(const std::vector<PartitionRange> &Ranges,
                     std::vector<RangeUse *> &Uses) const;
  /// The split-refusal rules, the one place both decide() and the model
  /// policy ask. whyNotSplit(): why the kernel runs whole whatever its
  /// footprints say (\p GpuGetsPart: a GPU would run part of the grid);
  /// whyNotMerged(): why writes that are not exact and disjoint cannot be
  /// merged on any of \p Devices. Empty when there is no reason.
  std::string whyNotSplit(bool GpuGetsPart) const;
  std::string whyNotMerged(const std::vector<Location> &Devices) const;
  Result decide(std::vector<PartitionRange> &Ranges);
  /// Fills Combines for the launch, or says why the kernel's combined
  /// parameters cannot be combined.
  std::string setUpCombines();
  bool isCombined(unsigned ArgNo) const;
  std::optional<Failure> allocateScratch(std::vector<RunState> &Runs);
  Result fillScratch(RunState &R, StreamHandle S);
  Result readScratch(RunState &R, StreamHandle S);
  Result combineRuns(const std::vector<RunState> &Runs);
  /// The model policy (ModelPolicy.cpp): a cached decision for the launch's
  /// shape, else a search by the planner. Its steps: setModelKey() (the
  /// performance tables' key), cachedDecision() and keepDecision() (the
  /// cached one, kept until its next search), weighWholeGrid() (bytes per
  /// block, exact writes, the split's bookkeeping), whyModelKeepsWhole(),
  /// countProgramCopies() and hostCopyRates() (the program's own copies and
  /// their rates), searchModel() (the bytes each share misses; the planner).
  Result scheduleByModel(const std::vector<Location> &Devs,
                   std::vector<PartitionRange> &Out);
  using SteadyTime = std::chrono::steady_clock::time_point;
  void setModelKey();
  ModelState::CachedDecision &cachedDecision(const std::vector<Location> &Devs,
                                         uint64_t &Prior);
  bool keepDecision(ModelState::CachedDecision &Cached, uint64_t Prior,
                    bool &CopiesResumed, std::vector<PartitionRange> &Out);
  Result weighWholeGrid(const std::vector<Location> &Devs, SplitRequest &PR,
                        double &Written, bool &Exact);
  std::string whyModelKeepsWhole(const std::vector<Location> &Devs,
                                 const SplitRequest &PR, bool Exact) const;
  void countProgramCopies(ModelState::CachedDecision &Cached, uint64_t Prior,
                          bool CopiesResumed);
  void hostCopyRates(const DeviceProfile &Prof,
                     const std::vector<Location> &Devs, SplitRequest &PR) const;
  SplitResult searchModel(ModelPartitioner &Pl, const std::vector<Location> &Devs,
                         SplitRequest &PR, ModelState::CachedDecision &Cached,
                         bool &AnyStaged, SteadyTime SearchStart);
  /// Bandwidth of a copy from \p Src to \p Dst as the buffer layer makes
  /// it, and of a GPU's pageable host link.
  double pathGBps(const DeviceProfile &Prof, Location Src, Location Dst) const;
  double hostLinkGBps(const DeviceProfile &Prof, Location L,
                      bool ToDevice) const;
  SplitDevice planDevice(Location L, unsigned BlockThreads);
  void recordTime(const RunState &R, double Ms);
  void logTime(const RunState &R, double Ms) const;
  /// The runs of \p Ranges through the phases, again on the remaining
  /// devices after a failure, until they ran (Attempt.cpp).
  Result attempt(std::vector<PartitionRange> Ranges, bool Decide);
  /// One attempt's state, handed from phase to phase.
  struct AttemptState {
    bool Decide = false;
    /// A repeat of Memo's runs; a replay makes Memo's copies again.
    bool Repeat = false, Replay = false;
    /// Queued behind the deferred work (or there was none to queue
    /// behind).
    bool Ordered = false;
    std::vector<RunState> Runs;
    std::map<uint64_t, RangeSet> AllWrites, AllReads;
    /// A device that failed before anything ran: the attempt starts again
    /// without it (failOver()).
    std::optional<Failure> Fail;
    /// Devices whose runs failed once issued, with their errors.
    std::map<Location, Result> Failed;
    /// Plan.Runs before this attempt's.
    size_t PlanMark = 0;
  };
  /// The phases of an attempt, in order: decideRuns() (a repeat's kept
  /// runs, or decide() and each run's footprints; whether the launch queues
  /// behind deferred work), prepareRuns() (scratch, code, inputs moved,
  /// partial buffers on M), issueRuns() (M's first), runCpuRanges(), then
  /// finishDeferred() or waitRuns(), settleFailures(), and mergeRuns() or
  /// commitRuns() with reassignFailed().
  Result decideRuns(std::vector<PartitionRange> &Ranges,
                    std::vector<PartitionRange> &Given, AttemptState &A);
  Result prepareRuns(AttemptState &A);
  Result issueRuns(AttemptState &A);
  void runCpuRanges(AttemptState &A);
  Result finishDeferred(AttemptState &A, std::vector<PartitionRange> &Given);
  void waitRuns(AttemptState &A);
  /// A repeat that ran cleanly, a failed merge device or a kernel's illegal
  /// address end the attempt here (with the result to return).
  std::optional<Result> settleFailures(AttemptState &A);
  Result mergeRuns(AttemptState &A, const std::vector<RunState *> &Redo);
  /// Transfer pipelining (Pipeline.cpp, docs/runtime.md): pipeline()
  /// runs the attempt's GPU runs as chunks on three streams each, the GPUs
  /// at once, when pipelineChunks() finds it worth it for every one of
  /// them (\p Piped; it then replaces prepareRuns() to waitRuns());
  /// landReceived() claims the results sent back, after the run's writes
  /// are committed.
  struct PipeChunk;
  struct PipeRun;
  Result pipeline(AttemptState &A, bool &Piped);
  /// The attempt's GPU runs that may be pipelined, one per GPU, its other
  /// runs all on CPU devices (which work on the host copies the GPUs'
  /// inputs come from); empty when there are none. prepareHostRuns() and
  /// runHostRuns() prepare and run those CPU runs while the GPUs' chunks
  /// run.
  std::vector<RunState *> pipelinedRuns(AttemptState &A);
  /// The rates each of several GPUs pipelining at once sees on the host
  /// links they share (MultiGpuTpsm.h), or, when the profile lacks their
  /// states, a note that says so (Rates empty).
  struct SharedLinks {
    unsigned Gpus = 0;
    std::optional<tpsm::LinkRates> Rates;
    std::string Note;
  };
  std::optional<SharedLinks> sharedLinks(const std::vector<RunState *> &Gpus);
  std::optional<Failure> prepareHostRuns(AttemptState &A);
  void runHostRuns(AttemptState &A);
  bool pipelineChunks(RunState &R, std::vector<PipeChunk> &Chunks,
                      const SharedLinks *Shared);
  bool buildChunks(RunState &R, const std::vector<uint64_t> &Sizes,
                   const std::map<uint64_t, RangeSet> &Missing,
                   std::map<uint64_t, RangeSet> Sent,
                   std::vector<PipeChunk> &Chunks);
  void planReceives(RunState &R, std::vector<PipeChunk> &Chunks);
  Result issueChunks(RunState &R, std::vector<PipeChunk> &Chunks,
                     size_t &Launched, size_t &SendsDone);
  void runPipe(PipeRun &P);
  void waitPipe(PipeRun &P, std::chrono::steady_clock::time_point Start);
  void landPipe(AttemptState &A, PipeRun &P, LaunchPlan::Pipelined &PP);
  void notePipeline(LaunchPlan::Pipelined &PP,
                    const std::vector<PipeChunk> &Chunks);
  /// The chunk plan's inputs (PipelineModel.cpp): the GPU's host-link
  /// rates from its profile (pinned or pageable as the host copies are),
  /// the bytes each way fitted to the chunks' footprints (\p Missing: what
  /// the run misses; \p First: what goes with the first chunk; \p Upload:
  /// all of it), and the kernel time from the performance table.
  /// \p Shared: the rates among several GPUs pipelining at once.
  void askChunkModel(RunState &R, const std::map<uint64_t, RangeSet> &Missing,
                     const std::map<uint64_t, RangeSet> &First,
                     uint64_t Upload, ChunkQuery &Q,
                     const SharedLinks *Shared);
  /// Timing event \p Index of GPU \p L for the chunks' kernels (null when
  /// the performance table is not there to take the times);
  /// recordChunkTimes() gives the table what they measured.
  EventHandle chunkTimer(Location L, size_t Index);
  /// The host link of GPU \p L as TPSM sees it, when a share of this
  /// launch there could be pipelined (SplitDevice::PipelineLinks).
  std::optional<tpsm::LinkRates> pipelineLinks(Location L);
  /// Returns the chunks' kernels' time summed (ms; 0 when not timed).
  double recordChunkTimes(const RunState &R,
                          const std::vector<uint64_t> &Counts);
  void landReceived(AttemptState &A);
  Result commitRuns(AttemptState &A);
  /// Recovery (Recover.cpp). failOver(): \p F's device is dropped and its
  /// ranges go to another (false, with \p Err, when none is left);
  /// reassignFailed(): the failed runs of an exact or whole launch, after
  /// the rest committed; rerunOnMerge(): a run again on M, in place;
  /// mergeDeviceFailed(): M failed, which ends the launch.
  bool failOver(const Failure &F, size_t PlanMark,
                std::vector<PartitionRange> &Ranges, Result &Err);
  Result reassignFailed(AttemptState &A, const std::vector<RunState *> &Redo,
                        std::vector<PartitionRange> &Ranges);
  Result rerunOnMerge(RunState &R, std::vector<RunState> &Runs);
  Result mergeDeviceFailed(const Result &Res, std::vector<RunState> &Runs);
  /// Partial buffers on M of the current attempt.
  std::vector<DeviceAddr> MergeTemps;
  void freeMergeTemps();
  Result makeRuns(std::vector<PartitionRange> &Ranges, bool Decide,
                  std::vector<RunState> &Runs,
                  std::map<uint64_t, RangeSet> &AllWrites,
                  std::map<uint64_t, RangeSet> &AllReads);
  /// Whether the first attempt with \p Given repeats Memo, and the runs
  /// that do; keeps a launch that may be repeated.
  bool repeats(const std::vector<PartitionRange> &Given) const;
  /// Deferred completion (docs/runtime.md): whether this launch may queue
  /// behind earlier deferred work (a repeat) rather than wait for it;
  /// orderRuns() queues the runs' GPUs so; deferRuns() records the
  /// launch's own work as deferred, or waits for the workers' GPUs when a
  /// run failed.
  bool mayChain() const;
  /// A kernel that dereferences pointers it loads from memory (a pointer
  /// inside a struct argument, a table of pointers): the engine can neither
  /// translate them for a device nor see what they touch. It runs whole on
  /// a device that works on the buffers' host copies, where the program's
  /// pointers are valid, with every buffer current there before and
  /// written there after; where no such device can run it, the launch
  /// fails and says why. Never a run on a GPU, which would dereference host
  /// copies' addresses.
  Result runOnHostMemory(const BundleIssue &Why);
  /// A kernel whose by-value arguments hold the pointers it dereferences
  /// (usesArgumentPointers()) runs whole on a GPU with those translated.
  Result runWithArgumentPointers();
  /// Whether a launch that is not a repeat may chain too: every range on
  /// one GPU, which alone has deferred work, and every variable the
  /// kernel reads current there.
  bool chainsAlone(const std::vector<PartitionRange> &Ranges) const;
  /// A repeat whose runs all ran: a replay marks the kept launch's reads
  /// and writes, as that launch did; a plain repeat changed nothing.
  Result finishRepeat(std::vector<RunState> &Runs, bool Replay);
  bool orderRuns(const std::vector<RunState> &Runs);
  bool deferRuns(std::vector<RunState> &Runs, bool NoneFailed);
  std::vector<RunState> repeatRuns(std::vector<PartitionRange> &Ranges);
  void keepRuns(std::vector<RunState> &Runs,
                std::vector<PartitionRange> Given);
  /// Before a run: stage() (the variant's code, variables, replicas, the
  /// copies to make), moveIn() (run those copies), finish() (arguments,
  /// the plan's entry). prepareAll() does the three for every run, the
  /// copies of different devices at once.
  Result prepare(RunState &R, bool IsMergeDevice);
  Result stage(RunState &R, bool IsMergeDevice);
  Result moveIn(RunState &R, bool Concurrent,
                const std::map<uint64_t, RangeSet> *Written = nullptr);
  void settlePulls(RunState &R, bool Waited);
  Result finish(RunState &R, bool Replay = false);
  std::optional<Failure> prepareAll(std::vector<RunState> &Runs,
                                    bool Staged = false);
  /// issue() is timeEvents() (the launching thread's: the events are the
  /// engine's) then issueLaunch() (an issue worker may run it).
  Result issue(RunState &R);
  void timeEvents(RunState &R);
  Result issueLaunch(RunState &R);
  /// Which GPU runs phase 2 hands to issue workers (RunState::Pooled).
  void choosePooled(std::vector<RunState> &Runs);
  /// Wakes the issue workers that choosePooled() would pick for \p Ranges,
  /// before the launch plans and moves its inputs (IssuePool::wake).
  void wakeIssueWorkers(const std::vector<PartitionRange> &Ranges);
  Result runCpu(RunState &R);
  /// The reorganization step (Reorganize.cpp, docs/reorganize.md): for a
  /// run of the whole grid of a kernel with an inspector and a reorganized
  /// variant, reorganize() runs it in place of the launch when the model
  /// (or CLEAVE_TUNE=reorganize=force) says so (\p Ran), waited for.
  Result reorganize(RunState &R, bool &Ran);
  std::string whyNotReorganized(const RunState &R) const;
  ReorganizeHistory &reorganizeHistory(const RunState &R,
                                       std::string &CacheKernel);
  Result reorganizeStep(RunState &R, ReorganizeHistory &H,
                        const std::string &CacheKernel, unsigned Lanes,
                        LaunchPlan::Run *PlanRun);
  /// The step's inspector and sort over the first \p Blocks blocks (all
  /// of them when the step is decided: then the reorganized variant runs
  /// behind them): the counts' statistics and the parts' times.
  Result inspectAndSort(RunState &R, ReorganizeHistory &H, unsigned Lanes,
                        uint32_t Blocks, bool RunReorganized, TripStats &S,
                        double &InspectorMs, double &SortMs, double &RunMs,
                        std::vector<int32_t> &Perm, unsigned &KeyBits);
  /// The plan's lines on the counts of \p Sampled of S.Threads threads.
  void describeCounts(const RunState &R, const TripStats &S, unsigned Lanes,
                      unsigned KeyBits, uint64_t Sampled, bool OnGpu);
  Result runVariantWhole(RunState &R, const std::string &Entry,
                         const cleave_cpu_kernel_desc *Cpu, void *Extra,
                         bool Wait = true, uint32_t GridX = 0);
  Result inspectTripCounts(RunState &R, std::vector<int32_t> &Counts,
                           uint32_t Blocks);
  Result runReorganizedVariant(RunState &R, std::vector<int32_t> &Perm);
  /// Routing (ReorganizeRoute.cpp): the step's device first, then the
  /// others that may take a part of the sorted order.
  std::vector<Location> routeCandidates(Location Home) const;
  /// With CLEAVE_TUNE=route: the sorted order cut over the devices where
  /// the model predicts a gain (or forced), run, and merged into R.Dev
  /// (\p Done; \p RunMs the whole of it).
  Result routeReorganized(RunState &R, ReorganizeHistory &H,
                          const std::vector<int32_t> &Counts,
                          std::vector<int32_t> &Perm, bool &Done,
                          double &RunMs);
  /// The model policy's split of a kernel with the variants gives way to
  /// the whole grid on its best single device, whose step routes the
  /// sorted order, when the last routed step of this kernel and size took
  /// less than the split is predicted to (always with route=force).
  void routeInsteadOfSplit(const std::vector<Location> &Devs,
                           SplitResult &Res);
  /// Why the policy's split gave way (routeInsteadOfSplit), for the plan.
  std::string RouteOverride;
  Result runRouted(RunState &R, const std::vector<Location> &Devs,
                   const RouteResult &Route, const RangeUse &Uses,
                   std::vector<int32_t> &Perm, std::vector<double> &Ms);
  /// Each routed device's changed bytes of the write hulls (\p Before:
  /// their contents before the runs) into \p Home, which alone holds them
  /// after.
  Result mergeRouted(Location Home, const std::vector<Location> &Devs,
                     const RouteResult &Route, const RangeUse &Uses,
                     const std::map<uint64_t, std::vector<char>> &Before);
  /// The step on a GPU with its sort kernels: counts and permutation stay
  /// on the GPU (\p Sort null: the host sorts).
  ModelState::GpuSort *gpuSort(Location L);
  Result allocateGpuSort(Device &D, ModelState::GpuSort &G, uint32_t N);
  Result queueGpuSort(Device &D, ModelState::GpuSort &G, uint32_t N,
                      unsigned KeyBits);
  Result gpuStep(RunState &R, ModelState::GpuSort &Sort, unsigned Lanes,
                 unsigned KeyBits, uint32_t Blocks, bool RunReorganized,
                 TripStats &S, double &InspectorMs, double &SortMs,
                 double &RunMs);
  unsigned slabDim() const;
  uint64_t slabBlocks(unsigned Dim) const;
  std::vector<PartitionRange> alignToSlabs(std::vector<PartitionRange> R) const;
  Result launchRebased(Location Dev, uint64_t First, uint64_t Count,
                       const std::vector<void *> &ArgPtrs, bool &Used);
  Result launchOne(Location Dev, bool GpuMerge, const std::string &Entry,
                   const cleave_cpu_kernel_desc *CpuDesc, uint64_t First,
                   uint64_t Count, std::vector<void *> &ArgPtrs,
                   std::vector<uint32_t> &PartParams);
  Result merge(RunState &R, RunState &OnM);
  Result argsFor(RunState &R, Location Dev);
  Result commitWrites(const RunState &R);
  /// What the runs that ran read, per buffer and device, for where the
  /// next direct host copy sends its bytes, which pushed bytes are pending
  /// and which results a later launch reads where
  /// (BufferManager::noteLaunchReads).
  void noteReads(const std::vector<RunState> &Runs);
  void dropUnproduced(const RunState &R);
  Location fallbackFor(Location Failed,
                       const std::vector<PartitionRange> &Ranges) const;
  void report(Location Failed, const Result &Err,
              const std::vector<std::pair<uint64_t, uint64_t>> &Blocks,
              Location To);
  std::string name(Location L) const { return locationName(Bufs, L); }
  bool isGpu(Location L) const {
    return Bufs.device(L).kind() == DeviceKind::Cuda;
  }
  bool isCpu(Location L) const {
    return Bufs.device(L).kind() == DeviceKind::Cpu;
  }
};

} // namespace engine

struct Engine::Impl {
  using RepeatMemo = engine::RepeatMemo;
  using ModelState = engine::ModelState;
  using CombineScratch = engine::CombineScratch;

  using PipelineState = engine::PipelineState;

  std::mutex Mutex;
  std::vector<std::unique_ptr<Program>> Programs;
  /// Per requested kernel, its last launch if that changed nothing.
  std::map<const KernelHandle *, RepeatMemo> Repeats;
  /// Per requested kernel, its last launches (one per request and state
  /// found, the most recent last, at most MaxReplays) that changed their
  /// buffers' state, to replay from the same state (RepeatMemo::Replay):
  /// the steps of an iteration that swaps its buffers, for instance.
  std::map<const KernelHandle *, std::vector<RepeatMemo>> Replays;
  static constexpr size_t MaxReplays = 8;
  /// The runtime's options (Engine's constructor), before what reads them.
  Options Opts;
  ModelState Model{Opts};
  CombineScratch Scratch;
  PipelineState Pipe;
  /// Co-run lanes (KernelLaunchRequest::Slice): (device, lane, priority) ->
  /// a stream of that device, created at the lane's first slice.
  std::map<std::tuple<Location, unsigned, int>, StreamHandle> Lanes;
  /// Last, so its threads stop before anything they could touch goes.
  IssuePool Pool{Opts.Tune};

  explicit Impl(const Options &O) : Opts(O) {}
};

} // namespace rt
} // namespace cleave

#endif
