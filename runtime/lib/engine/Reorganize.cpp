//===- Reorganize.cpp - A launch's items sorted by trip count -------------===//
//
// Part of Cleave's runtime (no LLVM). See LaunchContext.h and
// docs/reorganize.md ("The runtime step"). A run of the whole grid of a
// kernel that has cleave-reorganize's variants may go through the step:
//
//   1. the inspector (`__cleave_tc_<K>`, its CPU build on a CPU device)
//      writes each launched thread's trip count;
//   2. the counts are sorted, largest first: on a GPU by the radix sort of
//      ReorganizeSort.cu, where they are; else on the host by a counting
//      sort over the key bits they need (ReorganizeModel.h);
//   3. the reorganized variant (`__cleave_ro_<K>`) runs with that
//      permutation: thread i runs item perm[i], whose outputs land at the
//      item's own index.
//
// The model (ReorganizeModel.h) decides, from the original's measured time
// and the counts' statistics, whether the step pays. What it spends to
// learn (timing the original, an exploring step whose inspector runs on a
// sample of the grid) stays within a budget of the program's time so far;
// a kernel whose loop reads per-item streams is refused outright. Until
// the model wants a launch, the API launches it directly
// (Engine::reorganizeSettled), counting it.
//
//===----------------------------------------------------------------------===//

#include "LaunchContext.h"

#ifdef CLEAVE_RT_HAVE_SORT_PTX
#include "ReorganizeSortPtx.inc" // ReorganizeSortPtx: ReorganizeSort.cu
#endif
#ifdef CLEAVE_RT_HAVE_SORT_CUBIN
#include "ReorganizeSortCubin.inc" // ReorganizeSortCubin90: for sm_90
#endif

