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

} // namespace engine
} // namespace rt
} // namespace cleave
