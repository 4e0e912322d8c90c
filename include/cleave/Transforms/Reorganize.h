//===- Reorganize.h - Inspector and reorganized variants -------*- C++ -*-===//
//
// Part of Cleave (issue 30, docs/reorganize.md). For a kernel with a loop
// whose trip count each item determines (ItemLoops.h) and whose items may
// be permuted over the threads, cleave-reorganize makes two variants:
//
//   __cleave_tc_<name>(args..., int *counts)   the inspector: the kernel's
//       own code, every store to global memory dropped, counting the
//       executions of its per-item loops' headers and writing the count
//       to counts[item] before every return. Nothing else is removed, so every
//       PRNG transition and floating-point operation feeding the exit runs
//       exactly as in the kernel (digest 004 §7 item 2).
//       Every loop of the kernel must be predictable: the inspector runs
//       them all without the kernel's outputs.
//   __cleave_ro_<name>(args..., const int *perm)   the reorganized variant:
//       the work-item index i becomes perm[i] everywhere the kernel uses it
//       (the item's state, its outputs, the bounds guard); threadIdx and
//       blockIdx read directly (shared-memory tiles, __syncthreads) stay.
//
// Both arrays have one entry per launched thread (the grid's x extent times
// the block's), not per item: threads past the last item write a count of
// zero, and perm must map [0, items) onto itself and every later index to
// itself, so the kernel's own bounds guard still selects the same threads.
//
// Remarks (-Rpass=cleave / -Rpass-missed=cleave): which kernels got the
// variants, and for kernels with per-item loops that did not, why, at the
// line of the loop or of the instruction in the way.
//
//===----------------------------------------------------------------------===//
#ifndef CLEAVE_TRANSFORMS_REORGANIZE_H
#define CLEAVE_TRANSFORMS_REORGANIZE_H

#include "llvm/ADT/StringRef.h"
#include "llvm/IR/PassManager.h"

#include <string>

namespace cleave {

/// "__cleave_tc_<Kernel>" and "__cleave_ro_<Kernel>".
std::string inspectorVariantName(llvm::StringRef Kernel);
std::string reorganizedVariantName(llvm::StringRef Kernel);
/// "__cleave_tci_<Kernel>": the kernel itself, outputs kept, counting its
/// per-item loops' iterations the way the inspector does; made only by
/// cleave-reorganize-instrumented, for tests that check the inspector.
std::string countingVariantName(llvm::StringRef Kernel);

class ReorganizePass : public llvm::PassInfoMixin<ReorganizePass> {
  bool Instrumented;

public:
  explicit ReorganizePass(bool Instrumented = false)
      : Instrumented(Instrumented) {}
  llvm::PreservedAnalyses run(llvm::Module &M,
                              llvm::ModuleAnalysisManager &MAM);
};

} // namespace cleave

#endif // CLEAVE_TRANSFORMS_REORGANIZE_H
