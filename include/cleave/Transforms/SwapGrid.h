//===- SwapGrid.h - Twins of 2-D kernels with x and y swapped --*- C++ -*-===//
//
// Part of Cleave. cleave-swap-grid makes, for a kernel whose code reads the
// block index along x and y (and not along z), the kernel
// __cleave_sw_<name>: the same code with every read of blockIdx.x and
// blockIdx.y exchanged, and of gridDim.x and gridDim.y. Launched with the
// grid (gy, gx, 1), the twin runs exactly the blocks of the original launch
// (gx, gy, 1), block (i, j) of the twin being block (j, i) of the original.
//
// Why: the runtime splits a launch into ranges of linear block ids, x
// fastest, so a 2-D grid is cut into bands of whole rows of blocks (y
// slabs). For a kernel like a tiled transpose, whose blocks of one row write
// a column band of the output, such a band is thousands of short rows; the
// twin's row bands are the original's column bands of blocks, which write
// whole output rows. The twin is an ordinary kernel of the module, so every
// analysis and variant (footprints, partition-ready, rebased, merge, CPU)
// exists for it too, and the runtime chooses per launch which of the two to
// split (docs/transforms.md, "cleave-swap-grid").
//
// The twin is only valid for launches whose gx fits the y dimension's limit
// (65535); the runtime checks it. Blocks of a kernel that Cleave may split
// are independent (KernelLegality), so their order does not matter.
//
//===----------------------------------------------------------------------===//
#ifndef CLEAVE_TRANSFORMS_SWAPGRID_H
#define CLEAVE_TRANSFORMS_SWAPGRID_H

#include "cleave/Support/KernelInfo.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/IR/PassManager.h"

#include <string>

namespace llvm {
class Function;
class Module;
} // namespace llvm

namespace cleave {

/// "__cleave_sw_<Kernel>". The bundle records each kernel's twin by this
/// name (BundleKernel::SwappedTwin).
std::string swappedKernelName(llvm::StringRef Kernel);

/// cleave-swap-grid: one twin per kernel that reads the block index along
/// x and y, may be split (KernelLegality) and reads the block index only in
/// its own body; an optimization remark for each twin made, and for each
/// kernel reading the y block index that gets none, with the reason.
class SwapGridPass : public llvm::PassInfoMixin<SwapGridPass> {
public:
  llvm::PreservedAnalyses run(llvm::Module &M,
                              llvm::ModuleAnalysisManager &MAM);
};

} // namespace cleave

#endif
