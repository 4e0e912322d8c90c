//===- Issue.cpp - Starting the runs ----------------------------------------===//
//
// Part of Cleave's runtime (no LLVM). See LaunchContext.h.
//
//===----------------------------------------------------------------------===//

#include "LaunchContext.h"

namespace cleave {
namespace rt {
namespace engine {

/// Launches a kernel over blocks [First, First + Count) of the request's
/// grid on \p Dev: a GPU variant (asynchronously, on the device's compute
/// stream) or a CPU descriptor (now). \p ArgPtrs holds the original
/// parameters (and, for merges, the partial pointers); the partition
/// parameters are appended for the partition-ready and merge variants.
Result LaunchContext::launchOne(Location Dev, bool GpuMerge,
                                const std::string &Entry,
                                const cleave_cpu_kernel_desc *CpuDesc,
                                uint64_t First, uint64_t Count,
                                std::vector<void *> &ArgPtrs,
                                std::vector<uint32_t> &PartParams) {
  Device &D = Bufs.device(Dev);
  bool Whole = First == 0 && Count == Total && !GpuMerge && !CpuDesc;
  if (isCpu(Dev) && CpuDesc == K.Cpu) {
    // The CPU variant takes the block range natively.
    cleave_cpu_launch L;
    for (int X = 0; X < 3; ++X) {
      L.grid[X] = Req.Grid[X];
      L.block[X] = Req.Block[X];
    }
    L.dynamic_shared_bytes = Req.DynamicSharedBytes;
    Result S = Exec.launch(*CpuDesc, ArgPtrs.data(), L, First, Count);
    if (!S.ok())
      return Result::error(S.code(), Info.Name + " on " + D.name() + " " +
                                         blocksText(First, Count) + ": " +
                                         S.message());
    return Result::success();
  }
  FunctionHandle F = nullptr;
  if (!CpuDesc) {
    Result R = gpuFunction(Bufs, Prog, Dev, Entry, F);
    if (!R.ok())
      return R;
  }
  if (Whole) {
    uint32_t Grid[3] = {Req.Grid[0], Req.Grid[1], Req.Grid[2]};
    uint32_t Block[3] = {Req.Block[0], Req.Block[1], Req.Block[2]};
    return D.launchKernel(F, Grid, Block, Req.DynamicSharedBytes,
                          runStream(Dev), ArgPtrs.data());
  }
  if (!GpuMerge && !CpuDesc) {
    bool Used = false;
    Result R = launchRebased(Dev, First, Count, ArgPtrs, Used);
    if (Used || !R.ok())
      return R;
  }
  // Partition-ready or merge variant: chunks of at most 2^31 - 1 blocks.
  size_t Base = ArgPtrs.size();
  uint64_t Chunks = (Count + 0x7FFFFFFEu) / 0x7FFFFFFFu;
  PartParams.assign(Chunks * NumPartitionParams, 0);
  std::vector<void *> All = ArgPtrs;
  All.resize(Base + NumPartitionParams);
  for (uint64_t C = 0, Done = 0; C < Chunks; ++C) {
    uint64_t N = std::min<uint64_t>(Count - Done, 0x7FFFFFFFu);
    uint32_t *Vals = &PartParams[C * NumPartitionParams];
    if (!computePartitionParams(First + Done, Req.Grid[0], Req.Grid[1],
                                Req.Grid[2], Vals) ||
        !isValidPartitionLaunch(First + Done, N, Req.Grid[0], Req.Grid[1],
                                Req.Grid[2]))
      return invalid("blocks [" + std::to_string(First + Done) + ", " +
                     std::to_string(First + Done + N) +
                     ") cannot be launched as a partition");
    for (unsigned P = 0; P < NumPartitionParams; ++P)
      All[Base + P] = &Vals[P];
    uint32_t Grid[3] = {uint32_t(N), 1, 1};
    uint32_t Block[3] = {Req.Block[0], Req.Block[1], Req.Block[2]};
    Result R;
    if (CpuDesc) {
      cleave_cpu_launch L;
      for (int X = 0; X < 3; ++X) {
        L.grid[X] = Grid[X];
        L.block[X] = Block[X];
      }
      L.dynamic_shared_bytes = Req.DynamicSharedBytes;
      Result S = Exec.launch(*CpuDesc, All.data(), L, 0, N);
      if (!S.ok())
        R = Result::error(S.code(),
                          std::string(CpuDesc->name ? CpuDesc->name : "?") +
                              " on " + D.name() + ": " + S.message());
    } else {
      // The launch reads the parameter values when it is issued.
      R = D.launchKernel(F, Grid, Block, Req.DynamicSharedBytes,
                         runStream(Dev), All.data());
    }
    if (!R.ok())
      return R;
    Done += N;
  }
  return Result::success();
}

/// The dimension a rebased variant would cut: the highest one with more
/// than one block (x for a single block).
unsigned LaunchContext::slabDim() const {
  return Req.Grid[2] > 1 ? 2 : Req.Grid[1] > 1 ? 1 : 0;
}

/// Blocks in one slab of index along \p Dim (every block of the lower
/// dimensions): ranges that start and end at multiples of it are boxes.
uint64_t LaunchContext::slabBlocks(unsigned Dim) const {
  uint64_t S = 1;
  for (unsigned D = 0; D < Dim; ++D)
    S *= Req.Grid[D];
  return S;
}

/// A range on a GPU that is a whole number of slabs runs the rebased
/// variant (the kernel's own code, docs/transforms.md) instead of the
/// partition-ready one. Policy and model partitions are cut at slab
/// boundaries when the kernel has one; a range that would become empty goes
/// to its neighbour. Explicit partitions are kept as given.
std::vector<PartitionRange>
LaunchContext::alignToSlabs(std::vector<PartitionRange> Ranges) const {
  unsigned Dim = slabDim();
  uint64_t Slab = slabBlocks(Dim);
  if (Explicit || Slab <= 1 || Ranges.size() < 2 || !Fp ||
      !Fp->rebasedVariant(Dim) || !Opts.Tune.Rebase)
    return Ranges;
  std::sort(Ranges.begin(), Ranges.end(),
            [](const PartitionRange &A, const PartitionRange &B) {
              return A.First < B.First;
            });
  std::vector<PartitionRange> Out;
  uint64_t Start = 0;
  for (size_t I = 0; I < Ranges.size(); ++I) {
    uint64_t End = Ranges[I].First + Ranges[I].Count;
    if (I + 1 < Ranges.size())
      End = std::min(Total, (End + Slab / 2) / Slab * Slab);
    else
      End = Total;
    if (End <= Start)
      continue;
    Out.push_back({Ranges[I].Device, Start, End - Start});
    Start = End;
  }
  return Out;
}

Result LaunchContext::launchRebased(Location Dev, uint64_t First,
                                    uint64_t Count,
                                    const std::vector<void *> &ArgPtrs,
                                    bool &Used) {
  Used = false;
  unsigned Dim = slabDim();
  uint64_t Slab = slabBlocks(Dim);
  const RebasedVariant *V = Fp ? Fp->rebasedVariant(Dim) : nullptr;
  if (!V || First % Slab || Count % Slab || Count / Slab > 0x7FFFFFFFu ||
      !Opts.Tune.Rebase)
    return Result::success();
  std::vector<RebaseValue> Vals;
  std::string Why;
  LaunchPlan::Run *Run = nullptr;
  for (LaunchPlan::Run &X : Plan.Runs)
    if (X.Device == Dev && X.First == First && X.Count == Count && !X.IsMerge)
      Run = &X;
  if (!Fp->rebase(Config, Dim, int64_t(First / Slab), Vals, Why)) {
    if (Run)
      Run->Variant = "partition (not rebased: " + Why + ")";
    return Result::success();
  }
  FunctionHandle F = nullptr;
  Result R = gpuFunction(Bufs, Prog, Dev, V->Entry, F);
  if (!R.ok())
    return R;
  // The extra parameters come before the kernel's own; cuLaunchKernel
  // copies the values when the launch is issued.
  std::vector<uint64_t> Storage(Vals.size());
  std::vector<void *> All;
  for (size_t I = 0; I < Vals.size(); ++I) {
    const RebaseValue &X = Vals[I];
    if (X.IsPointer) {
      uint64_t P = 0;
      std::memcpy(&P, ArgPtrs[X.ArgNo], sizeof(P));
      Storage[I] = P + uint64_t(X.Value);
    } else if (X.Bits == 32) {
      int32_t V32 = int32_t(X.Value);
      std::memcpy(&Storage[I], &V32, sizeof(V32));
    } else {
      std::memcpy(&Storage[I], &X.Value, sizeof(X.Value));
    }
    All.push_back(&Storage[I]);
  }
  All.insert(All.end(), ArgPtrs.begin(), ArgPtrs.end());
  uint32_t Grid[3] = {Req.Grid[0], Req.Grid[1], Req.Grid[2]};
  Grid[Dim] = uint32_t(Count / Slab);
  uint32_t Block[3] = {Req.Block[0], Req.Block[1], Req.Block[2]};
  Used = true;
  if (Run)
    Run->Variant = "rebased";
  Device &D = Bufs.device(Dev);
  return D.launchKernel(F, Grid, Block, Req.DynamicSharedBytes,
                        runStream(Dev), All.data());
}

/// Issues a run: a GPU launch (asynchronous) or, for a CPU device, the
/// launch's fault check (the CPU variant runs in runCpu).
Result LaunchContext::issue(RunState &R) {
  if (isCpu(R.Dev))
    return Bufs.device(R.Dev).checkLaunchFault();
  timeEvents(R);
  return issueLaunch(R);
}

void LaunchContext::timeEvents(RunState &R) {
  // The model policy (and CLEAVE_LOG=time) times the range with events
  // around its launch(es) on the compute stream (read after the stream is
  // synchronized).
  R.TimeStart = R.TimeEnd = nullptr;
  // A slice's lane is waited for without the engine's lock, while other
  // launches reuse the engine's events: slices are not timed here.
  if (Req.Slice)
    return;
  if ((Timed && SplitDevs.count(R.Dev)) || LogTime) {
    size_t &Used = EventsUsed[R.Dev];
    R.TimeStart = Model.event(Bufs, R.Dev, Used);
    R.TimeEnd = Model.event(Bufs, R.Dev, Used + 1);
    Used += 2;
    if (!R.TimeStart || !R.TimeEnd)
      R.TimeStart = R.TimeEnd = nullptr;
  }
}

Result LaunchContext::issueLaunch(RunState &R) {
  Device &D = Bufs.device(R.Dev);
  const std::string &Entry =
      R.Count == Total ? Info.variant(VariantKind::Original).Entry
                       : Info.variant(VariantKind::Partition).Entry;
  Result Res = fillScratch(R, runStream(R.Dev));
  if (!Res.ok())
    return Res;
  if (R.TimeStart && !D.recordEvent(R.TimeStart, runStream(R.Dev)).ok())
    R.TimeStart = R.TimeEnd = nullptr;
  // A slice with pieces issues them itself (CoRunSlices.cpp).
  bool Issued = Req.Slice && Req.Slice->NextPiece;
  if (Issued)
    Res = issuePieces(R);
  else
    Res = reorganize(R, Issued);
  if (Res.ok() && !Issued)
    Res = launchOne(R.Dev, false, Entry, nullptr, R.First, R.Count,
                    R.ArgPtrs, R.PartParams);
  if (R.TimeEnd &&
      (!Res.ok() || !D.recordEvent(R.TimeEnd, runStream(R.Dev)).ok()))
    R.TimeStart = R.TimeEnd = nullptr;
  // Behind the kernel on its stream: the wait for the kernel covers it.
  if (Res.ok())
    Res = readScratch(R, runStream(R.Dev));
  return Res;
}

void LaunchContext::choosePooled(std::vector<RunState> &Runs) {
  if (M == Mode::Merge || FaultInjector::global().countsAcrossDevices())
    return;
  std::map<Location, unsigned> PerGpu;
  for (const RunState &R : Runs)
    if (isGpu(R.Dev))
      ++PerGpu[R.Dev];
  if (!Pool.usedFor(PerGpu.size()))
    return;
  for (const auto &[L, N] : PerGpu) {
    if (N != 1)
      return;
    // Loaded here, so that the workers only look modules up.
    Program::Gpu *G = nullptr;
    if (!gpuModule(Bufs, Prog, L, G).ok())
      return;
  }
  // Every GPU's range but the last goes to a worker; the launching thread
  // issues the last one while the others start.
  RunState *Last = nullptr;
  for (RunState &R : Runs)
    if (isGpu(R.Dev)) {
      R.Pooled = true;
      Last = &R;
    }
  Last->Pooled = false;
}

void LaunchContext::wakeIssueWorkers(
    const std::vector<PartitionRange> &Ranges) {
  if (FaultInjector::global().countsAcrossDevices())
    return;
  std::vector<Location> Gpus;
  for (const PartitionRange &R : Ranges)
    if (isGpu(R.Device) &&
        std::find(Gpus.begin(), Gpus.end(), R.Device) == Gpus.end())
      Gpus.push_back(R.Device);
  if (!Pool.usedFor(Gpus.size()))
    return;
  Gpus.pop_back(); // the launching thread issues the last one
  for (Location L : Gpus)
    Pool.wake(size_t(L));
}

Result LaunchContext::runCpu(RunState &R) {
  Result Res = fillScratch(R, nullptr);
  bool Ran = Req.Slice && Req.Slice->NextPiece;
  if (Res.ok() && Ran)
    Res = issuePieces(R);
  else if (Res.ok())
    Res = reorganize(R, Ran);
  if (Res.ok() && !Ran)
    Res = launchOne(R.Dev, false, "", K.Cpu, R.First, R.Count, R.ArgPtrs,
                    R.PartParams);
  if (Res.ok())
    Res = readScratch(R, nullptr);
  return Res;
}

} // namespace engine
} // namespace rt
} // namespace cleave
