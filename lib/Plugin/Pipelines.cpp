//===- Pipelines.cpp - Cleave's variant pipelines, built once -------------===//
#include "cleave/Plugin/Pipelines.h"

#include "cleave/Plugin/PassRegistration.h"
#include "cleave/Support/KernelInfo.h"
#include "cleave/Transforms/CPULower.h"
#include "cleave/Transforms/MergeKernel.h"
#include "cleave/Transforms/PartitionReady.h"
#include "cleave/Transforms/Rebase.h"
#include "cleave/Transforms/Reorganize.h"
#include "cleave/Transforms/SwapGrid.h"

#include "llvm/IR/Module.h"
#include "llvm/IR/Verifier.h"

using namespace llvm;

namespace cleave {
namespace {

/// The merge kernels and cleave-reorganize's variants of the module become
/// ordinary kernels, so that cleave-cpu-lower lowers them too: the CPU
/// variant of entry E is __cleave_cpu_<E>, whose descriptor the bundle
/// names (the merge variant's and the inspector's and reorganized
/// variant's CPU descriptors). Only for the CPU module's scratch copy of
/// the device module.
struct MarkVariantKernelsPass : PassInfoMixin<MarkVariantKernelsPass> {
  PreservedAnalyses run(Module &M, ModuleAnalysisManager &) {
    bool Changed = false;
    for (Function &F : M) {
      StringRef Kind = F.getFnAttribute(VariantAttr).getValueAsString();
      if (Kind == "merge" || Kind == "inspector" || Kind == "reorganized" ||
          Kind == "instrumented") {
        F.removeFnAttr(VariantAttr);
        Changed = true;
      }
    }
    return Changed ? PreservedAnalyses::none() : PreservedAnalyses::all();
  }
  static bool isRequired() { return true; }
};

} // namespace

void addDeviceVariantPasses(ModulePassManager &MPM) {
  MPM.addPass(SwapGridPass());
  MPM.addPass(PartitionReadyPass());
  MPM.addPass(RebasePass());
  MPM.addPass(MergeKernelPass());
  // Last: its variants are not split, rebased or merged.
  MPM.addPass(ReorganizePass());
}

void addCPUVariantPasses(ModulePassManager &MPM) {
  // The twins, the merge kernels and the inspector and reorganized
  // variants first: they are kernels with CPU variants of their own.
  MPM.addPass(SwapGridPass());
  MPM.addPass(MergeKernelPass());
  MPM.addPass(ReorganizePass());
  MPM.addPass(MarkVariantKernelsPass());
  MPM.addPass(CPULowerPass());
}

CleavePassSetup::CleavePassSetup(TargetMachine *TM) : PB(TM) {
  registerCleavePasses(PB);
  PB.registerModuleAnalyses(MAM);
  PB.registerCGSCCAnalyses(CGAM);
  PB.registerFunctionAnalyses(FAM);
  PB.registerLoopAnalyses(LAM);
  PB.crossRegisterProxies(LAM, FAM, CGAM, MAM);
}

Error CleavePassSetup::run(Module &M, StringRef Pipeline) {
  ModulePassManager MPM;
  if (Error E = PB.parsePassPipeline(MPM, Pipeline))
    return E;
  MPM.addPass(VerifierPass());
  MPM.run(M, MAM);
  return Error::success();
}

Error runCleavePipeline(Module &M, StringRef Pipeline, TargetMachine *TM) {
  return CleavePassSetup(TM).run(M, Pipeline);
}

} // namespace cleave
