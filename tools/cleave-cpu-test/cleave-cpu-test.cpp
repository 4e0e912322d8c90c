//===- cleave-cpu-test.cpp - Device IR to a CPU-variant object, for tests -===//
//
// Part of Cleave. Reads the device IR of a kernel module (nvptx64), builds
// its host module with cleave-cpu-variants (the bundle's CPU module,
// cleave/Plugin/Pipelines.h) and writes an x86-64 object (or the
// optimized host IR with -S). The differential tests in test/CPU link that
// object with their drivers; the driver proper will do the same through
// `cleave compile --emit=cpu-obj`.
//
//===----------------------------------------------------------------------===//
#include "cleave/CodeGen/HostObjectEmitter.h"
#include "cleave/Analysis/Footprint.h"
#include "cleave/Plugin/Pipelines.h"
#include "cleave/Support/KernelInfo.h"
#include "cleave/Transforms/Rebase.h"

#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm/IRReader/IRReader.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Passes/PassBuilder.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Support/WithColor.h"
#include "llvm/Target/TargetMachine.h"

using namespace llvm;

static cl::opt<std::string> Input(cl::Positional, cl::desc("<device .ll/.bc>"),
                                  cl::Required);
static cl::opt<std::string> Output("o", cl::desc("output file"),
                                   cl::value_desc("file"), cl::init("-"));
static cl::opt<std::string> CPU("mcpu", cl::desc("x86-64 target CPU"),
                                cl::init("x86-64-v3"));
static cl::opt<bool> EmitLL("S", cl::desc("write the optimized host IR"));
static cl::opt<std::string> RebasedDir(
    "rebased",
    cl::desc("run cleave-rebase first, lower its clones too, and write each "
             "kernel's footprints with their rebase records to DIR/<kernel>.fp"),
    cl::value_desc("DIR"));

static cl::opt<bool> Reorganize(
    "reorganize",
    cl::desc("run cleave-reorganize-instrumented first, so that the "
             "instrumented variant is lowered too"));

static int fail(const Twine &Msg) {
  WithColor::error(errs(), "cleave-cpu-test") << Msg << "\n";
  return 1;
}

int main(int argc, char **argv) {
  InitLLVM X(argc, argv);
  cl::ParseCommandLineOptions(argc, argv, "Cleave CPU-variant test compiler\n");
  LLVMInitializeNVPTXTargetInfo();
  LLVMInitializeNVPTXTarget();
  LLVMInitializeNVPTXTargetMC();

  LLVMContext Ctx;
  SMDiagnostic Diag;
  std::unique_ptr<Module> M = parseIRFile(Input, Diag, Ctx);
  if (!M) {
    Diag.print("cleave-cpu-test", errs());
    return 1;
  }
  // The lowering asks the NVPTX target for divergence information.
  std::string Err;
  const Target *T = TargetRegistry::lookupTarget(M->getTargetTriple(), Err);
  if (!T)
    return fail("device target: " + Err);
  std::unique_ptr<TargetMachine> TM(T->createTargetMachine(
      M->getTargetTriple(), "sm_90", "", TargetOptions(), std::nullopt));

  cleave::CleavePassSetup Setup(TM.get());
  if (!RebasedDir.empty()) {
    if (Error E = Setup.run(*M, "cleave-rebase"))
      return fail(toString(std::move(E)));
    for (Function *K : cleave::getKernels(*M)) {
      std::error_code FEC;
      raw_fd_ostream FP(RebasedDir + "/" + K->getName().str() + ".fp", FEC);
      if (FEC)
        return fail(RebasedDir + ": " + FEC.message());
      FP << cleave::appendRebaseRecords(
          *M, *K,
          Setup.FAM.getResult<cleave::FootprintAnalysis>(*K).serialize());
    }
    // The clones are variants; lower them as kernels of their own.
    for (Function &F : *M)
      if (F.getFnAttribute(cleave::VariantAttr).getValueAsString() == "rebase")
        F.removeFnAttr(cleave::VariantAttr);
    Setup.MAM.clear();
  }
  // The instrumented variant besides the inspector and the reorganized one
  // (which cleave-cpu-variants makes and lowers anyway); the pipeline's
  // cleave-reorganize then leaves these kernels alone.
  if (Reorganize) {
    if (Error E = Setup.run(*M, "cleave-reorganize-instrumented"))
      return fail(toString(std::move(E)));
    Setup.MAM.clear();
  }
  // What the bundle's CPU entries name: twins and merge kernels included.
  if (Error E = Setup.run(*M, cleave::CPUVariantsPipeline))
    return fail(toString(std::move(E)));

  std::error_code EC;
  ToolOutputFile Out(Output, EC, EmitLL ? sys::fs::OF_Text : sys::fs::OF_None);
  if (EC)
    return fail(Output + ": " + EC.message());
  if (EmitLL) {
    if (Error E = cleave::optimizeHostModule(*M, CPU))
      return fail(toString(std::move(E)));
    M->print(Out.os(), nullptr);
  } else {
    Expected<std::string> Obj = cleave::emitHostObject(*M, CPU);
    if (!Obj)
      return fail(toString(Obj.takeError()));
    Out.os() << *Obj;
  }
  Out.keep();
  return 0;
}
