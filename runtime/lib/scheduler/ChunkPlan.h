//===- ChunkPlan.h - How many blocks each pipelined chunk gets --*- C++ -*-===//
//
// Part of Cleave's runtime (no LLVM); internal. A launch whose GPU would
// otherwise upload its whole input before its kernel starts runs as
// consecutive chunks of its block range, each sent, computed and received
// on its own stream step (engine/Pipeline.cpp, docs/runtime.md, "Transfer
// pipelining"). planChunks() is the one place that decides the chunks'
// sizes: the engine asks it and carries out whatever it answers.
//
// The rule is provisional: chunks of max(one wave of the GPU, an
// eighth of the blocks), cut at the query's alignment. It weighs neither
// the link rates nor the kernel's time; Luo's TPSM chunk-size model (the
// six cases of kernel- or transfer-bound by send-, receive- or
// general-heavy, issue 27) is meant to answer here instead, from the same
// query.
//
//===----------------------------------------------------------------------===//
#ifndef CLEAVE_RT_SCHEDULER_CHUNKPLAN_H
#define CLEAVE_RT_SCHEDULER_CHUNKPLAN_H

#include <cstdint>
#include <vector>

namespace cleave {
namespace rt {

/// What the chunk plan of one pipelined launch is asked about.
struct ChunkQuery {
  /// The blocks the GPU runs (linear ids, in order).
  uint64_t Blocks = 0;
  /// Blocks that fill the GPU once (its SMs times the blocks each holds):
  /// no chunk but the last is smaller, or the GPU idles between chunks.
  uint64_t WaveBlocks = 1;
  /// Chunk boundaries fall on multiples of this many blocks (a slab of
  /// the grid: whole rows of a 2-D grid run the kernel's rebased variant).
  uint64_t Align = 1;
  /// Bytes the launch sends to the GPU and receives back in all, and the
  /// GPU's own time for the whole range when known (0: unknown). Unused by
  /// the provisional rule; the chunk-size model reads them.
  uint64_t SendBytes = 0;
  uint64_t ReceiveBytes = 0;
  double KernelMs = 0;
};

/// The most chunks the provisional rule makes.
constexpr uint64_t MaxProvisionalChunks = 8;

/// Blocks per chunk, in order, summing to Q.Blocks (each a multiple of
/// Q.Align but the last). A single chunk means: do not pipeline.
std::vector<uint64_t> planChunks(const ChunkQuery &Q);

/// Blocks of \p ThreadsPerBlock threads that fill \p SMs streaming
/// multiprocessors once, at most 2048 threads and 32 blocks on each (the
/// limits of every GPU since Volta; occupancy limits of registers and
/// shared memory are not known here, so this is an upper bound).
uint64_t waveBlocks(unsigned SMs, uint64_t ThreadsPerBlock);

} // namespace rt
} // namespace cleave

#endif
