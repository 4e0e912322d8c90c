//===- MergeKernel.h - SKMD merge-kernel generation ------------*- C++ -*-===//
//
// Part of Cleave. cleave-merge clones every kernel that may be split and is
// merge-safe into __cleave_merge_<name>: one partial-output parameter per
// written pointer parameter, every store into an output turned into a copy
// from the partial buffer at the same address, everything else removed by
// mark-sweep dead-code elimination. Refusals are optimization remarks.
//
//===----------------------------------------------------------------------===//
#ifndef CLEAVE_TRANSFORMS_MERGEKERNEL_H
#define CLEAVE_TRANSFORMS_MERGEKERNEL_H

#include "llvm/IR/PassManager.h"

namespace cleave {

class MergeKernelPass : public llvm::PassInfoMixin<MergeKernelPass> {
public:
  llvm::PreservedAnalyses run(llvm::Module &M, llvm::ModuleAnalysisManager &MAM);
};

} // namespace cleave

#endif
