//===- PassRegistration.cpp - Register Cleave's passes by name -----------===//
#include "cleave/Plugin/PassRegistration.h"
#include "cleave/Plugin/Pipelines.h"

#include "cleave/Analysis/Footprint.h"
#include "cleave/Analysis/InstructionMix.h"
#include "cleave/Analysis/ItemLoops.h"
#include "cleave/Analysis/KernelLegality.h"
#include "cleave/Analysis/ParamRoles.h"
#include "cleave/Analysis/VariantRefusals.h"
#include "cleave/Transforms/CPULower.h"
#include "cleave/Transforms/MergeKernel.h"
#include "cleave/Transforms/PartitionReady.h"
#include "cleave/Transforms/Instrument.h"
#include "cleave/Transforms/Rebase.h"
#include "cleave/Transforms/Reorganize.h"
#include "cleave/Transforms/SwapGrid.h"

#include "llvm/Passes/PassBuilder.h"
#include "llvm/Support/raw_ostream.h"

using namespace llvm;

void cleave::registerCleavePasses(PassBuilder &PB) {
  PB.registerAnalysisRegistrationCallback([](ModuleAnalysisManager &MAM) {
#define CLEAVE_MODULE_ANALYSIS(NAME, CREATE)                                   \
  MAM.registerPass([] { return CREATE; });
#include "Passes.def"
  });
  PB.registerAnalysisRegistrationCallback([](FunctionAnalysisManager &FAM) {
#define CLEAVE_FUNCTION_ANALYSIS(NAME, CREATE)                                 \
  FAM.registerPass([] { return CREATE; });
#include "Passes.def"
  });
  PB.registerPipelineParsingCallback(
      [](StringRef Name, FunctionPassManager &FPM,
         ArrayRef<PassBuilder::PipelineElement>) {
#define CLEAVE_FUNCTION_PASS(NAME, CREATE)                                     \
  if (Name == NAME) {                                                          \
    FPM.addPass(CREATE);                                                       \
    return true;                                                               \
  }
#include "Passes.def"
        return false;
      });
  PB.registerPipelineParsingCallback(
      [](StringRef Name, ModulePassManager &MPM,
         ArrayRef<PassBuilder::PipelineElement>) {
#define CLEAVE_MODULE_PASS(NAME, CREATE)                                       \
  if (Name == NAME) {                                                          \
    MPM.addPass(CREATE);                                                       \
    return true;                                                               \
  }
#include "Passes.def"
        if (Name == DeviceVariantsPipeline) {
          addDeviceVariantPasses(MPM);
          return true;
        }
        if (Name == CPUVariantsPipeline) {
          addCPUVariantPasses(MPM);
          return true;
        }
        return false;
      });
}
