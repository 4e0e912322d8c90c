//===- Recover.cpp - Where a failed device's blocks go ----------------------===//
//
// Part of Cleave's runtime (no LLVM). See LaunchContext.h.
//
//===----------------------------------------------------------------------===//

#include "LaunchContext.h"

namespace cleave {
namespace rt {
namespace engine {

Location
LaunchContext::fallbackFor(Location Failed,
                           const std::vector<PartitionRange> &Ranges) const {
  if (M == Mode::Merge && MergeDev != Failed && canRun(MergeDev))
    return MergeDev;
  std::map<Location, uint64_t> Share;
  for (const PartitionRange &R : Ranges)
    if (R.Device != Failed && canRun(R.Device))
      Share[R.Device] += R.Count;
  Location Best = -1;
  for (const PartitionRange &R : Ranges)
    if (Share.count(R.Device) && (Best < 0 || Share[R.Device] > Share[Best]))
      Best = R.Device;
  if (Best >= 0)
    return Best;
  for (size_t L = 0; L < Bufs.numDevices(); ++L)
    if (Location(L) != Failed && canRun(Location(L)) &&
        (Best < 0 || throughput(Location(L)) > throughput(Best)))
      Best = Location(L);
  return Best;
}

void LaunchContext::report(
    Location Failed, const Result &Err,
    const std::vector<std::pair<uint64_t, uint64_t>> &Blocks, Location To) {
  std::string Msg = "cleave: " + name(Failed) + " failed (" + Err.message() +
                    "); re-running blocks";
  for (size_t B = 0; B < Blocks.size(); ++B)
    Msg += (B ? ", [" : " [") + std::to_string(Blocks[B].first) + ", " +
           std::to_string(Blocks[B].second) + ")";
  Msg += " on " + name(To) + "\n";
  std::fputs(Msg.c_str(), stderr);
  Plan.Recoveries.push_back({name(Failed), Err.message(), Blocks, name(To)});
}

void LaunchContext::freeMergeTemps() {
  for (DeviceAddr A : MergeTemps)
    (void)Bufs.device(MergeDev).free(A);
  MergeTemps.clear();
}

bool LaunchContext::failOver(const Failure &F, size_t PlanMark,
                             std::vector<PartitionRange> &Ranges,
                             Result &Err) {
  freeMergeTemps();
  Plan.Runs.resize(PlanMark); // BytesMoved keeps what did move
  Excluded.insert(F.Dev);
  Location To = fallbackFor(F.Dev, Ranges);
  if (To < 0) {
    Err = F.Err;
    return false;
  }
  std::vector<std::pair<uint64_t, uint64_t>> Blocks;
  for (PartitionRange &R : Ranges)
    if (R.Device == F.Dev) {
      Blocks.push_back({R.First, R.First + R.Count});
      R.Device = To;
    }
  report(F.Dev, F.Err, Blocks, To);
  return true;
}

Result LaunchContext::reassignFailed(AttemptState &A,
                                     const std::vector<RunState *> &Redo,
                                     std::vector<PartitionRange> &Ranges) {
  std::vector<PartitionRange> Again;
  std::map<Location, std::vector<std::pair<uint64_t, uint64_t>>> Blocks;
  for (RunState *R : Redo) {
    Excluded.insert(R->Dev);
    Blocks[R->Dev].push_back({R->First, R->First + R->Count});
  }
  for (auto &[D, B] : Blocks) {
    Location To = fallbackFor(D, Ranges);
    if (To < 0)
      return A.Failed[D];
    report(D, A.Failed[D], B, To);
    for (RunState *R : Redo)
      if (R->Dev == D)
        Again.push_back({To, R->First, R->Count});
  }
  Ranges = std::move(Again);
  return Result::success();
}

Result LaunchContext::rerunOnMerge(RunState &R, std::vector<RunState> &Runs) {
  R.Dev = MergeDev;
  R.Partials.clear();
  R.Failed = false;
  Result Res = prepare(R, true);
  if (Res.ok())
    Res = issue(R);
  if (Res.ok() && isCpu(MergeDev))
    Res = runCpu(R);
  if (Res.ok() && isGpu(MergeDev))
    Res = Bufs.device(MergeDev).synchronizeStream(
        Bufs.device(MergeDev).internalStream(0));
  return Res.ok() ? Res : mergeDeviceFailed(Res, Runs);
}

Result LaunchContext::mergeDeviceFailed(const Result &Res,
                                        std::vector<RunState> &Runs) {
  for (RunState &X : Runs)
    dropUnproduced(X);
  freeMergeTemps();
  return Result::error(Res.code(), "the merge device failed: " + Res.message());
}

} // namespace engine
} // namespace rt
} // namespace cleave
