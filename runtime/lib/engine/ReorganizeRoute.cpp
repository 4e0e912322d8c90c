//===- ReorganizeRoute.cpp - A reorganized launch routed over devices -----===//
//
// Part of Cleave's runtime (no LLVM). See docs/reorganize.md, "Routing".
// Once the step's inspector and sort have given the launch's sorted order,
// the order may be cut into contiguous block ranges, one per device
// (routeSorted, Balancer.h: each device's time is its measured rate times
// its lanes' work over its range, the warp maxima on a GPU, the counts on
// a CPU), so that the heaviest items go where they cost least:
//
//   * each device runs the reorganized variant over its range of sorted
//     blocks: a CPU device as blocks [First, First + Count) of the launch;
//     a GPU as a launch of Count blocks with perm advanced to the range
//     (cleave-reorganize refuses kernels that read gridDim.x, or blockIdx.x
//     other than through the item index, so the two are the same);
//   * each item's outputs are written by one device, but a range's items
//     are scattered over the buffers, which the runtime's footprints (block
//     ranges) cannot describe. So every device is first given the current
//     bytes of the whole grid's reads and write hulls, and afterwards each
//     written byte that differs on a device from its content before the
//     launch is taken into the step's device, which then alone holds the
//     hulls. A byte no device wrote, or that one wrote with its old value,
//     is the same everywhere, so the merge is exact.
//
//===----------------------------------------------------------------------===//

#include "LaunchContext.h"

#include "../scheduler/Balancer.h"

