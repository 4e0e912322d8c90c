//===- InstrumentRecord.h - An instrumented run's record --------*- C++ -*-===//
//
// Part of Cleave's runtime (no LLVM). The CPU recorder of `cleave analyze`'s
// instrumented build (runtime/lib/cpu/Instrument.cpp) writes one text record
// per run (docs/analyze.md); this is its reader, beside its writer, used by
// `cleave analyze`. The first line is cleave::InstrumentRecordMagic and
// cleave::InstrumentRecordVersion (cleave/ABI/FormatVersions.h); a record of
// another version is refused.
//
//===----------------------------------------------------------------------===//
#ifndef CLEAVE_RT_INSTRUMENTRECORD_H
#define CLEAVE_RT_INSTRUMENTRECORD_H

#include "cleave/rt/Status.h"

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace cleave {
namespace rt {
namespace record {

/// One warp of a sampled block.
struct WarpRecord {
  unsigned Lanes = 0;
  /// (block site, times the warp executed it).
  std::vector<std::pair<uint32_t, uint64_t>> Sites;
  /// One memory site: requests, active lanes, bytes, sectors and segments
  /// touched, and the lowest and highest address.
  struct Mem {
    uint32_t Site;
    uint64_t Requests, Lanes, Bytes, Sectors, Segments, Min, Max;
  };
  std::vector<Mem> Mems;
  /// The block sites in the order the warp ran them (capped).
  std::vector<uint32_t> Trace;
  bool Truncated = false; ///< the trace reached its cap
};

/// One sampled block of a launch configuration.
struct BlockRecord {
  uint64_t Block = 0; ///< its linear index in the grid
  unsigned Threads = 0;
  uint64_t Requests = 0, Sectors = 0, DistinctSectors = 0, DistinctSegments = 0;
  bool Overflow = false; ///< the distinct counts stopped growing
  std::vector<WarpRecord> Warps;
};

/// One distinct (kernel, grid, block, dynamic shared) configuration.
struct LaunchRecord {
  std::string Kernel;
  unsigned Grid[3] = {0, 0, 0}, Block[3] = {0, 0, 0};
  uint64_t Shared = 0, Launches = 0;
  std::vector<BlockRecord> Blocks; ///< sampled blocks, by index
};

/// Parses a record into \p Out (blocks sorted by index: the recorder writes
/// them in the order they finished). An error names the first line that is
/// not the record's ("line N: TEXT"), or the version.
Status parseInstrumentRecord(std::string_view Text,
                             std::vector<LaunchRecord> &Out);

} // namespace record
} // namespace rt
} // namespace cleave

#endif
