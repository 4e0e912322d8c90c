//===- PerfCache.h - Measured performance tables, persisted -----*- C++ -*-===//
//
// Part of Cleave's runtime (no LLVM). The measured rows of the planner's
// per-kernel performance tables (SKMD's tables, digest 002 §4.1): for each
// device and table key, the throughput in blocks/ms measured at wave-aligned
// block counts, refined by an exponential average as launches run.
//
// Persisted between runs as one JSON file per device profile and device set
// in a cache directory (CLEAVE_CACHE_DIR, else $XDG_CACHE_HOME/cleave, else
// ~/.cache/cleave), written atomically (a temporary file in the same
// directory, then rename). Only measurements are stored: the seeded rows are
// recomputed from the device profile each run (ModelPartitioner.h).
//
//   {"schema": "cleave-perf-cache", "version": 1,
//    "devices": {"gpu0 NVIDIA H200": {"<key>": [[blocks, blocks_per_ms,
//                                                samples], ...]}},
//    "slices": {"gpu0 NVIDIA H200": {"<kernel>": blocks}}}
//
// "slices" (optional) keeps each kernel's minimum slice on a device: the
// smallest multiple of the SM count whose measured slicing overhead is
// within 2 % (digest 003 §3.4, findSliceSize in CoScheduler.h).
// "reorganize_off" (optional, the same shape with the value 1) names the
// kernels whose reorganization step measured a loss on a device
// (docs/reorganize.md): the step stays off for them.
//
//===----------------------------------------------------------------------===//
#ifndef CLEAVE_RT_PERFCACHE_H
#define CLEAVE_RT_PERFCACHE_H

#include "cleave/rt/Error.h"

#include <cstdint>
#include <map>
#include <string>
#include <string_view>

namespace cleave {
namespace rt {

struct PerfSample {
  double BlocksPerMs = 0;
  unsigned Samples = 0;
};

class PerfCache {
public:
  /// Measured rows of one table: block count -> sample.
  using Rows = std::map<uint64_t, PerfSample>;

  /// Weight of a new measurement in the exponential average (the first
  /// one replaces nothing and is taken as is).
  static constexpr double Alpha = 0.3;
  /// Rows kept per table; past it a measurement folds into the nearest row.
  static constexpr size_t MaxRows = 64;

  /// The rows of \p Device's table \p Key, or null.
  const Rows *find(const std::string &Device, const std::string &Key) const;
  /// Folds a measurement of \p Blocks blocks at \p BlocksPerMs in.
  /// Ignored unless both are positive and finite.
  void record(const std::string &Device, const std::string &Key,
              uint64_t Blocks, double BlocksPerMs);
  size_t numTables() const;
  /// The minimum slice kept for \p Kernel on \p Device; 0 when none is.
  uint64_t sliceBlocks(const std::string &Device,
                       const std::string &Kernel) const;
  /// Keeps \p Blocks (ignored when 0) as \p Kernel's minimum slice.
  void recordSliceBlocks(const std::string &Device, const std::string &Kernel,
                         uint64_t Blocks);
  /// Whether the reorganization step of \p Kernel measured a loss on
  /// \p Device, and recording that it did.
  bool reorganizeOff(const std::string &Device,
                     const std::string &Kernel) const;
  void recordReorganizeOff(const std::string &Device,
                           const std::string &Kernel);
  /// Every table: device identity -> table key -> rows.
  const std::map<std::string, std::map<std::string, Rows>> &tables() const {
    return Tables;
  }
  bool dirty() const { return Dirty; }

  std::string serialize() const;
  /// Replaces the contents with \p Text's. InvalidValue, naming what is
  /// wrong, for anything but a well-formed cache of this version (the
  /// contents are then unchanged).
  Result parse(std::string_view Text);
  /// parse() of \p Path's contents; a missing file is an empty cache.
  Result load(const std::string &Path);
  /// Writes the cache to \p Path atomically, creating the directories;
  /// clears dirty() on success.
  Result save(const std::string &Path);

private:
  std::map<std::string, std::map<std::string, Rows>> Tables;
  std::map<std::string, std::map<std::string, uint64_t>> Slices;
  std::map<std::string, std::map<std::string, uint64_t>> ReorganizeOff;
  bool Dirty = false;
};

} // namespace rt
} // namespace cleave

#endif
