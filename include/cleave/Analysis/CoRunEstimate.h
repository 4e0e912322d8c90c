//===- CoRunEstimate.h - Static inputs of the co-run model ------*- C++ -*-===//
//
// Part of Cleave. What Kernelet's co-run model (docs/coschedule.md) needs
// of a kernel, estimated from its code without running it, for the bundle
// (docs/bundle.md, the co-run table): one thread's dynamic instructions by
// class, and the width and coalescing of its global memory requests.
//
// Counts: each block's instructions (InstructionMix's classes and
// issuedInstructions) weighted by the block's frequency per thread, from
// BlockFrequencyInfo, with a loop whose trip count ScalarEvolution knows as
// a constant scaled to that count (BFI alone assumes a fixed guess).
//
// Coalescing: the byte distance between the addresses of two neighbouring
// lanes (threadIdx.x and threadIdx.x + 1) of each global access, when the
// address is an affine function of threadIdx.x with a constant coefficient:
// 0 is a broadcast (one sector), a distance up to the access's width a
// coalesced request, a larger one a strided request; an address that
// depends on threadIdx.x otherwise (a gather through loaded indices, a
// stride that is a kernel argument) counts as one sector per lane.
//
//===----------------------------------------------------------------------===//
#ifndef CLEAVE_ANALYSIS_CORUNESTIMATE_H
#define CLEAVE_ANALYSIS_CORUNESTIMATE_H

#include "cleave/ABI/InstrClass.h"

#include "llvm/IR/PassManager.h"

#include <array>
#include <cstdint>
#include <optional>

namespace llvm {
class Function;
class Value;
class DataLayout;
} // namespace llvm

namespace cleave {

struct CoRunEstimate {
  /// One thread's dynamic instructions by class (estimated).
  std::array<double, NumInstrClasses> PerThread{};
  /// Over its global loads, stores and atomics, weighted by frequency:
  /// bytes per lane, and 32-byte sectors per warp-wide request.
  double BytesPerLane = 0;
  double SectorsPerRequest = 0;
};

/// The estimate for kernel \p K. Uses BlockFrequencyAnalysis, LoopAnalysis
/// and ScalarEvolutionAnalysis from \p FAM.
CoRunEstimate estimateCoRun(llvm::Function &K,
                            llvm::FunctionAnalysisManager &FAM);

/// The distance in bytes between the values of \p Ptr for lanes
/// threadIdx.x + 1 and threadIdx.x: a constant, or none when \p Ptr is not
/// affine in threadIdx.x with a constant coefficient (exposed for tests).
std::optional<int64_t> laneStride(const llvm::Value &Ptr,
                                  const llvm::DataLayout &DL);

/// Sectors one warp-wide request moves when neighbouring lanes are
/// \p Stride bytes apart (none: one sector per lane) and each lane moves
/// \p Bytes.
double sectorsPerRequest(std::optional<int64_t> Stride, uint64_t Bytes);

} // namespace cleave

#endif
