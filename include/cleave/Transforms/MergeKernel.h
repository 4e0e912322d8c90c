//===- MergeKernel.h - SKMD merge-kernel generation ------------*- C++ -*-===//
//
// Part of Cleave. cleave-merge clones every kernel that may be split and is
// merge-safe into __cleave_merge_<name>: one partial-output parameter per
// written pointer parameter, every store into an output turned into a copy
// from the partial buffer at the same address, everything else removed by
// mark-sweep dead-code elimination. Refusals are optimization remarks.
//
// Calling convention (docs/transforms.md):
//   (original params..., one partial pointer per output param in param
//    order, i64 %cleave.first, i32 %cleave.grid.x, %cleave.grid.y,
//    %cleave.grid.z)
// launched like the partition-ready variant over the block range whose
// results the partial buffers hold.
//
//===----------------------------------------------------------------------===//
#ifndef CLEAVE_TRANSFORMS_MERGEKERNEL_H
#define CLEAVE_TRANSFORMS_MERGEKERNEL_H

#include "llvm/IR/PassManager.h"

namespace cleave {

/// Prefix of the names of the partial-buffer parameters of a merge kernel;
/// the output parameter's name (or number) follows.
inline constexpr const char *PartialParamPrefix = "cleave.partial.";

class MergeKernelPass : public llvm::PassInfoMixin<MergeKernelPass> {
public:
  llvm::PreservedAnalyses run(llvm::Module &M,
                              llvm::ModuleAnalysisManager &MAM);
};

} // namespace cleave

#endif
