//===- Pipelines.h - Cleave's variant pipelines, built once ----*- C++ -*-===//
//
// Part of Cleave. The passes that make a kernel's variants run in a fixed
// order, which the runtime's conventions depend on (docs/transforms.md). The
// two pipelines are built here and nowhere else; each is also a pass of its
// own name, so `opt -passes=cleave-cpu-variants` runs exactly what the
// driver, the bundle writer, `cleave analyze` and cleave-cpu-test run.
//
//===----------------------------------------------------------------------===//
#ifndef CLEAVE_PLUGIN_PIPELINES_H
#define CLEAVE_PLUGIN_PIPELINES_H

#include "llvm/ADT/StringRef.h"
#include "llvm/IR/PassManager.h"
#include "llvm/Passes/PassBuilder.h"
#include "llvm/Support/Error.h"

namespace llvm {
class Module;
class TargetMachine;
} // namespace llvm

namespace cleave {

/// cleave-device-variants: cleave-swap-grid, cleave-partition, cleave-rebase,
/// cleave-merge, cleave-reorganize. The device module gains every kernel's
/// twin (2-D kernels), partition-ready, rebased and merge variants, and the
/// inspector and reorganized variants of kernels with per-item loops.
inline constexpr const char *DeviceVariantsPipeline = "cleave-device-variants";

/// cleave-cpu-variants: cleave-swap-grid, cleave-merge, cleave-reorganize,
/// the merge kernels and the inspector and reorganized variants marked as
/// ordinary kernels (in this module only), cleave-cpu-lower. The module is
/// replaced by its CPU module: the CPU variant of every kernel, of every
/// twin, of every merge kernel and of every inspector and reorganized
/// variant (docs/cpu-backend.md, docs/reorganize.md), which is what the
/// bundle's CPU entries name.
inline constexpr const char *CPUVariantsPipeline = "cleave-cpu-variants";

void addDeviceVariantPasses(llvm::ModulePassManager &MPM);
void addCPUVariantPasses(llvm::ModulePassManager &MPM);

/// A pass builder with Cleave's passes registered and its analysis managers,
/// kept together so that the analyses of a module stay reachable after a
/// pipeline ran on it (the bundle writer reads them).
struct CleavePassSetup {
  llvm::PassBuilder PB;
  llvm::LoopAnalysisManager LAM;
  llvm::FunctionAnalysisManager FAM;
  llvm::CGSCCAnalysisManager CGAM;
  llvm::ModuleAnalysisManager MAM;

  /// \p TM answers the target queries (the NVPTX target for device modules).
  explicit CleavePassSetup(llvm::TargetMachine *TM);
  /// Runs \p Pipeline (pass names as opt takes them) and the verifier.
  llvm::Error run(llvm::Module &M, llvm::StringRef Pipeline);
};

/// CleavePassSetup(TM).run(M, Pipeline), for a pipeline whose analyses
/// nobody reads afterwards.
llvm::Error runCleavePipeline(llvm::Module &M, llvm::StringRef Pipeline,
                              llvm::TargetMachine *TM);

} // namespace cleave

#endif
