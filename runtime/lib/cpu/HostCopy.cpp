//===- HostCopy.cpp - Large host memory copies on every core --------------===//
//
// Part of Cleave's runtime (no LLVM). See cleave/rt/HostCopy.h.
//
//===----------------------------------------------------------------------===//
#include "cleave/rt/HostCopy.h"

#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>
#include <tbb/partitioner.h>

#include <cstring>

namespace cleave {
namespace rt {

namespace {

/// Bytes per task: large enough that a task's cost is the copy (25 us or
/// so), small enough that an 8 MiB staging chunk makes 32 tasks, one each
/// for as many threads as are awake. With tasks of 1 MiB under the auto
/// partitioner, pageable copies through the staging chunks moved 29 GB/s
/// to one H200 and 43 GB/s to two; with these, 44 and 69 GB/s
/// (bench/results/probe-host-copies/
/// probe-host-copies-2026-11-22-h200x2-d7e6972-tbb.txt).
constexpr uint64_t Grain = uint64_t(256) << 10;

template <typename Fn> void inChunks(uint64_t Bytes, Fn &&Chunk) {
  uint64_t Chunks = (Bytes + Grain - 1) / Grain;
  tbb::parallel_for(
      tbb::blocked_range<uint64_t>(0, Chunks),
      [&](const tbb::blocked_range<uint64_t> &R) {
        uint64_t Lo = R.begin() * Grain;
        uint64_t Hi = std::min(Bytes, R.end() * Grain);
        Chunk(Lo, Hi - Lo);
      },
      tbb::simple_partitioner());
}

} // namespace

void hostCopy(void *Dst, const void *Src, uint64_t Bytes) {
  if (Bytes < ParallelCopyBytes) {
    std::memcpy(Dst, Src, Bytes);
    return;
  }
  char *D = static_cast<char *>(Dst);
  const char *S = static_cast<const char *>(Src);
  inChunks(Bytes, [&](uint64_t Off, uint64_t N) {
    std::memcpy(D + Off, S + Off, N);
  });
}

void hostFill(void *Dst, int Value, uint64_t Bytes) {
  if (Bytes < ParallelCopyBytes) {
    std::memset(Dst, Value, Bytes);
    return;
  }
  char *D = static_cast<char *>(Dst);
  inChunks(Bytes,
           [&](uint64_t Off, uint64_t N) { std::memset(D + Off, Value, N); });
}

} // namespace rt
} // namespace cleave
