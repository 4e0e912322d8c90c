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

corun::SmLimits gateSm(BufferManager &Bufs, Location Dev,
                       const CoRunGateOptions &O) {
  corun::SmLimits Sm = O.Sm;
  if (O.UseDeviceSms)
    Sm.Sms =
        Dev >= 0 ? std::max(1u, Bufs.device(Dev).properties().ComputeUnits) : 1;
  return Sm;
}

std::string fmt(const char *Format, double A) {
  char Buf[64];
  std::snprintf(Buf, sizeof(Buf), Format, A);
  return Buf;
}

} // namespace

CoRunGate::CoRunGate(Engine &E, CoRunGateOptions O)
    : E(E), Opts(std::move(O)), Dev(gateDevice(E.buffers())),
      Sched(gateSm(E.buffers(), Dev, Opts), Opts.Scheduler) {
  Opts.Sm = gateSm(E.buffers(), Dev, Opts);
  OnGpu = Dev >= 0 && E.buffers().device(Dev).kind() == DeviceKind::Cuda;
}

uint64_t CoRunGate::minSlice(uint64_t Blocks) const {
  // About DefaultSlices slices, each whole waves of the device's SMs: the
  // fewer slices, the less their launches cost; the more, the sooner a
  // pair forms and a more urgent launch gets its turn (§3.4 keeps the
  // overhead of a slice under 2 %; docs/coschedule.md).
  uint64_t Sms = Opts.Sm.Sms;
  uint64_t N =
      (Blocks + Opts.DefaultSlices - 1) / std::max(1u, Opts.DefaultSlices);
  N = std::max<uint64_t>(1, (N + Sms - 1) / Sms) * Sms;
  return std::min(N, Blocks);
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

std::string CoRunGate::describeLocked(uint64_t Id) const {
  auto It = Launches.find(Id);
  if (It == Launches.end())
    return "launch " + std::to_string(Id);
  const Waiting &W = It->second;
  return W.Name + " (launch " + std::to_string(Id) + ", priority " +
         std::to_string(W.Priority) + ")";
}

void CoRunGate::logDecisionLocked() {
  const CoSchedulePlan &P = Sched.plan();
  if (!Opts.LogPlan)
    return;
  auto Now = std::chrono::steady_clock::now();
  if (P.Launches == Logged) {
    ++LoggedRounds;
    return;
  }
  std::string Line;
  // The decision this one replaces: its co-schedules, on the host's clock
  // from its first issue to this one.
  if (!Logged.empty())
    Line =
        "cleave co-schedule: the last decision issued " +
        std::to_string(LoggedRounds) + " co-schedule(s), measured " +
        fmt("%.3f",
            std::chrono::duration<double, std::milli>(Now - LoggedAt).count()) +
        " ms\n";
  Logged = P.Launches;
  LoggedAt = Now;
  LoggedRounds = 1;
  Line += "cleave co-schedule: ";
  uint64_t A = P.Launches[0];
  if (P.Launches.size() == 1) {
    Line += "alone: " + describeLocked(A);
  } else if (!P.Modeled) {
    Line += "side by side, no model inputs: " + describeLocked(A) + " + " +
            describeLocked(P.Launches[1]);
  } else {
    const corun::PairPrediction &X = P.Pair;
    Line += "pair " + describeLocked(A) + " + " +
            describeLocked(P.Launches[1]) + ": " + std::to_string(X.Blocks[0]) +
            ":" + std::to_string(X.Blocks[1]) +
            " blocks per SM, predicted IPC " + fmt("%.3f", X.CoIpc[0]) + " + " +
            fmt("%.3f", X.CoIpc[1]) + " (alone " + fmt("%.3f", X.SoloIpc[0]) +
            ", " + fmt("%.3f", X.SoloIpc[1]) + "), profit " +
            fmt("%.3f", X.Profit) + ", imbalance " + fmt("%.3f", X.Imbalance);
    // Eq. 8: each kernel's slice takes I_K P_K / cIPC_K cycles a round.
    double Cycles = 0;
    for (int I = 0; I < 2; ++I) {
      const Waiting &W = Launches.at(P.Launches[I]);
      if (W.Model && X.CoIpc[I] > 0)
        Cycles =
            std::max(Cycles, W.Model->InstrPerBlock * X.Blocks[I] / X.CoIpc[I]);
    }
    Line += ", predicted " + fmt("%.0f", Cycles) + " cycles a round";
  }
  Line += "; " + std::to_string(P.Evaluated) + " pair(s) weighed, " +
          std::to_string(P.Pruned) + " pruned";
  Line += "; slices";
  for (const auto &[Id, W] : Launches)
    for (const Slice &S : W.Queue)
      Line += " " + std::to_string(Id) + ":[" + std::to_string(S.Begin) + ", " +
              std::to_string(S.End) + ")";
  std::fprintf(stderr, "%s\n", Line.c_str());
}

Result CoRunGate::runSlices(uint64_t Id, std::unique_lock<std::mutex> &Lock,
                            LaunchPlan &Plan) {
  Waiting &W = Launches.at(Id);
  for (;;) {
    Cond.wait(Lock, [&] {
      return !W.Queue.empty() || Sched.complete(Id) || !PumpError.ok();
    });
    if (Sched.complete(Id))
      return Result::success();
    if (W.Queue.empty()) {
      Sched.abandon(Id);
      return PumpError;
    }
    Slice S = W.Queue.front();
    W.Queue.pop_front();
    bool Paired = Sched.plan().Launches.size() == 2;
    (void)pumpLocked(); // the next co-schedule, queued ahead
    Lock.unlock();
    std::string Range = " " + std::to_string(Id) + " [" +
                        std::to_string(S.Begin) + ", " + std::to_string(S.End) +
                        ")";
    if (Opts.Trace)
      Opts.Trace("start" + Range);
    KernelLaunchRequest SR = *W.Req;
    SR.Slice = KernelLaunchRequest::SliceRange{Dev, S.Begin, S.End - S.Begin,
                                               W.Lane, W.Priority};
    SR.MayDefer = false;
    SR.QueuedBehind = nullptr;
    LaunchPlan SP;
    auto Start = std::chrono::steady_clock::now();
    Result R = E.launch(SR, SP);
    double Ms = std::chrono::duration<double, std::milli>(
                    std::chrono::steady_clock::now() - Start)
                    .count();
    if (Opts.Trace)
      Opts.Trace("end" + Range);
    Lock.lock();
    Plan.KernelName = SP.KernelName;
    Plan.BytesMoved += SP.BytesMoved;
    for (LaunchPlan::Run &Run : SP.Runs)
      Plan.Runs.push_back(std::move(Run));
    if (!R.ok()) {
      Sched.abandon(Id);
      W.Queue.clear();
      Cond.notify_all();
      return R;
    }
    if (Result F = Sched.finished(Id, S.End - S.Begin); !F.ok())
      return F;
    ++W.Slices;
    W.Paired += Paired;
    W.Ms += Ms;
    (void)pumpLocked();
    Cond.notify_all();
  }
}

Result CoRunGate::run(const KernelLaunchRequest &Req, uint64_t Stream,
                      int Priority, LaunchPlan &Plan) {
  Plan = LaunchPlan();
  if (Dev < 0 || !Req.Kernel || !Req.Kernel->Info || !Req.Partition.empty() ||
      Req.Slice || (!OnGpu && !Req.Kernel->Cpu))
    return E.launch(Req, Plan);
  const BundleKernel &Info = *Req.Kernel->Info;
  // Pointers loaded from memory run on the host's memory (the engine's
  // rule), never on a lane.
  for (const BundleIssue &Iss : Info.Issues)
    if (Iss.Kind == "loaded-pointer")
      return E.launch(Req, Plan);
  uint64_t Blocks = uint64_t(Req.Grid[0]) * Req.Grid[1] * Req.Grid[2];
  std::string Why = E.sliceRefusal(*Req.Kernel, OnGpu);

  std::unique_lock<std::mutex> Lock(Mutex);
  uint64_t Id = ++NextId;
  PendingLaunch P;
  P.Id = Id;
  P.Kernel = Info.Name;
  for (int D = 0; D < 3; ++D)
    P.Kernel +=
        " " + std::to_string(Req.Grid[D]) + "x" + std::to_string(Req.Block[D]);
  P.Stream = Stream;
  P.Priority = Priority;
  P.Blocks = Blocks;
  SinceOverlap =
      Launches.empty() ? (SinceOverlap == ~0u ? ~0u : SinceOverlap + 1) : 0;
  bool Slices =
      Why.empty() && (Opts.SliceAlone == CoRunGateOptions::AloneRule::Always ||
                      SinceOverlap < Opts.OverlapMemory);
  P.MinSliceBlocks = Slices ? minSlice(Blocks) : Blocks;
  if (Why.empty() && Opts.Inputs)
    P.Model = Opts.Inputs(Req);
  if (Result R = Sched.submit(P); !R.ok())
    return R;
  Waiting &W = Launches[Id];
  W.Req = &Req;
  W.Name = Info.DisplayName.empty() ? Info.Name : Info.DisplayName;
  W.Lane = laneFor(Stream);
  W.Priority = Priority;
  W.Model = P.Model;
  // Alg. 1: an arrival re-plans, with the slices not started yet.
  takeBackLocked();
  (void)pumpLocked();
  Result R = runSlices(Id, Lock, Plan);
  if (Opts.LogPlan)
    std::fprintf(stderr,
                 "cleave co-schedule: %s done: %u slice(s), %u beside another "
                 "launch, measured %.3f ms\n",
                 describeLocked(Id).c_str(), W.Slices, W.Paired, W.Ms);
  Plan.CoSchedule = std::to_string(W.Slices) + " slice(s) on " +
                    E.buffers().device(Dev).name() +
                    (OnGpu ? " lane " + std::to_string(W.Lane) : "") + ", " +
                    std::to_string(W.Paired) + " beside another launch";
  if (!Why.empty())
    Plan.CoSchedule += "; runs whole, not sliced: " + Why;
  Launches.erase(Id);
  // A model error failed the launches waiting for a plan; the next ones
  // plan afresh.
  if (Launches.empty())
    PumpError = Result::success();
  (void)pumpLocked();
  Cond.notify_all();
  return R;
}

} // namespace rt
} // namespace cleave
