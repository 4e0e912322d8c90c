//===- HostObjectEmitter.cpp - CPU variants to x86-64 object code --------===//
#include "cleave/CodeGen/HostObjectEmitter.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/IR/Module.h"
#include "llvm/IR/Verifier.h"
#include "llvm/MC/MCSubtargetInfo.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Passes/PassBuilder.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/TargetParser/Triple.h"

#include <memory>
#include <mutex>

using namespace llvm;

namespace cleave {

static void initializeX86() {
  static std::once_flag Once;
  std::call_once(Once, [] {
    LLVMInitializeX86TargetInfo();
    LLVMInitializeX86Target();
    LLVMInitializeX86TargetMC();
    LLVMInitializeX86AsmPrinter();
  });
}

static Expected<std::unique_ptr<TargetMachine>>
createHostTargetMachine(Module &M, StringRef CPU) {
  initializeX86();
  Triple TT(M.getTargetTriple());
  if (TT.getArch() != Triple::x86_64)
    return createStringError(inconvertibleErrorCode(),
                             "host object: module triple '%s' is not x86-64",
                             M.getTargetTriple().c_str());
  std::string Err;
  const Target *T = TargetRegistry::lookupTarget(TT.str(), Err);
  if (!T)
    return createStringError(inconvertibleErrorCode(), "X86 target: %s",
                             Err.c_str());
  // An unknown CPU name would only warn and generate baseline code; fall
  // back explicitly so the choice is visible.
  std::unique_ptr<MCSubtargetInfo> STI(
      T->createMCSubtargetInfo(TT.str(), CPU, ""));
  StringRef Chosen = STI && STI->isCPUStringValid(CPU) ? CPU : "x86-64";
  TargetOptions Options;
  // Contraction was decided in the IR (docs/cpu-backend.md): the backend
  // must not fuse anything on its own.
  Options.AllowFPOpFusion = FPOpFusion::Strict;
  std::unique_ptr<TargetMachine> TM(T->createTargetMachine(
      TT.str(), Chosen, "", Options, Reloc::PIC_, std::nullopt,
      CodeGenOptLevel::Aggressive));
  if (!TM)
    return createStringError(inconvertibleErrorCode(),
                             "cannot create an x86-64 target for '%s'",
                             Chosen.str().c_str());
  return std::move(TM);
}

static void optimize(Module &M, TargetMachine &TM) {
  // Functions carry no target attributes from the device side; give them the
  // chosen CPU so that the vectorizer's cost model sees its vector width.
  for (Function &F : M)
    if (!F.isDeclaration()) {
      F.addFnAttr("target-cpu", TM.getTargetCPU());
      F.addFnAttr("target-features", TM.getTargetFeatureString());
    }
  LoopAnalysisManager LAM;
  FunctionAnalysisManager FAM;
  CGSCCAnalysisManager CGAM;
  ModuleAnalysisManager MAM;
  PassBuilder PB(&TM);
  PB.registerModuleAnalyses(MAM);
  PB.registerCGSCCAnalyses(CGAM);
  PB.registerFunctionAnalyses(FAM);
  PB.registerLoopAnalyses(LAM);
  PB.crossRegisterProxies(LAM, FAM, CGAM, MAM);
  ModulePassManager MPM = PB.buildPerModuleDefaultPipeline(OptimizationLevel::O3);
  MPM.run(M, MAM);
}

Error optimizeHostModule(Module &M, StringRef CPU) {
  auto TM = createHostTargetMachine(M, CPU);
  if (!TM)
    return TM.takeError();
  M.setDataLayout((*TM)->createDataLayout());
  optimize(M, **TM);
  return Error::success();
}

Expected<std::string> emitHostObject(Module &M, StringRef CPU) {
  auto TM = createHostTargetMachine(M, CPU);
  if (!TM)
    return TM.takeError();
  M.setDataLayout((*TM)->createDataLayout());
  std::string VerifyErrors;
  raw_string_ostream VOS(VerifyErrors);
  if (verifyModule(M, &VOS))
    return createStringError(inconvertibleErrorCode(),
                             "host module is invalid: %s",
                             VerifyErrors.c_str());
  optimize(M, **TM);
  SmallString<0> Obj;
  raw_svector_ostream OS(Obj);
  legacy::PassManager PM;
  if ((*TM)->addPassesToEmitFile(PM, OS, nullptr, CodeGenFileType::ObjectFile))
    return createStringError(inconvertibleErrorCode(),
                             "X86 cannot emit an object file");
  PM.run(M);
  return std::string(Obj);
}

} // namespace cleave
