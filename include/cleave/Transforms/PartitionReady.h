//===- PartitionReady.h - The partition-ready / sliced variant -*- C++ -*-===//
//
// Part of Cleave. cleave-partition clones every kernel that may be split into
// __cleave_pr_<name>: extra parameters (first linear block, original grid
// dims), launched as a 1-D grid of `count` blocks; every ctaid read becomes
// the decoded block index and every nctaid read the original grid size. The
// original kernel is untouched. Refusals are optimization remarks.
//
// Calling convention of a partitioned clone (docs/transforms.md):
//   (original params..., extra params..., i32 %cleave.first.{x,y,z},
//    i32 %cleave.grid.{x,y,z}, i32 %cleave.{magic,shift,inc}.x,
//    i32 %cleave.{magic,shift,inc}.y)
// launched with grid (count, 1, 1), the original block dims and the original
// dynamic shared memory size; block b of the launch runs original block
// first + b, de-linearised x-fastest over the original grid. The count and
// order of the appended parameters are cleave/ABI/PartitionABI.h; the
// runtime computes their values with cleave::rt::computePartitionParams
// (runtime/include/cleave/rt/PartitionParams.h).
//
//===----------------------------------------------------------------------===//
#ifndef CLEAVE_TRANSFORMS_PARTITIONREADY_H
#define CLEAVE_TRANSFORMS_PARTITIONREADY_H

#include "cleave/ABI/PartitionABI.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/SmallPtrSet.h"
#include "llvm/IR/PassManager.h"
#include "llvm/Transforms/Utils/ValueMapper.h"

#include <string>

namespace llvm {
class Function;
class Instruction;
class OptimizationRemarkEmitter;
class Type;
class Twine;
} // namespace llvm

namespace cleave {

class KernelLegality;

/// One parameter a caller of clonePartitioned inserts between the kernel's
/// own parameters and the partition parameters.
struct ExtraParam {
  llvm::Type *Ty = nullptr;
  std::string Name;
  /// The kernel parameter this one stands in for, or -1. Its alignment and
  /// its OpenCL kernel_arg_* metadata entries are copied, because a partial
  /// output buffer has the layout of the output it mirrors.
  int Mirrors = -1;
};

/// Clones Kernel into a new kernel named Name whose parameters are Kernel's,
/// then ExtraParams, then the NumPartitionParams partition parameters; every
/// ctaid/nctaid read in the clone is remapped as described above. The clone
/// is marked as a kernel like Kernel. Shared by cleave-partition and
/// cleave-merge so both decode block indices the same way. Returns null when
/// findUnremappableCall(Kernel) is not null.
llvm::Function *clonePartitioned(llvm::Function &Kernel,
                                 const llvm::Twine &Name,
                                 llvm::ArrayRef<llvm::Type *> ExtraParams);

/// As above, with named extra parameters; when VMap is given it receives the
/// mapping from Kernel's values to the clone's (entries of block-index reads
/// follow them to their decoded replacements).
llvm::Function *clonePartitioned(llvm::Function &Kernel,
                                 const llvm::Twine &Name,
                                 llvm::ArrayRef<ExtraParam> ExtraParams,
                                 llvm::ValueToValueMapTy *VMap);

/// The call in Kernel that keeps clonePartitioned from remapping every block
/// index read: an indirect call when some address-taken function reads the
/// block index or grid size, or a call into a recursive function that does.
/// Direct calls into functions that read them are inlined into the clone.
const llvm::Instruction *findUnremappableCall(const llvm::Function &Kernel);

/// Functions of M that read ctaid/nctaid (the block index or grid size)
/// themselves or through direct calls.
llvm::SmallPtrSet<const llvm::Function *, 8>
getBlockIndexReaders(const llvm::Module &M);

/// Emits the OptimizationRemarkMissed "NotSplittable" of pass PassName at the
/// instruction that blocks splitting Kernel, saying why:
///   kernel 'K' is not split: <kind> '<detail>'
void remarkNotSplittable(const llvm::Function &Kernel,
                         const KernelLegality &Legality,
                         llvm::OptimizationRemarkEmitter &ORE,
                         const char *PassName);

class PartitionReadyPass : public llvm::PassInfoMixin<PartitionReadyPass> {
public:
  llvm::PreservedAnalyses run(llvm::Module &M,
                              llvm::ModuleAnalysisManager &MAM);
};

} // namespace cleave

#endif
