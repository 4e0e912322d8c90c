//===- ItemLoops.h - Loops whose trip count an item determines -*- C++ -*-===//
//
// Part of Cleave (issue 30, docs/reorganize.md). Many kernels give each
// thread a loop whose trip count depends on its own item: random block
// lengths in a bootstrap, path lengths in Monte Carlo, rejection sampling,
// the row length in CSR SpMV. Neighbouring lanes then diverge. When a thread
// can compute that trip count ahead, from its own item alone, the runtime can
// run an inspector for the counts and launch the items sorted by count.
//
// This finds, in a 1-D kernel, the work-item index (blockIdx.x * blockDim.x +
// threadIdx.x) and the outermost loops whose exit conditions depend on it.
// A loop is predictable when the backward slice of every exit condition
// (data, and the branches that choose among phi inputs) reaches only:
//   * constants, kernel arguments, the block and grid sizes, and the item
//     index (threadIdx.x and blockIdx.x elsewhere follow the thread, not
//     the item);
//   * loads from memory the kernel never writes (the item's inputs);
//   * per-item state: a load, before the loop, of a slot that the kernel
//     stores to only at that same address (a PRNG state array);
//   * private memory whose stored values are themselves in the slice;
//   * calls without memory effects (and libdevice's math).
// Anything else is a refusal with the instruction that caused it: shared
// memory, shuffles, votes and atomics (communication between threads),
// loads from memory the kernel writes, calls with unknown effects.
//
// Separately, the reorganized variant is legal only when permuting which
// thread runs which item cannot change results: no warp-level primitives or
// atomics, nothing item-dependent stored to shared memory, no item-dependent
// value stored at an address that is not the item's own, no global store
// whose address, value or execution depends on the thread's position other
// than through the index, and no grid-stride loop over the index.
//
//===----------------------------------------------------------------------===//
#ifndef CLEAVE_ANALYSIS_ITEMLOOPS_H
#define CLEAVE_ANALYSIS_ITEMLOOPS_H

#include "llvm/ADT/SmallVector.h"
#include "llvm/IR/PassManager.h"

#include <string>

namespace llvm {
class BasicBlock;
class Function;
class Instruction;
class Value;
class raw_ostream;
} // namespace llvm

namespace cleave {

/// One outermost loop of a kernel and what its trip count depends on.
struct ItemLoop {
  const llvm::BasicBlock *Header = nullptr;
  /// The header's first instruction with a line: where remarks point.
  const llvm::Instruction *At = nullptr;
  bool ItemDependent = false; ///< the exit slice reaches the item
  /// Why the trip count cannot be computed ahead; empty when it can.
  std::string Why;
  const llvm::Instruction *Blocker = nullptr; ///< where Why arose

  bool predictable() const { return Why.empty(); }
  /// A loop worth reorganizing: predictable and item-dependent.
  bool candidate() const { return predictable() && ItemDependent; }
};

struct ItemLoopInfo {
  /// The work-item index (x), null when the kernel has none.
  llvm::Instruction *ItemIndex = nullptr;
  llvm::SmallVector<ItemLoop, 2> Loops;
  /// Why no reorganized variant can be made even with a candidate loop;
  /// empty when it can.
  std::string ReorganizeWhy;
  const llvm::Instruction *ReorganizeBlocker = nullptr;

  /// The first candidate loop, or null.
  const ItemLoop *candidate() const;
};

class ItemLoopAnalysis : public llvm::AnalysisInfoMixin<ItemLoopAnalysis> {
  friend llvm::AnalysisInfoMixin<ItemLoopAnalysis>;
  static llvm::AnalysisKey Key;

public:
  using Result = ItemLoopInfo;
  Result run(llvm::Function &F, llvm::FunctionAnalysisManager &FAM);
};

/// print<cleave-item-loops>: per kernel, its item index and each outermost
/// loop's verdict, e.g.
///   cleave-item-loops: kernel 'boot(...)'
///     item index: yes
///     loop at boot.cu:12:5: predictable, item-dependent
///     reorganize: yes
class ItemLoopPrinterPass : public llvm::PassInfoMixin<ItemLoopPrinterPass> {
  llvm::raw_ostream &OS;

public:
  explicit ItemLoopPrinterPass(llvm::raw_ostream &OS) : OS(OS) {}
  llvm::PreservedAnalyses run(llvm::Function &F,
                              llvm::FunctionAnalysisManager &FAM);
  static bool isRequired() { return true; }
};

} // namespace cleave

#endif // CLEAVE_ANALYSIS_ITEMLOOPS_H
