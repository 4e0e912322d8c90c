//===- Reorganize.cpp - A launch's items sorted by trip count -------------===//
//
// Part of Cleave's runtime (no LLVM). See LaunchContext.h and
// docs/reorganize.md ("The runtime step"). A run of the whole grid of a
// kernel that has cleave-reorganize's variants may go through the step:
//
//   1. the inspector (`__cleave_tc_<K>`, its CPU build on a CPU device)
//      writes each launched thread's trip count;
//   2. the counts are sorted on the host, largest first, by a counting sort
//      over the key bits they need (ReorganizeModel.h); on a GPU they come
//      back and the permutation goes out over the host link;
//   3. the reorganized variant (`__cleave_ro_<K>`) runs with that
//      permutation: thread i runs item perm[i], whose outputs land at the
//      item's own index.
//
// The model (ReorganizeModel.h) decides, from the original's measured time
// and the counts' statistics, whether the step pays; every time of the step
// is measured on the host's clock around the launch and its wait, as the
// original's is when the model times it.
//
//===----------------------------------------------------------------------===//

#include "LaunchContext.h"

#ifdef CLEAVE_RT_HAVE_SORT_PTX
#include "ReorganizeSortPtx.inc" // ReorganizeSortPtx: ReorganizeSort.cu
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

/// A CPU descriptor of the program named \p Symbol with \p Params
/// parameters, or null.
const cleave_cpu_kernel_desc *cpuDesc(const Program &P,
                                      const std::string &Symbol,
                                      size_t Params) {
  auto It = P.Syms.find(Symbol);
  if (Symbol.empty() || It == P.Syms.end())
    return nullptr;
  auto *D = static_cast<const cleave_cpu_kernel_desc *>(It->second);
  return D && D->fn && D->num_params == Params ? D : nullptr;
}

} // namespace

/// Why the run cannot go through the step; empty when it can.
std::string LaunchContext::whyNotReorganized(const RunState &R) const {
  if (Info.Inspector.empty())
    return "no variants";
  if (R.First != 0 || R.Count != Total)
    return "a part of the grid";
  if (Req.Grid[1] != 1 || Req.Grid[2] != 1 || Req.Block[1] != 1 ||
      Req.Block[2] != 1)
    return "not a 1-D launch";
  if (uint64_t(Req.Grid[0]) * Req.Block[0] > uint64_t(INT32_MAX))
    return "more threads than a 32-bit permutation holds";
  if (isCpu(R.Dev) &&
      (!cpuDesc(Prog, Info.InspectorCpu, Info.Params.size() + 1) ||
       !cpuDesc(Prog, Info.ReorganizedCpu, Info.Params.size() + 1)))
    return "the program has no CPU build of the variants";
  return {};
}

/// One launch of \p Entry (a GPU; \p Cpu is ignored there) or \p Cpu (a
/// CPU device) over the whole grid with \p Extra appended to the arguments
/// (no extra when null), waited for.
Result LaunchContext::runVariantWhole(RunState &R, const std::string &Entry,
                                      const cleave_cpu_kernel_desc *Cpu,
                                      void *Extra) {
  std::vector<void *> Args = R.ArgPtrs;
  if (Extra)
    Args.push_back(Extra);
  Device &D = Bufs.device(R.Dev);
  if (isCpu(R.Dev)) {
    cleave_cpu_launch L;
    for (int X = 0; X < 3; ++X) {
      L.grid[X] = Req.Grid[X];
      L.block[X] = Req.Block[X];
    }
    L.dynamic_shared_bytes = Req.DynamicSharedBytes;
    Result S = Exec.launch(*Cpu, Args.data(), L, 0, Total);
    if (!S.ok())
      return Result::error(S.code(), Info.Name + " (" + Entry + ") on " +
                                         D.name() + ": " + S.message());
    return Result::success();
  }
  FunctionHandle F = nullptr;
  if (Result Res = gpuFunction(Bufs, Prog, R.Dev, Entry, F); !Res.ok())
    return Res;
  uint32_t Grid[3] = {Req.Grid[0], Req.Grid[1], Req.Grid[2]};
  uint32_t Block[3] = {Req.Block[0], Req.Block[1], Req.Block[2]};
  if (Result Res = D.launchKernel(F, Grid, Block, Req.DynamicSharedBytes,
                                  D.internalStream(0), Args.data());
      !Res.ok())
    return Res;
  return D.synchronizeStream(D.internalStream(0));
}