namespace cleave {
namespace rt {
namespace engine {

namespace {

using Clock = std::chrono::steady_clock;

double msSince(Clock::time_point T) {
  return std::chrono::duration<double, std::milli>(Clock::now() - T).count();
}

std::string fmt(const char *Format, double V) {
  char B[64];
  std::snprintf(B, sizeof(B), Format, V);
  return B;
}

/// Lanes that wait for each other: a GPU's warp. A CPU variant runs a
/// block's threads one after the other, and its thread loop is not
/// vectorized around a loop of data-dependent trip count: one lane, so
/// sorting evens nothing out there (the step runs on a CPU device only
/// when forced).
unsigned lanesOf(bool Gpu) { return Gpu ? 32 : 1; }

} // namespace

const cleave_cpu_kernel_desc *
cpuDesc(const Program &P, const std::string &Symbol, size_t Params) {
  auto It = P.Syms.find(Symbol);
  if (Symbol.empty() || It == P.Syms.end())
    return nullptr;
  auto *D = static_cast<const cleave_cpu_kernel_desc *>(It->second);
  return D && D->fn && D->num_params == Params ? D : nullptr;
}

std::string whyNotForShape(const uint32_t Grid[3], const uint32_t Block[3]) {
  if (Grid[1] != 1 || Grid[2] != 1 || Block[1] != 1 || Block[2] != 1)
    return "not a 1-D launch";
  if (uint64_t(Grid[0]) * Block[0] > uint64_t(INT32_MAX))
    return "more threads than a 32-bit permutation holds";
  return {};
}

namespace {

/// The key of the model's history (ModelState::Reorganize) for a launch of
/// \p Blocks blocks of \p BlockX threads of \p Info on \p Dev, and in
/// \p CacheKernel the kernel's name in the performance cache.
std::string historyKey(ModelState &Model, const BufferManager &Bufs,
                       const Program &Prog, const BundleKernel &Info,
                       Location Dev, uint64_t Blocks, uint32_t BlockX,
                       std::string &CacheKernel) {
  auto [Name, New] = Model.ReorganizeNames.try_emplace(&Info);
  if (New)
    Name->second =
        tableKernelName(Info.Name, Prog.B.Source + "\n" + Info.Footprints);
  CacheKernel = Name->second;
  return CacheKernel + " " + locationName(Bufs, Dev) + " " +
         std::to_string(Blocks) + "x" + std::to_string(BlockX);
}

/// The history of a launch of \p Blocks blocks of \p BlockX threads of
/// \p Info on \p Dev, made at its first launch (\p New): a loss kept in
/// the performance cache, and the model's refusal of a kernel whose loop
/// reads per-item streams (itemStreamParams). \p CacheKernel, when not
/// null: the kernel's name in the performance cache.
ReorganizeHistory &historyFor(ModelState &Model, BufferManager &Bufs,
                              const Program &Prog, const BundleKernel &Info,
                              Location Dev, uint64_t Blocks, uint32_t BlockX,
                              std::string *CacheKernel, bool &New) {
  New = false;
  auto Fast = Model.ReorganizeIndex.find({&Info, Dev, Blocks, BlockX});
  if (Fast != Model.ReorganizeIndex.end()) {
    if (CacheKernel)
      *CacheKernel = Model.ReorganizeNames[&Info];
    return *Fast->second;
  }
  std::string Name;
  std::string Key =
      historyKey(Model, Bufs, Prog, Info, Dev, Blocks, BlockX, Name);
  if (CacheKernel)
    *CacheKernel = Name;
  auto [It, Made] = Model.Reorganize.try_emplace(Key);
  ReorganizeHistory &H = It->second;
  Model.ReorganizeIndex[{&Info, Dev, Blocks, BlockX}] = &H;
  New = Made;
  if (!Made)
    return H;
  H.Off = Model.planner(Bufs).cache().reorganizeOff(
      Bufs.device(Dev).properties().Description, Name);
  std::vector<std::string> Streams = itemStreamParams(Info.Footprints);
  if (!Streams.empty()) {
    std::string Names;
    for (const std::string &N : Streams)
      Names += (Names.empty() ? "" : ", ") + N;
    H.Refused = "its loop reads " + Names +
                " as per-item streams, which neighbouring items hold side "
                "by side: sorted, each lane reads its own sectors "
                "(coalescing lost: sorted SpMV ran at 0.42-0.54x on the "
                "H200), so the model predicts a loss";
  }
  return H;
}

/// What loading the sort's kernels on \p Dev costs before its first step
/// (0 once tried, or on a CPU device): the runtime's cubin where there is
/// one for the GPU (and on a GPU that compiles nothing, compute capability
/// 0: the null GPU), else a JIT compilation of their PTX.
double sortLoadMs(ModelState &Model, BufferManager &Bufs, Location Dev) {
  Device &D = Bufs.device(Dev);
  auto It = Model.Sorts.find(Dev);
  if (D.kind() != DeviceKind::Cuda ||
      (It != Model.Sorts.end() && It->second.Tried))
    return 0;
  const DeviceProperties &P = D.properties();
  bool Cubin = P.ComputeCapabilityMajor == 0;
#ifdef CLEAVE_RT_HAVE_SORT_CUBIN
  Cubin |= P.ComputeCapabilityMajor == 9 && P.ComputeCapabilityMinor == 0;
#endif
  return Cubin ? ReorganizeSortLoadMs : ReorganizeSortJitMs;
}

/// The model's budget now (ReorganizeBudget); the first call starts the
/// clock. \p LoadMs: what loading the sort's kernels costs first.
ReorganizeBudget reorganizeBudget(ModelState &Model, double LoadMs) {
  auto Now = Clock::now();
  if (!Model.ReorganizeStarted) {
    Model.ReorganizeStarted = true;
    Model.ReorganizeStart = Now;
  }
  ReorganizeBudget B;
  B.ElapsedMs =
      std::chrono::duration<double, std::milli>(Now - Model.ReorganizeStart)
          .count();
  B.SpentMs = Model.ReorganizeSpentMs;
  B.LoadMs = LoadMs;
  return B;
}

} // namespace

/// Why the run cannot go through the step; empty when it can.
std::string LaunchContext::whyNotReorganized(const RunState &R) const {
  if (Info.Inspector.empty())
    return "no variants";
  if (R.First != 0 || R.Count != Total)
    return "a part of the grid";
  if (std::string Why = whyNotForShape(Req.Grid, Req.Block); !Why.empty())
    return Why;
  if (isCpu(R.Dev) &&
      (!cpuDesc(Prog, Info.InspectorCpu, Info.Params.size() + 1) ||
       !cpuDesc(Prog, Info.ReorganizedCpu, Info.Params.size() + 1)))
    return "the program has no CPU build of the variants";
  return {};
}

/// One launch of \p Entry (a GPU; \p Cpu is ignored there) or \p Cpu (a
/// CPU device) over the grid's first \p GridX blocks (all when 0) with
/// \p Extra appended to the arguments (no extra when null), waited for
/// (on a GPU, only queued on its compute stream unless \p Wait).
Result LaunchContext::runVariantWhole(RunState &R, const std::string &Entry,
                                      const cleave_cpu_kernel_desc *Cpu,
                                      void *Extra, bool Wait, uint32_t GridX) {
  std::vector<void *> Args = R.ArgPtrs;
  if (Extra)
    Args.push_back(Extra);
  Device &D = Bufs.device(R.Dev);
  uint32_t Grid[3] = {GridX ? GridX : Req.Grid[0], Req.Grid[1], Req.Grid[2]};
  if (isCpu(R.Dev)) {
    cleave_cpu_launch L;
    for (int X = 0; X < 3; ++X) {
      L.grid[X] = Req.Grid[X];
      L.block[X] = Req.Block[X];
    }
    L.dynamic_shared_bytes = Req.DynamicSharedBytes;
    Result S =
        Exec.launch(*Cpu, Args.data(), L, 0, GridX ? uint64_t(GridX) : Total);
    if (!S.ok())
      return Result::error(S.code(), Info.Name + " (" + Entry + ") on " +
                                         D.name() + ": " + S.message());
    return Result::success();
  }
  FunctionHandle F = nullptr;
  if (Result Res = gpuFunction(Bufs, Prog, R.Dev, Entry, F); !Res.ok())
    return Res;
  uint32_t Block[3] = {Req.Block[0], Req.Block[1], Req.Block[2]};
  if (Result Res = D.launchKernel(F, Grid, Block, Req.DynamicSharedBytes,
                                  D.internalStream(0), Args.data());
      !Res.ok())
    return Res;
  return Wait ? D.synchronizeStream(D.internalStream(0)) : Result::success();
}

/// The inspector's counts of the threads of the grid's first \p Blocks
/// blocks into \p Counts.
Result LaunchContext::inspectTripCounts(RunState &R,
                                        std::vector<int32_t> &Counts,
                                        uint32_t Blocks) {
  uint64_t Threads = uint64_t(Blocks) * Req.Block[0];
  // The inspector writes the entry of every thread it runs; the buffer
  // has one per launched thread.
  Counts.assign(uint64_t(Req.Grid[0]) * Req.Block[0], 0);
  if (isCpu(R.Dev)) {
    int32_t *P = Counts.data();
    Result Res = runVariantWhole(
        R, Info.Inspector,
        cpuDesc(Prog, Info.InspectorCpu, Info.Params.size() + 1), &P, true,
        Blocks);
    Counts.resize(Threads);
    return Res;
  }
  Device &D = Bufs.device(R.Dev);
  DeviceAddr Dev = 0;
  if (Result Res = D.allocate(Counts.size() * 4, Dev); !Res.ok())
    return Res;
  Result Res = runVariantWhole(R, Info.Inspector, nullptr, &Dev, true, Blocks);
  Counts.resize(Threads);
  if (Res.ok())
    Res = D.copyDeviceToHost(Counts.data(), Dev, Threads * 4);
  (void)D.free(Dev);
  return Res;
}

/// The reorganized variant with \p Perm.
Result LaunchContext::runReorganizedVariant(RunState &R,
                                            std::vector<int32_t> &Perm) {
  if (isCpu(R.Dev)) {
    int32_t *P = Perm.data();
    return runVariantWhole(
        R, Info.Reorganized,
        cpuDesc(Prog, Info.ReorganizedCpu, Info.Params.size() + 1), &P);
  }
  Device &D = Bufs.device(R.Dev);
  DeviceAddr Dev = 0;
  uint64_t Bytes = Perm.size() * 4;
  if (Result Res = D.allocate(Bytes, Dev); !Res.ok())
    return Res;
  Result Res = D.copyHostToDevice(Dev, Perm.data(), Bytes);
  if (Res.ok())
    Res = runVariantWhole(R, Info.Reorganized, nullptr, &Dev);
  (void)D.free(Dev);
  return Res;
}

ReorganizeHistory &LaunchContext::reorganizeHistory(const RunState &R,
                                                    std::string &CacheKernel) {
  bool New = false;
  return historyFor(Model, Bufs, Prog, Info, R.Dev, Total, Req.Block[0],
                    &CacheKernel, New);
}

Result LaunchContext::reorganize(RunState &R, bool &Ran) {
  Ran = false;
  ReorganizeMode Mode = Opts.Tune.Reorganize;
  if (Mode == ReorganizeMode::Off || !whyNotReorganized(R).empty())
    return Result::success();
  uint64_t Threads = uint64_t(Req.Grid[0]) * Req.Block[0];
  unsigned Lanes = lanesOf(isGpu(R.Dev));
  std::string CacheKernel;
  ReorganizeHistory &H = reorganizeHistory(R, CacheKernel);
  ReorganizeBudget Budget =
      reorganizeBudget(Model, sortLoadMs(Model, Bufs, R.Dev));
  ReorganizeAction Act =
      chooseReorganizeAction(Mode, H, Threads, Lanes, Req.Grid[0], Budget);
  std::string On = name(R.Dev);
  // A repeated launch starts from the kept launch's plan: what this one
  // does replaces what that one did.
  LaunchPlan::Run *PlanRun =
      R.PlanIndex < Plan.Runs.size() ? &Plan.Runs[R.PlanIndex] : nullptr;
  if (PlanRun)
    PlanRun->Variant = isCpu(R.Dev) ? "cpu" : "original";
  Plan.Reorganize.clear();
  if (!RouteOverride.empty())
    Plan.Reorganize.push_back(RouteOverride);
  if (Act == ReorganizeAction::Original) {
    std::string Why;
    if (Threads <= ReorganizeWarpThreads)
      Why = "a single warp";
    else if (H.Off)
      Why = "a measured loss turned it off";
    else if (Lanes <= 1)
      Why = "no lanes wait for each other here";
    else if (!H.Refused.empty())
      Why = H.Refused;
    else if (H.Launches == 0)
      Why = "the kernel's first launch at this size (nothing predicts a "
            "gain yet)";
    else if (H.OriginalMs < 0)
      Why = "timing the original (" + fmt("%.3f", ReorganizeMeasureMs) +
            " ms) does not fit the model's budget yet";
    else if (!H.Explored)
      explorationPays(H, Req.Grid[0], Threads, Budget, &Why);
    else
      Why = "the model predicts no gain (" +
            fmt("%.3f", H.InspectorMs + H.SortMs) +
            " ms of inspector and sort)";
    Plan.Reorganize.push_back("not on " + On + ": " + Why);
    ++H.Launches;
    return Result::success();
  }
  ++H.Launches;
  Ran = true;
  if (Act == ReorganizeAction::MeasureOriginal) {
    Model.ReorganizeSpentMs += ReorganizeMeasureMs;
    auto T0 = Clock::now();
    Result Res = runVariantWhole(R, Info.variant(VariantKind::Original).Entry,
                                 K.Cpu, nullptr);
    if (Res.ok())
      H.OriginalMs = msSince(T0);
    if (PlanRun)
      PlanRun->Variant += ", timed for the reorganization model";
    Plan.Reorganize.push_back(
        "on " + On + ": the original timed: " + fmt("%.3f ms", H.OriginalMs));
    return Res;
  }
  if (Mode != ReorganizeMode::Force && !H.Explored)
    Model.ReorganizeSpentMs +=
        explorationCostMs(H, Req.Grid[0], Threads, Budget.LoadMs);
  return reorganizeStep(R, H, CacheKernel, Lanes, PlanRun);
}

Result LaunchContext::inspectAndSort(RunState &R, ReorganizeHistory &H,
                                     unsigned Lanes, uint32_t Blocks,
                                     bool RunReorganized, TripStats &S,
                                     double &InspectorMs, double &SortMs,
                                     double &RunMs, std::vector<int32_t> &Perm,
                                     unsigned &KeyBits) {
  RunMs = -1;
  // The key bits the sort used: on a GPU the plan's (counts that outgrew
  // it shared keys), else what the largest count needs.
  KeyBits = H.KeyBits;
  // Routing cuts the sorted order on the host: the counts come back.
  bool Route = RunReorganized && Opts.Tune.Route != RouteMode::Off &&
               routeCandidates(R.Dev).size() > 1;
  if (ModelState::GpuSort *Sort =
          isGpu(R.Dev) && !Route ? gpuSort(R.Dev) : nullptr) {
    if (Result Res = gpuStep(R, *Sort, Lanes, H.KeyBits, Blocks, RunReorganized,
                             S, InspectorMs, SortMs, RunMs);
        !Res.ok())
      return Res;
    H.KeyBits = std::max(1u, std::min(16u, S.KeyBits));
    return Result::success();
  }
  std::vector<int32_t> Counts;
  auto T0 = Clock::now();
  if (Result Res = inspectTripCounts(R, Counts, Blocks); !Res.ok())
    return Res;
  InspectorMs = msSince(T0);
  auto T1 = Clock::now();
  sortByTripCount(Counts.data(), Counts.size(), Perm, KeyBits);
  SortMs = msSince(T1);
  S = tripStats(Counts.data(), Counts.size(), Perm.data(), Lanes, Req.Block[0]);
  if (Route) {
    bool Done = false;
    Result Res = routeReorganized(R, H, Counts, Perm, Done, RunMs);
    if (Done)
      Model.Routes[{&Info, Req.Grid[0], Req.Block[0]}].StepMs =
          InspectorMs + SortMs + RunMs;
    if (!Res.ok() || Done)
      return Res;
  }
  if (RunReorganized) {
    auto T2 = Clock::now();
    if (Result Res = runReorganizedVariant(R, Perm); !Res.ok())
      return Res;
    RunMs = msSince(T2);
  }
  return Result::success();
}

void LaunchContext::describeCounts(const RunState &R, const TripStats &S,
                                   unsigned Lanes, unsigned KeyBits,
                                   uint64_t Sampled, bool OnGpu) {
  std::string On = name(R.Dev);
  Plan.Reorganize.push_back(
      "on " + On + ": " + std::to_string(S.Threads) + " threads" +
      (Sampled < S.Threads
           ? " (the inspector on the first " + std::to_string(Sampled) + ")"
           : std::string()) +
      ", counts mean " + fmt("%.2f", S.Mean) + " cv " + fmt("%.3f", S.Cv) +
      " max " + std::to_string(S.Max) + " (" + std::to_string(KeyBits) +
      " key bits, sorted on " +
      (OnGpu ? On
             : std::string("the host") +
                   (isGpu(R.Dev) ? " (" + Model.Sorts[R.Dev].Why + ")" : "")) +
      "), expected warp max " + fmt("%.2f", S.ExpectedWarpMax) + " (mu + e" +
      std::to_string(Lanes) + " sigma, e" + std::to_string(Lanes) + " = " +
      fmt("%.2f", expectedNormalMax(Lanes)) + ")");
  Plan.Reorganize.push_back("warp execution efficiency: predicted " +
                            fmt("%.3f", S.PredictedWee) + ", from the counts " +
                            fmt("%.3f", S.WeeOriginal) + " in launch order, " +
                            fmt("%.3f", S.WeeSorted) + " sorted");
}

Result LaunchContext::reorganizeStep(RunState &R, ReorganizeHistory &H,
                                     const std::string &CacheKernel,
                                     unsigned Lanes, LaunchPlan::Run *PlanRun) {
  bool Force = Opts.Tune.Reorganize == ReorganizeMode::Force;
  uint64_t Threads = uint64_t(Req.Grid[0]) * Req.Block[0];
  // Once the verdict is known (forced, or the model said it pays), the
  // whole grid's inspector, sort and reorganized kernel are queued back to
  // back. The exploring step runs the inspector on a sample of the grid's
  // blocks: the counts' statistics, scaled to the grid, predict the gain,
  // and the sample's inspector time the whole inspector's.
  bool Decided = Force || H.Explored;
  uint32_t Blocks =
      Decided ? Req.Grid[0]
              : uint32_t(reorganizeSampleBlocks(Req.Grid[0], Req.Block[0]));
  TripStats S;
  double InspectorMs = 0, SortMs = 0, RunMs = -1;
  std::vector<int32_t> Perm;
  unsigned KeyBits = 0;
  if (Result Res = inspectAndSort(R, H, Lanes, Blocks, Decided, S, InspectorMs,
                                  SortMs, RunMs, Perm, KeyBits);
      !Res.ok())
    return Res;
  uint64_t Sampled = S.Threads;
  // The whole step's inspector and sort: measured, or from the sample.
  double WholeInspectorMs = InspectorMs, WholeSortMs = SortMs;
  if (!Decided) {
    S = scaleTripStats(S, Threads);
    WholeInspectorMs =
        InspectorMs * double(Threads) / double(std::max<uint64_t>(1, Sampled));
    WholeSortMs = predictedSortMs(Threads, S.KeyBits);
  }
  double CostMs = WholeInspectorMs + WholeSortMs;
  ReorganizeForecast F = forecastReorganize(S, H, CostMs);
  bool RunIt = Force || RunMs >= 0 || F.Pays;
  if (!Decided) {
    H.Explored = true;
    H.Pays = F.Pays;
  }
  describeCounts(R, S, Lanes, KeyBits, Sampled,
                 isGpu(R.Dev) && Model.Sorts[R.Dev].Stats);
  if (isGpu(R.Dev) && Model.Sorts[R.Dev].LoadMs >= 0 &&
      !Model.Sorts[R.Dev].LoadReported) {
    Model.Sorts[R.Dev].LoadReported = true;
    Plan.Reorganize.push_back("the sort's kernels loaded in " +
                              fmt("%.3f ms", Model.Sorts[R.Dev].LoadMs));
  }
  Plan.Reorganize.push_back(
      std::string("model (lane-max, ") +
      (F.TwoPoint ? "two-point fit" : "loop-only bound") + "): original " +
      fmt("%.3f", F.OriginalMs) + " ms, reorganized " +
      fmt("%.3f", F.ReorganizedMs) + " ms, gain " + fmt("%.3f", F.GainMs) +
      " ms against inspector + sort " + fmt("%.3f", CostMs) + " ms" +
      (Decided ? std::string() : " (predicted from the sample)") + ": " +
      (Force   ? "forced"
       : RunIt ? "runs"
               : "does not pay; the next launches run the original"));
  if (!RunIt) {
    // The original, as without the step.
    Result Res = runVariantWhole(R, Info.variant(VariantKind::Original).Entry,
                                 K.Cpu, nullptr);
    H.InspectorMs = WholeInspectorMs;
    H.SortMs = WholeSortMs;
    return Res;
  }
  if (!Decided) {
    // The sample said it pays on this launch already: the whole step.
    if (Result Res = inspectAndSort(R, H, Lanes, Req.Grid[0], true, S,
                                    InspectorMs, SortMs, RunMs, Perm, KeyBits);
        !Res.ok())
      return Res;
  }
  if (PlanRun)
    PlanRun->Variant = "reorganized";
  bool WasOff = H.Off;
  double Gain = noteReorganizeStep(H, S, InspectorMs, SortMs, RunMs, Force);
  Plan.Reorganize.push_back(
      "measured: inspector " + fmt("%.3f", InspectorMs) + " + sort " +
      fmt("%.3f", SortMs) + " + reorganized " + fmt("%.3f", RunMs) + " ms" +
      (H.OriginalMs > 0
           ? ", gain " + fmt("%.3f", Gain) + " ms against the original's " +
                 fmt("%.3f", H.OriginalMs) + " ms (predicted " +
                 fmt("%.3f", F.GainMs - CostMs) + ")"
           : std::string(", the original not timed")) +
      (H.Off && !WasOff ? "; a loss: off for this kernel from now on" : ""));
  if (H.Off && !WasOff)
    Model.planner(Bufs).recordReorganizeOff(
        Bufs.device(R.Dev).properties().Description, CacheKernel);
  return Result::success();
}

ModelState::GpuSort *LaunchContext::gpuSort(Location L) {
  ModelState::GpuSort &G = Model.Sorts[L];
  if (!G.Tried) {
    G.Tried = true;
#ifdef CLEAVE_RT_HAVE_SORT_PTX
    Bundle B;
    B.Source = "the runtime's sort kernels";
    BundleImage Ptx;
    Ptx.Kind = ImageKind::PTX;
    Ptx.Arch = "sm_70";
    Ptx.Data = ReorganizeSortPtx;
    B.Images.push_back(std::move(Ptx));
#ifdef CLEAVE_RT_HAVE_SORT_CUBIN
    BundleImage Cubin;
    Cubin.Kind = ImageKind::Cubin;
    Cubin.Arch = "sm_90";
    Cubin.Data.assign(reinterpret_cast<const char *>(ReorganizeSortCubin90),
                      ReorganizeSortCubin90_size);
    B.Images.push_back(std::move(Cubin));
#endif
    Device &D = Bufs.device(L);
    auto T0 = Clock::now();
    Result Res = D.loadModule(B, G.M);
    G.LoadMs = msSince(T0);
    std::pair<const char *, FunctionHandle *> Fns[] = {
        {"cleave_sort_max", &G.Max},
        {"cleave_sort_histogram", &G.Hist},
        {"cleave_sort_scan", &G.Scan},
        {"cleave_sort_scatter", &G.Scatter},
        {"cleave_sort_stats", &G.Stats}};
    for (auto &[Name, F] : Fns)
      if (Res.ok())
        Res = D.getFunction(G.M, Name, *F);
    for (EventHandle &E : G.Marks)
      if (Res.ok())
        Res = D.createEvent(E);
    if (!Res.ok()) {
      G.Why = Res.message();
      G.Stats = nullptr;
    }
#else
    G.Why = "the runtime was built without its sort kernels";
#endif
  }
  return G.Stats ? &G : nullptr;
}

namespace {

// The launch shapes of ReorganizeSort.cu (its SortThreads, SortTile,
// SortMaxDigits; ScanThreads).
constexpr uint32_t SortThreads = 256, SortTile = 4096, SortMaxDigits = 256,
                   ScanThreads = 1024, SortDigitBits = 8;
constexpr uint64_t SortSumsBytes = 32, SortAuxBytes = 64;

uint32_t sortTiles(uint32_t N) { return (N + SortTile - 1) / SortTile; }

} // namespace

/// The sort's memory for \p N threads, kept (and grown) across launches.
Result LaunchContext::allocateGpuSort(Device &D, ModelState::GpuSort &G,
                                      uint32_t N) {
  if (G.Threads >= N && G.Aux)
    return Result::success();
  for (DeviceAddr *A : {&G.Counts, &G.Perm, &G.Tmp, &G.Histograms, &G.Aux})
    if (*A)
      (void)D.free(*A);
  G.Counts = G.Perm = G.Tmp = G.Histograms = G.Aux = 0;
  G.Threads = 0;
  Result Res = Result::success();
  for (DeviceAddr *A : {&G.Counts, &G.Perm, &G.Tmp})
    if (Res.ok())
      Res = D.allocate(uint64_t(N) * 4, *A);
  if (Res.ok())
    Res = D.allocate(uint64_t(sortTiles(N)) * SortMaxDigits * 4, G.Histograms);
  if (Res.ok())
    Res = D.allocate(SortAuxBytes, G.Aux);
  if (Res.ok())
    G.Threads = N;
  return Res;
}

/// Queues the sort of G.Counts (N threads) into G.Perm over \p KeyBits
/// planned key bits (at most 16), then the model's sums, on the GPU's
/// compute stream: the largest count (read by the kernels from G.Aux), one
/// or two digit passes of histogram, scan and scatter, the statistics.
Result LaunchContext::queueGpuSort(Device &D, ModelState::GpuSort &G,
                                   uint32_t N, unsigned KeyBits) {
  StreamHandle St = D.internalStream(0);
  auto Launch = [&](FunctionHandle F, uint32_t Blocks, uint32_t Threads,
                    std::vector<void *> Args) {
    uint32_t Grid[3] = {std::max(1u, Blocks), 1, 1};
    uint32_t Block[3] = {Threads, 1, 1};
    return D.launchKernel(F, Grid, Block, 0, St, Args.data());
  };
  DeviceAddr Counts = G.Counts, Perm = G.Perm, Hist = G.Histograms,
             Sums = G.Aux, MaxAt = G.Aux + SortSumsBytes, None = 0;
  uint32_t Tiles = sortTiles(N), BlockThreads = Req.Block[0];
  uint32_t Strided =
      std::min<uint32_t>((N + SortThreads - 1) / SortThreads, 4096);
  Result Res = D.memset(G.Aux, 0, SortAuxBytes, St);
  if (Res.ok())
    Res = Launch(G.Max, Strided, SortThreads, {&Counts, &N, &MaxAt});
  // Least significant digit first: the last pass writes G.Perm.
  unsigned Passes = KeyBits > SortDigitBits ? 2 : 1;
  for (unsigned P = 0; P < Passes && Res.ok(); ++P) {
    uint32_t Shift = P * SortDigitBits;
    uint32_t Digits =
        1u << std::min(SortDigitBits, KeyBits - std::min(KeyBits, Shift));
    uint32_t Total = Digits * Tiles;
    DeviceAddr Src = P ? G.Tmp : None;
    DeviceAddr Dst = P + 1 == Passes ? Perm : G.Tmp;
    std::vector<void *> Common = {&Counts,  &Src,   &N,      &MaxAt,
                                  &KeyBits, &Shift, &Digits, &Hist};
    Res = Launch(G.Hist, Tiles, SortThreads, Common);
    if (Res.ok())
      Res = Launch(G.Scan, 1, ScanThreads, {&Hist, &Total});
    Common.push_back(&Dst);
    if (Res.ok())
      Res = Launch(G.Scatter, Tiles, SortThreads, Common);
  }
  uint32_t Warps =
      (N + BlockThreads - 1) / BlockThreads * ((BlockThreads + 31) / 32);
  if (Res.ok())
    Res = Launch(
        G.Stats,
        std::min<uint32_t>((Warps + SortThreads - 1) / SortThreads, 4096),
        SortThreads, {&Counts, &Perm, &N, &BlockThreads, &Sums});
  return Res;
}

/// The inspector over the grid's first \p Blocks blocks, then the sort
/// kernels of ReorganizeSort.cu over their threads, on the GPU's compute
/// stream, and with \p RunReorganized (the whole grid) the reorganized
/// variant
/// behind them; one wait at the end, then the sums and the largest count
/// come back (40 bytes). Times: the inspector and the sort from events
/// between them (the sort's with the wait and the copy when the exploring
/// step stops there), the reorganized kernel (\p RunMs, else -1) the rest
/// of the host's clock, as the original is timed.
Result LaunchContext::gpuStep(RunState &R, ModelState::GpuSort &G,
                              unsigned Lanes, unsigned KeyBits, uint32_t Blocks,
                              bool RunReorganized, TripStats &S,
                              double &InspectorMs, double &SortMs,
                              double &RunMs) {
  Device &D = Bufs.device(R.Dev);
  StreamHandle St = D.internalStream(0);
  // The inspector writes the counts of the threads it runs; the counts
  // buffer holds the whole grid's.
  uint32_t N = Blocks * Req.Block[0];
  RunMs = -1;
  Result Res = allocateGpuSort(D, G, Req.Grid[0] * Req.Block[0]);
  auto T0 = Clock::now();
  DeviceAddr Counts = G.Counts, Perm = G.Perm;
  auto Mark = [&](int I) {
    if (Res.ok())
      Res = D.recordEvent(G.Marks[I], St);
  };
  Mark(0);
  if (Res.ok())
    Res = runVariantWhole(R, Info.Inspector, nullptr, &Counts, false, Blocks);
  Mark(1);
  if (Res.ok())
    Res = queueGpuSort(D, G, N, KeyBits);
  Mark(2);
  if (RunReorganized && Res.ok())
    Res = runVariantWhole(R, Info.Reorganized, nullptr, &Perm, false);
  if (Res.ok())
    Res = D.synchronizeStream(St);
  unsigned char Back[SortSumsBytes + 4];
  if (Res.ok())
    Res = D.copyDeviceToHost(Back, G.Aux, sizeof(Back));
  double TotalMs = msSince(T0);
  if (!Res.ok())
    return Res;
  float Inspector = 0, Sort = 0;
  if (!D.elapsedTime(G.Marks[0], G.Marks[1], Inspector).ok() ||
      !D.elapsedTime(G.Marks[1], G.Marks[2], Sort).ok())
    Inspector = Sort = 0;
  InspectorMs = std::min<double>(Inspector, TotalMs);
  SortMs = RunReorganized ? std::min<double>(Sort, TotalMs - InspectorMs)
                          : TotalMs - InspectorMs;
  if (RunReorganized)
    RunMs = TotalMs - InspectorMs - SortMs;
  double Sums[4];
  uint32_t Max;
  std::memcpy(Sums, Back, sizeof(Sums));
  std::memcpy(&Max, Back + SortSumsBytes, 4);
  S = tripStatsFromSums(N, Lanes, Sums[0], Sums[1], Max, Sums[2], Sums[3]);
  return Result::success();
}

} // namespace engine

bool Engine::reorganizeSettled(const KernelHandle &K, Location Device,
                               const uint32_t Grid[3],
                               const uint32_t Block[3]) {
  ReorganizeMode Mode = I->Opts.Tune.Reorganize;
  uint64_t Threads =
      uint64_t(Grid[0]) * Grid[1] * Grid[2] * Block[0] * Block[1] * Block[2];
  if (K.Info->Inspector.empty() || Mode == ReorganizeMode::Off ||
      !engine::whyNotForShape(Grid, Block).empty() ||
      Threads <= ReorganizeWarpThreads)
    return true;
  if (Mode == ReorganizeMode::Force)
    return false;
  std::lock_guard<std::mutex> Lock(I->Mutex);
  bool Gpu = Bufs.device(Device).kind() == DeviceKind::Cuda;
  bool New = false;
  ReorganizeHistory &H =
      engine::historyFor(I->Model, Bufs, *K.Prog, *K.Info, Device, Grid[0],
                         Block[0], nullptr, New);
  if (New && Gpu && !H.Refused.empty() && I->Opts.Log.Plan)
    std::fprintf(
        stderr, "reorganize: %s on %s: not explored: %s\n",
        (K.Info->DisplayName.empty() ? K.Info->Name : K.Info->DisplayName)
            .c_str(),
        Bufs.device(Device).name().c_str(), H.Refused.c_str());
  // Launches the model leaves to the original go straight to the GPU and
  // count towards the launches exploring must pay over.
  ReorganizeAction Act = chooseReorganizeAction(
      Mode, H, Threads, engine::lanesOf(Gpu), Grid[0],
      engine::reorganizeBudget(I->Model,
                               engine::sortLoadMs(I->Model, Bufs, Device)));
  if (Act != ReorganizeAction::Original)
    return false;
  ++H.Launches;
  return true;
}

} // namespace rt
} // namespace cleave
