//===- CPULower.h - Kernels as host functions that run block ranges -*- C++
//-*-===//
//
// Part of Cleave. The CPU variant of a kernel: a host function with the C ABI
// of runtime/include/cleave/rt/CpuKernelABI.h that runs a range of blocks on
// the calling thread. Threads become loops (innermost over threadIdx.x),
// barriers and warp operations split the body into regions, values live
// across them are kept per thread. See docs/cpu-backend.md.
//
//===----------------------------------------------------------------------===//
#ifndef CLEAVE_TRANSFORMS_CPULOWER_H
#define CLEAVE_TRANSFORMS_CPULOWER_H

#include "llvm/IR/PassManager.h"
#include <functional>
#include <memory>
#include <string>

namespace llvm {
class Function;
class Module;
class OptimizationRemarkEmitter;
class TargetTransformInfo;
template <typename> class GenericSSAContext;
template <typename> class GenericUniformityInfo;
using UniformityInfo = GenericUniformityInfo<GenericSSAContext<Function>>;
} // namespace llvm

namespace cleave {

/// The name of the CPU variant of kernel \p Kernel.
std::string cpuVariantName(llvm::StringRef Kernel);

/// The name of the `cleave_cpu_kernel_desc` that describes the CPU variant
/// of kernel \p Kernel (cleave/rt/CpuKernelABI.h); the bundle records it and
/// the runtime looks it up by that name.
std::string cpuDescriptorName(llvm::StringRef Kernel);

/// The name of the CPU module's copy of a `__device__`/`__constant__`
/// variable \p Var (its device symbol): `__cleave_cpu_var_<Var>`.
std::string cpuVariableName(llvm::StringRef Var);

/// What the lowering needs to know about each kernel of the device module.
struct CPULowerCallbacks {
  /// Why the kernel's legality forbids running on the CPU; empty when it
  /// does not.
  std::function<std::string(llvm::Function &)> CPUBlocker;
  /// Uniformity (divergence) of a function of the lowering's scratch copy of
  /// the device module, computed with the NVPTX TTI; null when the target
  /// has no divergence information (kernels with barriers or warp operations
  /// are then refused).
  std::function<llvm::UniformityInfo *(llvm::Function &)> GetUniformity;
  /// Drops what GetUniformity cached for a function, before it changes.
  std::function<void(llvm::Function &)> Forget;
  /// Where remarks about the kernel go.
  std::function<llvm::OptimizationRemarkEmitter &(llvm::Function &)> GetORE;
};

/// Builds the host (x86-64) module holding the CPU variant of every kernel of
/// \p Device that can run on the CPU. \p Device is not changed. Kernels that
/// cannot be lowered get a missed remark and no variant. Returns the module
/// even when it holds no variant.
std::unique_ptr<llvm::Module>
createCPUModule(llvm::Module &Device, const CPULowerCallbacks &Callbacks);

/// cleave-cpu-lower: replaces the device module by its host module (what
/// createCPUModule returns), so that `opt -passes=cleave-cpu-lower` prints
/// the CPU variants. The driver calls createCPUModule instead and keeps the
/// device module.
class CPULowerPass : public llvm::PassInfoMixin<CPULowerPass> {
public:
  llvm::PreservedAnalyses run(llvm::Module &M, llvm::ModuleAnalysisManager &AM);
  static bool isRequired() { return true; }
};

} // namespace cleave

#endif