/// The inspector's counts of every launched thread into \p Counts.
Result LaunchContext::inspectTripCounts(RunState &R,
                                        std::vector<int32_t> &Counts) {
  uint64_t Threads = uint64_t(Req.Grid[0]) * Req.Block[0];
  Counts.assign(Threads, 0);
  if (isCpu(R.Dev)) {
    int32_t *P = Counts.data();
    return runVariantWhole(
        R, Info.Inspector,
        cpuDesc(Prog, Info.InspectorCpu, Info.Params.size() + 1), &P);
  }
  Device &D = Bufs.device(R.Dev);
  DeviceAddr Dev = 0;
  if (Result Res = D.allocate(Threads * 4, Dev); !Res.ok())
    return Res;
  Result Res = runVariantWhole(R, Info.Inspector, nullptr, &Dev);
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
  CacheKernel = tableKernelName(Info.Name, Prog.B.Source + "\n" +
                                               Info.Footprints);
  std::string Key = CacheKernel + " " + name(R.Dev) + " " +
                    std::to_string(Total) + "x" + std::to_string(Req.Block[0]);
  auto [It, New] = Model.Reorganize.try_emplace(Key);
  if (New)
    It->second.Off = Model.planner(Bufs).cache().reorganizeOff(
        Bufs.device(R.Dev).properties().Description, CacheKernel);
  return It->second;
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
  ReorganizeAction Act = chooseReorganizeAction(Mode, H, Threads, Lanes);
  std::string On = name(R.Dev);
  // A repeated launch starts from the kept launch's plan: what this one
  // does replaces what that one did.
  LaunchPlan::Run *PlanRun =
      R.PlanIndex < Plan.Runs.size() ? &Plan.Runs[R.PlanIndex] : nullptr;
  if (PlanRun)
    PlanRun->Variant = isCpu(R.Dev) ? "cpu" : "original";
  Plan.Reorganize.clear();
  if (Act == ReorganizeAction::Original) {
    Plan.Reorganize.push_back(
        "not on " + On + ": " +
        (Threads <= ReorganizeWarpThreads ? std::string("a single warp")
         : H.Off          ? std::string("a measured loss turned it off")
         : Lanes <= 1     ? std::string("no lanes wait for each other here")
                          : "the model predicts no gain (" +
                                fmt("%.3f", H.InspectorMs + H.SortMs) +
                                " ms of inspector and sort)"));
    return Result::success();
  }
  Ran = true;
  if (Act == ReorganizeAction::MeasureOriginal) {
    auto T0 = Clock::now();
    Result Res = runVariantWhole(
        R, Info.variant(VariantKind::Original).Entry, K.Cpu, nullptr);
    if (Res.ok())
      H.OriginalMs = msSince(T0);
    if (PlanRun)
      PlanRun->Variant += ", timed for the reorganization model";
    Plan.Reorganize.push_back("on " + On + ": the original timed first: " +
                              fmt("%.3f ms", H.OriginalMs));
    return Res;
  }
  return reorganizeStep(R, H, CacheKernel, Lanes, PlanRun);
}

