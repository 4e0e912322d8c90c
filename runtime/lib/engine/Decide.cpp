//===- Decide.cpp - Which device runs which blocks --------------------------===//
//
// Part of Cleave's runtime (no LLVM). See LaunchContext.h.
//
//===----------------------------------------------------------------------===//

#include "LaunchContext.h"

namespace cleave {
namespace rt {
namespace engine {

Result LaunchContext::checkRequest() {
  Plan.KernelName = Info.Name;
  unsigned NumArgs = Info.Params.size();
  if (NumArgs && !Req.Args)
    return invalid("launch of " + Info.Name + " without arguments");
  for (unsigned A = 0; A < NumArgs; ++A)
    if (!Req.Args[A])
      return invalid("launch of " + Info.Name + ": argument " +
                     std::to_string(A) + " has no value");
  for (int D = 0; D < 3; ++D)
    if (Req.Grid[D] == 0 || Req.Block[D] == 0)
      return invalid("launch of " + Info.Name +
                     ": grid and block dimensions must be at least 1");
  if (Req.Grid[0] > 0x7FFFFFFFu || Req.Grid[1] > 0xFFFFu ||
      Req.Grid[2] > 0xFFFFu)
    return invalid("launch of " + Info.Name + ": grid " +
                   std::to_string(Req.Grid[0]) + "x" +
                   std::to_string(Req.Grid[1]) + "x" +
                   std::to_string(Req.Grid[2]) + " exceeds CUDA's limits");
  if (uint64_t(Req.Block[0]) * Req.Block[1] * Req.Block[2] > 1024)
    return invalid("launch of " + Info.Name + ": more than 1024 threads per "
                                              "block");
  Total = uint64_t(Req.Grid[0]) * Req.Grid[1] * Req.Grid[2];
  for (int D = 0; D < 3; ++D) {
    Config.Grid[D] = Req.Grid[D];
    Config.Block[D] = Req.Block[D];
  }
  Config.Args = integerArgs(Info, Req.Args);
  for (unsigned A = 0; A < NumArgs; ++A) {
    if (Info.Params[A].Kind != ParamKind::Pointer)
      continue;
    void *P = nullptr;
    std::memcpy(&P, Req.Args[A], sizeof(P));
    if (!P)
      continue;
    BufferManager::Resolved Res;
    Result R = Bufs.resolve(P, Res);
    if (!R.ok())
      return invalid("launch of " + Info.Name + ": argument " +
                     std::to_string(A) + ": " + R.message());
    Ptrs.push_back({A, Res.Buf, Res.Offset});
    BufById[Res.Buf->id()] = Res.Buf;
  }
  size_t KI = &K - Prog.Kernels.data();
  Fp = Prog.Footprints[KI].get();
  return Result::success();
}

bool LaunchContext::canRun(Location L) const {
  if (Excluded.count(L))
    return false;
  if (isCpu(L))
    return K.Cpu != nullptr;
  return isGpu(L); // the original variant is always in the image
}

bool LaunchContext::canMergeOn(Location L) const {
  if (!canRun(L))
    return false;
  if (isCpu(L))
    return K.CpuMerge != nullptr;
  return Info.variant(VariantKind::Merge).Present;
}

double LaunchContext::throughput(Location L) const {
  const DeviceProperties &P = Bufs.device(L).properties();
  if (isGpu(L))
    return double(std::max(1u, P.ComputeUnits)) * 64.0 *
           double(P.ClockKHz ? P.ClockKHz : 1500000u);
  if (isCpu(L))
    return double(std::max(1u, Exec.numThreads())) * 8.0 * 3.0e6;
  return 0;
}

/// The device to run the whole grid on: the one with the largest share of
/// an explicit partition, else the fastest that can run the kernel.
Location
LaunchContext::bestDevice(const std::vector<PartitionRange> &Ranges) const {
  if (Explicit) {
    std::map<Location, uint64_t> Share;
    for (const PartitionRange &R : Ranges)
      if (canRun(R.Device))
        Share[R.Device] += R.Count;
    Location Best = -1;
    for (const PartitionRange &R : Ranges)
      if (Share.count(R.Device) && (Best < 0 || Share[R.Device] > Share[Best]))
        Best = R.Device;
    if (Best >= 0)
      return Best;
  }
  Location Best = -1;
  for (size_t L = 0; L < Bufs.numDevices(); ++L)
    if (canRun(Location(L)) &&
        (Best < 0 || throughput(Location(L)) > throughput(Best)))
      Best = Location(L);
  return Best;
}

Result LaunchContext::checkPartition(
    const std::vector<PartitionRange> &Part) const {
  std::vector<PartitionRange> Sorted = Part;
  for (const PartitionRange &R : Sorted) {
    if (R.Device < 0 || size_t(R.Device) >= Bufs.numDevices())
      return Result::error(ErrorCode::InvalidDevice,
                           "partition names device " +
                               std::to_string(R.Device) + " of " +
                               std::to_string(Bufs.numDevices()));
    if (R.Count == 0)
      return invalid("partition range on " + name(R.Device) + " is empty");
    if (!isCpu(R.Device) && !isGpu(R.Device))
      return Result::error(ErrorCode::NotSupported,
                           Bufs.device(R.Device).name() +
                               " cannot run kernels");
    if (isCpu(R.Device) && !K.Cpu)
      return Result::error(ErrorCode::NotSupported,
                           "partition gives " + name(R.Device) + " " +
                               blocksText(R.First, R.Count) + " of " +
                               Info.Name + ", which has no CPU variant (" +
                               Info.variant(VariantKind::CPU).Reason + ")");
  }
  std::sort(Sorted.begin(), Sorted.end(),
            [](const PartitionRange &A, const PartitionRange &B) {
              return A.First < B.First;
            });
  uint64_t Next = 0;
  for (const PartitionRange &R : Sorted) {
    if (R.First != Next)
      return invalid("partition " +
                     std::string(R.First < Next ? "overlaps at block "
                                                : "leaves out blocks from ") +
                     std::to_string(std::min(R.First, Next)) + " (grid of " +
                     std::to_string(Total) + " blocks)");
    if (R.Count > Total - R.First)
      return invalid("partition range " + blocksText(R.First, R.Count) +
                     " goes past the grid's " + std::to_string(Total) +
                     " blocks");
    Next = R.First + R.Count;
  }
  if (Next != Total)
    return invalid("partition leaves out blocks from " +
                   std::to_string(Next) + " (grid of " +
                   std::to_string(Total) + " blocks)");
  return Result::success();
}

Result LaunchContext::evaluate(uint64_t First, uint64_t Count,
                               RangeUse &Out) const {
  Out.clear();
  FootprintResult FR;
  if (Fp) {
    LaunchConfig C = Config;
    C.First = int64_t(First);
    C.Count = int64_t(Count);
    Status S = Fp->evaluate(C, FR);
    if (!S)
      return invalid("footprint evaluation of " + Info.Name + " " +
                     blocksText(First, Count) + ": " + S.Message);
  }
  for (const PtrArg &P : Ptrs) {
    if (Combining && isCombined(P.ArgNo))
      continue;
    const BundleParam &BP = Info.Params[P.ArgNo];
    addArgumentUse(P, Fp ? FR.find(P.ArgNo) : nullptr, BP.mayWrite(), First,
                   Count, Out[P.Buf->id()], CoarseRows);
  }
  return Result::success();
}

/// Makes exact every coarse write set of \p Uses[I] that overlaps the
/// writes of a range on another device (see BufferUse): a hull that no
/// other device writes into may stand for the writes once its own device
/// holds the bytes between the rows, which attempt() sees to.
void LaunchContext::resolveCoarse(const std::vector<PartitionRange> &Ranges,
                                  std::vector<RangeUse *> &Uses) const {
  std::vector<std::pair<size_t, uint64_t>> Refine;
  for (size_t I = 0; I < Uses.size(); ++I)
    for (auto &[Id, U] : *Uses[I]) {
      if (!U.WritesCoarse)
        continue;
      bool Keep = true;
      for (size_t J = 0; J < Uses.size() && Keep; ++J) {
        if (Ranges[J].Device == Ranges[I].Device)
          continue;
        auto It = Uses[J]->find(Id);
        if (It == Uses[J]->end())
          continue;
        ByteRange H = hull(U.Writes);
        Keep = !It->second.Writes.intersects(H.Lo, H.Hi);
        // Another coarse hull that overlaps: both become exact.
        if (!Keep && It->second.WritesCoarse)
          Refine.push_back({J, Id});
      }
      if (!Keep)
        Refine.push_back({I, Id});
    }
  for (auto [I, Id] : Refine)
    refineWrites((*Uses[I])[Id], BufById.at(Id)->size());
}


namespace {

/// Coalesces the ranges of one device that touch.
void normalize(std::vector<PartitionRange> &Ranges) {
  std::sort(Ranges.begin(), Ranges.end(),
            [](const PartitionRange &A, const PartitionRange &B) {
              return A.First < B.First;
            });
  std::vector<PartitionRange> Out;
  for (const PartitionRange &R : Ranges) {
    if (!Out.empty() && Out.back().Device == R.Device &&
        Out.back().First + Out.back().Count == R.First)
      Out.back().Count += R.Count;
    else
      Out.push_back(R);
  }
  Ranges = std::move(Out);
}

} // namespace

std::string LaunchContext::whyNotSplit(bool GpuGetsPart) const {
  return splitRefusal(Prog, K, GpuGetsPart);
}

std::string
LaunchContext::whyNotMerged(const std::vector<Location> &Devices) const {
  const BundleVariant &Merge = Info.variant(VariantKind::Merge);
  if (!Merge.Present)
    return "there is no merge kernel (" + Merge.Reason + ")";
  for (Location L : Devices)
    if (canMergeOn(L))
      return {};
  return "no device of the partition can run the merge kernel (CPU merge "
         "variant: " +
         std::string(K.CpuMerge ? "present" : "absent") + ")";
}

Result LaunchContext::decide(std::vector<PartitionRange> &Ranges) {
  M = Mode::Exact;
  MergeDev = -1;
  Plan.Split = true;
  Plan.Reason.clear();
  Plan.Reconcile.clear();
  Plan.MergeDevice.clear();
  Plan.Combined.clear();
  Combining = false;
  Combines.clear();
  CombineBytes = 0;
  normalize(Ranges);
  std::set<Location> Devs;
  for (const PartitionRange &R : Ranges)
    Devs.insert(R.Device);
  if (Devs.size() <= 1)
    return Result::success(); // one device: nothing to reconcile

  auto Whole = [&](std::string Why) {
    M = Mode::Whole;
    Combining = false; // the original kernel, on the buffer itself
    Combines.clear();
    Plan.Combined.clear();
    Plan.Split = false;
    Plan.Reason = std::move(Why);
    Location D = bestDevice(Ranges);
    Ranges = {{D, 0, Total}};
    return D < 0 ? Result::error(ErrorCode::NoDevice,
                                 "no device can run " + Info.Name)
                 : Result::success();
  };

  bool GpuGetsPart = false;
  for (const PartitionRange &R : Ranges)
    GpuGetsPart |= isGpu(R.Device) && R.Count != Total;
  if (std::string Why = whyNotSplit(GpuGetsPart); !Why.empty())
    return Whole(Why);
  if (!Info.Combined.empty()) {
    std::string Why = setUpCombines();
    if (!Why.empty())
      return Whole(Why);
    Combining = !Combines.empty();
    for (const CombineUse &C : Combines)
      Plan.Combined += std::string(Plan.Combined.empty() ? "" : ", ") +
                       "argument " + std::to_string(C.C->Arg) + " (" +
                       getCombineOpName(C.C->Op) + " i" +
                       std::to_string(C.C->Bytes * 8) + ", " +
                       std::to_string(C.Bytes.size()) + " bytes)";
  }

  // Exact and disjoint?
  std::vector<RangeUse> Uses(Ranges.size());
  std::vector<RangeUse *> UsePtrs;
  for (size_t I = 0; I < Ranges.size(); ++I) {
    Result R = evaluate(Ranges[I].First, Ranges[I].Count, Uses[I]);
    if (!R.ok())
      return R;
    UsePtrs.push_back(&Uses[I]);
  }
  resolveCoarse(Ranges, UsePtrs);
  std::string WhyNot;
  for (size_t I = 0; I < Uses.size() && WhyNot.empty(); ++I)
    for (auto &[Id, U] : Uses[I])
      if (!U.WritesExact) {
        WhyNot = "buffer #" + std::to_string(Id) + ": " + U.NotExact;
        break;
      }
  for (size_t I = 0; I < Uses.size() && WhyNot.empty(); ++I)
    for (size_t J = I + 1; J < Uses.size() && WhyNot.empty(); ++J) {
      if (Ranges[I].Device == Ranges[J].Device)
        continue;
      for (auto &[Id, U] : Uses[I]) {
        auto It = Uses[J].find(Id);
        if (It == Uses[J].end() ||
            U.Writes.intersection(It->second.Writes).empty())
          continue;
        WhyNot = "buffer #" + std::to_string(Id) + " is written by " +
                 name(Ranges[I].Device) + " and " + name(Ranges[J].Device) +
                 " at the same bytes";
        break;
      }
    }
  auto Keep = [&] {
    DecidedRanges = Ranges;
    DecidedUses = std::move(Uses);
  };
  if (WhyNot.empty()) {
    Plan.Reconcile = "exact";
    Keep();
    return Result::success();
  }

  if (Combining)
    return Whole(WhyNot + ", and a kernel with combined outputs is not "
                          "merged with a merge kernel");
  std::vector<Location> Devices;
  for (const PartitionRange &R : Ranges)
    Devices.push_back(R.Device);
  if (std::string Why = whyNotMerged(Devices); !Why.empty())
    return Whole(WhyNot + ", and " + Why);
  // Merges: every written buffer must be reached through merge outputs.
  std::set<unsigned> Outputs(Info.MergeOutputs.begin(),
                             Info.MergeOutputs.end());
  for (const PtrArg &P : Ptrs) {
    if (Outputs.count(P.ArgNo))
      continue;
    for (const RangeUse &U : Uses) {
      auto It = U.find(P.Buf->id());
      if (It != U.end() && !It->second.Writes.empty()) {
        // Written through another argument that is an output?
        bool Covered = false;
        for (const PtrArg &Q : Ptrs)
          Covered |= Q.Buf == P.Buf && Outputs.count(Q.ArgNo);
        if (!Covered)
          return Whole(WhyNot + ", and argument " +
                       std::to_string(P.ArgNo) +
                       " may be written but is no merge output");
      }
    }
  }
  // M: the device with the most blocks among those that can merge (one
  // can: whyNotMerged()).
  std::map<Location, uint64_t> Share;
  for (const PartitionRange &R : Ranges)
    Share[R.Device] += R.Count;
  Location Best = -1;
  for (const PartitionRange &R : Ranges)
    if (canMergeOn(R.Device) && (Best < 0 || Share[R.Device] > Share[Best]))
      Best = R.Device;
  M = Mode::Merge;
  MergeDev = Best;
  Plan.Reconcile = "merge";
  Plan.MergeDevice = name(Best);
  Keep();
  return Result::success();
}

} // namespace engine

} // namespace rt
} // namespace cleave
