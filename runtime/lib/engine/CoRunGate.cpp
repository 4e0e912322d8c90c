//===- CoRunGate.cpp - Co-scheduled launches of several streams -----------===//
//
// Part of Cleave's runtime (no LLVM). See cleave/rt/CoRunGate.h and
// docs/coschedule.md.
//
//===----------------------------------------------------------------------===//

#include "cleave/rt/CoRunGate.h"

#include <algorithm>
#include <chrono>
#include <cstdio>

namespace cleave {
namespace rt {

namespace {

/// The first GPU of \p Bufs, else its first CPU device.
Location gateDevice(BufferManager &Bufs) {
  for (size_t L = 0; L < Bufs.numDevices(); ++L)
    if (Bufs.device(Location(L)).kind() == DeviceKind::Cuda)
      return Location(L);
  for (size_t L = 0; L < Bufs.numDevices(); ++L)
    if (Bufs.device(Location(L)).kind() == DeviceKind::Cpu)
      return Location(L);
  return -1;
}

/// The SM the model runs on: \p O.Sm, or with UseDeviceSms the device's:
/// the device profile's SM (corun::smLimits: limits, schedulers, DRAM
/// latency and bandwidth) when it has the GPU, else O.Sm with the device's
/// SM count.
corun::SmLimits gateSm(Engine &E, Location Dev, const CoRunGateOptions &O) {
  corun::SmLimits Sm = O.Sm;
  if (!O.UseDeviceSms)
    return Sm;
  model::GpuParams G;
  corun::SmLimits FromProfile;
  if (Dev >= 0 && E.gpuModel(Dev, G) && corun::smLimits(G, FromProfile).ok()) {
    FromProfile.MaxStates = O.Sm.MaxStates;
    return FromProfile;
  }
  Sm.Sms = Dev >= 0
               ? std::max(1u, E.buffers().device(Dev).properties().ComputeUnits)
               : 1;
  return Sm;
}

/// \p O with the partition granularity of device \p Dev (0 when it has
/// none, or when partitions are not asked for; \p Why then says why).
CoScheduleOptions gateScheduler(BufferManager &Bufs, Location Dev,
                                CoScheduleOptions O, std::string &Why) {
  O.PartitionGranularity = 0;
  if (O.Partition != CoScheduleOptions::PartitionRule::Never && Dev >= 0)
    O.PartitionGranularity = Bufs.device(Dev).smPartitionGranularity(Why);
  return O;
}

std::string fmt(const char *Format, double A) {
  char Buf[64];
  std::snprintf(Buf, sizeof(Buf), Format, A);
  return Buf;
}

} // namespace

namespace {

std::optional<corun::KernelModelInput>
modelInputOf(const model::LaunchStats &S, const model::KernelResources &R) {
  corun::KernelModelInput Out;
  if (!corun::kernelInputs(S, R, model::GpuParams(), Out).ok())
    return std::nullopt;
  return Out;
}

} // namespace

std::optional<corun::KernelModelInput>
bundleModelInput(const Engine &E, const KernelLaunchRequest &Req) {
  if (!Req.Kernel || !Req.Kernel->Info || !Req.Kernel->Info->CoRun)
    return std::nullopt;
  const BundleKernel &Info = *Req.Kernel->Info;
  const BundleCoRun &C = *Info.CoRun;
  model::LaunchStats S;
  S.Blocks = uint64_t(Req.Grid[0]) * Req.Grid[1] * Req.Grid[2];
  S.ThreadsPerBlock = Req.Block[0] * Req.Block[1] * Req.Block[2];
  // One warp's instructions are one thread's (SIMT); a request is a warp's
  // global load, store or atomic.
  for (unsigned I = 0; I < NumInstrClasses; ++I)
    S.Count[I] = C.PerThread[I];
  S.Requests = C.PerThread[unsigned(InstrClass::GlobalLoad)] +
               C.PerThread[unsigned(InstrClass::GlobalStore)] +
               C.PerThread[unsigned(InstrClass::GlobalAtomic)];
  S.LanesPerRequest = std::min(32u, std::max(1u, S.ThreadsPerBlock));
  S.BytesPerLane = C.BytesPerLane;
  S.SectorsPerRequest = C.SectorsPerRequest;
  model::KernelResources R;
  R.StaticShared = Info.StaticSharedBytes;
  R.DynamicShared = Req.DynamicSharedBytes;
  R.Registers = E.cubinRegisters(*Req.Kernel);
  return modelInputOf(S, R);
}

std::optional<corun::KernelModelInput>
measuredModelInput(const Engine &E, const KernelLaunchRequest &Req,
                   const KernelProfile &P) {
  if (!Req.Kernel || !Req.Kernel->Info)
    return std::nullopt;
  const KernelProfileEntry *En = P.find(Req.Kernel->Info->Name, Req.Grid,
                                        Req.Block, Req.DynamicSharedBytes);
  if (!En)
    return std::nullopt;
  model::LaunchStats S = En->Stats;
  S.Blocks = uint64_t(Req.Grid[0]) * Req.Grid[1] * Req.Grid[2];
  model::KernelResources R = En->Resources;
  if (!R.Registers)
    R.Registers = E.cubinRegisters(*Req.Kernel);
  return modelInputOf(S, R);
}

CoRunGate::CoRunGate(Engine &E, CoRunGateOptions O)
    : E(E), Opts(std::move(O)), Dev(gateDevice(E.buffers())),
      Sched(gateSm(E, Dev, Opts),
            gateScheduler(E.buffers(), Dev, Opts.Scheduler, PartitionWhy)) {
  Opts.Sm = gateSm(E, Dev, Opts);
  OnGpu = Dev >= 0 && E.buffers().device(Dev).kind() == DeviceKind::Cuda;
  model::GpuParams G;
  if (OnGpu && E.gpuModel(Dev, G))
    ClockMHz = G.ClockMHz;
}

std::optional<double>
CoRunGate::profitLocked(const std::string &A, const corun::KernelModelInput &MA,
                        const std::string &B,
                        const corun::KernelModelInput &MB) {
  auto Key = A < B ? std::make_pair(A, B) : std::make_pair(B, A);
  if (auto It = Profits.find(Key); It != Profits.end())
    return It->second;
  if (Queued.insert(Key).second) {
    Jobs.push_back({A, B, MA, MB});
    startPredictorLocked();
  }
  return std::nullopt;
}

void CoRunGate::predictorLoop() {
  std::unique_lock<std::mutex> Lock(Mutex);
  for (;;) {
    JobCond.wait(Lock, [&] {
      return Stopping || !Jobs.empty() || !SliceJobs.empty();
    });
    if (Stopping)
      return;
    if (!SliceJobs.empty()) {
      auto [Name, Record] = std::move(SliceJobs.front());
      SliceJobs.pop_front();
      Predicting = true;
      Lock.unlock();
      sliceJob(Name, Record);
      Lock.lock();
      Predicting = false;
      JobCond.notify_all();
      continue;
    }
    PairJob J = std::move(Jobs.front());
    Jobs.pop_front();
    Predicting = true;
    Lock.unlock();
    // 1-150 ms on a host core (docs/coschedule.md, "Cost"): never on a
    // launch's path.
    corun::SoloPrediction SA, SB;
    corun::PairPrediction P;
    bool SoloOk = corun::predictSolo(J.MA, Opts.Sm, SA).ok() &&
                  corun::predictSolo(J.MB, Opts.Sm, SB).ok();
    // A pair the model cannot weigh gains nothing.
    bool PairOk = SoloOk && corun::predictPair(J.MA, J.MB, SA, SB, Opts.Sm,
                                               P, Opts.Scheduler.Pair)
                                .ok();
    Lock.lock();
    if (SoloOk) {
      Sched.knownSolo(J.A, SA);
      Sched.knownSolo(J.B, SB);
    }
    if (PairOk)
      Sched.knownPair(J.A, J.B, P);
    Profits[J.A < J.B ? std::make_pair(J.A, J.B) : std::make_pair(J.B, J.A)] =
        PairOk ? P.Profit : 0;
    Predicting = false;
    JobCond.notify_all();
  }
}

void CoRunGate::settlePredictions() {
  std::unique_lock<std::mutex> Lock(Mutex);
  JobCond.wait(Lock, [&] {
    return Jobs.empty() && SliceJobs.empty() && !Predicting;
  });
}

bool CoRunGate::worthHoldingLocked(const std::string &Kernel,
                                   const corun::KernelModelInput &Model,
                                   uint64_t Stream, std::string &Why) {
  double Best = -1;
  std::string With;
  bool Pending = false;
  auto Weigh = [&](const std::string &K, const corun::KernelModelInput &M) {
    std::optional<double> P = profitLocked(Kernel, Model, K, M);
    Pending |= !P;
    if (P && *P > Best) {
      Best = *P;
      With = K;
    }
  };
  for (const auto &[Id, W] : Launches)
    if (W.Model && W.Stream != Stream)
      Weigh(W.Key, *W.Model);
  for (const auto &[S, KM] : Recent)
    if (S != Stream)
      Weigh(KM.first, KM.second);
  if (Best >= Opts.HoldProfit)
    return true;
  Why = Best < 0 ? (Pending ? "the model's prediction is not made yet"
                            : "no modeled launch of another stream")
                 : "predicted profit " + fmt("%.3f", Best) + " with " + With +
                       ", under " + fmt("%.3f", Opts.HoldProfit);
  return false;
}

std::string
CoRunGate::passLocked(const KernelLaunchRequest &Req, const std::string &Key,
                      const std::optional<corun::KernelModelInput> &Model,
                      const std::string &Refusal, uint64_t Stream,
                      const std::string &InputsFrom) {
  if (Opts.Hold != CoRunGateOptions::HoldRule::Predicted)
    return {};
  std::string NoGain = !Refusal.empty() ? "it runs whole: " + Refusal
                       : !Model         ? std::string("no model inputs")
                                        : std::string();
  if (NoGain.empty() && !worthHoldingLocked(Key, *Model, Stream, NoGain) &&
      NoGain.empty())
    NoGain = "no gain predicted";
  if (Model) {
    // Keyed by stream: bounded, since destroyed streams' entries stay.
    if (Recent.size() >= 64 && !Recent.count(Stream))
      Recent.clear();
    Recent[Stream] = {Key, *Model};
  }
  // A launch passing through runs beside those in the gate: their
  // measurements (§3.4) are not of the kernel alone.
  if (!NoGain.empty())
    for (auto &[Id, W] : Launches)
      W.Disturbed = true;
  if (!NoGain.empty() && Opts.LogPlan) {
    const BundleKernel &Info = *Req.Kernel->Info;
    std::fprintf(stderr, "cleave co-schedule: passes through: %s: %s%s\n",
                 (Info.DisplayName.empty() ? Info.Name : Info.DisplayName)
                     .c_str(),
                 NoGain.c_str(),
                 Model ? (" (inputs " + InputsFrom + ")").c_str() : "");
  }
  return NoGain;
}

bool CoRunGate::passesThrough(const KernelLaunchRequest &Req,
                              uint64_t Stream) {
  if (Opts.Hold != CoRunGateOptions::HoldRule::Predicted)
    return false;
  std::string Why, Key, From;
  std::optional<corun::KernelModelInput> Model;
  describeArrival(Req, Why, Model, Key, From);
  std::lock_guard<std::mutex> Lock(Mutex);
  if (passLocked(Req, Key, Model, Why, Stream, From).empty())
    return false;
  ++PassedThrough;
  return true;
}

void CoRunGate::describeArrival(const KernelLaunchRequest &Req,
                                std::string &Why,
                                std::optional<corun::KernelModelInput> &Model,
                                std::string &Key, std::string &InputsFrom) {
  const BundleKernel &Info = *Req.Kernel->Info;
  Why = E.sliceRefusal(*Req.Kernel, OnGpu);
  Model.reset();
  InputsFrom.clear();
  if (Why.empty()) {
    if (Opts.Inputs) {
      Model = Opts.Inputs(Req);
      InputsFrom = "given";
    } else if (Opts.Measured &&
               (Model = measuredModelInput(E, Req, *Opts.Measured))) {
      InputsFrom = "measured";
    } else {
      Model = bundleModelInput(E, Req);
      InputsFrom = "estimate";
    }
  }
  Key = Info.Name;
  for (int D = 0; D < 3; ++D)
    Key +=
        " " + std::to_string(Req.Grid[D]) + "x" + std::to_string(Req.Block[D]);
}

uint64_t CoRunGate::passedThrough() {
  std::lock_guard<std::mutex> Lock(Mutex);
  return PassedThrough;
}

uint64_t CoRunGate::engineLaunches() {
  std::lock_guard<std::mutex> Lock(Mutex);
  return EngineLaunches;
}

uint64_t CoRunGate::slicesRun() {
  std::lock_guard<std::mutex> Lock(Mutex);
  return SlicesRun;
}

size_t CoRunGate::pending() {
  std::lock_guard<std::mutex> Lock(Mutex);
  return Launches.size();
}

unsigned CoRunGate::laneFor(uint64_t Stream) {
  if (!OnGpu)
    return 0;
  unsigned Lanes = std::max(1u, Opts.Lanes);
  auto Held = [&](unsigned L) {
    return std::any_of(Launches.begin(), Launches.end(),
                       [&](const auto &W) { return W.second.Lane == L; });
  };
  auto It = StreamLanes.find(Stream);
  if (It == StreamLanes.end())
    It = StreamLanes.emplace(Stream, 1 + NextLane++ % Lanes).first;
  if (!Held(It->second))
    return It->second;
  for (unsigned L = 1; L <= Lanes; ++L)
    if (!Held(L))
      return L;
  return It->second;
}

void CoRunGate::takeBackLocked() {
  for (auto &[Id, W] : Launches)
    while (!W.Queue.empty() && Sched.unissue(W.Queue.back()))
      W.Queue.pop_back();
}

Result CoRunGate::pumpLocked() {
  for (const auto &[Id, W] : Launches)
    if (!W.Queue.empty())
      return Result::success();
  std::vector<Slice> Out;
  if (Result R = Sched.next(Out); !R.ok()) {
    PumpError = R;
    Cond.notify_all();
    return R;
  }
  for (const Slice &S : Out)
    Launches.at(S.Launch).Queue.push_back(S);
  if (!Out.empty()) {
    logDecisionLocked();
    Cond.notify_all();
  }
  return Result::success();
}

Result CoRunGate::partitionStreamLocked(Waiting &W, const Slice &S, Device &D,
                                       StreamHandle Lane, StreamHandle &On) {
  StreamHandle Side[2] = {nullptr, nullptr};
  if (Result R = D.smPartitionStreams(S.SplitSms, Side[0], Side[1]); !R.ok()) {
    // The pair still runs, unsliced, on its lanes.
    if (Opts.LogPlan)
      std::fprintf(stderr,
                   "cleave co-schedule: the SM split of %u SMs failed (%s); "
                   "the pair runs on its lanes\n",
                   S.SplitSms, R.message().c_str());
    return Result::success();
  }
  On = Side[S.Side - 1];
  // The side's stream starts after what the launch queued on its lane
  // (its inputs' copies, its earlier pieces).
  if (!W.SideEvent)
    if (Result R = takeEventLocked(D, W.SideEvent); !R.ok())
      return R;
  if (Result R = D.recordEvent(W.SideEvent, Lane); !R.ok())
    return R;
  return D.waitForEvent(On, D, W.SideEvent);
}

Result CoRunGate::nextPiece(uint64_t Id, StreamHandle Lane, uint64_t &First,
                            uint64_t &Count, StreamHandle &On) {
  std::unique_lock<std::mutex> Lock(Mutex);
  Waiting &W = Launches.at(Id);
  Device *D = Lane ? &E.buffers().device(Dev) : nullptr;
  Count = 0;
  if (W.Out) {
    // The last piece is issued on the lane (on a CPU device: has run).
    const Slice Done = *W.Out;
    W.Out.reset();
    if (Opts.Trace)
      Opts.Trace("end " + std::to_string(Id) + " [" +
                 std::to_string(Done.Begin) + ", " + std::to_string(Done.End) +
                 ")");
    if (D && W.OutOn) {
      // A piece on a partition's stream: the lane (which the engine waits
      // for, and whose event a partner's piece waits for) follows it.
      if (Result R = D->recordEvent(W.SideEvent, W.OutOn); !R.ok())
        return R;
      if (Result R = D->waitForEvent(Lane, *D, W.SideEvent); !R.ok())
        return R;
      W.OutOn = nullptr;
    }
    if (D) {
      // A partner's next piece waits for it: the lane's event marks it.
      if (!W.Event)
        if (Result R = takeEventLocked(*D, W.Event); !R.ok())
          return R;
      if (Result R = D->recordEvent(W.Event, Lane); !R.ok())
        return R;
      W.Recorded = true;
      if (W.TimeEnd)
        if (Result R = D->recordEvent(W.TimeEnd, Lane); !R.ok())
          return R;
    }
    if (Result F = Sched.finished(Id, Done.End - Done.Begin); !F.ok())
      return F;
    (void)pumpLocked();
    Cond.notify_all();
  }
  Cond.wait(Lock, [&] {
    return !W.Queue.empty() || Sched.complete(Id) || !PumpError.ok();
  });
  if (Sched.complete(Id))
    return Result::success();
  if (W.Queue.empty())
    return PumpError;
  Slice S = W.Queue.front();
  W.Queue.pop_front();
  const std::vector<uint64_t> &Pair = Sched.plan().Launches;
  bool Paired = Pair.size() == 2;
  if (D && S.Side) {
    // On its side of an SM split: beside the partner on other SMs, not
    // after it.
    if (Result R = partitionStreamLocked(W, S, *D, Lane, On); !R.ok())
      return R;
    if (On != Lane)
      W.OutOn = On;
  } else if (D && Paired) {
    // Beside its partner: not before the partner's last issued piece is
    // done, so that the two kernels' pieces run together at the ratio
    // instead of one running ahead.
    uint64_t Other = Pair[0] == Id ? Pair[1] : Pair[0];
    auto It = Launches.find(Other);
    if (It != Launches.end() && It->second.Recorded &&
        It->second.Lane != W.Lane)
      if (Result R = D->waitForEvent(Lane, *D, It->second.Event); !R.ok())
        return R;
  }
  (void)pumpLocked(); // the next co-schedule, queued ahead
  if (D && W.Measuring != Waiting::Measure::None && !W.Slices) {
    // §3.4's measurement: the lane's time from the first piece to the
    // last.
    for (EventHandle *Ev : {&W.TimeStart, &W.TimeEnd})
      if (Result R = D->createEvent(*Ev); !R.ok())
        return R;
    if (Result R = D->recordEvent(W.TimeStart, Lane); !R.ok())
      return R;
  }
  W.Out = S;
  ++W.Slices;
  ++SlicesRun;
  W.Paired += Paired;
  if (Opts.Trace)
    Opts.Trace("start " + std::to_string(Id) + " [" + std::to_string(S.Begin) +
               ", " + std::to_string(S.End) + ")");
  First = S.Begin;
  Count = S.End - S.Begin;
  return Result::success();
}

Result CoRunGate::takeEventLocked(Device &D, EventHandle &Out) {
  if (!FreeEvents.empty()) {
    Out = FreeEvents.back();
    FreeEvents.pop_back();
    return Result::success();
  }
  return D.createOrderingEvent(Out);
}

CoRunGate::~CoRunGate() {
  {
    std::lock_guard<std::mutex> Lock(Mutex);
    Stopping = true;
  }
  JobCond.notify_all();
  if (Predictor.joinable())
    Predictor.join();
  // Minimum slices measured and not recorded yet.
  for (auto &[Name, Record] : SliceJobs)
    if (Record)
      sliceJob(Name, Record);
  if (Dev >= 0)
    for (EventHandle Ev : FreeEvents)
      (void)E.buffers().device(Dev).destroyEvent(Ev);
}

Result CoRunGate::runSlices(uint64_t Id, std::unique_lock<std::mutex> &Lock,
                            LaunchPlan &Plan) {
  Waiting &W = Launches.at(Id);
  // One engine launch plans the whole grid once and issues the pieces the
  // scheduler hands out (nextPiece) back to back on the lane; it waits for
  // the lane once, after the last.
  KernelLaunchRequest SR = *W.Req;
  uint64_t Total = uint64_t(SR.Grid[0]) * SR.Grid[1] * SR.Grid[2];
  SR.Slice =
      KernelLaunchRequest::SliceRange{Dev, 0, Total, W.Lane, W.Priority, {}};
  SR.Slice->NextPiece = [this, Id](StreamHandle Lane, uint64_t &First,
                                   uint64_t &Count, StreamHandle &On) {
    return nextPiece(Id, Lane, First, Count, On);
  };
  SR.MayDefer = false;
  SR.QueuedBehind = nullptr;
  ++EngineLaunches;
  Lock.unlock();
  LaunchPlan SP;
  Result R = E.launch(SR, SP);
  Lock.lock();
  Plan.KernelName = SP.KernelName;
  Plan.BytesMoved += SP.BytesMoved;
  for (LaunchPlan::Run &Run : SP.Runs)
    Plan.Runs.push_back(std::move(Run));
  if (R.ok() && !Sched.complete(Id))
    R = Result::error(ErrorCode::Unknown,
                      "co-scheduled launch of " + W.Name +
                          " ended before every block was issued");
  if (!R.ok()) {
    if (!Sched.complete(Id))
      Sched.abandon(Id);
    W.Queue.clear();
    W.Out.reset();
  }
  if (W.Event) {
    FreeEvents.push_back(W.Event);
    W.Event = nullptr;
    W.Recorded = false;
  }
  if (W.SideEvent) {
    FreeEvents.push_back(W.SideEvent);
    W.SideEvent = nullptr;
  }
  Cond.notify_all();
  return R;
}

Result CoRunGate::run(const KernelLaunchRequest &Req, uint64_t Stream,
                      int Priority, LaunchPlan &Plan) {
  Plan = LaunchPlan();
  if (Dev < 0 || !Req.Kernel || !Req.Kernel->Info || !Req.Partition.empty() ||
      Req.Slice || (!OnGpu && !Req.Kernel->Cpu))
    return E.launch(Req, Plan);
  const BundleKernel &Info = *Req.Kernel->Info;
  // Pointers loaded from memory run on the host's memory, and those of
  // by-value arguments are translated (the engine's rules), never on a lane.
  for (const BundleIssue &Iss : Info.Issues)
    if (Iss.Kind == "loaded-pointer" || Iss.Kind == "argument-pointer")
      return E.launch(Req, Plan);
  uint64_t Blocks = uint64_t(Req.Grid[0]) * Req.Grid[1] * Req.Grid[2];
  std::string Why, Key, From;
  std::optional<corun::KernelModelInput> Model;
  describeArrival(Req, Why, Model, Key, From);
  std::string SliceName = sliceName(Req);

  std::unique_lock<std::mutex> Lock(Mutex);
  if (std::string NoGain = passLocked(Req, Key, Model, Why, Stream, From);
      !NoGain.empty()) {
    // The plain path: no holding, no slicing, no lane.
    ++PassedThrough;
    Lock.unlock();
    return E.launch(Req, Plan);
  }
  uint64_t Id = ++NextId;
  PendingLaunch P;
  P.Id = Id;
  P.Kernel = Key;
  P.Stream = Stream;
  P.Priority = Priority;
  P.Blocks = Blocks;
  SinceOverlap =
      Launches.empty() ? (SinceOverlap == ~0u ? ~0u : SinceOverlap + 1) : 0;
  bool Slices =
      Why.empty() && (Opts.SliceAlone == CoRunGateOptions::AloneRule::Always ||
                      SinceOverlap < Opts.OverlapMemory);
  Waiting New;
  New.SliceName = SliceName;
  if (Why.empty())
    lookUpSliceLocked(SliceName);
  if (Slices)
    chooseSliceLocked(New, Blocks, Launches.empty(), Model);
  P.MinSliceBlocks = Slices ? New.MinSlice : Blocks;
  P.Model = Model;
  if (Result R = Sched.submit(P); !R.ok())
    return R;
  // The launches in the gate no longer run alone.
  for (auto &[Other, OW] : Launches)
    OW.Disturbed = true;
  Waiting &W = Launches[Id];
  W = std::move(New);
  W.InputsFrom = Model ? From : "";
  W.Req = &Req;
  W.Name = Info.DisplayName.empty() ? Info.Name : Info.DisplayName;
  W.Lane = laneFor(Stream);
  W.Priority = Priority;
  W.Model = P.Model;
  W.Key = Key;
  W.Stream = Stream;
  // Alg. 1: an arrival re-plans, with the slices not started yet.
  takeBackLocked();
  (void)pumpLocked();
  auto Arrived = std::chrono::steady_clock::now();
  Result R = runSlices(Id, Lock, Plan);
  W.Ms = std::chrono::duration<double, std::milli>(
             std::chrono::steady_clock::now() - Arrived)
             .count();
  W.Disturbed |= !R.ok();
  uint64_t Found = measuredLocked(W, W.Ms);
  std::string MinSlice =
      Slices ? "minimum slice " + std::to_string(W.MinSlice) + " blocks (" +
                   W.SliceFrom + ")"
             : std::string("unsliced");
  if (Opts.LogPlan)
    std::fprintf(stderr,
                 "cleave co-schedule: %s done: %u slice(s), %u beside another "
                 "launch, %s, measured %.3f ms\n",
                 describeLocked(Id).c_str(), W.Slices, W.Paired,
                 MinSlice.c_str(), W.Ms);
  Plan.CoSchedule = std::to_string(W.Slices) + " slice(s) on " +
                    E.buffers().device(Dev).name() +
                    (OnGpu ? " lane " + std::to_string(W.Lane) : "") + ", " +
                    std::to_string(W.Paired) + " beside another launch";
  if (Slices)
    Plan.CoSchedule += ", " + MinSlice;
  if (!Why.empty())
    Plan.CoSchedule += "; runs whole, not sliced: " + Why;
  checkCoRunLocked(Id);
  Launches.erase(Id);
  // A model error failed the launches waiting for a plan; the next ones
  // plan afresh.
  if (Launches.empty())
    PumpError = Result::success();
  (void)pumpLocked();
  Cond.notify_all();
  if (Found) {
    SliceJobs.push_back({SliceName, Found});
    startPredictorLocked();
  }
  return R;
}

} // namespace rt
} // namespace cleave
