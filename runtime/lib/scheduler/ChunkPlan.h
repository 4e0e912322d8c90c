//===- ChunkPlan.h - How many blocks each pipelined chunk gets --*- C++ -*-===//
//
// Part of Cleave's runtime (no LLVM); internal. A launch whose GPU would
// otherwise upload its whole input before its kernel starts runs as
// consecutive chunks of its block range, each sent, computed and received
// on its own stream step (engine/Pipeline.cpp, docs/runtime.md, "Transfer
// pipelining"). planChunks() is the one place that decides the chunks'
// sizes: the engine asks it and carries out whatever it answers.
//
// The sizes are Luo's TPSM plan (cleave/rt/Tpsm.h: the six cases of kernel-
// or transfer-bound by send-, receive- or general-heavy) for the query's
// link rates, bytes and kernel time: its kernel chunks, cut at the query's
// alignment. A plan predicted not to beat sending everything, running and
// receiving everything is one chunk: not pipelined. Only where the model
// cannot be asked (the device profile lacks a rate, no kernel time) does a
// provisional rule answer, and the plan says so: chunks of max(one wave of
// the GPU, an eighth of the blocks).
//
//===----------------------------------------------------------------------===//
#ifndef CLEAVE_RT_SCHEDULER_CHUNKPLAN_H
#define CLEAVE_RT_SCHEDULER_CHUNKPLAN_H

#include "cleave/rt/Tpsm.h"

#include <cstdint>
#include <optional>
#include <string>
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
  /// Bytes a range of n blocks sends to the GPU and receives back (fitted
  /// to the chunks' footprints), and the copies each chunk makes per
  /// direction.
  tpsm::Bytes Send, Receive;
  unsigned SendCopies = 1, ReceiveCopies = 1;
  /// Seconds the kernel takes on n blocks, launch included; null when
  /// unknown. KernelSource says where it comes from (for the plan's text).
  tpsm::KernelTime Kernel;
  std::string KernelSource;
  /// The GPU's host link for the kind of memory the host copies are
  /// (tpsm::linkRates of its device profile); none without a profile.
  std::optional<tpsm::LinkRates> Links;
  tpsm::HostMemory Memory = tpsm::HostMemory::Pageable;
};

/// The answer: the chunks and where they come from.
struct ChunkPlan {
  /// Blocks per chunk, in order, summing to the query's blocks (each a
  /// multiple of its alignment but the last). One chunk: do not pipeline.
  std::vector<uint64_t> Sizes;
  /// Sizes are the TPSM plan's (Model holds it); else the provisional
  /// rule's or none, and Why says why.
  bool FromModel = false;
  /// The model's plan when it was asked (Model.Pipelined false: it refused
  /// or predicted no gain, Model.Why).
  std::optional<tpsm::Plan> Model;
  /// Model.Steps' predicted times (tpsm::stepTimes), seconds.
  std::vector<double> StepSeconds;
  std::string Why;
  std::string KernelSource;
  tpsm::HostMemory Memory = tpsm::HostMemory::Pageable;

  bool pipelined() const { return Sizes.size() >= 2; }
  /// For CLEAVE_LOG=plan: the TPSM case, the chunks, the predicted time
  /// per step and in all, the bound, where the kernel time and the rates
  /// came from; or the provisional rule and why.
  std::string describe() const;
};

/// The most chunks the provisional rule makes.
constexpr uint64_t MaxProvisionalChunks = 8;

/// The chunks of the query; see the file comment.
ChunkPlan planChunks(const ChunkQuery &Q);

/// The provisional rule: chunks of max(one wave, an eighth of the blocks),
/// cut at Q.Align, a remainder smaller than a wave joined to the chunk
/// before it.
std::vector<uint64_t> provisionalChunks(const ChunkQuery &Q);

/// \p Sizes (summing to the blocks) with every boundary moved to the
/// nearest multiple of \p Align; chunks left empty are dropped.
std::vector<uint64_t> alignChunks(const std::vector<uint64_t> &Sizes,
                                  uint64_t Align);

/// Blocks of \p ThreadsPerBlock threads that fill \p SMs streaming
/// multiprocessors once, at most 2048 threads and 32 blocks on each (the
/// limits of every GPU since Volta; occupancy limits of registers and
/// shared memory are not known here, so this is an upper bound).
uint64_t waveBlocks(unsigned SMs, uint64_t ThreadsPerBlock);

} // namespace rt
} // namespace cleave

#endif
