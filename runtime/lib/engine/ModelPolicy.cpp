//===- ModelPolicy.cpp - The model policy's decisions -----------------------===//
//
// Part of Cleave's runtime (no LLVM). See LaunchContext.h.
//
//===----------------------------------------------------------------------===//

#include "LaunchContext.h"

namespace cleave {
namespace rt {
namespace engine {

ModelPartitioner &ModelState::planner(BufferManager &Bufs) {
  if (P)
    return *P;
  DeviceProfile Profile;
  std::string Note;
  if (!Opts.ProfilePath.empty()) {
    Result R = loadDeviceProfile(Opts.ProfilePath, Profile);
    if (!R.ok()) {
      std::fprintf(stderr, "cleave: CLEAVE_PROFILE: %s; using defaults\n",
                   R.message().c_str());
      Profile = DeviceProfile();
    }
    for (const std::string &E : Profile.TypeErrors)
      std::fprintf(stderr,
                   "cleave: warning: CLEAVE_PROFILE: device profile %s: %s; "
                   "read as missing\n",
                   Opts.ProfilePath.c_str(), E.c_str());
  }
  std::vector<std::string> Ids;
  for (size_t L = 0; L < Bufs.numDevices(); ++L)
    Ids.push_back(Bufs.device(Location(L)).name() + " " +
                  Bufs.device(Location(L)).properties().Description);
  std::string File = perfCacheFile(Opts.CacheDir, Profile, Ids);
  P = std::make_unique<ModelPartitioner>(std::move(Profile), std::move(File));
  return *P;
}

void ModelState::announce() {
  if (Announced || !P)
    return;
  Announced = true;
  if (Opts.Log.Plan) {
    std::string S = "cleave: model policy: device profile " +
                    P->profile().Source;
    if (!P->profile().FromFile)
      S += " (no CLEAVE_PROFILE: conservative defaults from the device "
           "attributes, docs/partitioner.md)";
    S += "; performance cache " +
         (P->cacheFile().empty() ? std::string("off") : P->cacheFile()) +
         "\n";
    std::fputs(S.c_str(), stderr);
  }
}

EventHandle ModelState::event(BufferManager &Bufs, Location L, size_t Index) {
  std::vector<EventHandle> &E = Events[L];
  while (E.size() <= Index) {
    EventHandle H = nullptr;
    if (!Bufs.device(L).createEvent(H).ok())
      return nullptr;
    E.push_back(H);
  }
  return E[Index];
}

void ModelState::release(BufferManager &Bufs) {
  for (auto &[L, E] : Events)
    for (EventHandle H : E)
      (void)Bufs.device(L).destroyEvent(H);
  Events.clear();
  P.reset();
}

//===----------------------------------------------------------------------===//
// The model policy (ModelPartitioner.h, docs/partitioner.md)
//===----------------------------------------------------------------------===//

namespace {

/// What a range costs the engine besides the device's own launch: footprint
/// evaluation, transfer planning, argument translation. bench/engine
/// measures 3-9 us per range on null GPUs on the 2-core build VM
/// (bench/results/engine-overhead/
/// engine-overhead-2026-11-21-vm-e53ea6a.md); charged at about twice that.
/// A GPU adds the profile's launch and synchronization; a CPU range its
/// executor's dispatch.
constexpr double EngineRangeMs = 0.01;
constexpr double CpuRangeMs = 0.02;
/// The engine's host time per row of an exact write set in a split launch
/// (validity updates of every location, the rows' expansion): 0.06 us over
/// 2 null GPUs and 0.11 us over 4 for a transpose's column bands on the
/// build VM (the same results); the larger one.
constexpr double EngineRowUs = 0.1;

/// The seed's floor: a GPU wave takes at least 2 us, a CPU block 1 ns per
/// thread (the seed has no compute term; measurements correct it).
constexpr double GpuSeedMinWaveMs = 0.002;
constexpr double CpuSeedNsPerThread = 1.0;

/// The program's copies into and out of the host copy move about 0.7 bytes
/// per byte of the CPU's triad bandwidth: on 4x H200's host, vecadd from
/// the host on the CPU alone spent 37 ms more than with its data resident,
/// copying 3.2 GB (87 GB/s), against a triad of 121 GB/s
/// (the 4x H200 headline run of 2026-11-22, in git history).
constexpr double HostCopyPerTriad = 0.7;
/// Launches without any of the program's copies, counted at one search,
/// after which copies before two launches in a row search again at once
/// (ModelState::CachedDecision::Quiet): more than a search's first gaps (1 to
/// 4 launches), which say nothing of a pattern.
constexpr uint64_t QuietLaunches = 4;

} // namespace

SplitDevice LaunchContext::planDevice(Location L, unsigned BlockThreads) {
  const DeviceProperties &Props = Bufs.device(L).properties();
  const DeviceProfile &Prof = Model.P->profile();
  SplitDevice D;
  D.Name = Props.Name;
  // GPUs of one model share a table (SKMD profiles device types): their
  // ranges pool their measurements, and equal GPUs get equal shares
  // rather than shares that follow each table's noise.
  D.Identity = Props.Description;
  if (isGpu(L)) {
    D.Gpu = true;
    const GpuProfile *G = Prof.gpu(Props.Ordinal);
    unsigned SMs = std::max(1u, Props.ComputeUnits);
    // Resident blocks per SM of the function that runs shares (the
    // partition-ready variant when there is one), from the driver; the
    // thread and block limits when the query fails.
    const BundleVariant &Part = Info.variant(VariantKind::Partition);
    const std::string &Entry =
        Part.Present ? Part.Entry : Info.variant(VariantKind::Original).Entry;
    unsigned PerSM = 0;
    FunctionHandle F = nullptr;
    if (gpuFunction(Bufs, Prog, L, Entry, F).ok())
      (void)Bufs.device(L).maxActiveBlocksPerSM(F, BlockThreads,
                                                Req.DynamicSharedBytes, PerSM);
    if (!PerSM) {
      unsigned Threads = G && G->MaxThreadsPerSM ? G->MaxThreadsPerSM : 2048;
      unsigned Blocks = G && G->MaxBlocksPerSM ? G->MaxBlocksPerSM : 32;
      PerSM = std::max(1u, std::min(Blocks, Threads / std::max(1u,
                                                               BlockThreads)));
    }
    D.Wave = uint64_t(SMs) * PerSM;
    D.SeedGBps = G && G->DramGBps > 0
                     ? G->DramGBps
                     : SMs * profile_defaults::GpuDramGBpsPerSM;
    D.SeedMinWaveMs = GpuSeedMinWaveMs;
    double Us = G && G->LaunchRoundTripUs > 0 ? G->LaunchRoundTripUs + G->SyncUs
                                              : profile_defaults::GpuLaunchUs;
    D.FixedMs = Us / 1000.0 + EngineRangeMs;
    // A copy is issued and waited for like a launch.
    D.CopyLatencyMs = Us / 1000.0;
    D.LinkGBps = G && G->PageableH2DGBps > 0
                     ? G->PageableH2DGBps
                     : profile_defaults::GpuHostLinkGBps;
    D.PipelineLinks = pipelineLinks(L);
    D.PipelineMinBytes = Pipe.Opt.MinBytes;
  } else {
    unsigned Threads = std::max(1u, Exec.numThreads());
    D.Wave = Threads;
    D.SeedGBps = Prof.Cpu.TriadGBps > 0
                     ? Prof.Cpu.TriadGBps
                     : Threads * profile_defaults::CpuTriadGBpsPerThread;
    D.SeedMinWaveMs = BlockThreads * CpuSeedNsPerThread * 1e-6;
    D.FixedMs = CpuRangeMs;
    // Its inputs come from GPUs: a copy there, issued and waited for.
    const GpuProfile *G = Prof.gpu(0);
    D.CopyLatencyMs =
        (G && G->LaunchRoundTripUs > 0 ? G->LaunchRoundTripUs + G->SyncUs
                                       : profile_defaults::GpuLaunchUs) /
        1000.0;
    D.LinkGBps = Prof.Cpu.TriadOneThreadGBps > 0
                     ? Prof.Cpu.TriadOneThreadGBps
                     : profile_defaults::CpuOneThreadGBps;
    D.SerialGroup = 0; // every CPU device runs on the same executor
    // ... on the same cores: one table for all of them, so what cpu0
    // measured holds for cpu1 too.
    D.Identity = "cpu executor (" + std::to_string(Threads) + " threads)";
  }
  return D;
}

void LaunchContext::setModelKey() {
  auto Name = Model.TableNames.find(&Info);
  if (Name == Model.TableNames.end())
    Name = Model.TableNames
               .emplace(&Info, tableKernelName(Info.Name,
                                               Prog.B.Source + "\n" +
                                                   Info.Footprints))
               .first;
  Key.Kernel = Name->second;
  for (int X = 0; X < 3; ++X)
    Key.Block[X] = Req.Block[X];
  Key.SharedBytes = Req.DynamicSharedBytes;
  Key.GridClass = gridClass(Total);
}

ModelState::CachedDecision &
LaunchContext::cachedDecision(const std::vector<Location> &Devs,
                             uint64_t &Prior) {
  // A cached decision for the same launch shape (key, grid size class,
  // buffers and devices) runs again until its next planned search: launches 1-4 each
  // search (the tables and the data's place settle), then launches 9, 19,
  // 39, ... (the gap doubles, at most 64). Only where to run is cached:
  // every launch still goes through decide() and attempt(), so correctness
  // never depends on it. Scalar arguments and offsets into the buffers are
  // not part of the shape: a loop whose launches differ only in a time
  // step or a row index (a dynamic program, an elimination) would
  // otherwise search at every launch, for a decision that the tables,
  // which do not see arguments either, make the same. Past MaxCachedDecisions
  // shapes the cache starts over. Built at every launch, so without
  // temporaries.
  std::string PlanKey = Key.text();
  PlanKey.reserve(PlanKey.size() + 24 + 24 * (2 * Ptrs.size() + Devs.size()));
  auto Append = [&PlanKey](char Sep, int64_t V) {
    char Digits[24];
    PlanKey += Sep;
    PlanKey.append(Digits,
                   std::to_chars(Digits, Digits + sizeof(Digits), V).ptr);
  };
  for (const PtrArg &P : Ptrs) {
    Append(';', P.ArgNo);
    Append(':', int64_t(P.Buf->id()));
  }
  for (Location L : Devs)
    Append('@', L);
  if (Model.Decisions.size() >= ModelState::MaxCachedDecisions &&
      !Model.Decisions.count(PlanKey))
    Model.Decisions.clear();
  ModelState::CachedDecision &Cached = Model.Decisions[PlanKey];
  Prior = Cached.Launches++;
  return Cached;
}

bool LaunchContext::keepDecision(ModelState::CachedDecision &Cached,
                                 uint64_t Prior, bool &CopiesResumed,
                                 std::vector<PartitionRange> &Out) {
  // The key has the grid's size class (PerfKey::GridClass), not its block
  // count: a grid that shrinks by a block per launch (an elimination) keeps
  // a decision to run whole on one device, which holds for any count; a
  // split holds for the count it was made for only.
  bool Kept = Prior > 0 && Prior < Cached.NextSearch &&
              (Cached.Total == Total || Cached.Ranges.size() == 1);
  // A kept decision of a quiet key searches again when the program's
  // copies precede two launches in a row: a phase of launches on resident
  // data has ended, and uploads (or read-backs) now come with every launch.
  // The decision was made without them, and the next planned search may
  // be up to 64 launches away; spread over the quiet launches before them,
  // the copies would count for a fraction of what they cost. Copies before
  // one launch only (an iteration's upload every few steps) change
  // nothing.
  CopiesResumed = false;
  if (Kept && Cached.Quiet) {
    uint64_t Copies = 0;
    for (const PtrArg &P : Ptrs)
      Copies += P.Buf->programWrites() + P.Buf->programReads();
    if (Copies != Cached.CopiesSeen) {
      CopiesResumed = Cached.CopiedBefore + 1 == Prior;
      Cached.CopiedBefore = Prior;
      Cached.CopiesSeen = Copies;
    }
  }
  if (Kept && !CopiesResumed) {
    // A kept decision's ranges are timed only on the launch before the
    // next search, which then sees a fresh measurement: events around
    // every range cost each GPU a few microseconds per launch (two records,
    // an elapsed-time query), as much as a short kernel's split gains.
    Timed = Prior + 1 == Cached.NextSearch;
    Out = Cached.Ranges;
    if (Out.size() == 1) // whole on one device, at this launch's count
      Out.front() = {Out.front().Device, 0, Total};
    if (Timed) // only timings read them
      SplitDevs = Cached.Devs;
    if (Opts.Log.Plan)
      std::fprintf(stderr,
                   "plan %s (model): the decision of launch %llu, kept "
                   "until launch %llu\n",
                   Key.text().c_str(),
                   static_cast<unsigned long long>(Cached.PlannedAt),
                   static_cast<unsigned long long>(Cached.NextSearch + 1));
    return true;
  }
  return false;
}

Result LaunchContext::weighWholeGrid(const std::vector<Location> &Devs,
                                     SplitRequest &PR, double &Written,
                                     bool &Exact) {
  // The whole grid's footprint: the seed's bytes per block, whether the
  // writes are exact, the bytes a merge would handle.
  // Combined outputs are left out of the footprints the search weighs, as
  // a split leaves them out of transfers and validity (their scratch,
  // memset and combine are a region's bytes, small next to the data).
  // decide() sets Combining again for the ranges chosen.
  Combining = !Info.Combined.empty();
  RangeUse Whole;
  Result Ev = evaluate(0, Total, Whole);
  if (!Ev.ok())
    return Ev;
  double Bytes = 0;
  Written = 0;
  Exact = true;
  for (auto &[Id, U] : Whole) {
    Bytes += double(U.Reads.totalBytes() + U.Writes.totalBytes());
    Written += double(U.Writes.totalBytes());
    Exact &= U.WritesExact;
  }
  PR.BytesPerBlock = Bytes / double(std::max<uint64_t>(1, Total));

  // The host's bookkeeping of a split: write sets whose hulls overlap
  // between ranges stay exact, row by row (a transpose's column bands), and
  // cost about EngineRowUs per row per launch (bench/engine). Estimated on
  // halves of the grid.
  std::string SplitKey = Key.text() + "|" + std::to_string(Total);
  for (int64_t A : Config.Args)
    SplitKey += "," + std::to_string(A);
  auto Known = Model.SplitMs.find(SplitKey);
  if (Known != Model.SplitMs.end()) {
    PR.SplitMs = Known->second;
  } else if (Total >= 2 && Devs.size() >= 2) {
    std::vector<PartitionRange> Halves = {{Devs[0], 0, Total / 2},
                                          {Devs[1], Total / 2,
                                           Total - Total / 2}};
    std::vector<RangeUse> HalfUses(2);
    std::vector<RangeUse *> HalfPtrs = {&HalfUses[0], &HalfUses[1]};
    if (evaluate(0, Total / 2, HalfUses[0]).ok() &&
        evaluate(Total / 2, Total - Total / 2, HalfUses[1]).ok()) {
      resolveCoarse(Halves, HalfPtrs);
      double Rows = 0;
      for (const RangeUse &U : HalfUses)
        for (auto &[Id, BU] : U)
          Rows += double(BU.Writes.numRanges());
      PR.SplitMs = Rows * EngineRowUs / 1000.0;
    }
    Model.SplitMs[SplitKey] = PR.SplitMs;
  }
  return Result::success();
}

std::string LaunchContext::whyModelKeepsWhole(const std::vector<Location> &Devs,
                                              const SplitRequest &PR,
                                              bool Exact) const {
  // What decide() would refuse: the planner then only picks the device.
  bool AnyGpu = false;
  for (Location L : Devs)
    AnyGpu |= isGpu(L);
  std::string Why = whyNotSplit(AnyGpu);
  // Combined outputs (docs/runtime.md): split by the model policy only
  // when the grid fills a wave of every GPU. The one-wave histogram of an
  // earlier headline, split over 2 and 4 H200s, measured 0.92x and 0.93x of
  // one (4x H200, 2026-11-22): a partial wave of a
  // latency-bound kernel takes about a whole wave's time, and the tables,
  // whose rows are whole waves, read a partial wave's time as a whole
  // wave's throughput. Explicit partitions and the static policies always
  // combine.
  if (Why.empty() && !Info.Combined.empty()) {
    uint64_t Waves = 0;
    for (const SplitDevice &D : PR.Devices)
      Waves += D.Gpu ? D.Wave : 0;
    if (Total < Waves)
      Why = "its combined outputs are split by the model policy only when "
            "the grid fills a wave of every GPU (" +
            std::to_string(Total) + " blocks, " + std::to_string(Waves) +
            " needed)";
  }
  if (Why.empty() && !Exact)
    if (std::string NoMerge = whyNotMerged(Devs); !NoMerge.empty())
      Why = "its writes are not exact, and " + NoMerge;
  return Why;
}

double LaunchContext::hostLinkGBps(const DeviceProfile &Prof, Location L,
                                   bool ToDevice) const {
  const GpuProfile *G = Prof.gpu(Bufs.device(L).properties().Ordinal);
  double V = !G ? 0 : ToDevice ? G->PageableH2DGBps : G->PageableD2HGBps;
  return V > 0 ? V : profile_defaults::GpuHostLinkGBps;
}

double LaunchContext::pathGBps(const DeviceProfile &Prof, Location Src,
                               Location Dst) const {
  bool SG = Src != HostLocation && isGpu(Src);
  bool DG = Dst != HostLocation && isGpu(Dst);
  if (SG && DG) {
    if (Bufs.device(Src).hasPeerLink(Bufs.device(Dst))) {
      const GpuProfile *G = Prof.gpu(Bufs.device(Src).properties().Ordinal);
      auto It = G ? G->PeerGBps.find(Bufs.device(Dst).properties().Ordinal)
                  : std::map<int, double>::const_iterator();
      return G && It != G->PeerGBps.end() ? It->second
                                          : profile_defaults::GpuPeerGBps;
    }
    return 1.0 / (1.0 / hostLinkGBps(Prof, Src, false) +
                  1.0 / hostLinkGBps(Prof, Dst, true));
  }
  if (SG)
    return hostLinkGBps(Prof, Src, false);
  if (DG)
    return hostLinkGBps(Prof, Dst, true);
  return Prof.Cpu.TriadOneThreadGBps > 0 ? Prof.Cpu.TriadOneThreadGBps
                                         : profile_defaults::CpuOneThreadGBps;
}

void LaunchContext::countProgramCopies(ModelState::CachedDecision &Cached,
                                       uint64_t Prior, bool CopiesResumed) {
  // A program may upload once and launch several times before it uploads
  // again (the steps of an iteration): its copies then recur once per as
  // many launches of this key as it ran between its last search and this
  // one, over the uploads of the busiest buffer in that time (kept when
  // there were none); so for read-backs. The gaps between searches grow
  // (docs/partitioner.md, "Cached decisions"), and so does the count.
  std::vector<uint64_t> Writes, Reads;
  for (const PtrArg &P : Ptrs) {
    Writes.push_back(P.Buf->programWrites());
    Reads.push_back(P.Buf->programReads());
  }
  // Copies that resumed are counted from the launch before the first
  // of them: the buffers' counts then were those of the last search.
  if (CopiesResumed)
    Cached.LaunchesAtSearch = Prior - 2;
  Cached.Quiet = false;
  if (Cached.WritesAtSearch.size() == Writes.size() &&
      Prior > Cached.LaunchesAtSearch) {
    double Launches = double(Prior - Cached.LaunchesAtSearch);
    uint64_t MaxIn = 0, MaxOut = 0;
    for (size_t I = 0; I < Writes.size(); ++I) {
      MaxIn = std::max(MaxIn, Writes[I] - Cached.WritesAtSearch[I]);
      MaxOut = std::max(MaxOut, Reads[I] - Cached.ReadsAtSearch[I]);
    }
    if (MaxIn)
      Cached.InPeriod = std::max(1.0, Launches / double(MaxIn));
    if (MaxOut)
      Cached.OutPeriod = std::max(1.0, Launches / double(MaxOut));
    Cached.Quiet = !MaxIn && !MaxOut && Launches >= QuietLaunches;
  }
  Cached.CopiesSeen = 0;
  for (size_t I = 0; I < Writes.size(); ++I)
    Cached.CopiesSeen += Writes[I] + Reads[I];
  Cached.CopiedBefore = ~uint64_t(0);
  Cached.LaunchesAtSearch = Prior;
  Cached.WritesAtSearch = std::move(Writes);
  Cached.ReadsAtSearch = std::move(Reads);
}

void LaunchContext::hostCopyRates(const DeviceProfile &Prof,
                                  const std::vector<Location> &Devs,
                                  SplitRequest &PR) const {
  for (bool In : {true, false}) {
    // The rates of those copies, as the program's last ones ran
    // (BufferManager::programCopyGBps), averaged over the GPUs of one model
    // as their tables are (a rate timed while other copies ran is noisy,
    // and a GPU timed a little slower would get a smaller share of every
    // launch); a GPU whose model was never copied to takes the other GPUs'
    // average, else its pinned link from the profile. The host
    // copy's is at least HostCopyPerTriad of the CPU's triad bandwidth: the
    // program's first copy into it, often the only one timed before the
    // data stays on a GPU, pays a page fault per page of fresh memory.
    double Sum = 0;
    unsigned Measured = 0;
    for (Location L : Devs)
      if (isGpu(L) && Bufs.programCopyGBps(L, In) > 0) {
        Sum += Bufs.programCopyGBps(L, In);
        ++Measured;
      }
    for (size_t D = 0; D < Devs.size(); ++D) {
      Location L = Devs[D];
      double V = Bufs.programCopyGBps(L, In);
      if (isGpu(L)) {
        double Same = 0;
        unsigned Timed = 0;
        for (size_t E = 0; E < Devs.size(); ++E)
          if (isGpu(Devs[E]) &&
              PR.Devices[E].Identity == PR.Devices[D].Identity &&
              Bufs.programCopyGBps(Devs[E], In) > 0) {
            Same += Bufs.programCopyGBps(Devs[E], In);
            ++Timed;
          }
        V = Timed ? Same / Timed : 0;
      }
      if (!(V > 0) && isGpu(L)) {
        const GpuProfile *G = Prof.gpu(Bufs.device(L).properties().Ordinal);
        double Pinned = !G ? 0 : In ? G->PinnedH2DGBps : G->PinnedD2HGBps;
        V = Measured         ? Sum / Measured
            : Pinned > 0     ? Pinned
                             : profile_defaults::GpuHostLinkGBps;
      } else if (!isGpu(L)) {
        double Floor = Prof.Cpu.TriadGBps > 0
                           ? HostCopyPerTriad * Prof.Cpu.TriadGBps
                           : profile_defaults::CpuOneThreadGBps;
        V = std::max(V, Floor);
      }
      (In ? PR.Devices[D].HostInGBps : PR.Devices[D].HostOutGBps) = V;
    }
  }
}

SplitResult LaunchContext::searchModel(ModelPartitioner &Pl,
                                      const std::vector<Location> &Devs,
                                      SplitRequest &PR,
                                      ModelState::CachedDecision &Cached,
                                      bool &AnyStaged, SteadyTime SearchStart) {
  const DeviceProfile &Prof = Pl.profile();
  // Inputs a cudaMemcpy to the device left in the host copy would be on a
  // device already in CUDA: the first search that meets them charges no
  // device for fetching them (so a program that uploads once and launches
  // many times does not keep its data on the CPU). If a later search meets
  // staged inputs again, the host uploads before every launch: they are
  // then the program's own copies (ShareBytes::HostIn), charged to the
  // share that reads them, whichever device runs it (a GPU at the rate of
  // the program's copies to it, the CPU at that of its copies into the
  // host copy), in the steady state as well.
  bool ChargeStaged = Cached.SawStaged;
  AnyStaged = false;
  // Inputs a direct host copy sent straight to a GPU (Buffer::pushedBytes)
  // recur the same way, and once charged count the same way: as the
  // program's copies into whichever device's share reads them (a CPU
  // range's reads stay in the host copy at the next upload,
  // BufferManager::memcpy). Uncharged, they are where they are, and the
  // CPU would have to fetch them: a split that puts them on one GPU would
  // never be undone.
  double RecurringMax = 0;
  // Results the host read back after the last launch are expected to go
  // back again: the program's copies out of the share that writes them
  // (ShareBytes::HostOut), from a GPU or from the host copy.
  double ReadBackMax = 0;
  std::vector<Location> ValidityLocations{HostLocation};
  for (size_t L = 0; L < Bufs.numDevices(); ++L)
    if (Bufs.validityLocation(Location(L)) == Location(L))
      ValidityLocations.push_back(Location(L));
  PR.MissingBytes = [&](size_t D, uint64_t First, uint64_t Count,
                        ShareBytes &Out) {
    Location Dst = Devs[D];
    RangeUse U;
    if (!evaluate(First, Count, U).ok())
      return;
    // A CPU share's inputs come from GPUs, one synchronous copy per range
    // (executeTransfers): every copy after the first (whose wait is
    // InLatencyMs) costs another round trip, charged as the bytes the
    // CPU's link moves in that time. A diagonal of a dynamic program reads
    // a few bytes from each of its rows: on the H200 its one-block launches
    // on cpu0 spent 45-120 us in those copies against the 40 us predicted
    // with one wait, while gpu0 ran them in 13 us. GPU shares keep the one
    // wait: their strided inputs (column bands) were measured that way.
    size_t CopyCount = 0;
    for (auto &[Id, BU] : U) {
      Buffer &B = *BufById[Id];
      RangeSet Need = BU.Reads;
      if (!BU.WritesExact) // made valid before the run (prepare)
        Need.insert(BU.Writes);
      double Recurring = 0;
      for (ByteRange Rg : Need.ranges()) {
        uint64_t Staged = B.stagedBytes(Rg), Pushed = B.pushedBytes(Rg);
        AnyStaged |= Staged > 0 || Pushed > 0;
        if (ChargeStaged)
          Recurring += double(Staged + Pushed);
        std::vector<Transfer> Copies;
        if (!Bufs.planTransfers(B, Dst, Rg, Copies).ok()) {
          Out.Raw += double(Rg.size());
          Out.Effective += double(Rg.size());
          continue;
        }
        CopyCount += Copies.size();
        for (const Transfer &T : Copies) {
          double Bytes = double(T.Bytes);
          if (T.Src == HostLocation && !ChargeStaged)
            Bytes -= double(B.stagedBytes({T.Offset, T.Offset + T.Bytes}));
          Out.Raw += Bytes;
          Out.Effective +=
              Bytes * PR.Devices[D].LinkGBps / pathGBps(Prof, T.Src, T.Dst);
        }
      }
      Out.HostIn += Recurring / Cached.InPeriod;
      RecurringMax = std::max(RecurringMax, Recurring);
      double Back = 0;
      for (ByteRange Rg : BU.Writes.ranges())
        Back += double(B.readBackBytes(Rg));
      Out.HostOut += Back / Cached.OutPeriod;
      ReadBackMax = std::max(ReadBackMax, Back);
      // Results the last launch to read them read on another device: that
      // launch, if it runs again where it ran, fetches them from this
      // share (docs/partitioner.md, "Results the next launch reads
      // elsewhere"). Not for a share that reads the buffer itself: its
      // own next launch reads it too, and follows this split.
      if (BU.Reads.empty() && !BU.Writes.empty())
        for (Location E : ValidityLocations) {
          if (E == Bufs.validityLocation(Dst))
            continue;
          double Bytes = 0;
          for (ByteRange Rg : BU.Writes.ranges())
            Bytes += double(B.lastReadBytes(Rg, E));
          if (Bytes <= 0)
            continue;
          // After every launch, as the program's read-backs: at this
          // path's rate, as bytes at the share's rate of those.
          Out.Out += Bytes;
          Out.HostOut += Bytes * PR.Devices[D].HostOutGBps / pathGBps(Prof, Dst, E);
        }
    }
    const SplitDevice &SD = PR.Devices[D];
    if (!SD.Gpu && CopyCount > 1)
      Out.Effective += double(CopyCount - 1) * SD.CopyLatencyMs * 1e-3 *
                       SD.LinkGBps * 1e9;
  };

  SplitResult Res = Pl.split(PR);
  if (Opts.Log.Plan) {
    std::fputs(Res.describe(PR).c_str(), stderr);
    if (AnyStaged && !ChargeStaged)
      std::fputs("  inputs a cudaMemcpy or cudaMemset left in the host copy "
                 "or sent to a device not charged (first search that meets "
                 "them)\n",
                 stderr);
    if (RecurringMax > 0)
      std::fprintf(stderr,
                   "  inputs the host rewrote before this launch charged as "
                   "the program's copies into each share (up to %.0f B per "
                   "range and buffer, once every %.1f launches)\n",
                   RecurringMax, Cached.InPeriod);
    if (ReadBackMax > 0)
      std::fprintf(stderr,
                   "  results the host read back after the last launch "
                   "charged as the program's copies out of each share (up "
                   "to %.0f B per range and buffer, once every %.1f "
                   "launches)\n",
                   ReadBackMax, Cached.OutPeriod);
    std::fprintf(stderr, "  search: %.3f ms of host time\n",
                 std::chrono::duration<double, std::milli>(
                     std::chrono::steady_clock::now() - SearchStart)
                     .count());
  }
  return Res;
}

Result LaunchContext::scheduleByModel(const std::vector<Location> &Devs,
                                std::vector<PartitionRange> &Out) {
  ModelPartitioner &Pl = Model.planner(Bufs);
  Model.announce();
  const DeviceProfile &Prof = Pl.profile();
  Timed = true;
  setModelKey();
  uint64_t Prior = 0;
  ModelState::CachedDecision &Cached = cachedDecision(Devs, Prior);
  Decided = &Cached;
  bool CopiesResumed = false;
  if (keepDecision(Cached, Prior, CopiesResumed, Out))
    return Result::success();

  // A search: the devices, the grid's footprints and what the kernel
  // refuses, the program's copies, then the planner. Its host time is
  // logged with CLEAVE_LOG=plan.
  auto SearchStart = std::chrono::steady_clock::now();
  unsigned BlockThreads = Req.Block[0] * Req.Block[1] * Req.Block[2];
  SplitRequest PR;
  PR.Key = Key;
  PR.TotalBlocks = Total;
  PR.PriorLaunches = Prior;
  for (Location L : Devs) {
    SplitDevs[L] = planDevice(L, BlockThreads);
    PR.Devices.push_back(SplitDevs[L]);
  }
  double Written = 0;
  bool Exact = true;
  if (Result Ev = weighWholeGrid(Devs, PR, Written, Exact); !Ev.ok())
    return Ev;
  PR.WhyWhole = whyModelKeepsWhole(Devs, PR, Exact);
  PR.Splittable = PR.WhyWhole.empty();
  PR.Irregular = !Info.Inspector.empty();
  PR.Balance = Opts.Tune.Balance;
  PR.NeedsMerge = !Exact;
  PR.AggregateH2DGBps = Prof.AggregateH2DGBps;
  PR.AggregateD2HGBps = Prof.AggregateD2HGBps;
  double SlowestLink = std::numeric_limits<double>::infinity();
  double FastestMemory = 0;
  for (const SplitDevice &D : PR.Devices) {
    SlowestLink = std::min(SlowestLink, D.LinkGBps);
    FastestMemory = std::max(FastestMemory, D.SeedGBps);
  }
  // A merge moves what the other devices wrote to the merge device and
  // reads it there once more: charged for every written byte (an upper
  // bound: the merge device's own share does not move).
  if (PR.NeedsMerge && Written > 0 && SlowestLink > 0 && FastestMemory > 0)
    PR.MergeMs = Written / (SlowestLink * 1e6) + Written / (FastestMemory * 1e6);
  countProgramCopies(Cached, Prior, CopiesResumed);
  hostCopyRates(Prof, Devs, PR);
  bool AnyStaged = false;
  SplitResult Res = searchModel(Pl, Devs, PR, Cached, AnyStaged, SearchStart);
  routeInsteadOfSplit(Devs, Res);
  Out.clear();
  uint64_t First = 0;
  for (size_t D = 0; D < Devs.size(); ++D)
    if (Res.Blocks[D]) {
      Out.push_back({Devs[D], First, Res.Blocks[D]});
      First += Res.Blocks[D];
    }
  if (First != Total) // cannot happen: the planner's shares sum to the grid
    return Result::error(ErrorCode::Unknown,
                         "the model policy's shares of " + Info.Name +
                             " do not cover the grid");
  Cached.Ranges = Out;
  Cached.Total = Total;
  Cached.Devs = SplitDevs;
  Cached.SawStaged |= AnyStaged;
  uint64_t Done = Prior + 1; // launches including this one
  Cached.PlannedAt = Done;
  // A launch too short to split on its best device, as measured there, is
  // searched again only after as many launches again, 16 at least: a
  // search costs 0.2-1 ms of host time (a pitched stencil's on the H200:
  // 0.75 ms against its 10 us kernel, at each of its first launches) and
  // cannot split it. A seeded row's verdict is checked at the next launch.
  size_t Best = Res.Decision.BaseDevice;
  if (Res.TooShortBelowMs > 0 && Best < Res.Devices.size() &&
      Res.Devices[Best].RowMeasured)
    Cached.NextSearch = std::max<uint64_t>(Done * 2, Done + 16);
  else
    Cached.NextSearch = Done < 4 ? Done : std::min(Done * 2, Done + 64);
  return Result::success();
}

class ModelPolicy final : public SchedulingPolicy {
public:
  Result schedule(const ScheduleQuery &Q,
                  std::vector<PartitionRange> &Out) override {
    return Q.Launch->scheduleByModel(Q.Devices, Out);
  }
};

void LaunchContext::noteModelOutcome(double Ms) {
  // A deferred launch returned before its work was done, and a key's
  // first launch pays for loading code and touching fresh memory: neither
  // measures the decision.
  if (!Decided || !Model.P || Plan.Deferred || Decided->Launches <= 1)
    return;
  if (!Model.P->recordOutcome(Key, Ms))
    return;
  Decided->NextSearch = Decided->Launches; // the next launch searches
  if (Opts.Log.Plan)
    std::fprintf(stderr,
                 "plan %s (model): the split took %.3f ms, a loss against "
                 "the best single device's prediction: the next launch "
                 "runs whole there\n",
                 Key.text().c_str(), Ms);
}

void LaunchContext::recordTime(const RunState &R, double Ms) {
  if (!Timed || !Model.P)
    return;
  auto It = SplitDevs.find(R.Dev);
  if (It == SplitDevs.end())
    return;
  Plan.MeasuredMs.push_back(Ms);
  if (isGpu(R.Dev) && Model.Warm.insert({R.Dev, Key.text()}).second)
    return;
  Model.P->record(It->second, Key, R.Count, Ms);
}

/// CLEAVE_LOG=time: one stderr line per range (docs/runtime.md); a range
/// that is not the whole grid names its blocks.
void LaunchContext::logTime(const RunState &R, double Ms) const {
  if (!LogTime)
    return;
  char Line[512];
  int N = std::snprintf(
      Line, sizeof(Line),
      "cleave time %s grid=(%u,%u,%u) block=(%u,%u,%u) device=%s ms=%.6f",
      Info.Name.c_str(), Req.Grid[0], Req.Grid[1], Req.Grid[2], Req.Block[0],
      Req.Block[1], Req.Block[2], name(R.Dev).c_str(), Ms);
  std::string S = N > 0 && size_t(N) < sizeof(Line)
                      ? std::string(Line)
                      : "cleave time " + Info.Name + " ms=" +
                            std::to_string(Ms);
  if (R.Count != Total)
    S += " blocks=" + std::to_string(R.First) + "+" + std::to_string(R.Count);
  S += "\n";
  std::fputs(S.c_str(), stderr);
}

} // namespace engine

SchedulingPolicy &modelPolicy() {
  static engine::ModelPolicy Model;
  return Model;
}

} // namespace rt
} // namespace cleave
