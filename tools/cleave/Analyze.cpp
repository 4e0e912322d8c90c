//===- Analyze.cpp - `cleave analyze`: predicted kernel times --------------===//
//
// Part of Cleave's driver (docs/analyze.md). For each kernel and launch
// configuration a program makes: predicted time, occupancy and its limiter,
// MPD and CPD, the period breakdown and the bottleneck, by Luo's model as
// printed (`--model=paper`, corrections by name) or by our Hopper model.
//
//  1. Per .cu file: the device compile; PTX of the kernels and `ptxas -v`
//     for registers and static shared memory; the kernel bundle; the CPU
//     variants twice, once ordinary and once from the instrumented module
//     (lib/Transforms/Instrument.cpp), linked into one device object whose
//     descriptors dispatch through the runtime's recorder.
//  2. The program: the rewritten host sources, those device objects and the
//     user's .cpp/.o files, built by buildProgram (Build.cpp) into a
//     temporary directory.
//  3. One run on the CPU device (CLEAVE_DEVICES=cpu) with
//     CLEAVE_INSTRUMENT_OUT set: a few sampled blocks of each distinct
//     launch run instrumented, every other block runs the ordinary variant.
//  4. The record, the sites and the device profile go to the models in
//     cleave-rt-model (runtime/lib/model/HopperModel.cpp, LuoModel.cpp).
//
//===----------------------------------------------------------------------===//
#include "Analyze.h"
#include "AnalyzeData.h"
#include "Build.h"
#include "HostCompiler.h"

#include "cleave/Analysis/InstructionMix.h"
#include "cleave/Bundle/BundleWriter.h"
#include "cleave/Plugin/Pipelines.h"
#include "cleave/CodeGen/DeviceObject.h"
#include "cleave/CodeGen/PTXEmitter.h"
#include "cleave/Rewrite/HostRewriter.h"
#include "cleave/Support/Diagnosed.h"
#include "cleave/Support/KernelInfo.h"
#include "cleave/Transforms/Instrument.h"
#include "cleave/rt/DeviceProfile.h"
#include "cleave/rt/HopperModel.h"
#include "cleave/rt/InstrumentRecord.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallPtrSet.h"
#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Demangle/Demangle.h"
#include "llvm/IR/DerivedTypes.h"
#include "llvm/IR/Instructions.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm/IRReader/IRReader.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Process.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/Regex.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/WithColor.h"
#include "llvm/Support/xxhash.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/Transforms/Utils/Cloning.h"

#include <cassert>
#include <cmath>
#include <map>
#include <memory>
#include <set>
#include <unordered_map>

extern char **environ;

#ifndef CLEAVE_SOURCE_PROFILES_DIR
#error "CLEAVE_SOURCE_PROFILES_DIR must be defined by the build"
#endif

using namespace llvm;
namespace model = cleave::rt::model;
namespace luo = cleave::rt::luo;

