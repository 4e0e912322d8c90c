//===- ChunkPlan.cpp - How many blocks each pipelined chunk gets ----------===//
//
// Part of Cleave's runtime (no LLVM). See ChunkPlan.h.
//
//===----------------------------------------------------------------------===//

#include "ChunkPlan.h"

#include <algorithm>

namespace cleave {
namespace rt {

uint64_t waveBlocks(unsigned SMs, uint64_t ThreadsPerBlock) {
  uint64_t PerSM =
      std::min<uint64_t>(32, 2048 / std::max<uint64_t>(ThreadsPerBlock, 1));
  return std::max<uint64_t>(1, uint64_t(SMs) * std::max<uint64_t>(PerSM, 1));
}

std::vector<uint64_t> planChunks(const ChunkQuery &Q) {
  if (Q.Blocks == 0)
    return {};
  uint64_t Align = std::max<uint64_t>(Q.Align, 1);
  uint64_t Eighth =
      (Q.Blocks + MaxProvisionalChunks - 1) / MaxProvisionalChunks;
  uint64_t Size =
      std::max<uint64_t>(std::max<uint64_t>(Q.WaveBlocks, 1), Eighth);
  Size = (Size + Align - 1) / Align * Align;
  std::vector<uint64_t> Out;
  for (uint64_t Done = 0; Done < Q.Blocks;) {
    uint64_t N = std::min(Size, Q.Blocks - Done);
    // A remainder smaller than a wave joins the chunk before it.
    if (!Out.empty() && N < Q.WaveBlocks && N < Size) {
      Out.back() += N;
      break;
    }
    Out.push_back(N);
    Done += N;
  }
  return Out;
}

} // namespace rt
} // namespace cleave
