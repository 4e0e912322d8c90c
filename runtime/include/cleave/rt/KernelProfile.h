//===- KernelProfile.h - What `cleave analyze` measured of kernels -*- C++ -*-===//
//
// Part of Cleave's runtime (no LLVM). The runtime's reader of `cleave
// analyze --json`'s report (docs/analyze.md; written by toJson in
// tools/cleave/AnalyzeReport.cpp, "schema_version" 1): per launch
// configuration, what the instrumented run counted (model::LaunchStats) and
// the kernel's resources. The co-scheduler takes its model inputs from it
// (CLEAVE_KERNEL_PROFILE, docs/coschedule.md) instead of the bundle's
// static estimate.
//
//===----------------------------------------------------------------------===//
#ifndef CLEAVE_RT_KERNELPROFILE_H
#define CLEAVE_RT_KERNELPROFILE_H

#include "cleave/rt/Error.h"
#include "cleave/rt/HopperModel.h"

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace cleave {
namespace rt {

/// One launch configuration of the report.
struct KernelProfileEntry {
  /// The kernel's symbol (the bundle's kernel name).
  std::string Kernel;
  uint32_t Grid[3] = {1, 1, 1}, Block[3] = {1, 1, 1};
  uint64_t DynamicShared = 0;
  model::LaunchStats Stats;
  /// Registers per thread (0: the report did not know) and static shared
  /// memory per block.
  model::KernelResources Resources;
};

struct KernelProfile {
  /// The file it was read from.
  std::string Source;
  std::vector<KernelProfileEntry> Entries;
  /// The entry of \p Kernel launched with \p Block threads and \p Shared
  /// bytes of dynamic shared memory: the one of grid \p Grid, else the
  /// one whose grid is closest in blocks (per-warp counts are what the
  /// model takes, and they depend on the grid only through loops over
  /// it); null when none has that kernel and block.
  const KernelProfileEntry *find(const std::string &Kernel,
                                 const uint32_t Grid[3],
                                 const uint32_t Block[3],
                                 uint64_t Shared) const;
};

/// Parses a `cleave analyze --json` report. InvalidValue, naming what is
/// wrong, for text that is not such a report, another schema version, a
/// field of the wrong type or an instruction class the runtime does not
/// know.
Result parseKernelProfile(std::string_view Text, KernelProfile &Out);
/// parseKernelProfile of \p Path's contents (a regular file, bounded).
Result loadKernelProfile(const std::string &Path, KernelProfile &Out);

} // namespace rt
} // namespace cleave

#endif