namespace cleave {
using namespace analyze;
namespace {

cl::SubCommand AnalyzeCmd("analyze",
                          "Predict each kernel launch's time on a GPU from an "
                          "instrumented CPU run (docs/analyze.md)");
cl::OptionCategory AnalyzeCat("cleave analyze options");

cl::list<std::string> Inputs(cl::Positional, cl::desc("<input .cu/.cpp/.o>"),
                             cl::ZeroOrMore, cl::sub(AnalyzeCmd));
cl::opt<std::string> GpuProfile(
    "gpu", cl::desc("Device profile (JSON from cleave-calibrate; default "
                    "profiles/h100x1-all.json)"),
    cl::value_desc("profile.json"), cl::sub(AnalyzeCmd), cl::cat(AnalyzeCat));
cl::opt<unsigned> GpuIndex("gpu-index",
                           cl::desc("Which GPU of the profile (default 0)"),
                           cl::init(0), cl::sub(AnalyzeCmd),
                           cl::cat(AnalyzeCat));
cl::opt<ModelKind> Model(
    "model", cl::desc("The model"),
    cl::values(clEnumValN(ModelKind::Paper, "paper",
                          "Luo's MPD/CPD model as printed (digest 000 §1)"),
               clEnumValN(ModelKind::Hopper, "hopper",
                          "occupancy, waves, issue, latency, 32-byte "
                          "sectors, L2 and DRAM, launch cost (default)")),
    cl::init(ModelKind::Hopper), cl::sub(AnalyzeCmd), cl::cat(AnalyzeCat));
cl::list<std::string> PaperFix(
    "paper-fix",
    cl::desc("Corrections of the paper model: mpd, cpd, tc4, waves, "
             "occupancy, launch, all (comma-separated)"),
    cl::CommaSeparated, cl::sub(AnalyzeCmd), cl::cat(AnalyzeCat));
cl::opt<bool> Json("json", cl::desc("Print the report as JSON"),
                   cl::sub(AnalyzeCmd), cl::cat(AnalyzeCat));
cl::opt<unsigned> SampleBlocks(
    "sample-blocks",
    cl::desc("Blocks recorded per launch configuration (default 3: first, "
             "middle, last)"),
    cl::init(3), cl::sub(AnalyzeCmd), cl::cat(AnalyzeCat));
cl::opt<unsigned> Registers(
    "registers",
    cl::desc("Registers per thread for every kernel, instead of ptxas -v"),
    cl::init(0), cl::sub(AnalyzeCmd), cl::cat(AnalyzeCat));
enum class EmitKind { None, Sites, InstrumentedIR, CpuIR };
cl::opt<EmitKind> Emit(
    "emit", cl::desc("Print an intermediate result of one .cu/.ll file"),
    cl::values(clEnumValN(EmitKind::Sites, "sites",
                          "the instrumentation's block and memory sites"),
               clEnumValN(EmitKind::InstrumentedIR, "instrumented-ir",
                          "the device IR with the markers"),
               clEnumValN(EmitKind::CpuIR, "cpu-ir",
                          "the CPU module: ordinary and instrumented variants "
                          "and the dispatchers")),
    cl::init(EmitKind::None), cl::sub(AnalyzeCmd), cl::cat(AnalyzeCat));
cl::list<std::string> IncludeDirs("I", cl::desc("Add an include directory"),
                                  cl::value_desc("dir"), cl::Prefix,
                                  cl::sub(AnalyzeCmd), cl::cat(AnalyzeCat));
cl::list<std::string> Defines("D", cl::desc("Define a macro (NAME[=VALUE])"),
                              cl::value_desc("macro"), cl::Prefix,
                              cl::sub(AnalyzeCmd), cl::cat(AnalyzeCat));
cl::opt<unsigned> OptLevel("O", cl::desc("Optimization level (default 3)"),
                           cl::Prefix, cl::init(3), cl::sub(AnalyzeCmd),
                           cl::cat(AnalyzeCat));
cl::opt<std::string> Std("std", cl::desc("Language standard"),
                         cl::value_desc("std"), cl::sub(AnalyzeCmd),
                         cl::cat(AnalyzeCat));
cl::opt<std::string> GpuArch("cuda-gpu-arch",
                             cl::desc("GPU architecture (default sm_90)"),
                             cl::init("sm_90"), cl::sub(AnalyzeCmd),
                             cl::cat(AnalyzeCat));
cl::opt<std::string> CudaPath("cuda-path",
                              cl::desc("CUDA installation for device headers"),
                              cl::sub(AnalyzeCmd), cl::cat(AnalyzeCat));
cl::opt<std::string> Cxx("cxx", cl::desc("Host C++ compiler"),
                         cl::value_desc("compiler"), cl::sub(AnalyzeCmd),
                         cl::cat(AnalyzeCat));
cl::opt<bool> KeepTemps("keep-temps",
                        cl::desc("Keep the program, its record and the "
                                 "temporary files"),
                        cl::sub(AnalyzeCmd), cl::cat(AnalyzeCat));
cl::opt<bool> Verbose("v", cl::desc("Print the steps and the program's output"),
                      cl::sub(AnalyzeCmd), cl::cat(AnalyzeCat));
cl::opt<std::string> SaveRecord(
    "save-record",
    cl::desc("Also write what the run gathered (the kernels' sites, "
             "resources and the instrumentation record) to this file, for "
             "--from-record"),
    cl::value_desc("file"), cl::sub(AnalyzeCmd), cl::cat(AnalyzeCat));
cl::opt<std::string> FromRecord(
    "from-record",
    cl::desc("Evaluate the model on a file written by --save-record instead "
             "of building and running the program"),
    cl::value_desc("file"), cl::sub(AnalyzeCmd), cl::cat(AnalyzeCat));

int error(const Twine &Msg) {
  WithColor::error(errs(), "cleave analyze") << Msg << "\n";
  return 1;
}


//===----------------------------------------------------------------------===//
// The device profile
//===----------------------------------------------------------------------===//

std::string prefixDir() {
  std::string Exe = sys::fs::getMainExecutable(nullptr, (void *)&prefixDir);
  return sys::path::parent_path(sys::path::parent_path(Exe)).str();
}

/// --gpu, else h100x1-all.json from <prefix>/share/cleave/profiles, else
/// from the source tree's profiles/.
std::string profilePath() {
  if (!GpuProfile.empty())
    return GpuProfile;
  SmallString<256> P(prefixDir());
  sys::path::append(P, "share", "cleave", "profiles", "h100x1-all.json");
  if (sys::fs::exists(P))
    return std::string(P);
  P = CLEAVE_SOURCE_PROFILES_DIR;
  sys::path::append(P, "h100x1-all.json");
  return std::string(P);
}

//===----------------------------------------------------------------------===//
// ptxas -v
//===----------------------------------------------------------------------===//


/// Static shared memory of a kernel from the IR (addrspace(3) globals it
/// uses), for --registers without ptxas.
uint64_t irStaticShared(Function &K) {
  const DataLayout &DL = K.getParent()->getDataLayout();
  std::set<const GlobalVariable *> Seen;
  uint64_t Bytes = 0;
  for (BasicBlock &BB : K)
    for (Instruction &I : BB)
      for (Value *Op : I.operands())
        if (auto *GV = dyn_cast<GlobalVariable>(Op->stripPointerCasts()))
          if (GV->getAddressSpace() == 3 && !GV->isDeclaration() &&
              Seen.insert(GV).second)
            Bytes += DL.getTypeAllocSize(GV->getValueType());
  return Bytes;
}

//===----------------------------------------------------------------------===//
// The instrumented build
//===----------------------------------------------------------------------===//

/// Fills \p A.Code for the sites \p Info of the device module \p Device:
/// the instruction mix (cleave/Analysis/InstructionMix.h) of a copy that
/// went through the backend's IR passes, for each site's block (found by
/// function and block name; blocks the passes add, such as dedicated loop
/// exits, hold only branches). Sites whose block is not found keep their
/// Sequence; dependences on blocks that are no site are left out.
Error refineCode(Module &Device, const InstrumentInfo &Info, Analysis &A) {
  std::unique_ptr<Module> M = CloneModule(Device);
  auto TM = createNVPTXTargetMachine(*M, GpuArch);
  if (!TM)
    return TM.takeError();
  CleavePassSetup Setup(TM->get());
  if (Error E = Setup.run(*M, NVPTXBackendIRPipeline))
    return E;
  // Per function: its mix and the site id of each of its blocks.
  std::map<const Function *, std::map<uint32_t, uint32_t>> SiteOfBlock;
  std::vector<std::pair<const BlockMix *, uint32_t>> Found;
  for (const BlockSite &S : Info.Blocks) {
    Function *F = M->getFunction(S.Function);
    if (!F || StringRef(S.Name).starts_with("#"))
      continue;
    const InstructionMix &Mix = Setup.FAM.getResult<InstructionMixAnalysis>(*F);
    for (const BlockMix &BM : Mix.Blocks)
      if (BM.Block->getName() == S.Name) {
        SiteOfBlock[F][uint32_t(&BM - Mix.Blocks.data())] = S.Id;
        Found.push_back({&BM, S.Id});
      }
  }
  for (auto [BM, Id] : Found) {
    const std::map<uint32_t, uint32_t> &Sites =
        SiteOfBlock[BM->Block->getParent()];
    SiteCode &Code = A.Code[Id];
    Code.Sequence = BM->Sequence;
    Code.Deps.clear();
    for (const std::vector<MixEntry> &Deps : BM->Deps) {
      std::vector<EntryRef> &Refs = Code.Deps.emplace_back();
      for (const MixEntry &D : Deps)
        if (auto It = Sites.find(D.Block); It != Sites.end())
          Refs.push_back((EntryRef(It->second) << 32) | D.Index);
      llvm::sort(Refs);
    }
  }
  return Error::success();
}

cleave::DeviceCompileOptions deviceOptions() {
  cleave::DeviceCompileOptions O;
  O.GpuArch = GpuArch;
  O.OptLevel = OptLevel;
  O.Std = Std;
  O.IncludeDirs.assign(IncludeDirs.begin(), IncludeDirs.end());
  O.Defines.assign(Defines.begin(), Defines.end());
  O.CudaPath = CudaPath;
  O.Verbose = Verbose;
  O.ColorDiagnostics = errs().has_colors();
  return O;
}

/// The instrumented CPU variants of \p Device's kernels (the device module
/// is not changed): a clone instrumented, lowered by cleave-cpu-lower alone
/// (no twins, no merge kernels: the recorder runs the kernels themselves)
/// and finalized. \p Info receives the sites.
Expected<std::unique_ptr<Module>> instrumentedVariants(Module &Device,
                                                       uint32_t Index,
                                                       InstrumentInfo &Info) {
  std::unique_ptr<Module> Instr = CloneModule(Device);
  Expected<InstrumentInfo> I = instrumentModule(*Instr, Index);
  if (!I)
    return I.takeError();
  Info = std::move(*I);
  auto TM = createNVPTXTargetMachine(*Instr, GpuArch);
  if (!TM)
    return TM.takeError();
  if (Error E = runCleavePipeline(*Instr, "cleave-cpu-lower", TM->get()))
    return std::move(E);
  if (Error E = finalizeInstrumentedCPU(*Instr))
    return std::move(E);
  return std::move(Instr);
}

/// The CPU module of \p Device (cleave-cpu-variants, as in its bundle) with
/// the instrumented variants linked in, for --emit=cpu-ir.
Expected<std::unique_ptr<Module>> instrumentedCPUModule(Module &Device,
                                                        InstrumentInfo &Info) {
  auto Instr = instrumentedVariants(Device, 0, Info);
  if (!Instr)
    return Instr.takeError();
  std::unique_ptr<Module> Plain = CloneModule(Device);
  auto TM = createNVPTXTargetMachine(*Plain, GpuArch);
  if (!TM)
    return TM.takeError();
  if (Error E = runCleavePipeline(*Plain, CPUVariantsPipeline, TM->get()))
    return std::move(E);
  if (Error E =
          linkInstrumentedVariants(*Plain, std::move(*Instr), Info.Kernels))
    return std::move(E);
  return std::move(Plain);
}

/// --emit=...: one .cu or .ll file's intermediate result on stdout.
int emitOne(LLVMContext &Ctx) {
  if (Inputs.size() != 1)
    return error("--emit takes one input file (got " + Twine(Inputs.size()) +
                 ")");
  StringRef In = Inputs.front();
  std::unique_ptr<Module> M;
  if (In.ends_with(".ll") || In.ends_with(".bc")) {
    SMDiagnostic Err;
    M = parseIRFile(In, Err, Ctx);
    if (!M) {
      Err.print("cleave analyze", errs());
      return 1;
    }
  } else {
    auto D = compileDeviceCode(In, deviceOptions(), Ctx, errs());
    if (!D) {
      reportUnlessDiagnosed(D.takeError(),
                            [](const std::string &M) { error(M); });
      return 1;
    }
    M = std::move(*D);
  }
  if (Emit == EmitKind::CpuIR) {
    InstrumentInfo Info;
    auto CPU = instrumentedCPUModule(*M, Info);
    if (!CPU)
      return error(toString(CPU.takeError()));
    (*CPU)->print(outs(), nullptr);
    return 0;
  }
  Expected<InstrumentInfo> Info = instrumentModule(*M, 0);
  if (!Info)
    return error(toString(Info.takeError()));
  if (Emit == EmitKind::Sites)
    printInstrumentInfo(*Info, outs());
  else
    M->print(outs(), nullptr);
  return 0;
}

/// Removes the temporary directory unless --keep-temps.
struct TempDir {
  std::string Path;
  ~TempDir() {
    if (Path.empty())
      return;
    if (KeepTemps)
      errs() << "cleave analyze: temporary files kept in " << Path << "\n";
    else
      sys::fs::remove_directories(Path);
  }
};

/// Builds the instrumented program into \p Dir; fills \p A.
Expected<std::string> buildInstrumented(StringRef Dir, LLVMContext &Ctx,
                                        Analysis &A) {
  std::string Ptxas;
  if (Registers == 0) {
    Ptxas = findPtxas();
    if (Ptxas.empty())
      return makeError(
          "ptxas not found (PATH, $CUDA_PATH/bin, /usr/local/cuda/bin): the "
          "models need each kernel's registers and shared memory from "
          "`ptxas -v`; install CUDA's ptxas or pass --registers=N");
  }
  BuildOptions B;
  B.Device = deviceOptions();
  B.Cxx = Cxx;
  B.Verbose = Verbose;
  B.HostCPU = "x86-64-v3";
  useHostCompilerView(B);
  SmallString<256> Exe(Dir);
  sys::path::append(Exe, "program");
  B.Output = std::string(Exe);
  uint32_t Index = 0;
  for (const std::string &In : Inputs) {
    StringRef Ext = sys::path::extension(In);
    if (Ext != ".cu") {
      B.Inputs.push_back(In); // host C++ or objects: as cleave compile does
      continue;
    }
    if (!sys::fs::exists(In))
      return makeError("no such file: '" + In + "'");
    if (Verbose)
      errs() << "cleave analyze: instrumented device code: " << In << "\n";
    StringRef Stem = sys::path::stem(In);
    SmallString<256> HostSrc(Dir), DevObj(Dir);
    sys::path::append(HostSrc, Twine(Index) + "-" + Stem + ".cleave.cpp");
    sys::path::append(DevObj, Twine(Index) + "-" + Stem + ".device.o");
    HostRewriteOptions HO;
    HO.Parse = B.Device;
    HO.OutputName = std::string(HostSrc);
    SmallString<256> CopyDir(Dir);
    sys::path::append(CopyDir, Twine(Index) + "-" + Stem + ".include");
    HO.CopyDir = std::string(CopyDir);
    Expected<HostRewriteResult> R = rewriteHostSource(In, HO, errs());
    if (!R)
      return R.takeError();
    if (writeRewrittenCopies(CopyDir, R->Copies, B.Device.IncludeDirs))
      return makeError("cannot write the rewritten copies of " + In +
                       "'s included files");
    DeviceCompileOptions DO = B.Device;
    DO.AllowNoKernels = true;
    auto M = compileDeviceCode(In, DO, Ctx, errs());
    if (!M)
      return M.takeError();
    if (Error E = checkRegistrations(*R, **M, errs()))
      return std::move(E);
    for (Function *K : getKernels(**M)) {
      A.Display[K->getName().str()] = displayName(*K);
      if (Registers) {
        Resources &Res = A.Res[K->getName().str()];
        Res.Registers = Registers;
        Res.StaticShared = irStaticShared(*K);
        Res.From = "--registers";
      }
    }
    if (!getKernels(**M).empty()) {
      if (!Ptxas.empty()) {
        // The kernels as the frontend made them (before Cleave's variants).
        Expected<std::string> PTX = emitPTX(**M, GpuArch);
        if (!PTX)
          return PTX.takeError();
        auto Res = ptxasResources(*PTX, GpuArch, Ptxas);
        if (!Res)
          return Res.takeError();
        for (auto &[K, V] : *Res)
          A.Res[K] = Resources{V, "ptxas"};
      }
      InstrumentInfo Info;
      auto Instr = instrumentedVariants(**M, Index, Info);
      if (!Instr)
        return Instr.takeError();
      if (Error E = refineCode(**M, Info, A))
        return std::move(E);
      BundleOptions BO;
      BO.GpuArch = GpuArch;
      BO.Ptxas = Ptxas;
      Expected<BuiltBundle> Bundle = writeBundle(**M, BO);
      if (!Bundle)
        return Bundle.takeError();
      // The bundle's CPU variants, each kernel's dispatching to its
      // instrumented twin for the sampled blocks.
      if (Error E = linkInstrumentedVariants(*Bundle->CPU, std::move(*Instr),
                                             Info.Kernels))
        return std::move(E);
      A.Sites.push_back(std::move(Info));
      DeviceObjectOptions OO;
      OO.CPU = B.HostCPU;
      Expected<std::string> Obj =
          emitDeviceObject(*Bundle->CPU, Bundle->Bytes, OO);
      if (!Obj)
        return Obj.takeError();
      std::error_code EC;
      raw_fd_ostream OS(DevObj, EC, sys::fs::OF_None);
      if (EC)
        return makeError("cannot write '" + DevObj + "': " + EC.message());
      OS << *Obj;
      B.Inputs.push_back(std::string(DevObj));
    }
    {
      std::error_code EC;
      raw_fd_ostream OS(HostSrc, EC, sys::fs::OF_Text);
      if (EC)
        return makeError("cannot write '" + HostSrc + "': " + EC.message());
      OS << R->Source;
    }
    // The rewritten source as a host C++ file; quoted includes of the .cu
    // file still resolve from its directory.
    B.Inputs.push_back(std::string(HostSrc));
    StringRef SrcDir = sys::path::parent_path(In);
    B.Device.IncludeDirs.push_back(SrcDir.empty() ? "." : SrcDir.str());
    ++Index;
  }
  if (A.Sites.empty())
    return makeError("no kernels in the inputs: nothing to analyze");
  if (buildProgram(B, Ctx) != 0)
    return makeError("building the instrumented program failed");
  return std::string(Exe);
}

/// Runs the program on the CPU device with the recorder on.
Error runProgram(StringRef Exe, StringRef Record, StringRef Dir,
                 ArrayRef<std::string> ProgramArgs, unsigned SmCount,
                 int &ExitCode) {
  std::vector<std::string> Env;
  for (char **E = environ; *E; ++E) {
    StringRef Var(*E);
    if (Var.starts_with("CLEAVE_DEVICES=") ||
        Var.starts_with("CLEAVE_INSTRUMENT_") ||
        Var.starts_with("CLEAVE_ANALYZE_"))
      continue;
    Env.push_back(Var.str());
  }
  Env.push_back("CLEAVE_DEVICES=cpu");
  // The profile's SM count for cudaGetDeviceProperties' multiProcessorCount
  // (and cudaDevAttrMultiProcessorCount): a program that sizes its grid
  // from it makes the grid it would make on that GPU.
  Env.push_back("CLEAVE_ANALYZE_SM_COUNT=" + std::to_string(SmCount));
  Env.push_back(("CLEAVE_INSTRUMENT_OUT=" + Record).str());
  Env.push_back("CLEAVE_INSTRUMENT_BLOCKS=" + std::to_string(SampleBlocks));
  SmallVector<StringRef, 8> Args = {Exe};
  for (const std::string &A : ProgramArgs)
    Args.push_back(A);
  SmallVector<StringRef, 64> EnvRefs(Env.begin(), Env.end());
  SmallString<256> Out(Dir);
  sys::path::append(Out, "program.output");
  std::optional<StringRef> Redirects[3] = {std::nullopt, StringRef(Out),
                                           StringRef(Out)};
  if (Verbose) {
    errs() << "cleave analyze: running CLEAVE_DEVICES=cpu";
    for (StringRef A : Args)
      errs() << " " << A;
    errs() << "\n";
  }
  std::string Msg;
  ExitCode = sys::ExecuteAndWait(Exe, Args, ArrayRef<StringRef>(EnvRefs),
                                 Redirects, 0, 0, &Msg);
  auto Output = MemoryBuffer::getFile(Out);
  StringRef Text = Output ? (*Output)->getBuffer() : "";
  if (Verbose || ExitCode != 0)
    errs() << Text;
  if (ExitCode < 0)
    return makeError("the program did not run to its end: " + Msg);
  return Error::success();
}

//===----------------------------------------------------------------------===//
// The record
//===----------------------------------------------------------------------===//

//===----------------------------------------------------------------------===//
// From the record to the models' input
//===----------------------------------------------------------------------===//

//===----------------------------------------------------------------------===//
// The report
//===----------------------------------------------------------------------===//

Expected<luo::Corrections> corrections() {
  luo::Corrections C = luo::Corrections::paper();
  for (const std::string &F : PaperFix) {
    if (F == "all")
      C = luo::Corrections::fixed();
    else if (F == "mpd")
      C.MpdSingleDivision = true;
    else if (F == "cpd")
      C.ClampCpd = true;
    else if (F == "tc4")
      C.ClampTc4 = true;
    else if (F == "waves")
      C.Waves = true;
    else if (F == "occupancy")
      C.Occupancy = true;
    else if (F == "launch")
      C.Launch = true;
    else
      return makeError("--paper-fix=" + F +
                       ": unknown correction (mpd, cpd, tc4, waves, "
                       "occupancy, launch, all)");
  }
  return C;
}

/// --from-record: the saved record's text and its path; \p A gets what the
/// build found.
Expected<std::pair<std::string, std::string>>
recordFromFile(Analysis &A, const model::GpuParams &Gpu,
               ArrayRef<std::string> ProgramArgs) {
  // The build options made the record; here they would do nothing.
  cl::Option *BuildOptions[] = {
      &SampleBlocks, &Registers, std::addressof(IncludeDirs),
      std::addressof(Defines), &OptLevel, &Std, &GpuArch,
      &CudaPath, &Cxx, &KeepTemps, &SaveRecord};
  for (cl::Option *O : BuildOptions)
    if (O->getNumOccurrences())
      return makeError((O->ArgStr.size() == 1 ? "-" : "--") + O->ArgStr +
                       " applies when building and running the program, not "
                       "with --from-record (the record was made with its own)");
  Expected<SavedRecord> Saved = readSavedRecord(FromRecord, A);
  if (!Saved)
    return Saved.takeError();
  if (!Inputs.empty() || !ProgramArgs.empty())
    if (Error E = checkSameProgram(FromRecord, *Saved, Inputs, ProgramArgs))
      return std::move(E);
  if (Saved->SmCount && Saved->SmCount != Gpu.Sms)
    WithColor::warning(errs(), "cleave analyze")
        << "the record was made telling the program " << Saved->SmCount
        << " SMs; this profile's GPU has " << Gpu.Sms
        << ": a grid sized from the SM count is not this GPU's\n";
  return std::pair(std::move(Saved->Record), FromRecord.getValue());
}

/// Builds the instrumented program, runs it on the CPU and returns the
/// recorder's output and where it is (the --save-record file, which gets it
/// with what the build found, or the temporary file); \p A gets what the
/// build found.
Expected<std::pair<std::string, std::string>>
recordByRunning(Analysis &A, const model::GpuParams &Gpu,
                ArrayRef<std::string> ProgramArgs, LLVMContext &Ctx) {
  if (Inputs.empty())
    return makeError("no input files (or --from-record=FILE)");
  // The inputs' identity now, before the build reads them.
  SavedRecord Saved;
  if (!SaveRecord.empty()) {
    for (const std::string &In : Inputs) {
      auto Id = inputIdentity(In);
      if (!Id)
        return Id.takeError();
      Saved.Inputs.push_back(*Id);
    }
    Saved.Args.assign(ProgramArgs.begin(), ProgramArgs.end());
    Saved.SampleBlocks = SampleBlocks;
    Saved.SmCount = Gpu.Sms;
  }
  TempDir Tmp;
  {
    SmallString<256> P;
    if (std::error_code EC =
            sys::fs::createUniqueDirectory("cleave-analyze", P))
      return makeError("cannot create a temporary directory: " +
                       EC.message());
    Tmp.Path = std::string(P);
  }
  Expected<std::string> Exe = buildInstrumented(Tmp.Path, Ctx, A);
  if (!Exe)
    return Exe.takeError();
  SmallString<256> Rec(Tmp.Path);
  sys::path::append(Rec, "record.txt");
  int Exit = 0;
  if (Error E = runProgram(*Exe, Rec, Tmp.Path, ProgramArgs, Gpu.Sms, Exit))
    return std::move(E);
  if (Exit != 0)
    return makeError("the program exited with status " + Twine(Exit) +
                     " on the CPU (its output is above); no report");
  Expected<std::string> Text = readRecordFile(Rec);
  if (!Text)
    return Text.takeError();
  if (SaveRecord.empty())
    return std::pair(std::move(*Text), std::string(Rec));
  Saved.Record = *Text;
  if (Error E = writeSavedRecord(SaveRecord, A, Saved))
    return std::move(E);
  if (Verbose)
    errs() << "cleave analyze: record saved to " << SaveRecord << "\n";
  return std::pair(std::move(*Text), SaveRecord.getValue());
}

/// The reports, as text or as JSON (--json), with the model and the
/// profile they were made with.
void printReports(const std::vector<Report> &Reports,
                  const std::vector<std::string> &NotLaunched, Analysis &A,
                  const model::GpuParams &Gpu, const luo::Corrections &Fixes,
                  StringRef Profile) {
  std::string ModelName = Model == ModelKind::Paper ? "paper" : "hopper";
  json::Array Fixed;
  if (Model == ModelKind::Paper) {
    const luo::Corrections &C = Fixes;
    for (auto [On, Name] :
         {std::pair(C.MpdSingleDivision, "mpd"), std::pair(C.ClampCpd, "cpd"),
          std::pair(C.ClampTc4, "tc4"), std::pair(C.Waves, "waves"),
          std::pair(C.Occupancy, "occupancy"), std::pair(C.Launch, "launch")})
      if (On)
        Fixed.push_back(Name);
  }
  if (Json) {
    json::Array Kernels;
    for (const Report &R : Reports)
      Kernels.push_back(toJson(R, A));
    json::Array NL;
    for (const std::string &K : NotLaunched)
      NL.push_back(K);
    json::Object Doc{
        {"tool", "cleave analyze"},
        {"schema_version", 1},
        {"model", ModelName},
        {"paper_fixes", std::move(Fixed)},
        {"profile",
         json::Object{{"path", Profile},
                      {"gpu_index", unsigned(GpuIndex)},
                      {"name", Gpu.Name},
                      {"sm_count", Gpu.Sms},
                      {"sm_clock_mhz", Gpu.ClockMHz},
                      {"dram_gbps", Gpu.DramGBps},
                      {"l2_gbps", Gpu.L2GBps}}},
        {"from_record", FromRecord.empty() ? json::Value(nullptr)
                                           : json::Value(FromRecord)},
        {"kernels", std::move(Kernels)},
        {"not_launched", std::move(NL)}};
    outs() << formatv("{0:2}", json::Value(std::move(Doc))) << "\n";
    return;
  }
  outs() << "cleave analyze: model " << ModelName;
  if (Model == ModelKind::Paper) {
    outs() << " (corrections:";
    if (Fixed.empty())
      outs() << " none, as printed";
    for (const json::Value &F : Fixed)
      outs() << " " << *F.getAsString();
    outs() << ")";
  }
  outs() << "; profile " << Profile << " (gpu" << GpuIndex << ": "
         << Gpu.Name << ", " << Gpu.Sms << " SMs, "
         << formatv("{0:f0}", Gpu.ClockMHz) << " MHz, DRAM "
         << formatv("{0:f0}", Gpu.DramGBps) << " GB/s, L2 "
         << formatv("{0:f0}", Gpu.L2GBps) << " GB/s)\n";
  outs() << "cleave analyze: " << Reports.size()
         << " launch configuration(s) recorded on the CPU";
  if (!FromRecord.empty())
    outs() << " (from the record " << FromRecord << ")";
  outs() << "\n";
  for (const Report &R : Reports)
    printText(outs(), R, Gpu, Model);
  for (const std::string &K : NotLaunched)
    outs() << "\nkernel " << A.Display[K] << " [" << K
           << "]: not launched by this run\n";
}

} // namespace

bool analyzeRequested() { return bool(AnalyzeCmd); }

int runAnalyze(ArrayRef<std::string> ProgramArgs) {
  LLVMContext Ctx;
  if (OptLevel > 3)
    return error("invalid optimization level -O" + Twine(OptLevel));
  if (Emit != EmitKind::None)
    return emitOne(Ctx);
  if (SampleBlocks == 0 || SampleBlocks > 1024)
    return error("--sample-blocks must be 1 to 1024");
  Expected<luo::Corrections> Fixes = corrections();
  if (!Fixes)
    return error(toString(Fixes.takeError()));
  if (!PaperFix.empty() && Model != ModelKind::Paper)
    return error("--paper-fix applies to --model=paper");
  std::string Profile = profilePath();
  rt::GpuProfile Link;
  Expected<model::GpuParams> Gpu = loadProfile(Profile, GpuIndex, Link);
  if (!Gpu)
    return error(toString(Gpu.takeError()));

  Analysis A;
  A.IssuedCode = Model == ModelKind::Hopper;
  Expected<std::pair<std::string, std::string>> Record =
      FromRecord.empty() ? recordByRunning(A, *Gpu, ProgramArgs, Ctx)
                         : recordFromFile(A, *Gpu, ProgramArgs);
  if (!Record) {
    reportUnlessDiagnosed(Record.takeError(),
                          [](const std::string &M) { error(M); });
    return 1;
  }
  auto &[RecordText, RecordPath] = *Record;
  std::vector<LaunchRecord> Launches;
  if (rt::Status S = rt::record::parseInstrumentRecord(RecordText, Launches);
      !S)
    return error("malformed instrumentation record '" + RecordPath +
                 "': " + S.Message);

  std::vector<Report> Reports;
  for (const LaunchRecord &L : Launches) {
    Report R;
    R.L = &L;
    R.S = summarize(A, L);
    auto It = A.Res.find(L.Kernel);
    if (It == A.Res.end())
      return error("no ptxas resources for kernel '" + L.Kernel + "'");
    R.Res = It->second;
    auto D = A.Display.find(L.Kernel);
    R.Display = D != A.Display.end() ? D->second : L.Kernel;
    model::KernelResources KR;
    KR.Registers = R.Res.Registers;
    KR.StaticShared = R.Res.StaticShared;
    KR.DynamicShared = L.Shared;
    R.P = Model == ModelKind::Paper
              ? model::predictPaper(*Gpu, R.S.Stats, KR, *Fixes)
              : model::predictHopper(*Gpu, R.S.Stats, KR);
    R.Tpsm = planTransfers(A, L, R.S, R.P, *Gpu, Link, KR, Model);
    Reports.push_back(std::move(R));
  }
  std::set<std::string> Launched;
  for (const LaunchRecord &L : Launches)
    Launched.insert(L.Kernel);
  std::vector<std::string> NotLaunched;
  for (auto &[K, D] : A.Display)
    if (!Launched.count(K))
      NotLaunched.push_back(K);

  printReports(Reports, NotLaunched, A, *Gpu, *Fixes, Profile);
  return 0;
}

} // namespace cleave