namespace cleave {
namespace rt {
namespace engine {

namespace {

using Clock = std::chrono::steady_clock;

double msFrom(Clock::time_point T) {
  return std::chrono::duration<double, std::milli>(Clock::now() - T).count();
}

std::string fmtMs(double V) {
  char B[32];
  std::snprintf(B, sizeof(B), "%.3f", V);
  return B;
}

/// A device's cost of running a range besides its work: launch and
/// synchronisation (ms).
constexpr double RouteFixedMs = 0.02;
/// What a routed launch must predict to gain over the whole step on one
/// device, as a share of that (timing noise, a model fitted on few runs).
constexpr double RouteMinGain = 0.05;
/// An unmeasured device is probed with this share of the sorted order's
/// light tail (at least a block).
constexpr uint64_t RouteProbeShare = 1024;
/// Before the merge is measured: its copies at this rate (bytes per ms).
constexpr double RouteMergeBytesPerMs = 1e7;

/// Reads or writes \p Bytes of \p L's copy at \p Addr.
Result copyOut(BufferManager &Bufs, bool Cpu, Location L, DeviceAddr Addr,
               void *Dst, uint64_t Bytes) {
  if (Cpu) {
    std::memcpy(Dst, reinterpret_cast<const void *>(uintptr_t(Addr)), Bytes);
    return Result::success();
  }
  return Bufs.device(L).copyDeviceToHost(Dst, Addr, Bytes);
}

Result copyIn(BufferManager &Bufs, bool Cpu, Location L, DeviceAddr Addr,
              const void *Src, uint64_t Bytes) {
  if (Cpu) {
    std::memcpy(reinterpret_cast<void *>(uintptr_t(Addr)), Src, Bytes);
    return Result::success();
  }
  return Bufs.device(L).copyHostToDevice(Addr, Src, Bytes);
}

/// Takes into \p Merged every byte of \p Run that differs from \p Before.
void takeChanged(char *Merged, const char *Run, const char *Before,
                 uint64_t Bytes) {
  constexpr uint64_t Chunk = 64;
  for (uint64_t At = 0; At < Bytes; At += Chunk) {
    uint64_t N = std::min(Chunk, Bytes - At);
    if (std::memcmp(Run + At, Before + At, N) == 0)
      continue;
    for (uint64_t I = At; I < At + N; ++I)
      if (Run[I] != Before[I])
        Merged[I] = Run[I];
  }
}

/// A probe: the unmeasured devices (\p Probe) each take a sliver of the
/// sorted order's light tail, the step's device (the first) the rest, to
/// learn their rates. A sliver reaches back to work to measure: threads
/// past the last item, whose counts are 0, sort last.
void probeRoute(const std::vector<RouteDevice> &Models,
                const std::vector<bool> &Probe, uint64_t Blocks,
                RouteResult &Route) {
  uint64_t Tail = Blocks;
  std::fill(Route.Count.begin(), Route.Count.end(), 0);
  for (size_t I = Models.size(); I-- > 1;) {
    if (!Probe[I] || Tail <= 1)
      continue;
    const std::vector<double> &P = *Models[I].Prefix;
    uint64_t Sliver = std::max<uint64_t>(1, Blocks / RouteProbeShare);
    uint64_t End = Tail;
    while (End > 1 && P[End] <= P[End - 1])
      --End;
    uint64_t C = P[End] > P[End - 1] ? Tail - End + Sliver : Sliver;
    C = std::min(C, Tail - 1);
    Tail -= C;
    Route.First[I] = Tail;
    Route.Count[I] = C;
  }
  Route.First[0] = 0;
  Route.Count[0] = Tail;
}

} // namespace

std::vector<Location> LaunchContext::routeCandidates(Location Home) const {
  bool Force = Opts.Tune.Route == RouteMode::Force;
  bool CpuTaken = isCpu(Home);
  std::vector<Location> Out = {Home};
  for (Location L = 0; L < Location(Bufs.numDevices()); ++L) {
    if (L == Home)
      continue;
    if (isCpu(L)) {
      // CPU devices share one executor: their ranges would run one after
      // the other, so the model takes one (force takes every one).
      if (!cpuDesc(Prog, Info.ReorganizedCpu, Info.Params.size() + 1) ||
          (CpuTaken && !Force))
        continue;
      CpuTaken = true;
    }
    Out.push_back(L);
  }
  return Out;
}

void LaunchContext::routeInsteadOfSplit(const std::vector<Location> &Devs,
                                        SplitResult &Res) {
  RouteOverride.clear();
  RouteMode Mode = Opts.Tune.Route;
  size_t Working = 0;
  for (uint64_t B : Res.Blocks)
    Working += B > 0;
  if (Mode == RouteMode::Off || Info.Inspector.empty() || Working < 2 ||
      Opts.Tune.Reorganize == ReorganizeMode::Off ||
      !whyNotForShape(Req.Grid, Req.Block).empty() ||
      Res.Decision.BaseDevice >= Devs.size())
    return;
  size_t Base = Res.Decision.BaseDevice;
  auto It = Model.Routes.find({&Info, Total, Req.Block[0]});
  bool Measured = It != Model.Routes.end() && It->second.StepMs >= 0;
  if (Mode == RouteMode::On &&
      (!Measured || It->second.StepMs >= Res.Decision.PredictedMs))
    return;
  if (Measured)
    Base = std::find(Devs.begin(), Devs.end(), It->second.Home) - Devs.begin();
  if (Base >= Devs.size())
    return;
  std::fill(Res.Blocks.begin(), Res.Blocks.end(), 0);
  Res.Blocks[Base] = Total;
  RouteOverride =
      "route: the policy's split (predicted " +
      fmtMs(Res.Decision.PredictedMs) + " ms) gives way to the step on " +
      name(Devs[Base]) + ", routed: " +
      (Measured
           ? "the last routed step took " + fmtMs(It->second.StepMs) + " ms"
           : std::string("forced"));
}

Result LaunchContext::routeReorganized(RunState &R, ReorganizeHistory &H,
                                       const std::vector<int32_t> &Counts,
                                       std::vector<int32_t> &Perm, bool &Done,
                                       double &RunMs) {
  Done = false;
  bool Force = Opts.Tune.Route == RouteMode::Force;
  std::vector<Location> Devs = routeCandidates(R.Dev);
  if (Devs.size() < 2)
    return Result::success();
  uint32_t BX = Req.Block[0];
  uint64_t Blocks = Req.Grid[0], Threads = Counts.size();
  // The lanes' work over the sorted blocks, per lane width.
  std::map<unsigned, std::vector<double>> Prefix;
  for (Location L : Devs) {
    unsigned Lanes = isGpu(L) ? 32 : 1;
    if (!Prefix.count(Lanes))
      Prefix[Lanes] =
          sortedWorkPrefix(Counts.data(), Perm.data(), Threads, BX, Lanes);
  }
  ModelState::RouteHistory &RH = Model.Routes[{&Info, Blocks, BX}];
  // The step's device: its measured rate, else its reorganized kernel's
  // (the same work, whole), else a nominal one.
  unsigned HomeLanes = isGpu(R.Dev) ? 32 : 1;
  double HomeWork = Prefix[HomeLanes].back();
  double HomeRate = 1e-6;
  if (RH.PerWorkMs.count(R.Dev))
    HomeRate = RH.PerWorkMs[R.Dev];
  else if (H.ReorganizedMs > 0 && H.WarpMaxSorted > 0)
    HomeRate = H.ReorganizedMs / H.WarpMaxSorted;
  std::vector<RouteDevice> Models(Devs.size());
  std::vector<bool> Probe(Devs.size(), false);
  bool Probing = false;
  for (size_t I = 0; I < Devs.size(); ++I) {
    RouteDevice &M = Models[I];
    M.Name = name(Devs[I]);
    M.Lanes = isGpu(Devs[I]) ? 32 : 1;
    M.Prefix = &Prefix[M.Lanes];
    M.Helper = isCpu(Devs[I]) && isGpu(R.Dev);
    M.Fixed = RouteFixedMs;
    auto It = RH.PerWorkMs.find(Devs[I]);
    if (I == 0)
      M.PerWork = HomeRate;
    else if (It != RH.PerWorkMs.end())
      M.PerWork = It->second;
    else {
      // Unmeasured: as fast as the step's device on the whole grid.
      M.PerWork = HomeRate * HomeWork / std::max(1.0, M.Prefix->back());
      Probe[I] = !Force && !RH.Probed.count(Devs[I]);
      Probing |= Probe[I];
      if (!Force && !Probe[I])
        M.PerWork = 1e30; // probed, nothing measured: never again
    }
  }
  BalanceOptions O;
  O.MinHelperGain = Force ? -1e300 : RouteMinGain;
  RouteResult Route;
  if (Result Res = routeSorted(Models, Blocks, O, Route); !Res.ok())
    return Res;
  // The merge's copies: every write hull read from each device with work
  // and written back to the step's device.
  RangeUse Uses;
  if (Result Res = evaluate(0, Total, Uses); !Res.ok()) {
    Plan.Reorganize.push_back("route: not routed: the footprints: " +
                              Res.message());
    return Result::success();
  }
  uint64_t WrittenBytes = 0;
  for (auto &[Id, U] : Uses)
    WrittenBytes += hull(U.Writes).size();
  unsigned Working = 0;
  for (uint64_t C : Route.Count)
    Working += C > 0;
  double MergeMs = RH.MergeMs >= 0 ? RH.MergeMs
                                   : double(WrittenBytes) * (Working + 2) /
                                         RouteMergeBytesPerMs;
  double WholeMs = Models[0].Fixed + HomeRate * HomeWork;
  double RoutedMs = Route.Makespan + MergeMs;
  if (Probing)
    probeRoute(Models, Probe, Blocks, Route);
  std::string Line = "route: whole on " + name(R.Dev) + " " + fmtMs(WholeMs) +
                     " ms, routed " + fmtMs(RoutedMs) + " ms (makespan " +
                     fmtMs(Route.Makespan) + " + merge " + fmtMs(MergeMs) +
                     ", estimated balance ratio " + fmtMs(Route.BalanceRatio) +
                     ")";
  bool Pays = RoutedMs < (1 - RouteMinGain) * WholeMs && Working > 1;
  if (!Force && !Probing && !Pays) {
    Plan.Reorganize.push_back(
        Line + ": whole on " + name(R.Dev) +
        (Route.HelpersDropped ? " (the helpers did not pay)" : std::string()));
    return Result::success();
  }
  Plan.Reorganize.push_back(Line + ": " +
                            (Force     ? "forced"
                             : Probing ? "probing the unmeasured devices"
                                       : "routed"));
  for (size_t I = 0; I < Devs.size(); ++I)
    if (Probe[I])
      RH.Probed.insert(Devs[I]);
  std::vector<double> Ms;
  auto T0 = Clock::now();
  if (Result Res = runRouted(R, Devs, Route, Uses, Perm, Ms); !Res.ok())
    return Res;
  RunMs = msFrom(T0);
  double RunsMs = 0;
  for (size_t I = 0; I < Devs.size(); ++I) {
    if (!Route.Count[I])
      continue;
    RunsMs = std::max(RunsMs, Ms[I]);
    const std::vector<double> &P = *Models[I].Prefix;
    double Work = P[Route.First[I] + Route.Count[I]] - P[Route.First[I]];
    Plan.Reorganize.push_back(
        "route: " + name(Devs[I]) + " sorted blocks [" +
        std::to_string(Route.First[I]) + ", " +
        std::to_string(Route.First[I] + Route.Count[I]) + "): predicted " +
        fmtMs(Models[I].Fixed + Models[I].PerWork * Work) + " ms, measured " +
        fmtMs(Ms[I]) + " ms");
    if (Work > 0 && Ms[I] > 0) {
      double Rate = std::max(0.0, Ms[I] - Models[I].Fixed) / Work;
      auto [It, New] = RH.PerWorkMs.try_emplace(Devs[I], Rate);
      if (!New)
        It->second = 0.5 * (It->second + Rate);
    }
  }
  double Merged = std::max(0.0, RunMs - RunsMs);
  RH.MergeMs = RH.MergeMs < 0 ? Merged : 0.5 * (RH.MergeMs + Merged);
  Plan.Reorganize.push_back("route: merged " + std::to_string(WrittenBytes) +
                            " written bytes into " + name(R.Dev) + " in " +
                            fmtMs(Merged) + " ms");
  RH.Home = R.Dev;
  Done = true;
  return Result::success();
}

Result LaunchContext::runRouted(RunState &R, const std::vector<Location> &Devs,
                                const RouteResult &Route, const RangeUse &Uses,
                                std::vector<int32_t> &Perm,
                                std::vector<double> &Ms) {
  Location Home = R.Dev;
  Ms.assign(Devs.size(), 0);
  if (isGpu(Home))
    if (Result Res = Bufs.device(Home).synchronizeStream(runStream(Home));
        !Res.ok())
      return Res;
  // Every working device holds the whole grid's reads and write hulls.
  for (size_t I = 0; I < Devs.size(); ++I) {
    if (!Route.Count[I] && Devs[I] != Home)
      continue;
    for (const auto &[Id, U] : Uses) {
      Buffer &B = *BufById.at(Id);
      for (const ByteRange &Rd : U.Reads.ranges())
        if (Result Res = Bufs.makeValid(B, Devs[I], Rd); !Res.ok())
          return Res;
      if (ByteRange W = hull(U.Writes); !W.empty())
        if (Result Res = Bufs.makeValid(B, Devs[I], W); !Res.ok())
          return Res;
    }
  }
  // The write hulls before the launch, from the step's device.
  std::map<uint64_t, std::vector<char>> Before;
  for (const auto &[Id, U] : Uses) {
    ByteRange W = hull(U.Writes);
    if (W.empty())
      continue;
    DeviceAddr A = 0;
    if (Result Res = Bufs.addressOn(*BufById.at(Id), Home, W.Lo, A); !Res.ok())
      return Res;
    std::vector<char> &S = Before[Id];
    S.resize(W.size());
    if (Result Res = copyOut(Bufs, isCpu(Home), Home, A, S.data(), S.size());
        !Res.ok())
      return Res;
  }
  // The GPUs' ranges are queued first, the CPU's run while they work.
  std::vector<RunState> Runs(Devs.size());
  std::vector<DeviceAddr> PermOn(Devs.size(), 0);
  std::vector<std::pair<EventHandle, EventHandle>> Marks(Devs.size());
  Result Res = Result::success();
  uint64_t BX = Req.Block[0];
  for (size_t I = 0; I < Devs.size() && Res.ok(); ++I) {
    if (!Route.Count[I] || !isGpu(Devs[I]))
      continue;
    Location L = Devs[I];
    Device &D = Bufs.device(L);
    Runs[I].Dev = L;
    Res = argsFor(Runs[I], L);
    FunctionHandle F = nullptr;
    if (Res.ok())
      Res = gpuFunction(Bufs, Prog, L, Info.Reorganized, F);
    if (Res.ok())
      Res = D.allocate(Perm.size() * 4, PermOn[I]);
    if (Res.ok())
      Res = D.copyHostToDevice(PermOn[I], Perm.data(), Perm.size() * 4);
    if (!Res.ok())
      break;
    size_t &Used = EventsUsed[L];
    Marks[I] = {Model.event(Bufs, L, Used), Model.event(Bufs, L, Used + 1)};
    Used += 2;
    DeviceAddr Part = PermOn[I] + Route.First[I] * BX * 4;
    std::vector<void *> Args = Runs[I].ArgPtrs;
    Args.push_back(&Part);
    uint32_t Grid[3] = {uint32_t(Route.Count[I]), 1, 1};
    StreamHandle St = D.internalStream(0);
    if (Marks[I].first)
      (void)D.recordEvent(Marks[I].first, St);
    Res = D.launchKernel(F, Grid, Req.Block, Req.DynamicSharedBytes, St,
                         Args.data());
    if (Marks[I].second && Res.ok())
      (void)D.recordEvent(Marks[I].second, St);
  }
  const cleave_cpu_kernel_desc *Cpu =
      cpuDesc(Prog, Info.ReorganizedCpu, Info.Params.size() + 1);
  for (size_t I = 0; I < Devs.size() && Res.ok(); ++I) {
    if (!Route.Count[I] || !isCpu(Devs[I]))
      continue;
    Runs[I].Dev = Devs[I];
    Res = argsFor(Runs[I], Devs[I]);
    if (!Res.ok())
      break;
    int32_t *P = Perm.data();
    std::vector<void *> Args = Runs[I].ArgPtrs;
    Args.push_back(&P);
    cleave_cpu_launch L;
    for (int X = 0; X < 3; ++X) {
      L.grid[X] = Req.Grid[X];
      L.block[X] = Req.Block[X];
    }
    L.dynamic_shared_bytes = Req.DynamicSharedBytes;
    auto T = Clock::now();
    Res = Exec.launch(*Cpu, Args.data(), L, Route.First[I], Route.Count[I]);
    Ms[I] = msFrom(T);
  }
  for (size_t I = 0; I < Devs.size(); ++I) {
    if (!Route.Count[I] || !isGpu(Devs[I]))
      continue;
    Device &D = Bufs.device(Devs[I]);
    Result S = D.synchronizeStream(D.internalStream(0));
    if (Res.ok())
      Res = S;
    float T = 0;
    if (Res.ok() && Marks[I].first && Marks[I].second &&
        D.elapsedTime(Marks[I].first, Marks[I].second, T).ok())
      Ms[I] = T;
  }
  for (size_t I = 0; I < Devs.size(); ++I)
    if (PermOn[I])
      (void)Bufs.device(Devs[I]).free(PermOn[I]);
  if (!Res.ok())
    return Res;
  return mergeRouted(Home, Devs, Route, Uses, Before);
}

Result LaunchContext::mergeRouted(
    Location Home, const std::vector<Location> &Devs, const RouteResult &Route,
    const RangeUse &Uses, const std::map<uint64_t, std::vector<char>> &Before) {
  for (auto &[Id, S] : Before) {
    Buffer &B = *BufById.at(Id);
    ByteRange W = hull(Uses.at(Id).Writes);
    DeviceAddr HomeAt = 0;
    if (Result E = Bufs.addressOn(B, Home, W.Lo, HomeAt); !E.ok())
      return E;
    std::vector<char> Merged(S.size()), Run(S.size());
    if (Result E =
            copyOut(Bufs, isCpu(Home), Home, HomeAt, Merged.data(), S.size());
        !E.ok())
      return E;
    bool Changed = false;
    for (size_t I = 1; I < Devs.size(); ++I) {
      if (!Route.Count[I])
        continue;
      DeviceAddr At = 0;
      if (Result E = Bufs.addressOn(B, Devs[I], W.Lo, At); !E.ok())
        return E;
      if (Result E =
              copyOut(Bufs, isCpu(Devs[I]), Devs[I], At, Run.data(), S.size());
          !E.ok())
        return E;
      takeChanged(Merged.data(), Run.data(), S.data(), S.size());
      Changed = true;
    }
    if (Changed)
      if (Result E =
              copyIn(Bufs, isCpu(Home), Home, HomeAt, Merged.data(), S.size());
          !E.ok())
        return E;
    if (Result E = Bufs.markWritten(B, Home, W); !E.ok())
      return E;
  }
  return Result::success();
}

} // namespace engine
} // namespace rt
} // namespace cleave