Result LaunchContext::reorganizeStep(RunState &R, ReorganizeHistory &H,
                                     const std::string &CacheKernel,
                                     unsigned Lanes, LaunchPlan::Run *PlanRun) {
  bool Force = Opts.Tune.Reorganize == ReorganizeMode::Force;
  std::string On = name(R.Dev);
  TripStats S;
  double InspectorMs = 0, SortMs = 0;
  std::vector<int32_t> Counts, Perm;
  // A GPU with its sort kernels keeps the counts and the permutation; else
  // the counts come to the host (the inspector's time includes that copy,
  // the reorganized kernel's the permutation's copy out).
  ModelState::GpuSort *Sort = isGpu(R.Dev) ? gpuSort(R.Dev) : nullptr;
  if (Sort) {
    if (Result Res = gpuStep(R, *Sort, Lanes, S, InspectorMs, SortMs);
        !Res.ok())
      return Res;
  } else {
    auto T0 = Clock::now();
    if (Result Res = inspectTripCounts(R, Counts); !Res.ok())
      return Res;
    InspectorMs = msSince(T0);
    auto T1 = Clock::now();
    unsigned KeyBits = 0;
    sortByTripCount(Counts.data(), Counts.size(), Perm, KeyBits);
    SortMs = msSince(T1);
    S = tripStats(Counts.data(), Counts.size(), Perm.data(), Lanes,
                  Req.Block[0]);
  }
  unsigned KeyBits = std::min(S.KeyBits, Sort ? 16u : 32u);
  // The inspector has run: this launch runs reorganized when the gain
  // covers the sort; the next ones when it covers the inspector too.
  ReorganizeForecast Now = forecastReorganize(S, H, SortMs);
  ReorganizeForecast Next = forecastReorganize(S, H, InspectorMs + SortMs);
  H.Explored = true;
  H.Pays = Next.Pays;
  bool RunIt = Force || Now.Pays;
  Plan.Reorganize.push_back(
      "on " + On + ": " + std::to_string(S.Threads) + " threads, counts mean " +
      fmt("%.2f", S.Mean) + " cv " + fmt("%.3f", S.Cv) + " max " +
      std::to_string(S.Max) + " (" + std::to_string(KeyBits) +
      " key bits, sorted on " +
      (Sort ? On : std::string("the host") +
                       (isGpu(R.Dev) ? " (" + Model.Sorts[R.Dev].Why + ")"
                                     : "")) +
      "), expected warp max " + fmt("%.2f", S.ExpectedWarpMax) +
      " (mu + e" + std::to_string(Lanes) + " sigma, e" +
      std::to_string(Lanes) + " = " + fmt("%.2f", expectedNormalMax(Lanes)) +
      ")");
  Plan.Reorganize.push_back(
      "warp execution efficiency: predicted " + fmt("%.3f", S.PredictedWee) +
      ", from the counts " + fmt("%.3f", S.WeeOriginal) + " in launch order, " +
      fmt("%.3f", S.WeeSorted) + " sorted");
  Plan.Reorganize.push_back(
      std::string("model (lane-max, ") +
      (Now.TwoPoint ? "two-point fit" : "loop-only bound") + "): original " +
      fmt("%.3f", Now.OriginalMs) + " ms, reorganized " +
      fmt("%.3f", Now.ReorganizedMs) + " ms, gain " + fmt("%.3f", Now.GainMs) +
      " ms against inspector " + fmt("%.3f", InspectorMs) + " + sort " +
      fmt("%.3f", SortMs) + " ms: " +
      (Force ? "forced" : RunIt ? "runs" : "does not pay") +
      (Next.Pays ? "; pays from the next launch"
                 : "; the next launches run the original"));
  auto T2 = Clock::now();
  const std::string &Original = Info.variant(VariantKind::Original).Entry;
  Result Res = !RunIt ? runVariantWhole(R, Original, K.Cpu, nullptr)
               : Sort ? runVariantWhole(R, Info.Reorganized, nullptr,
                                        &Sort->Perm)
                      : runReorganizedVariant(R, Perm);
  double RunMs = msSince(T2);
  if (!Res.ok())
    return Res;
  if (!RunIt) {
    H.OriginalMs = RunMs;
    return Result::success();
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
                 fmt("%.3f", Next.GainMs - InspectorMs - SortMs) + ")"
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
    Device &D = Bufs.device(L);
    Result Res = D.loadModule(B, G.M);
    std::pair<const char *, FunctionHandle *> Fns[] = {
        {"cleave_sort_max", &G.Max},
        {"cleave_sort_histogram", &G.Hist},
        {"cleave_sort_scan", &G.Scan},
        {"cleave_sort_scatter", &G.Scatter},
        {"cleave_sort_stats", &G.Stats}};
    for (auto &[Name, F] : Fns)
      if (Res.ok())
        Res = D.getFunction(G.M, Name, *F);
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

/// The inspector, then the sort kernels of ReorganizeSort.cu on the GPU's
/// compute stream: the largest count (the one value that comes back before
/// the sort), the histogram of keys, its prefix sum, the scatter into
/// G.Perm and the model's sums.
Result LaunchContext::gpuStep(RunState &R, ModelState::GpuSort &G,
                              unsigned Lanes, TripStats &S,
                              double &InspectorMs, double &SortMs) {
  Device &D = Bufs.device(R.Dev);
  StreamHandle St = D.internalStream(0);
  uint32_t N = Req.Grid[0] * Req.Block[0];
  uint32_t BlockThreads = Req.Block[0];
  constexpr uint32_t MaxBuckets = 65536;
  // Aux: [0, 32) the four sums, [32, 36) the largest count, [64, ...) the
  // histogram, then each key's next slot.
  const uint64_t AuxBytes = 64 + 4 * uint64_t(MaxBuckets);
  auto T0 = Clock::now();
  Result Res;
  if (G.Threads < N) {
    for (DeviceAddr *A : {&G.Counts, &G.Perm})
      if (*A)
        (void)D.free(*A);
    G.Counts = G.Perm = 0;
    G.Threads = 0;
    Res = D.allocate(uint64_t(N) * 4, G.Counts);
    if (Res.ok())
      Res = D.allocate(uint64_t(N) * 4, G.Perm);
    if (Res.ok())
      G.Threads = N;
  }
  if (Res.ok() && !G.Aux)
    Res = D.allocate(AuxBytes, G.Aux);
  DeviceAddr Counts = G.Counts, Perm = G.Perm, Aux = G.Aux;
  if (Res.ok())
    Res = runVariantWhole(R, Info.Inspector, nullptr, &Counts);
  InspectorMs = msSince(T0);
  auto T1 = Clock::now();
  auto Launch = [&](FunctionHandle F, uint32_t Blocks, uint32_t Threads,
                    std::vector<void *> Args) {
    uint32_t Grid[3] = {std::max(1u, Blocks), 1, 1};
    uint32_t Block[3] = {Threads, 1, 1};
    return D.launchKernel(F, Grid, Block, 0, St, Args.data());
  };
  // Grid-stride kernels: enough blocks to fill the GPU.
  uint32_t Blocks = std::min<uint32_t>((N + 255) / 256, 4096);
  DeviceAddr MaxAt = Aux + 32, Hist = Aux + 64;
  uint32_t Max = 0;
  if (Res.ok())
    Res = D.memset(Aux, 0, AuxBytes, St);
  if (Res.ok())
    Res = Launch(G.Max, Blocks, 256, {&Counts, &N, &MaxAt});
  if (Res.ok())
    Res = D.synchronizeStream(St);
  if (Res.ok())
    Res = D.copyDeviceToHost(&Max, MaxAt, 4);
  uint32_t Bits = tripCountKeyBits(Max);
  uint32_t Shift = Bits > 16 ? Bits - 16 : 0;
  uint32_t Buckets = (Max >> Shift) + 1;
  uint32_t Warps = (N + BlockThreads - 1) / BlockThreads *
                   ((BlockThreads + 31) / 32);
  if (Res.ok())
    Res = Launch(G.Hist, Blocks, 256,
                 {&Counts, &N, &Max, &Shift, &Buckets, &Hist});
  if (Res.ok())
    Res = Launch(G.Scan, 1, 1024, {&Hist, &Buckets});
  if (Res.ok())
    Res = Launch(G.Scatter, (N + 255) / 256, 256,
                 {&Counts, &N, &Max, &Shift, &Hist, &Perm});
  if (Res.ok())
    Res = Launch(G.Stats, std::min<uint32_t>((Warps + 255) / 256, 4096), 256,
                 {&Counts, &Perm, &N, &BlockThreads, &Aux});
  if (Res.ok())
    Res = D.synchronizeStream(St);
  double Sums[4] = {0, 0, 0, 0};
  if (Res.ok())
    Res = D.copyDeviceToHost(Sums, Aux, sizeof(Sums));
  SortMs = msSince(T1);
  if (!Res.ok())
    return Res;
  S = tripStatsFromSums(N, Lanes, Sums[0], Sums[1], Max, Sums[2], Sums[3]);
  return Result::success();
}

} // namespace engine
} // namespace rt
} // namespace cleave
