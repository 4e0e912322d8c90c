//===- KernelInfo.h - What makes a function a GPU kernel ------*- C++ -*-===//
//
// Part of Cleave. Kernels come from CUDA (nvvm.annotations "kernel" entries or
// the ptx_kernel calling convention) and from OpenCL (spir_kernel or
// ptx_kernel calling convention plus nvvm.annotations). These helpers are the
// one place that knows the markings, so every pass agrees on them.
//
//===----------------------------------------------------------------------===//
#ifndef CLEAVE_SUPPORT_KERNELINFO_H
#define CLEAVE_SUPPORT_KERNELINFO_H

#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"
#include <string>

namespace llvm {
class DiagnosticLocation;
class Function;
class Module;
class Instruction;
class raw_ostream;
} // namespace llvm

namespace cleave {

/// The string attribute that marks functions Cleave created. Its value is the
/// variant kind ("partition", "merge", "cpu").
inline constexpr const char *VariantAttr = "cleave-variant";
/// The string attribute that names the original kernel of a variant.
inline constexpr const char *OriginAttr = "cleave-origin";

/// The string attribute that marks a kernel's twin with the block index x
/// and y swapped (cleave-swap-grid, Transforms/SwapGrid.h); its value is the
/// name of the kernel it was made from. A twin is a kernel of its own.
inline constexpr const char *SwappedFromAttr = "cleave-swapped-from";

/// True when F is a twin made by cleave-swap-grid.
bool isSwappedTwin(const llvm::Function &F);

/// True when F is a device kernel entry point (and not a Cleave variant).
bool isKernel(const llvm::Function &F);

/// True when F is a kernel Cleave generated from another kernel.
bool isCleaveVariant(const llvm::Function &F);

/// The original kernels of M, in module order (variants excluded).
llvm::SmallVector<llvm::Function *, 8> getKernels(llvm::Module &M);

/// Marks NewF as a kernel the way Original is marked: calling convention and
/// every nvvm.annotations entry of Original (kernel, maxntid, reqntid,
/// minctasm, ...) duplicated for NewF.
void markAsKernelLike(llvm::Function &NewF, const llvm::Function &Original);

/// Names of the variants of kernel \p Kernel.
std::string partitionVariantName(llvm::StringRef Kernel);
std::string mergeVariantName(llvm::StringRef Kernel);

/// The demangled name of F when it is a C++ name, else its name; for a
/// twin, its kernel's followed by " [x<->y]".
std::string displayName(const llvm::Function &F);

/// Where a remark about I should point: the outermost location of I's
/// inlining chain, i.e. the user's line rather than a CUDA header's. Empty
/// (unknown) without debug info.
llvm::DiagnosticLocation userLocation(const llvm::Instruction &I);

/// Prints " at file:line:col" for I when it carries a debug location; prints
/// nothing otherwise.
void printLocation(llvm::raw_ostream &OS, const llvm::Instruction &I);

} // namespace cleave

#endif
