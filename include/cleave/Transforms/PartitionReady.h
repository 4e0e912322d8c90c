//===- PartitionReady.h - The partition-ready / sliced variant -*- C++ -*-===//
//
// Part of Cleave. cleave-partition clones every kernel that may be split into
// __cleave_pr_<name>: extra parameters (first linear block, original grid
// dims), launched as a 1-D grid of `count` blocks; every ctaid read becomes
// the decoded block index and every nctaid read the original grid size. The
// original kernel is untouched. Refusals are optimization remarks.
//
//===----------------------------------------------------------------------===//
#ifndef CLEAVE_TRANSFORMS_PARTITIONREADY_H
#define CLEAVE_TRANSFORMS_PARTITIONREADY_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/IR/PassManager.h"

namespace llvm {
class Function;
class Type;
class Twine;
} // namespace llvm

namespace cleave {

/// Number of parameters cleave-partition appends: i64 first linear block,
/// then i32 original grid x, y, z.
inline constexpr unsigned NumPartitionParams = 4;

/// Clones Kernel into a new kernel named Name whose parameters are Kernel's,
/// then ExtraParams, then the NumPartitionParams partition parameters; every
/// ctaid/nctaid read in the clone is remapped as described above. The clone
/// is marked as a kernel like Kernel. Shared by cleave-partition and
/// cleave-merge so both decode block indices the same way.
llvm::Function *clonePartitioned(llvm::Function &Kernel, const llvm::Twine &Name,
                                 llvm::ArrayRef<llvm::Type *> ExtraParams);

class PartitionReadyPass : public llvm::PassInfoMixin<PartitionReadyPass> {
public:
  llvm::PreservedAnalyses run(llvm::Module &M, llvm::ModuleAnalysisManager &MAM);
};

} // namespace cleave

#endif
