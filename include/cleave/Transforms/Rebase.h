//===- Rebase.h - Rebased variants: the original code on a slab -*- C++ -*-===//
//
// Part of Cleave. cleave-rebase makes, for a kernel and one grid dimension D
// (x, y or z), the clone __cleave_rb<D>_<name>: the kernel's own code,
// launched on a slab of the grid (blocks whose index along D lies in
// [f, f + n), every block of the lower dimensions), with the hardware block
// index along D standing for the original index minus f. Nothing is decoded
// at run time; instead the clone takes extra parameters, before the
// kernel's own, that the runtime computes on the host:
//
//   * a pointer P + delta for each (pointer parameter P, byte coefficient K)
//     whose addresses depend on the block index along D: delta = K * f;
//   * a bound b - K * f for each comparison of such a value with a
//     launch-invariant b.
//
// It applies when every value that depends on the block index along D is
// an affine function of it that only reaches addresses and comparisons
// (docs/transforms.md, "Rebased variants"); the range checks that make
// 32-bit index arithmetic exact are evaluated by the runtime for each launch.
// The description of the extra parameters and checks is attached to the
// clone as the string attribute RebaseAttr, in the footprint text's `rebase`
// record syntax (docs/footprints.md); the bundle writer appends it to the
// kernel's footprints.
//
//===----------------------------------------------------------------------===//
#ifndef CLEAVE_TRANSFORMS_REBASE_H
#define CLEAVE_TRANSFORMS_REBASE_H

#include "llvm/ADT/StringRef.h"
#include "llvm/IR/PassManager.h"

namespace llvm {
class Function;
class Module;
} // namespace llvm

#include <string>

namespace cleave {

/// The function attribute holding a rebased clone's `rebase` record.
inline constexpr const char *RebaseAttr = "cleave-rebase";

/// "__cleave_rbx_<Kernel>" (Dim 0), "__cleave_rby_..." (1), "__cleave_rbz_..."
/// (2).
std::string rebaseVariantName(llvm::StringRef Kernel, unsigned Dim);

/// \p FootprintText (K's serialized footprints) with the `rebase` record of
/// each rebased clone of K in M inserted before its final "end": what the
/// bundle carries and the runtime's FootprintProgram parses.
std::string appendRebaseRecords(const llvm::Module &M, const llvm::Function &K,
                                std::string FootprintText);

/// cleave-rebase: one rebased clone per kernel and dimension where the
/// analysis succeeds; an optimization remark for each clone made and each
/// dimension refused (with the reason and its source location).
class RebasePass : public llvm::PassInfoMixin<RebasePass> {
public:
  llvm::PreservedAnalyses run(llvm::Module &M,
                              llvm::ModuleAnalysisManager &MAM);
};

} // namespace cleave

#endif
