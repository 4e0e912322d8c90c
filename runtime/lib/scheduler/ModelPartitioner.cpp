//===- ModelPartitioner.cpp - The model policy's partitioner --------------===//
//
// Part of Cleave's runtime (no LLVM). See cleave/rt/ModelPartitioner.h and
// docs/partitioner.md.
//
//===----------------------------------------------------------------------===//

#include "cleave/rt/ModelPartitioner.h"

#include "Balancer.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <cstdlib>
#include <limits>
#include <set>

namespace cleave {
namespace rt {

namespace {

constexpr double Infinity = std::numeric_limits<double>::infinity();

/// FNV-1a, for names of cache files.
uint64_t fnv1a(const std::string &S) {
  uint64_t H = 1469598103934665603ull;
  for (unsigned char C : S) {
    H ^= C;
    H *= 1099511628211ull;
  }
  return H;
}

std::string hex(uint64_t V, int Digits) {
  char Buf[32];
  std::snprintf(Buf, sizeof(Buf), "%0*llx", Digits,
                static_cast<unsigned long long>(V));
  return std::string(Buf).substr(0, size_t(Digits));
}

/// Planners alive, flushed once more at exit (the API layer's runtime is
/// never destroyed).
struct LiveSet {
  std::mutex Mutex;
  std::set<ModelPartitioner *> Planners;
};

LiveSet &live() {
  static LiveSet *L = [] {
    auto *S = new LiveSet(); // never destroyed: used by the exit hook
    std::atexit([] {
      LiveSet &X = live();
      std::lock_guard<std::mutex> Lock(X.Mutex);
      for (ModelPartitioner *P : X.Planners)
        (void)P->flush();
    });
    return S;
  }();
  return *L;
}

std::string bytesText(double B) {
  char Buf[64];
  if (B >= 1e9)
    std::snprintf(Buf, sizeof(Buf), "%.2f GB", B / 1e9);
  else if (B >= 1e6)
    std::snprintf(Buf, sizeof(Buf), "%.2f MB", B / 1e6);
  else if (B >= 1e3)
    std::snprintf(Buf, sizeof(Buf), "%.1f kB", B / 1e3);
  else
    std::snprintf(Buf, sizeof(Buf), "%.0f B", B);
  return Buf;
}

} // namespace

unsigned gridClass(uint64_t Blocks) {
  unsigned C = 0;
  while (Blocks > 1) {
    Blocks >>= 1;
    ++C;
  }
  return C;
}

std::string tableKernelName(const std::string &Name, const std::string &Salt) {
  return Name + "@" + hex(fnv1a(Salt), 8);
}

std::string PerfKey::text() const {
  return Kernel + "|" + std::to_string(Block[0]) + "x" +
         std::to_string(Block[1]) + "x" + std::to_string(Block[2]) + "|s" +
         std::to_string(SharedBytes) + "|g" + std::to_string(GridClass);
}

double seedMs(const SplitDevice &D, double BytesPerBlock, uint64_t Blocks) {
  if (!Blocks)
    return 0;
  uint64_t W = std::max<uint64_t>(1, D.Wave);
  double Waves = double((Blocks + W - 1) / W);
  double WaveMs = D.SeedGBps > 0
                      ? double(W) * std::max(0.0, BytesPerBlock) /
                            (D.SeedGBps * 1e6)
                      : 0.0;
  WaveMs = std::max({WaveMs, D.SeedMinWaveMs, 1e-6});
  return Waves * WaveMs;
}

std::string perfCacheFile(const std::string &Dir, const DeviceProfile &Profile,
                          const std::vector<std::string> &Identities) {
  if (Dir.empty())
    return "";
  std::string Tag;
  for (char C : Profile.Tag)
    Tag += (std::isalnum(static_cast<unsigned char>(C)) || C == '-' ||
            C == '_' || C == '.')
               ? C
               : '_';
  std::string Ids;
  for (const std::string &I : Identities)
    Ids += I + "\n";
  return Dir + "/perf-" + Tag + "-" + hex(fnv1a(Ids), 12) + ".json";
}

ModelPartitioner::ModelPartitioner(DeviceProfile P, std::string File)
    : Profile(std::move(P)), CacheFile(std::move(File)) {
  if (!CacheFile.empty()) {
    Result R = Cache.load(CacheFile);
    if (!R.ok())
      std::fprintf(stderr,
                   "cleave: ignoring the performance cache (%s); it will be "
                   "rewritten\n",
                   R.message().c_str());
  }
  LiveSet &L = live();
  std::lock_guard<std::mutex> Lock(L.Mutex);
  L.Planners.insert(this);
}

ModelPartitioner::~ModelPartitioner() {
  {
    LiveSet &L = live();
    std::lock_guard<std::mutex> Lock(L.Mutex);
    L.Planners.erase(this);
  }
  (void)flush();
}

Result ModelPartitioner::flush() {
  std::lock_guard<std::mutex> Lock(Mutex);
  if (CacheFile.empty() || !Cache.dirty())
    return Result::success();
  Result R = Cache.save(CacheFile);
  LastSave = std::chrono::steady_clock::now();
  Saved = true;
  if (!R.ok() && !SaveFailed) {
    SaveFailed = true; // said once
    std::fprintf(stderr, "cleave: %s\n", R.message().c_str());
  }
  return R;
}

void ModelPartitioner::maybeFlush() {
  {
    std::lock_guard<std::mutex> Lock(Mutex);
    if (CacheFile.empty() || !Cache.dirty() || SaveFailed)
      return;
    if (Saved &&
        std::chrono::steady_clock::now() - LastSave < std::chrono::seconds(2))
      return;
  }
  (void)flush();
}

void ModelPartitioner::record(const SplitDevice &D, const PerfKey &Key, uint64_t Blocks,
                     double Ms) {
  if (!Blocks || !(Ms > 0) || !std::isfinite(Ms))
    return;
  uint64_t W = std::max<uint64_t>(1, D.Wave);
  uint64_t Row = (Blocks + W - 1) / W * W;
  std::lock_guard<std::mutex> Lock(Mutex);
  Cache.record(D.Identity, Key.text(), Row, double(Blocks) / Ms);
}

void ModelPartitioner::recordReorganizeOff(const std::string &Device,
                                           const std::string &Kernel) {
  std::lock_guard<std::mutex> Lock(Mutex);
  Cache.recordReorganizeOff(Device, Kernel);
}

uint64_t ModelPartitioner::sliceBlocks(const std::string &Device,
                                       const std::string &Kernel) const {
  std::lock_guard<std::mutex> Lock(Mutex);
  return Cache.sliceBlocks(Device, Kernel);
}

void ModelPartitioner::recordSliceBlocks(const std::string &Device,
                                         const std::string &Kernel,
                                         uint64_t Blocks) {
  {
    std::lock_guard<std::mutex> Lock(Mutex);
    Cache.recordSliceBlocks(Device, Kernel, Blocks);
  }
  maybeFlush();
}

PerfTable ModelPartitioner::table(const SplitRequest &R, size_t D,
                         SplitDeviceReport *Report) const {
  const SplitDevice &Dev = R.Devices[D];
  uint64_t W = std::max<uint64_t>(1, Dev.Wave);
  uint64_t N = std::max<uint64_t>(1, R.TotalBlocks);
  uint64_t Waves = (N + W - 1) / W;
  auto SeedThroughput = [&](uint64_t B) {
    return double(B) / seedMs(Dev, R.BytesPerBlock, B);
  };
  PerfCache::Rows Measured;
  // The geometric mean of measured over seeded throughput of \p Rows of
  // device \p Of: what the measurements say of the seed.
  auto LogScale = [&](const PerfCache::Rows &Rows, const SplitDevice &Of) {
    double LogSum = 0;
    for (auto &[B, S] : Rows)
      LogSum += std::log(S.BlocksPerMs * seedMs(Of, R.BytesPerBlock, B) /
                         double(B));
    return LogSum / double(Rows.size());
  };
  double Scale = 1;
  bool Borrowed = false;
  {
    std::lock_guard<std::mutex> Lock(Mutex);
    if (const PerfCache::Rows *M = Cache.find(Dev.Identity, R.Key.text()))
      Measured = *M;
    if (!Measured.empty()) {
      Scale = std::exp(LogScale(Measured, Dev));
    } else {
      // Nothing measured here yet: the seed's error is mostly the
      // kernel's (its compute, its access pattern), so the scale measured
      // on the other devices of the same kind stands in for this one's.
      // Left unscaled, an unmeasured device looks as fast as the roofline
      // and takes every block from the measured ones.
      double LogSum = 0;
      unsigned Others = 0;
      std::set<std::string> Seen{Dev.Identity};
      for (const SplitDevice &O : R.Devices) {
        if (O.Gpu != Dev.Gpu || !Seen.insert(O.Identity).second)
          continue;
        const PerfCache::Rows *M = Cache.find(O.Identity, R.Key.text());
        if (!M || M->empty())
          continue;
        LogSum += LogScale(*M, O);
        ++Others;
      }
      if (Others) {
        Scale = std::exp(LogSum / double(Others));
        Borrowed = true;
      }
    }
  }
  PerfTable T;
  size_t Seeded = 0;
  std::vector<uint64_t> Ks;
  for (uint64_t K = 1; K < Waves; K *= 2)
    Ks.push_back(K);
  Ks.push_back(Waves);
  for (uint64_t K : Ks) {
    uint64_t B = K * W;
    if (Measured.count(B))
      continue;
    T.set(B, SeedThroughput(B) * Scale);
    ++Seeded;
  }
  for (auto &[B, S] : Measured)
    T.set(B, S.BlocksPerMs);
  if (Report) {
    Report->SeededRows = Seeded;
    Report->MeasuredRows = Measured.size();
    Report->Scale = Scale;
    Report->ScaleBorrowed = Borrowed;
  }
  return T;
}

namespace {

/// The bytes device \p D of \p R misses for blocks [First, First + Count).
ShareBytes missingBytes(const SplitRequest &R, size_t D, uint64_t First,
                        uint64_t Count) {
  ShareBytes B;
  if (R.MissingBytes && Count)
    R.MissingBytes(D, First, Count, B);
  return B;
}

/// The line through (AC, AtC) and (N, AtN).
ByteCost fitBytes(uint64_t N, uint64_t AC, double AtC, double AtN) {
  ByteCost C;
  if (AC >= N) {
    C.PerBlock = AtN / double(N);
    return C;
  }
  C.PerBlock = (AtN - AtC) / double(N - AC);
  C.Fixed = AtC - C.PerBlock * double(AC);
  if (C.PerBlock < 0) { // more for less: charge the most
    C.PerBlock = 0;
    C.Fixed = std::max(AtN, AtC);
  } else if (C.Fixed < 0) {
    // The anchor share misses fewer bytes than the line through the
    // two points says (its data is already there): it costs what it
    // misses, and only blocks beyond it bring bytes in.
    C.Fixed = AtC;
    C.Free = AC;
  }
  return C;
}

/// Whether two searches' inputs are close enough to reuse the first's
/// decision. The grid's block count and the device count must match
/// exactly: a decision is a list of block counts that sums to its grid, and
/// one kept for a grid a block larger or smaller leaves blocks unassigned or
/// assigns blocks that do not exist. The other figures are timings and byte
/// costs, which move by noise from launch to launch.
bool closeSignatures(const std::vector<double> &A,
                     const std::vector<double> &B) {
  constexpr size_t ExactFields = 2;
  if (A.size() != B.size())
    return false;
  for (size_t I = 0; I < ExactFields; ++I)
    if (A[I] != B[I])
      return false;
  for (size_t I = ExactFields; I < A.size(); ++I) {
    double Scale = std::max(std::fabs(A[I]), std::fabs(B[I]));
    if (std::fabs(A[I] - B[I]) > ModelPartitioner::ReuseTolerance * Scale)
      return false;
  }
  return true;
}

/// What the search depends on, per device: the table's throughput at its
/// rows and at the whole grid, the fixed cost and the bytes in.
std::vector<double> signatureOf(const PartitionProblem &P) {
  uint64_t N = P.TotalBlocks;
  size_t K = P.Devices.size();
  std::vector<double> Signature{double(N), double(K), P.MergeMs, P.SplitMs};
  for (const DeviceCost &C : P.Devices) {
    Signature.push_back(C.Perf.throughput(N));
    for (const auto &[B, T] : C.Perf.rows()) {
      Signature.push_back(double(B));
      Signature.push_back(T);
    }
    Signature.push_back(C.FixedMs);
    Signature.push_back(C.In.Fixed);
    Signature.push_back(C.In.PerBlock);
    Signature.push_back(double(C.In.Free));
    for (const ByteCost *B : {&C.HostIn, &C.HostOut}) {
      Signature.push_back(B->Fixed);
      Signature.push_back(B->PerBlock);
    }
    Signature.push_back(C.HostInGBps);
    Signature.push_back(C.HostOutGBps);
  }
  return Signature;
}

} // namespace

PartitionProblem ModelPartitioner::problemFor(const SplitRequest &R,
                                             SplitResult &Out) const {
  size_t K = R.Devices.size();
  uint64_t N = R.TotalBlocks;
  PartitionProblem P;
  P.TotalBlocks = N;
  P.Links = LinkMode::Concurrent;
  P.AggregateH2DGBps = R.AggregateH2DGBps;
  P.AggregateD2HGBps = R.AggregateD2HGBps;
  P.NeedsMerge = R.NeedsMerge;
  P.MergeMs = R.MergeMs;
  P.SplitMs = R.SplitMs;
  P.MinDeviceGain = MinDeviceGain;
  P.Devices.resize(K);
  for (size_t D = 0; D < K; ++D) {
    DeviceCost &C = P.Devices[D];
    C.Name = R.Devices[D].Name;
    C.Perf = table(R, D, &Out.Devices[D]);
    C.FixedMs = R.Devices[D].FixedMs;
    double Link = R.Devices[D].LinkGBps > 0
                      ? R.Devices[D].LinkGBps
                      : profile_defaults::GpuHostLinkGBps;
    C.H2DGBps = C.D2HGBps = Link;
    C.SerialGroup = R.Devices[D].SerialGroup;
    C.InLatencyMs = R.Devices[D].CopyLatencyMs;
  }

  return P;
}

std::vector<uint64_t>
ModelPartitioner::anchorShares(const SplitRequest &R,
                               const PartitionProblem &P) const {
  size_t K = R.Devices.size();
  uint64_t N = R.TotalBlocks;
  // Anchors: where each device's share would lie, for the byte evaluation:
  // the last decision for this table when it covered these devices, else
  // shares proportional to the tables' throughput, in device order.
  std::vector<uint64_t> Anchor(K, 0);
  {
    std::lock_guard<std::mutex> Lock(Mutex);
    auto It = Last.find(R.Key.text());
    if (It != Last.end()) {
      uint64_t Sum = 0;
      for (size_t D = 0; D < K; ++D) {
        auto B = It->second.find(R.Devices[D].Name);
        Anchor[D] = B == It->second.end() ? 0 : B->second;
        Sum += Anchor[D];
      }
      if (Sum != N)
        std::fill(Anchor.begin(), Anchor.end(), 0);
    }
  }
  if (std::all_of(Anchor.begin(), Anchor.end(),
                  [](uint64_t B) { return B == 0; })) {
    double Sum = 0;
    std::vector<double> Thr(K);
    for (size_t D = 0; D < K; ++D)
      Sum += Thr[D] = P.Devices[D].Perf.throughput(N);
    uint64_t Given = 0;
    for (size_t D = 0; D < K; ++D) {
      Anchor[D] = Sum > 0 ? uint64_t(double(N) * Thr[D] / Sum) : N / K;
      Anchor[D] = std::min(Anchor[D], N - Given);
      Given += Anchor[D];
    }
    Anchor[0] += N - Given;
  }
  return Anchor;
}

/// Bytes in and the program's own copies, affine in the share: exact at
/// the anchor and at the whole grid (the single-device root of the
/// search).
void ModelPartitioner::chargeBytes(const SplitRequest &R,
                                   const std::vector<uint64_t> &Anchor,
                                   PartitionProblem &P, SplitResult &Out) {
  size_t K = R.Devices.size();
  uint64_t N = R.TotalBlocks;
  uint64_t First = 0;
  for (size_t D = 0; D < K; ++D) {
    uint64_t AF = First, AC = Anchor[D];
    First += Anchor[D];
    if (AC == 0) { // no anchor share: an equal share where it would start
      AC = std::max<uint64_t>(1, N / K);
      AF = std::min(AF, N - AC);
    }
    if (AC == N) {
      AC = std::max<uint64_t>(1, N / 2);
      AF = 0;
    }
    ShareBytes AtN = missingBytes(R, D, 0, N), AtC = missingBytes(R, D, AF, AC);
    DeviceCost &C = P.Devices[D];
    C.In = fitBytes(N, AC, AtC.Effective, AtN.Effective);
    C.HostIn = fitBytes(N, AC, AtC.HostIn, AtN.HostIn);
    C.HostOut = fitBytes(N, AC, AtC.HostOut, AtN.HostOut);
    C.CopiesOnHost = !R.Devices[D].Gpu;
    C.HostInGBps = R.Devices[D].HostInGBps;
    C.HostOutGBps = R.Devices[D].HostOutGBps;
    Out.Devices[D].In = C.In;
    Out.Devices[D].HostIn = C.HostIn;
    Out.Devices[D].HostOut = C.HostOut;
    C.PipelineFactor = pipelineFactor(R.Devices[D], C, N, AtN);
    Out.Devices[D].PipelineFactor = C.PipelineFactor;
  }
}

double ModelPartitioner::pipelineFactor(const SplitDevice &Dev,
                                        const DeviceCost &C, uint64_t N,
                                        const ShareBytes &AtN) {
  if (!Dev.PipelineLinks || !Dev.Gpu || N == 0 ||
      AtN.Raw < double(std::max<uint64_t>(Dev.PipelineMinBytes, 1)))
    return 0;
  // The whole grid on this GPU, as the pipeliner would plan it: its
  // inputs, the results the program reads back, its table's time.
  tpsm::Workload W;
  W.Blocks = N;
  W.Send.PerBlock = AtN.Raw / double(N);
  W.Receive.PerBlock = AtN.HostOut / double(N);
  W.Kernel = tpsm::proportionalKernelTime(C.Perf.timeMs(N) / 1e3 / double(N));
  W.MinChunk = std::max<uint64_t>(Dev.Wave, 1);
  tpsm::Plan TP = tpsm::plan(W, *Dev.PipelineLinks);
  if (!TP.Pipelined || !(TP.BoundSeconds > 0))
    return 0;
  return std::max(1.0, TP.PipelinedSeconds / TP.BoundSeconds);
}

void ModelPartitioner::consultBalancer(const PartitionProblem &P,
                                       BalanceMode Mode, Reusable &Search) {
  Search.BalancerTried = true;
  BalancedPartition B;
  if (Result Res = balancePartition(P, B); !Res.ok()) {
    Search.BalancerWhy = Res.message();
    return;
  }
  Search.GreedyMs = Search.Decision.PredictedMs;
  Search.BalancerMs = B.Decision.PredictedMs;
  Search.EstimatedBalance = B.EstimatedRatio;
  if (Mode == BalanceMode::Balancer ||
      B.Decision.PredictedMs < Search.Decision.PredictedMs) {
    Search.Decision = B.Decision;
    Search.BalancerKept = true;
  }
}

void ModelPartitioner::chooseDecision(const SplitRequest &R,
                                      const PartitionProblem &P,
                                      const Reusable &Search,
                                      SplitResult &Out) {
  size_t K = R.Devices.size();
  uint64_t N = R.TotalBlocks;
  PartitionDecision &Dec = Out.Decision;
  // The steady-state decision wins when what it costs more now is repaid
  // by what it saves per launch within as many launches as this key has
  // had before: never for a first launch (SKMD's decision).
  unsigned Before;
  {
    std::lock_guard<std::mutex> Lock(Mutex);
    Before = unsigned(std::max<uint64_t>(Launches[R.Key.text()],
                                          R.PriorLaunches));
  }
  Dec = Search.Decision;
  double Saving = Dec.PredictedMs - Search.Steady.PredictedMs;
  if (Search.HasSteady && Before > 0 && Saving > 0 &&
      Search.SteadyNowMs - Dec.PredictedMs <= double(Before) * Saving) {
    double SingleMs = Dec.SingleDeviceMs;
    Dec = Search.Steady;
    Dec.SingleDeviceMs = SingleMs;
    Dec.PredictedMs = predictPartition(P, Dec.Blocks, Dec.DeviceMs);
    Out.SteadyState = true;
  }
  // The decision in force stays unless the new one is clearly better.
  std::vector<uint64_t> Now(K, 0);
  uint64_t NowTotal = 0;
  {
    std::lock_guard<std::mutex> Lock(Mutex);
    auto It = Last.find(R.Key.text());
    if (It != Last.end() && It->second.size() == K)
      for (size_t D = 0; D < K; ++D) {
        auto B = It->second.find(R.Devices[D].Name);
        if (B == It->second.end()) {
          NowTotal = 0;
          break;
        }
        Now[D] = B->second;
        NowTotal += B->second;
      }
  }
  if (NowTotal == N && Now != Dec.Blocks) {
    // Compared as the decision was made: with this launch's transfers,
    // or per launch in the steady state (no bytes in) when it was
    // planned for that.
    PartitionProblem Basis = P;
    if (Out.SteadyState)
      for (DeviceCost &C : Basis.Devices)
        C.In = ByteCost();
    std::vector<double> Times;
    double NowMs = predictPartition(Basis, Now, Times);
    double BestMs = predictPartition(Basis, Dec.Blocks, Times);
    if (NowMs <= BestMs * (1 + HoldGain)) {
      Dec.Blocks = Now;
      Dec.PredictedMs = predictPartition(P, Now, Dec.DeviceMs);
      Out.SteadyState = false;
      Out.Held = true;
      Out.HeldBestMs = BestMs;
    }
  }
}

void ModelPartitioner::reportShares(const SplitRequest &R,
                                    const PartitionProblem &P,
                                    SplitResult &Out) {
  size_t K = R.Devices.size();
  const PartitionDecision &Dec = Out.Decision;
  // The report: what each device's share costs, at its actual position.
  uint64_t First = 0;
  for (size_t D = 0; D < K; ++D) {
    SplitDeviceReport &Rep = Out.Devices[D];
    Rep.Blocks = Out.Blocks[D];
    Rep.PredictedMs = D < Dec.DeviceMs.size() ? Dec.DeviceMs[D] : 0;
    Rep.ExecMs = P.Devices[D].Perf.timeMs(Rep.Blocks);
    if (Rep.Blocks) {
      ShareBytes B = missingBytes(R, D, First, Rep.Blocks);
      Rep.InBytes = B.Raw;
      Rep.InEffective = B.Effective;
      Rep.OutBytes = B.Out;
      Rep.HostInBytes = B.HostIn;
      Rep.HostOutBytes = B.HostOut;
      const auto &Rows = P.Devices[D].Perf.rows();
      auto It = std::lower_bound(
          Rows.begin(), Rows.end(), Rep.Blocks,
          [](const std::pair<uint64_t, double> &X, uint64_t B) {
            return X.first < B;
          });
      if (It == Rows.end() && !Rows.empty())
        --It;
      if (It != Rows.end()) {
        Rep.Row = It->first;
        std::lock_guard<std::mutex> Lock(Mutex);
        if (const PerfCache::Rows *M =
                Cache.find(R.Devices[D].Identity, R.Key.text())) {
          auto MI = M->find(Rep.Row);
          if (MI != M->end()) {
            Rep.RowMeasured = true;
            Rep.RowSamples = MI->second.Samples;
          }
        }
      }
    }
    First += Rep.Blocks;
  }
}

bool ModelPartitioner::recordOutcome(const PerfKey &Key, double Ms) {
  std::lock_guard<std::mutex> Lock(Mutex);
  auto It = Outcomes.find(Key.text());
  if (It == Outcomes.end() || !It->second.first || !(Ms > 0))
    return false;
  double SingleMs = It->second.second;
  if (SingleMs < MinJudgedMs || !(Ms > SingleMs * (1 + LossTolerance)))
    return false;
  Lost[Key.text()] = {Ms, SingleMs};
  return true;
}

SplitResult ModelPartitioner::split(const SplitRequest &R) {
  SplitResult Out;
  size_t K = R.Devices.size();
  uint64_t N = R.TotalBlocks;
  Out.Blocks.assign(K, 0);
  Out.Devices.assign(K, {});
  Out.Splittable = R.Splittable;
  if (K == 0 || N == 0)
    return Out;
  PartitionProblem P = problemFor(R, Out);
  chargeBytes(R, anchorShares(R, P), P, Out);

  // The best single device, transfers included (the search's root).
  size_t SingleDevice = 0;
  double SingleMs = Infinity;
  {
    std::vector<uint64_t> Q(K, 0);
    std::vector<double> Times;
    for (size_t D = 0; D < K; ++D) {
      std::fill(Q.begin(), Q.end(), 0);
      Q[D] = N;
      double T = predictPartition(P, Q, Times);
      Out.Devices[D].SingleMs = T;
      if (T < SingleMs) {
        SingleMs = T;
        SingleDevice = D;
      }
    }
  }
  // A launch this short on its best device gains less from a split than a
  // split launch costs the host: not searched, run whole.
  bool Splittable = R.Splittable;
  if (Splittable && SingleMs < MinSplitMs) {
    Splittable = false;
    Out.Splittable = false;
    Out.TooShortBelowMs = MinSplitMs;
  }

  PartitionDecision &Dec = Out.Decision;
  std::vector<double> Signature = signatureOf(P);
  bool Searched = false;
  Reusable Search;
  if (Splittable) {
    std::lock_guard<std::mutex> Lock(Mutex);
    auto It = LastSearch.find(R.Key.text());
    if (It != LastSearch.end() && closeSignatures(It->second.Signature, Signature)) {
      Search = It->second;
      Out.Reused = true;
    }
  }
  if (Splittable && !Out.Reused) {
    Search.Decision = partition(P);
    if (R.Irregular && R.Balance != BalanceMode::Greedy)
      consultBalancer(P, R.Balance, Search);
    // Where the data lies now can trap it: a device whose inputs must
    // move in is charged for them at every decision, though once moved
    // they would stay. The decision that ignores bytes in (the steady
    // state of a repeated launch) is searched too.
    bool Moves = false;
    for (const DeviceCost &C : P.Devices)
      Moves |= C.In.Fixed > 0 || C.In.PerBlock > 0;
    if (Moves) {
      PartitionProblem Steady = P;
      for (DeviceCost &C : Steady.Devices)
        C.In = ByteCost();
      Search.Steady = partition(Steady);
      Search.HasSteady = true;
      std::vector<double> Times;
      Search.SteadyNowMs = predictPartition(P, Search.Steady.Blocks, Times);
    }
    Searched = true;
  }
  if (Splittable) {
    chooseDecision(R, P, Search, Out);
    Out.BalancerTried = Search.BalancerTried;
    Out.BalancerKept = Search.BalancerKept;
    Out.BalancerMs = Search.BalancerMs;
    Out.GreedyMs = Search.GreedyMs;
    Out.EstimatedBalance = Search.EstimatedBalance;
    Out.BalancerWhy = Search.BalancerWhy;
  }
  else {
    Dec.Blocks.assign(K, 0);
    Dec.SingleDeviceMs = SingleMs;
    Dec.BaseDevice = SingleDevice;
    Dec.Blocks[Dec.BaseDevice] = N;
    Dec.PredictedMs = predictPartition(P, Dec.Blocks, Dec.DeviceMs);
  }
  // Shares that do not sum to the grid would leave blocks unrun: whatever
  // went wrong above, the launch runs whole on the search's root device.
  // So does a split predicted to lose against that device (one held in
  // force within HoldGain of the best): a split is taken only where it is
  // predicted to win. A single device held in force stays (the hold keeps
  // data from moving for noise), and the steady state is judged per launch
  // from then on, and may cost more now by design.
  uint64_t Covered = 0;
  size_t Working = 0;
  for (uint64_t B : Dec.Blocks) {
    Covered += B;
    Working += B != 0;
  }
  bool Loses = !Out.SteadyState && Working >= 2 && Dec.PredictedMs > SingleMs;
  // A split of this key measured slower than this device was predicted
  // (recordOutcome()): this launch runs whole on it, and its measurement
  // joins the tables before the next search.
  {
    std::lock_guard<std::mutex> Lock(Mutex);
    auto It = Lost.find(R.Key.text());
    if (It != Lost.end()) {
      Out.CorrectedLoss = true;
      Out.LostMs = It->second.first;
      Out.LostPredictedMs = It->second.second;
      Lost.erase(It);
    }
  }
  if (Dec.Blocks.size() != K || Covered != N || Loses || Out.CorrectedLoss) {
    size_t Base = SingleDevice;
    Dec.BaseDevice = Base;
    Dec.SingleDeviceMs = SingleMs;
    Dec.Blocks.assign(K, 0);
    Dec.Blocks[Base] = N;
    Dec.PredictedMs = predictPartition(P, Dec.Blocks, Dec.DeviceMs);
    Out.Held = false;
    Out.SteadyState = false;
  }
  Out.Blocks = Dec.Blocks;
  Out.HostCopyMs = hostCopyMs(P, Out.Blocks);

  {
    std::lock_guard<std::mutex> Lock(Mutex);
    ++Launches[R.Key.text()];
    if (Searched) {
      Search.Signature = std::move(Signature);
      LastSearch[R.Key.text()] = std::move(Search);
    }
    auto &L = Last[R.Key.text()];
    L.clear();
    for (size_t D = 0; D < K; ++D)
      L[R.Devices[D].Name] = Out.Blocks[D];
    Outcomes[R.Key.text()] = {Working >= 2 && !Out.CorrectedLoss &&
                                  Dec.Blocks[SingleDevice] != N,
                              SingleMs};
  }

  reportShares(R, P, Out);
  return Out;
}

std::string SplitResult::describe(const SplitRequest &R) const {
  std::string S;
  char Buf[512];
  size_t Working = 0;
  for (uint64_t B : Blocks)
    Working += B != 0;
  std::snprintf(Buf, sizeof(Buf), "plan %s (model): %llu blocks\n",
                R.Key.text().c_str(),
                static_cast<unsigned long long>(R.TotalBlocks));
  S += Buf;
  for (size_t D = 0; D < Devices.size() && D < R.Devices.size(); ++D) {
    const SplitDeviceReport &Rep = Devices[D];
    if (!Rep.Blocks)
      continue;
    std::string Row =
        Rep.RowMeasured
            ? "measured (" + std::to_string(Rep.RowSamples) + " sample(s))"
            : "seeded";
    char Scale[64] = "";
    if (!Rep.RowMeasured && Rep.MeasuredRows)
      std::snprintf(Scale, sizeof(Scale), " x%.3g", Rep.Scale);
    else if (Rep.ScaleBorrowed)
      std::snprintf(Scale, sizeof(Scale), " x%.3g (as measured elsewhere)",
                    Rep.Scale);
    std::snprintf(
        Buf, sizeof(Buf),
        "  %s: %llu blocks, predicted %.3f ms (run %.3f ms), bytes in %s "
        "(as host-link bytes %s), bytes out %s; "
        "row %llu %s%s; table %zu measured + %zu seeded row(s), wave %llu\n",
        R.Devices[D].Name.c_str(),
        static_cast<unsigned long long>(Rep.Blocks), Rep.PredictedMs,
        Rep.ExecMs, bytesText(Rep.InBytes).c_str(),
        bytesText(Rep.InEffective).c_str(),
        Rep.OutBytes > 0
            ? (bytesText(Rep.OutBytes) + " (to the next reader's device)")
                  .c_str()
            : "0 (writes stay there)",
        static_cast<unsigned long long>(Rep.Row), Row.c_str(), Scale,
        Rep.MeasuredRows, Rep.SeededRows,
        static_cast<unsigned long long>(R.Devices[D].Wave));
    S += Buf;
    if (Rep.PipelineFactor > 0) {
      std::snprintf(Buf, sizeof(Buf),
                    "    pipelined (transfers overlap its run): %.3fx "
                    "max(in, run, out), TPSM's plan over its bound\n",
                    Rep.PipelineFactor);
      S += Buf;
    }
    if (Rep.HostInBytes > 0 || Rep.HostOutBytes > 0) {
      std::snprintf(Buf, sizeof(Buf),
                    "    the program's copies at every launch: %s in at "
                    "%.1f GB/s, %s out at %.1f GB/s\n",
                    bytesText(Rep.HostInBytes).c_str(),
                    R.Devices[D].HostInGBps,
                    bytesText(Rep.HostOutBytes).c_str(),
                    R.Devices[D].HostOutGBps);
      S += Buf;
    }
  }
  std::string Single =
      Decision.BaseDevice < R.Devices.size()
          ? R.Devices[Decision.BaseDevice].Name
          : std::string("?");
  if (TooShortBelowMs > 0) {
    std::snprintf(Buf, sizeof(Buf),
                  "  whole on %s, predicted %.3f ms: too short to split "
                  "(below %.3f ms on its best device)\n",
                  Single.c_str(), Decision.PredictedMs, TooShortBelowMs);
  } else if (!Splittable) {
    std::snprintf(Buf, sizeof(Buf),
                  "  whole on %s, predicted %.3f ms: %s\n", Single.c_str(),
                  Decision.PredictedMs, R.WhyWhole.c_str());
  } else if (Working <= 1) {
    std::snprintf(Buf, sizeof(Buf),
                  "  single device %s: %.3f ms; splitting does not pay "
                  "(no offload lowered the prediction%s)\n",
                  Single.c_str(), Decision.SingleDeviceMs,
                  R.NeedsMerge ? "; a split needs a merge" : "");
  } else {
    char Merge[128] = "";
    if (R.NeedsMerge)
      std::snprintf(Merge, sizeof(Merge), ", merge %.3f ms", R.MergeMs);
    if (R.SplitMs > 0)
      std::snprintf(Merge + std::strlen(Merge), sizeof(Merge) - std::strlen(Merge),
                    ", exact write sets %.3f ms", R.SplitMs);
    std::snprintf(Buf, sizeof(Buf),
                  "  split over %zu devices: predicted %.3f ms%s; single "
                  "device %s: %.3f ms\n",
                  Working, Decision.PredictedMs, Merge, Single.c_str(),
                  Decision.SingleDeviceMs);
  }
  S += Buf;
  if (BalancerTried) {
    if (!BalancerWhy.empty())
      std::snprintf(Buf, sizeof(Buf), "  balancer (irregular work): no split: %s\n",
                    BalancerWhy.c_str());
    else
      std::snprintf(Buf, sizeof(Buf),
                    "  balancer (irregular work): predicted %.3f ms, "
                    "estimated balance ratio %.3f; greedy search %.3f ms: "
                    "%s kept\n",
                    BalancerMs, EstimatedBalance, GreedyMs,
                    BalancerKept ? "the balancer's split" : "the greedy split");
    S += Buf;
  }
  if (HostCopyMs > 0) {
    std::snprintf(Buf, sizeof(Buf),
                  "  of which the program's own copies before and after the "
                  "launch: %.3f ms (charged in the steady state too)\n",
                  HostCopyMs);
    S += Buf;
  }
  if (SteadyState)
    S += "  planned for the steady state: moving the data in now is repaid "
         "by the launches this kernel has had so far\n";
  if (Reused)
    S += "  the previous decision, kept: tables and bytes in moved less "
         "than 3 %\n";
  if (CorrectedLoss) {
    std::snprintf(Buf, sizeof(Buf),
                  "  whole on the best single device: the last split "
                  "measured %.3f ms, more than %.0f %% over its %.3f ms "
                  "predicted\n",
                  LostMs, ModelPartitioner::LossTolerance * 100,
                  LostPredictedMs);
    S += Buf;
  }
  if (Held) {
    std::snprintf(Buf, sizeof(Buf),
                  "  the decision in force, kept: the best found predicts "
                  "%.3f ms, less than %.0f %% faster\n",
                  HeldBestMs, ModelPartitioner::HoldGain * 100);
    S += Buf;
  }
  return S;
}

} // namespace rt
} // namespace cleave
