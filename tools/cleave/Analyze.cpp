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
//     cleave-rt-model (runtime/lib/HopperModel.cpp, LuoModel.cpp).
//
//===----------------------------------------------------------------------===//
#include "Analyze.h"
#include "Build.h"
#include "HostCompiler.h"

#include "cleave/Bundle/BundleWriter.h"
#include "cleave/CodeGen/DeviceObject.h"
#include "cleave/CodeGen/PTXEmitter.h"
#include "cleave/Rewrite/HostRewriter.h"
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
enum class ModelKind { Paper, Hopper };
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

Error makeError(const Twine &Msg) {
  return createStringError(inconvertibleErrorCode(), Msg);
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

/// The model's numbers for GPU --gpu-index of the profile at \p Path, read
/// by the runtime's reader (the planner reads the same file with it).
Expected<model::GpuParams> loadProfile(StringRef Path) {
  rt::DeviceProfile Profile;
  rt::Result R = rt::loadDeviceProfile(Path.str(), Profile);
  if (!R.ok())
    return makeError(R.message());
  if (GpuIndex >= Profile.GpuEntries)
    return makeError("--gpu-index=" + Twine(GpuIndex) + ": the profile '" +
                     Path + "' has " + Twine(Profile.GpuEntries) + " GPU(s)");
  const rt::GpuProfile *G = nullptr;
  for (const rt::GpuProfile &X : Profile.Gpus)
    if (X.Entry == GpuIndex)
      G = &X;
  if (!G)
    return makeError("the profile '" + Path + "' (gpus[" + Twine(GpuIndex) +
                     "]) holds a failed measurement, not a GPU");
  if (!G->ModelMissing.empty())
    return makeError("the profile '" + Path + "' (gpus[" + Twine(GpuIndex) +
                     "]) has no usable '" + G->ModelMissing +
                     "' (docs/calibrate.md lists the fields)");
  model::GpuParams P = G->Model;
  P.Issue = model::hopperIssueCosts();
  return P;
}

//===----------------------------------------------------------------------===//
// ptxas -v
//===----------------------------------------------------------------------===//

struct Resources {
  unsigned Registers = 0;
  uint64_t StaticShared = 0;
  std::string From; ///< "ptxas" or "--registers"
};

/// Registers and static shared memory per kernel from `ptxas -v`.
Expected<std::map<std::string, Resources>>
ptxasResources(StringRef PTX, StringRef Ptxas, StringRef TmpDir) {
  SmallString<256> In(TmpDir), Out(TmpDir), Log(TmpDir);
  static unsigned Counter = 0;
  std::string Stem = "kernels" + std::to_string(Counter++);
  sys::path::append(In, Stem + ".ptx");
  sys::path::append(Out, Stem + ".cubin");
  sys::path::append(Log, Stem + ".ptxas.log");
  {
    std::error_code EC;
    raw_fd_ostream OS(In, EC);
    if (EC)
      return makeError("cannot write '" + In + "': " + EC.message());
    OS << PTX;
  }
  std::string Arch = "--gpu-name=" + GpuArch;
  SmallVector<StringRef, 8> Args = {Ptxas, "-v", Arch, In, "-o", Out};
  std::optional<StringRef> Redirects[3] = {std::nullopt, StringRef(Log),
                                           StringRef(Log)};
  std::string Msg;
  int RC = sys::ExecuteAndWait(Ptxas, Args, std::nullopt, Redirects, 0, 0,
                               &Msg);
  auto Text = MemoryBuffer::getFile(Log);
  std::string LogText = Text ? (*Text)->getBuffer().str() : "";
  if (RC != 0)
    return makeError("ptxas failed (" + (Msg.empty() ? "exit " + Twine(RC).str() : Msg) +
                     "):\n" + LogText);
  // ptxas info    : Compiling entry function '_Z6vecadd...' for 'sm_90'
  // ptxas info    : Used 10 registers, used 0 barriers, 380 bytes cmem[0]
  //                 (and ", N bytes smem" when it has shared memory)
  std::map<std::string, Resources> R;
  Regex Entry("Compiling entry function '([^']+)'");
  Regex Used("Used ([0-9]+) registers");
  Regex Smem("([0-9]+) bytes smem");
  std::string Current;
  SmallVector<StringRef, 64> Lines;
  StringRef(LogText).split(Lines, '\n');
  for (StringRef L : Lines) {
    SmallVector<StringRef, 3> M;
    if (Entry.match(L, &M)) {
      Current = M[1].str();
      R[Current].From = "ptxas";
      continue;
    }
    if (Current.empty())
      continue;
    if (Used.match(L, &M))
      R[Current].Registers = unsigned(std::stoul(M[1].str()));
    if (Smem.match(L, &M))
      R[Current].StaticShared = std::stoull(M[1].str());
  }
  return R;
}

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

/// An instruction of a block site's code: (site id << 32) | its index.
using EntryRef = uint64_t;

/// A block site's instructions as the GPU runs them (refineCode): their
/// classes in order and, per instruction, the instructions whose results it
/// uses (data dependences through registers).
struct SiteCode {
  std::vector<InstrClass> Sequence;
  std::vector<std::vector<EntryRef>> Deps;
};

struct Analysis {
  std::vector<InstrumentInfo> Sites;
  std::map<std::string, Resources> Res;      ///< by kernel symbol
  std::map<std::string, std::string> Display; ///< demangled names
  /// By block site id, for the hopper model; a site without one counts its
  /// Sequence and has no dependences (then the model assumes a chain).
  std::map<uint32_t, SiteCode> Code;
};

/// The IR passes the NVPTX backend runs before instruction selection at
/// -O1 and above (NVPTXTargetMachine::addIRPasses: address-space inference,
/// the straight-line scalar optimizations, loop strength reduction, CSE,
/// load/store vectorization), so that the code counted is the code ptxas
/// gets.
constexpr const char *BackendIRPasses =
    "function(infer-address-spaces,separate-const-offset-from-gep,slsr,"
    "early-cse,nary-reassociate,early-cse,loop-mssa(loop-reduce),early-cse,"
    "load-store-vectorizer,sroa)";

/// Instructions of \p I in a site's code: 0 for what the GPU does not
/// execute as an instruction of its own, else Instrument.cpp's weight (one
/// per element of vector arithmetic, one for loads, stores and calls):
///  - an fmul whose only use is an fadd/fsub of the same block: ptxas
///    contracts the pair into one fma (--fmad=true, its default);
///  - a getelementptr with constant indices whose users are all loads and
///    stores through it: the offset is the instruction's immediate
///    ([reg + imm], 24 bits on sm_90);
///  - a sign or zero extension used only by getelementptrs: the wide
///    multiply-add (IMAD.WIDE) that computes the address takes the 32-bit
///    index.
unsigned codeEntries(const Instruction &I) {
  if (I.getOpcode() == Instruction::FMul && I.hasOneUse()) {
    const auto *U = cast<Instruction>(*I.user_begin());
    if (U->getParent() == I.getParent() &&
        (U->getOpcode() == Instruction::FAdd ||
         U->getOpcode() == Instruction::FSub))
      return 0;
  }
  if (const auto *GEP = dyn_cast<GetElementPtrInst>(&I)) {
    bool AllMemory = !GEP->use_empty();
    for (const Use &U : GEP->uses()) {
      const auto *User = dyn_cast<Instruction>(U.getUser());
      AllMemory &= User && ((isa<LoadInst>(User) && U.getOperandNo() == 0) ||
                            (isa<StoreInst>(User) && U.getOperandNo() == 1));
    }
    if (GEP->hasAllConstantIndices() && AllMemory)
      return 0;
  }
  if ((isa<SExtInst>(I) || isa<ZExtInst>(I)) && !I.use_empty() &&
      llvm::all_of(I.users(),
                   [](const User *U) { return isa<GetElementPtrInst>(U); }))
    return 0;
  if (isa<LoadInst>(I) || isa<StoreInst>(I) || isa<CallBase>(I))
    return 1;
  if (auto *VT = dyn_cast<FixedVectorType>(I.getType()))
    return VT->getNumElements();
  return 1;
}

/// Fills \p A.Code for the sites \p Info of the device module \p Device:
/// on a copy that went through the backend's IR passes (BackendIRPasses),
/// each site's block (found by function and block name; blocks the passes
/// add, such as dedicated loop exits, hold only branches) with the rules of
/// codeEntries. Sites whose block is not found keep their Sequence.
Error refineCode(Module &Device, const InstrumentInfo &Info, Analysis &A) {
  std::unique_ptr<Module> M = CloneModule(Device);
  auto TM = createNVPTXTargetMachine(*M, GpuArch);
  if (!TM)
    return TM.takeError();
  if (Error E = runCleavePipeline(*M, BackendIRPasses, TM->get()))
    return E;
  DenseMap<const Instruction *, EntryRef> Entry;
  std::vector<std::pair<const BasicBlock *, uint32_t>> Blocks;
  std::map<uint32_t, SiteCode> Out;
  for (const BlockSite &S : Info.Blocks) {
    Function *F = M->getFunction(S.Function);
    if (!F || StringRef(S.Name).starts_with("#"))
      continue;
    const BasicBlock *Found = nullptr;
    for (const BasicBlock &BB : *F)
      if (BB.getName() == S.Name)
        Found = &BB;
    if (!Found)
      continue;
    SiteCode &Code = Out[S.Id];
    for (const Instruction &I : *Found) {
      std::optional<InstrClass> C = classifyInstruction(I);
      if (!C)
        continue;
      unsigned N = codeEntries(I);
      if (!N)
        continue;
      Code.Sequence.insert(Code.Sequence.end(), N, *C);
      Entry[&I] = (EntryRef(S.Id) << 32) | (Code.Sequence.size() - 1);
    }
    Blocks.push_back({Found, S.Id});
  }
  for (auto [BB, Id] : Blocks) {
    SiteCode &Code = Out[Id];
    for (const Instruction &I : *BB) {
      if (!Entry.count(&I))
        continue;
      // The producers: instructions with entries, looking through phis and
      // what has none.
      std::vector<EntryRef> Producers;
      SmallPtrSet<const Value *, 16> Seen;
      SmallVector<const Value *, 16> Work(I.op_begin(), I.op_end());
      while (!Work.empty()) {
        const auto *Op = dyn_cast<Instruction>(Work.pop_back_val());
        if (!Op || !Seen.insert(Op).second)
          continue;
        auto P = Entry.find(Op);
        if (P != Entry.end()) {
          Producers.push_back(P->second);
          continue;
        }
        Work.append(Op->op_begin(), Op->op_end());
      }
      llvm::sort(Producers);
      Producers.erase(std::unique(Producers.begin(), Producers.end()),
                      Producers.end());
      uint32_t Last = uint32_t(Entry[&I] & 0xffffffff);
      for (unsigned W = 0, N = codeEntries(I); W < N; ++W)
        Code.Deps.push_back(Producers);
      assert(Code.Deps.size() == Last + 1 && "entries out of step");
      (void)Last;
    }
  }
  for (auto &[Id, Code] : Out)
    A.Code[Id] = std::move(Code);
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

/// The CPU module of \p Device with instrumented twins of its kernels
/// (the device module is not changed). \p Info receives the sites.
Expected<std::unique_ptr<Module>> instrumentedCPUModule(Module &Device,
                                                        uint32_t Index,
                                                        InstrumentInfo &Info) {
  std::unique_ptr<Module> Plain = CloneModule(Device);
  std::unique_ptr<Module> Instr = CloneModule(Device);
  Expected<InstrumentInfo> I = instrumentModule(*Instr, Index);
  if (!I)
    return I.takeError();
  Info = std::move(*I);
  for (Module *M : {Plain.get(), Instr.get()}) {
    auto TM = createNVPTXTargetMachine(*M, GpuArch);
    if (!TM)
      return TM.takeError();
    if (Error E = runCleavePipeline(*M, "cleave-cpu-lower", TM->get()))
      return std::move(E);
  }
  if (Error E = finalizeInstrumentedCPU(*Instr))
    return std::move(E);
  if (Error E = linkInstrumentedVariants(*Plain, std::move(Instr),
                                         Info.Kernels))
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
      consumeError(D.takeError());
      return 1;
    }
    M = std::move(*D);
  }
  if (Emit == EmitKind::CpuIR) {
    InstrumentInfo Info;
    auto CPU = instrumentedCPUModule(*M, 0, Info);
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
        auto Res = ptxasResources(*PTX, Ptxas, Dir);
        if (!Res)
          return Res.takeError();
        for (auto &[K, V] : *Res)
          A.Res[K] = V;
      }
      InstrumentInfo Info;
      auto CPU = instrumentedCPUModule(**M, Index, Info);
      if (!CPU)
        return CPU.takeError();
      if (Error E = refineCode(**M, Info, A))
        return std::move(E);
      A.Sites.push_back(std::move(Info));
      BundleOptions BO;
      BO.GpuArch = GpuArch;
      BO.Ptxas = Ptxas;
      Expected<std::string> Bundle = writeBundle(**M, BO);
      if (!Bundle)
        return Bundle.takeError();
      DeviceObjectOptions OO;
      OO.CPU = B.HostCPU;
      Expected<std::string> Obj = emitDeviceObject(**CPU, *Bundle, OO);
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

// The recorder's output has its reader beside its writer, in the runtime.
using rt::record::BlockRecord;
using rt::record::LaunchRecord;
using rt::record::WarpRecord;

/// The recorder's output file, as text.
Expected<std::string> readRecordFile(StringRef Path) {
  auto Buf = MemoryBuffer::getFile(Path);
  if (!Buf)
    return makeError("the program wrote no instrumentation record ('" + Path +
                     "': " + Buf.getError().message() +
                     "): did it exit through exit() or return from main?");
  return (*Buf)->getBuffer().str();
}

//===----------------------------------------------------------------------===//
// Saved records (--save-record, --from-record)
//===----------------------------------------------------------------------===//
//
// One text file: what the build found (each module's sites, each kernel's
// resources and display name), which program and arguments it was, and the
// recorder's output verbatim:
//
//   cleave-analyze-record 1
//   input <name> <xxh3 of its bytes, hex>        one per input file
//   arg <argument>                               one per program argument
//   sample-blocks <N>
//   sm-count <N>                 the SM count the program was told
//   module <index> <kernels> <blocks> <mems>
//   kernel <symbol>                              <kernels> lines
//   block <id> <function> <name> <class>...      <blocks> lines
//   mem <id> <block id> <class> <bytes> <location>   <mems> lines
//   code <site id> <class>:<producers> ...   (A.Code: per instruction its
//        class and '-' or the comma-separated <site id>.<index> it uses)
//   resources <symbol> <registers> <static shared> <from>
//   display <symbol> <demangled name>
//   record <lines>
//   <the recorder's output: <lines> lines>
//
// Strings are percent-encoded (bytes <= ' ', '%' and >= 0x7f as %XX; the
// empty string as %-), so every field is one blank-free word.

constexpr const char *SavedRecordMagic = "cleave-analyze-record";
constexpr unsigned SavedRecordVersion = 1;

std::string encodeWord(StringRef S) {
  if (S.empty())
    return "%-";
  std::string Out;
  for (unsigned char C : S) {
    if (C <= ' ' || C == '%' || C >= 0x7f)
      Out += formatv("%{0:X-2}", unsigned(C)).str();
    else
      Out += char(C);
  }
  return Out;
}

bool decodeWord(StringRef W, std::string &Out) {
  Out.clear();
  if (W == "%-")
    return true;
  for (size_t I = 0; I < W.size(); ++I) {
    if (W[I] != '%') {
      Out += W[I];
      continue;
    }
    unsigned V;
    if (I + 2 >= W.size() || W.substr(I + 1, 2).getAsInteger(16, V))
      return false;
    Out += char(V);
    I += 2;
  }
  return true;
}

/// The identity of an input: its file name and a hash of its bytes.
Expected<std::pair<std::string, std::string>> inputIdentity(StringRef In) {
  auto Buf = MemoryBuffer::getFile(In);
  if (!Buf)
    return makeError("cannot read '" + In + "': " + Buf.getError().message());
  ArrayRef<uint8_t> Bytes(
      reinterpret_cast<const uint8_t *>((*Buf)->getBufferStart()),
      (*Buf)->getBufferSize());
  return std::pair(sys::path::filename(In).str(),
                   formatv("{0:x-16}", xxh3_64bits(Bytes)).str());
}

/// What a saved record holds besides the analysis.
struct SavedRecord {
  std::vector<std::pair<std::string, std::string>> Inputs; ///< name, hash
  std::vector<std::string> Args;
  unsigned SampleBlocks = 0;
  /// The SM count the program was told (CLEAVE_ANALYZE_SM_COUNT).
  unsigned SmCount = 0;
  std::string Record; ///< the recorder's output
};

Error writeSavedRecord(StringRef Path, const Analysis &A,
                       const SavedRecord &R) {
  std::error_code EC;
  raw_fd_ostream OS(Path, EC, sys::fs::OF_Text);
  if (EC)
    return makeError("cannot write the record '" + Path +
                     "': " + EC.message());
  OS << SavedRecordMagic << " " << SavedRecordVersion << "\n";
  for (auto &[Name, Hash] : R.Inputs)
    OS << "input " << encodeWord(Name) << " " << Hash << "\n";
  for (const std::string &Arg : R.Args)
    OS << "arg " << encodeWord(Arg) << "\n";
  OS << "sample-blocks " << R.SampleBlocks << "\n";
  OS << "sm-count " << R.SmCount << "\n";
  for (const InstrumentInfo &I : A.Sites) {
    OS << "module " << I.ModuleIndex << " " << I.Kernels.size() << " "
       << I.Blocks.size() << " " << I.Mems.size() << "\n";
    for (const std::string &K : I.Kernels)
      OS << "kernel " << encodeWord(K) << "\n";
    for (const BlockSite &B : I.Blocks) {
      OS << "block " << B.Id << " " << encodeWord(B.Function) << " "
         << encodeWord(B.Name);
      for (InstrClass C : B.Sequence)
        OS << " " << instrClassName(C);
      OS << "\n";
    }
    for (const MemSite &M : I.Mems)
      OS << "mem " << M.Id << " " << M.Block << " " << instrClassName(M.Class)
         << " " << M.Bytes << " " << encodeWord(M.Location) << "\n";
  }
  for (auto &[Id, Code] : A.Code) {
    OS << "code " << Id;
    for (size_t I = 0; I < Code.Sequence.size(); ++I) {
      OS << " " << instrClassName(Code.Sequence[I]) << ":";
      const std::vector<EntryRef> &E = Code.Deps[I];
      if (E.empty())
        OS << "-";
      for (size_t J = 0; J < E.size(); ++J)
        OS << (J ? "," : "") << (E[J] >> 32) << "." << (E[J] & 0xffffffff);
    }
    OS << "\n";
  }
  for (auto &[K, Res] : A.Res)
    OS << "resources " << encodeWord(K) << " " << Res.Registers << " "
       << Res.StaticShared << " " << encodeWord(Res.From) << "\n";
  for (auto &[K, D] : A.Display)
    OS << "display " << encodeWord(K) << " " << encodeWord(D) << "\n";
  StringRef Rec(R.Record);
  size_t Lines = Rec.count('\n') + (!Rec.empty() && !Rec.ends_with("\n"));
  OS << "record " << Lines << "\n" << Rec;
  if (!Rec.empty() && !Rec.ends_with("\n"))
    OS << "\n";
  OS.close();
  if (OS.has_error())
    return makeError("cannot write the record '" + Path +
                     "': " + OS.error().message());
  return Error::success();
}

std::optional<InstrClass> instrClassByName(StringRef Name) {
  return lookupInstrClass(std::string_view(Name));
}

Expected<SavedRecord> readSavedRecord(StringRef Path, Analysis &A) {
  auto Buf = MemoryBuffer::getFile(Path);
  if (!Buf)
    return makeError("cannot read the record '" + Path +
                     "': " + Buf.getError().message());
  StringRef Text = (*Buf)->getBuffer();
  SmallVector<StringRef, 0> Lines;
  Text.split(Lines, '\n');
  SmallVector<StringRef, 4> Head;
  if (!Lines.empty())
    Lines[0].split(Head, ' ', -1, false);
  if (Head.size() != 2 || Head[0] != SavedRecordMagic)
    return makeError("'" + Path + "' is not a record of `cleave analyze "
                     "--save-record` (it starts with '" +
                     (Lines.empty() ? StringRef() : Lines[0].take_front(40)) +
                     "')");
  if (Head[1] != std::to_string(SavedRecordVersion))
    return makeError("the record '" + Path + "' has format version " +
                     Head[1] + "; this cleave reads version " +
                     Twine(SavedRecordVersion) +
                     ": make it again with --save-record");
  SavedRecord R;
  auto Bad = [&](size_t N, const Twine &Why) {
    return makeError("malformed record '" + Path + "' at line " +
                     Twine(N + 1) + " (" + Why + "): " +
                     Lines[N].take_front(120));
  };
  InstrumentInfo *Cur = nullptr;
  for (size_t N = 1; N < Lines.size(); ++N) {
    SmallVector<StringRef, 32> F;
    Lines[N].split(F, ' ', -1, false);
    if (F.empty())
      continue;
    auto U = [&](size_t I, uint64_t &V) {
      return I < F.size() && !F[I].getAsInteger(0, V);
    };
    auto W = [&](size_t I, std::string &V) {
      return I < F.size() && decodeWord(F[I], V);
    };
    uint64_t V[4];
    std::string S[2];
    if (F[0] == "input") {
      if (F.size() != 3 || !W(1, S[0]))
        return Bad(N, "input <name> <hash>");
      R.Inputs.push_back({S[0], F[2].str()});
    } else if (F[0] == "arg") {
      if (F.size() != 2 || !W(1, S[0]))
        return Bad(N, "arg <argument>");
      R.Args.push_back(S[0]);
    } else if (F[0] == "sample-blocks") {
      if (F.size() != 2 || !U(1, V[0]))
        return Bad(N, "sample-blocks <N>");
      R.SampleBlocks = unsigned(V[0]);
    } else if (F[0] == "sm-count") {
      if (F.size() != 2 || !U(1, V[0]))
        return Bad(N, "sm-count <N>");
      R.SmCount = unsigned(V[0]);
    } else if (F[0] == "module") {
      if (F.size() != 5 || !U(1, V[0]) || !U(2, V[1]) || !U(3, V[2]) ||
          !U(4, V[3]))
        return Bad(N, "module <index> <kernels> <blocks> <mems>");
      A.Sites.emplace_back();
      Cur = &A.Sites.back();
      Cur->ModuleIndex = uint32_t(V[0]);
    } else if (F[0] == "kernel") {
      if (!Cur || F.size() != 2 || !W(1, S[0]))
        return Bad(N, "kernel <symbol> after a module line");
      Cur->Kernels.push_back(S[0]);
    } else if (F[0] == "block") {
      BlockSite B;
      if (!Cur || F.size() < 4 || !U(1, V[0]) || !W(2, B.Function) ||
          !W(3, B.Name))
        return Bad(N, "block <id> <function> <name> <class>...");
      B.Id = uint32_t(V[0]);
      for (size_t I = 4; I < F.size(); ++I) {
        std::optional<InstrClass> C = instrClassByName(F[I]);
        if (!C)
          return Bad(N, "unknown instruction class '" + F[I] + "'");
        B.Sequence.push_back(*C);
        ++B.Counts[unsigned(*C)];
      }
      if (Cur->block(B.Id) || (B.Id & 0xfffff) != Cur->Blocks.size())
        return Bad(N, "block ids out of order");
      Cur->Blocks.push_back(std::move(B));
    } else if (F[0] == "mem") {
      MemSite M;
      std::optional<InstrClass> C =
          F.size() == 6 ? instrClassByName(F[3]) : std::nullopt;
      if (!Cur || !C || !U(1, V[0]) || !U(2, V[1]) || !U(4, V[2]) ||
          !W(5, M.Location))
        return Bad(N, "mem <id> <block> <class> <bytes> <location>");
      M.Id = uint32_t(V[0]);
      M.Block = uint32_t(V[1]);
      M.Class = *C;
      M.Bytes = uint32_t(V[2]);
      if ((M.Id & 0xfffff) != Cur->Mems.size())
        return Bad(N, "mem ids out of order");
      Cur->Mems.push_back(std::move(M));
    } else if (F[0] == "code") {
      if (F.size() < 2 || !U(1, V[0]))
        return Bad(N, "code <site> <class>:<producers>...");
      SiteCode &Code = A.Code[uint32_t(V[0])];
      for (size_t I = 2; I < F.size(); ++I) {
        auto [Class, Refs] = F[I].split(':');
        std::optional<InstrClass> C = instrClassByName(Class);
        if (!C)
          return Bad(N, "unknown instruction class '" + Class + "'");
        Code.Sequence.push_back(*C);
        Code.Deps.emplace_back();
        if (Refs == "-")
          continue;
        SmallVector<StringRef, 4> List;
        Refs.split(List, ',');
        for (StringRef Ref : List) {
          auto [Site, Index] = Ref.split('.');
          uint64_t S, X;
          if (Site.getAsInteger(10, S) || Index.getAsInteger(10, X))
            return Bad(N, "producer '" + Ref + "' is not <site>.<index>");
          Code.Deps.back().push_back((S << 32) | X);
        }
      }
    } else if (F[0] == "resources") {
      Resources Res;
      if (F.size() != 5 || !W(1, S[0]) || !U(2, V[0]) || !U(3, V[1]) ||
          !W(4, Res.From))
        return Bad(N, "resources <symbol> <registers> <shared> <from>");
      Res.Registers = unsigned(V[0]);
      Res.StaticShared = V[1];
      A.Res[S[0]] = Res;
    } else if (F[0] == "display") {
      if (F.size() != 3 || !W(1, S[0]) || !W(2, S[1]))
        return Bad(N, "display <symbol> <name>");
      A.Display[S[0]] = S[1];
    } else if (F[0] == "record") {
      if (F.size() != 2 || !U(1, V[0]) || N + 1 + V[0] > Lines.size())
        return Bad(N, "record <lines>, then that many lines");
      for (size_t I = N + 1; I < N + 1 + V[0]; ++I)
        (R.Record += Lines[I].str()) += "\n";
      N += V[0];
      for (size_t I = N + 1; I < Lines.size(); ++I)
        if (!Lines[I].trim().empty())
          return Bad(I, "text after the record");
      if (A.Sites.empty())
        return makeError("the record '" + Path + "' has no kernel sites");
      return R;
    } else {
      return Bad(N, "unknown line");
    }
  }
  return makeError("the record '" + Path +
                   "' ends before its instrumentation record (cut short?)");
}

/// A record made from other inputs or arguments than the command line's is
/// refused (when the command line names inputs at all).
Error checkSameProgram(StringRef Path, const SavedRecord &R,
                       ArrayRef<std::string> Args) {
  auto Describe = [](ArrayRef<std::pair<std::string, std::string>> In,
                     ArrayRef<std::string> A) {
    std::string S;
    for (auto &[Name, Hash] : In)
      S += (S.empty() ? "" : " ") + Name;
    S += " --";
    for (const std::string &X : A)
      S += " " + X;
    return S;
  };
  std::vector<std::pair<std::string, std::string>> Mine;
  for (const std::string &In : Inputs) {
    auto Id = inputIdentity(In);
    if (!Id)
      return Id.takeError();
    Mine.push_back(*Id);
  }
  std::vector<std::string> MyArgs(Args.begin(), Args.end());
  if (Mine.size() != R.Inputs.size() || MyArgs != R.Args)
    return makeError("the record '" + Path + "' was made from `" +
                     Describe(R.Inputs, R.Args) + "`, not from `" +
                     Describe(Mine, MyArgs) +
                     "`: name the same inputs and arguments, or none");
  for (size_t I = 0; I < Mine.size(); ++I)
    if (Mine[I] != R.Inputs[I])
      return makeError(
          "the record '" + Path + "' was made from another version of " +
          R.Inputs[I].first + " (" +
          (Mine[I].first == R.Inputs[I].first ? "its contents changed"
                                              : "another file: " +
                                                    Mine[I].first) +
          "): make it again with --save-record");
  return Error::success();
}

//===----------------------------------------------------------------------===//
// From the record to the models' input
//===----------------------------------------------------------------------===//

/// A memory instruction's totals over the sampled blocks (weighted).
struct MemTotals {
  double Requests = 0, Lanes = 0, Bytes = 0, Sectors = 0, Segments = 0;
};

struct Summary {
  model::LaunchStats Stats;
  std::map<uint32_t, MemTotals> Mems; ///< per memory site, per block
  uint64_t Recorded = 0;
  bool Overflow = false, Truncated = false;
  std::vector<std::string> Problems;
};

const BlockSite *findBlock(const Analysis &A, uint32_t Id) {
  for (const InstrumentInfo &I : A.Sites)
    if (const BlockSite *B = I.block(Id))
      return B;
  return nullptr;
}

const MemSite *findMem(const Analysis &A, uint32_t Id) {
  for (const InstrumentInfo &I : A.Sites)
    if (const MemSite *M = I.mem(Id))
      return M;
  return nullptr;
}

/// A block site's instructions for the model: as ptxas gets them
/// (refineCode) for the hopper model, as the instrumentation classified
/// them for the paper model (digest 000 counts the kernel's own code).
const std::vector<InstrClass> &codeOf(const Analysis &A, const BlockSite &BS) {
  if (Model == ModelKind::Hopper) {
    auto It = A.Code.find(BS.Id);
    if (It != A.Code.end())
      return It->second.Sequence;
  }
  return BS.Sequence;
}

/// Instructions of a warp's recorded trace.
size_t traceLength(const Analysis &A, const WarpRecord &W) {
  size_t N = 0;
  for (uint32_t Site : W.Trace)
    if (const BlockSite *BS = findBlock(A, Site))
      N += codeOf(A, *BS).size();
  return N;
}

/// The sampled blocks stand for the launch: the last block (often partial)
/// for itself, the others evenly for the rest.
Summary summarize(const Analysis &A, const LaunchRecord &L) {
  Summary S;
  model::LaunchStats &St = S.Stats;
  St.Blocks = uint64_t(L.Grid[0]) * L.Grid[1] * L.Grid[2];
  St.ThreadsPerBlock = L.Block[0] * L.Block[1] * L.Block[2];
  unsigned WarpsPerBlock = (St.ThreadsPerBlock + 31) / 32;
  S.Recorded = L.Blocks.size();
  if (L.Blocks.empty())
    return S;
  auto Weight = [&](const BlockRecord &B) {
    size_t N = L.Blocks.size();
    if (N == 1 || St.Blocks <= N)
      return double(St.Blocks) / double(N);
    if (B.Block == St.Blocks - 1)
      return 1.0;
    return double(St.Blocks - 1) / double(N - 1);
  };
  MemTotals All;
  double BlockDistinct = 0, WeightSum = 0;
  std::map<uint32_t, std::pair<uint64_t, uint64_t>> Ranges;
  double BestCount = -1;
  const WarpRecord *Rep = nullptr;
  for (const BlockRecord &B : L.Blocks) {
    double W = Weight(B);
    WeightSum += W;
    S.Overflow |= B.Overflow;
    BlockDistinct += W * double(B.DistinctSectors) * 32;
    for (const WarpRecord &Wr : B.Warps) {
      double Count = 0;
      for (auto &[Site, N] : Wr.Sites) {
        const BlockSite *BS = findBlock(A, Site);
        if (!BS) {
          S.Problems.push_back("unknown block site " + std::to_string(Site));
          continue;
        }
        for (InstrClass C : codeOf(A, *BS)) {
          St.Count[unsigned(C)] += W * double(N);
          Count += double(N);
        }
      }
      // Among the busiest warps, the one whose trace (lane 0's path) covers
      // the most: lane 0 may leave early while the others work.
      if (Count > BestCount || (Count == BestCount && Rep &&
                                traceLength(A, Wr) > traceLength(A, *Rep))) {
        BestCount = Count;
        Rep = &Wr;
      }
      for (const WarpRecord::Mem &M : Wr.Mems) {
        MemTotals &T = S.Mems[M.Site];
        T.Requests += W * M.Requests;
        T.Lanes += W * M.Lanes;
        T.Bytes += W * M.Bytes;
        T.Sectors += W * M.Sectors;
        T.Segments += W * M.Segments;
        All.Requests += W * M.Requests;
        All.Lanes += W * M.Lanes;
        All.Bytes += W * M.Bytes;
        All.Sectors += W * M.Sectors;
        All.Segments += W * M.Segments;
        if (const MemSite *MS = findMem(A, M.Site);
            MS && MS->Class == InstrClass::GlobalStore) {
          St.StoreRequests += W * M.Requests;
          St.StoreSectors += W * M.Sectors;
          St.StoreSegments += W * M.Segments;
        }
        if (M.Requests) {
          auto [It, New] = Ranges.try_emplace(M.Site, M.Min, M.Max);
          if (!New) {
            It->second.first = std::min(It->second.first, M.Min);
            It->second.second = std::max(It->second.second, M.Max);
          }
        }
      }
    }
  }
  // Totals over the launch -> the average warp.
  double Warps = double(St.Blocks) * WarpsPerBlock;
  for (double &C : St.Count)
    C /= Warps;
  for (auto &[Site, T] : S.Mems) {
    T.Requests /= double(St.Blocks);
    T.Lanes /= double(St.Blocks);
    T.Bytes /= double(St.Blocks);
    T.Sectors /= double(St.Blocks);
    T.Segments /= double(St.Blocks);
  }
  St.Requests = All.Requests / Warps;
  St.StoreRequests /= Warps;
  St.StoreSectors /= Warps;
  St.StoreSegments /= Warps;
  St.LoadSegments = std::max(0.0, All.Segments / Warps - St.StoreSegments);
  if (All.Requests > 0) {
    St.LanesPerRequest = All.Lanes / All.Requests;
    St.BytesPerLane = All.Lanes > 0 ? All.Bytes / All.Lanes : 0;
    St.SectorsPerRequest = All.Sectors / All.Requests;
    St.SegmentsPerRequest = All.Segments / All.Requests;
  }
  St.BlockDistinctBytes = WeightSum > 0 ? BlockDistinct / WeightSum : 0;
  // Footprint: the union of each memory instruction's address span.
  std::vector<std::pair<uint64_t, uint64_t>> Spans;
  for (auto &[Site, R] : Ranges)
    Spans.push_back(R);
  llvm::sort(Spans);
  uint64_t Foot = 0, CurLo = 0, CurHi = 0;
  bool Open = false;
  for (auto [Lo, Hi] : Spans) {
    if (Open && Lo <= CurHi + 1) {
      CurHi = std::max(CurHi, Hi);
      continue;
    }
    if (Open)
      Foot += CurHi - CurLo + 1;
    CurLo = Lo;
    CurHi = Hi;
    Open = true;
  }
  if (Open)
    Foot += CurHi - CurLo + 1;
  St.FootprintBytes = double(Foot);
  // The representative warp: the sampled warp with the most instructions
  // (a block lasts as long as its slowest warp).
  if (Rep) {
    // The stream and, where every site has them, its data dependences: an
    // entry depends on the latest earlier instance of each producer.
    bool HaveDeps = Model == ModelKind::Hopper;
    for (uint32_t Site : Rep->Trace)
      HaveDeps &= findBlock(A, Site) && A.Code.count(Site);
    std::unordered_map<EntryRef, uint32_t> Latest;
    if (HaveDeps)
      St.DepBegin.push_back(0);
    for (uint32_t Site : Rep->Trace) {
      const BlockSite *BS = findBlock(A, Site);
      if (!BS)
        continue;
      const std::vector<InstrClass> &Seq = codeOf(A, *BS);
      const std::vector<std::vector<EntryRef>> *D =
          HaveDeps ? &A.Code.find(Site)->second.Deps : nullptr;
      for (size_t I = 0; I < Seq.size(); ++I) {
        if (D) {
          for (EntryRef P : (*D)[I]) {
            auto It = Latest.find(P);
            if (It != Latest.end())
              St.Deps.push_back(It->second);
          }
          St.DepBegin.push_back(uint32_t(St.Deps.size()));
          Latest[(EntryRef(Site) << 32) | I] = uint32_t(St.Stream.size());
        }
        St.Stream.push_back(Seq[I]);
      }
    }
    S.Truncated = Rep->Truncated;
    if (!St.Stream.empty() && BestCount > double(St.Stream.size()))
      St.StreamScale = BestCount / double(St.Stream.size());
  }
  return S;
}

//===----------------------------------------------------------------------===//
// The report
//===----------------------------------------------------------------------===//

std::string seconds(double S) {
  if (!std::isfinite(S))
    return "inf";
  if (S >= 1)
    return formatv("{0:f3} s", S).str();
  if (S >= 1e-3)
    return formatv("{0:f3} ms", S * 1e3).str();
  return formatv("{0:f2} us", S * 1e6).str();
}

std::string bytes(double B) {
  if (B >= 1e9)
    return formatv("{0:f2} GB", B / 1e9).str();
  if (B >= 1e6)
    return formatv("{0:f2} MB", B / 1e6).str();
  if (B >= 1e3)
    return formatv("{0:f2} KB", B / 1e3).str();
  return formatv("{0:f0} B", B).str();
}

json::Value num(double V) {
  if (!std::isfinite(V))
    return nullptr;
  return V;
}

struct Report {
  const LaunchRecord *L;
  Summary S;
  Resources Res;
  model::Prediction P;
  std::string Display;
};

std::string limitText(unsigned V) {
  return V == std::numeric_limits<unsigned>::max() ? "-" : std::to_string(V);
}

void printText(raw_ostream &OS, const Report &R, const model::GpuParams &G) {
  const LaunchRecord &L = *R.L;
  const model::LaunchStats &St = R.S.Stats;
  const model::Prediction &P = R.P;
  OS << "\nkernel " << R.Display << " [" << L.Kernel << "]\n";
  OS << formatv("  launch: grid ({0},{1},{2}) x block ({3},{4},{5}), dynamic "
                "shared {6} B, {7} launch(es), {8} block(s) sampled\n",
                L.Grid[0], L.Grid[1], L.Grid[2], L.Block[0], L.Block[1],
                L.Block[2], L.Shared, L.Launches, R.S.Recorded);
  OS << "  sampled:";
  for (const BlockRecord &B : L.Blocks)
    OS << formatv(" block {0} ({1} requests, {2} sectors, {3} distinct)",
                  B.Block, B.Requests, B.Sectors, B.DistinctSectors);
  OS << "\n";
  OS << "  resources: " << R.Res.Registers << " registers/thread, "
     << R.Res.StaticShared << " B static shared (" << R.Res.From << ")\n";
  if (P.Occ.BlocksPerSm) {
    OS << formatv("  occupancy: {0} blocks/SM = {1} warps ({2:f0}%), limited "
                  "by {3} (registers {4}, shared memory {5}, threads {6}, "
                  "blocks {7})\n",
                  P.Occ.BlocksPerSm, P.Occ.WarpsPerSm, P.Occ.Fraction * 100,
                  model::limiterName(P.Occ.Limit),
                  limitText(P.Occ.ByRegisters),
                  limitText(P.Occ.BySharedMemory), P.Occ.ByThreads,
                  P.Occ.ByBlocks);
  } else {
    OS << "  occupancy: " << P.Occ.Error << "\n";
  }
  OS << formatv("  waves: {0} ({1} blocks / ({2} SMs x {3}))\n", P.Waves,
                St.Blocks, G.Sms,
                Model == ModelKind::Paper && !R.P.Occ.BlocksPerSm ? 0u
                : Model == ModelKind::Paper ? 1u
                                            : P.Occ.BlocksPerSm);
  double Total = 0;
  for (double C : St.Count)
    Total += C;
  OS << formatv("  per warp: {0:f1} instructions:", Total);
  for (unsigned C = 0; C < NumInstrClasses; ++C)
    if (St.Count[C] > 0)
      OS << formatv(" {0} {1:f1}", instrClassName(InstrClass(C)), St.Count[C]);
  OS << "\n";
  if (St.Requests > 0)
    OS << formatv("  global memory: {0:f2} requests/warp; per request {1:f1} "
                  "lanes x {2:f1} B, {3:f2} sectors (32 B), {4:f2} segments "
                  "(128 B)\n",
                  St.Requests, St.LanesPerRequest, St.BytesPerLane,
                  St.SectorsPerRequest, St.SegmentsPerRequest);
  if (Model == ModelKind::Hopper && P.RequestedBytes > 0)
    OS << "  traffic: requested " << bytes(P.RequestedBytes) << ", DRAM "
       << bytes(P.DramBytes) << ", L2 hits " << bytes(P.L2HitBytes)
       << " (footprint " << bytes(St.FootprintBytes)
       << (St.FootprintBytes <= double(G.L2Bytes) ? ", fits in L2)"
                                                  : ", exceeds L2)")
       << "; L1 hits " << bytes(P.L1HitBytes) << ", L2 moves "
       << bytes(P.L2Bytes) << "\n";
  OS << formatv("  N_act {0:f0}, MPD {1:f2}, CPD {2:f2}, P {3:f3}\n", P.NAct,
                P.Mpd, P.Cpd, P.P);
  unsigned NP = 0;
  for (unsigned C : P.PeriodCount)
    NP += C;
  OS << formatv("  periods: {0} per warp", NP);
  for (unsigned T = 0; T < 4; ++T)
    if (P.PeriodCount[T])
      OS << formatv("; type {0}: {1} ({2} clk)", T + 1, P.PeriodCount[T],
                    std::isfinite(P.PeriodCycles[T])
                        ? formatv("{0:f0}", P.PeriodCycles[T]).str()
                        : std::string("inf"));
  OS << formatv("; compute {0:f0} clk, memory {1:f0} clk\n", P.ComputeCycles,
                P.MemoryCycles);
  if (Model == ModelKind::Hopper) {
    OS << formatv("  path: {0:f0} clk per warp, {1:f1} round(s) of memory "
                  "latency, x {2} wave(s)\n",
                  P.PathCycles, P.Rounds, P.Waves);
    OS << "  time: compute " << seconds(P.ComputeSeconds) << " ("
       << P.IssueLimit << "), latency " << seconds(P.LatencySeconds)
       << ", memory " << seconds(P.MemorySeconds) << " (DRAM "
       << seconds(P.DramSeconds) << ") -> kernel "
       << seconds(P.KernelSeconds) << " + launch " << seconds(P.LaunchSeconds)
       << " = " << seconds(P.Seconds) << "\n";
  }
  else
    OS << "  time: " << seconds(P.Seconds) << " ("
       << formatv("{0:f0}", P.BlockCycles) << " clk per block)\n";
  OS << "  predicted: " << seconds(P.Seconds) << ", bottleneck "
     << model::bottleneckName(P.Bound) << "\n";
  for (const std::string &N : P.Notes)
    OS << "  note: " << N << "\n";
  for (const std::string &N : R.S.Problems)
    OS << "  warning: " << N << "\n";
  if (R.S.Overflow)
    OS << "  warning: the record of a sampled block overflowed its limits "
          "(memory requests not all recorded)\n";
  if (R.S.Truncated)
    OS << "  note: the representative warp's trace was cut short; its "
          "periods are scaled by "
       << formatv("{0:f2}", St.StreamScale) << "\n";
}

json::Value toJson(const Report &R, const Analysis &A) {
  const LaunchRecord &L = *R.L;
  const model::LaunchStats &St = R.S.Stats;
  const model::Prediction &P = R.P;
  json::Object Classes;
  double Total = 0;
  for (unsigned C = 0; C < NumInstrClasses; ++C) {
    Total += St.Count[C];
    if (St.Count[C] > 0)
      Classes[instrClassName(InstrClass(C))] = St.Count[C];
  }
  json::Array Types;
  for (unsigned T = 0; T < 4; ++T)
    Types.push_back(json::Object{{"type", T + 1},
                                 {"count", P.PeriodCount[T]},
                                 {"cycles", num(P.PeriodCycles[T])}});
  json::Array Mems;
  for (auto &[Site, T] : R.S.Mems) {
    const MemSite *M = findMem(A, Site);
    json::Object O{{"site", Site},
                   {"requests_per_block", T.Requests},
                   {"sectors_per_request",
                    T.Requests > 0 ? T.Sectors / T.Requests : 0.0},
                   {"segments_per_request",
                    T.Requests > 0 ? T.Segments / T.Requests : 0.0},
                   {"lanes_per_request",
                    T.Requests > 0 ? T.Lanes / T.Requests : 0.0}};
    if (M) {
      O["class"] = instrClassName(M->Class);
      O["bytes"] = M->Bytes;
      if (!M->Location.empty())
        O["location"] = M->Location;
    }
    Mems.push_back(std::move(O));
  }
  json::Array Notes;
  for (const std::string &N : P.Notes)
    Notes.push_back(N);
  for (const std::string &N : R.S.Problems)
    Notes.push_back(N);
  json::Object Occ{{"blocks_per_sm", P.Occ.BlocksPerSm},
                   {"warps_per_sm", P.Occ.WarpsPerSm},
                   {"fraction", P.Occ.Fraction},
                   {"limiter", P.Occ.BlocksPerSm
                                   ? json::Value(model::limiterName(P.Occ.Limit))
                                   : json::Value(nullptr)}};
  auto Lim = [](unsigned V) -> json::Value {
    if (V == std::numeric_limits<unsigned>::max())
      return nullptr;
    return V;
  };
  Occ["by_registers"] = Lim(P.Occ.ByRegisters);
  Occ["by_shared_memory"] = Lim(P.Occ.BySharedMemory);
  Occ["by_threads"] = P.Occ.ByThreads;
  Occ["by_blocks"] = P.Occ.ByBlocks;
  if (!P.Occ.Error.empty())
    Occ["error"] = P.Occ.Error;
  json::Array Sampled;
  for (const BlockRecord &B : L.Blocks)
    Sampled.push_back(json::Object{{"block", B.Block},
                                   {"requests", B.Requests},
                                   {"sectors", B.Sectors},
                                   {"distinct_sectors", B.DistinctSectors},
                                   {"distinct_segments", B.DistinctSegments},
                                   {"overflow", B.Overflow}});
  return json::Object{
      {"kernel", L.Kernel},
      {"sampled", std::move(Sampled)},
      {"display", R.Display},
      {"grid", json::Array{L.Grid[0], L.Grid[1], L.Grid[2]}},
      {"block", json::Array{L.Block[0], L.Block[1], L.Block[2]}},
      {"dynamic_shared_bytes", L.Shared},
      {"launches", L.Launches},
      {"sampled_blocks", R.S.Recorded},
      {"registers", R.Res.Registers},
      {"static_shared_bytes", R.Res.StaticShared},
      {"resources_from", R.Res.From},
      {"occupancy", std::move(Occ)},
      {"waves", P.Waves},
      {"per_warp",
       json::Object{{"instructions", Total}, {"classes", std::move(Classes)}}},
      {"memory",
       json::Object{{"requests_per_warp", St.Requests},
                    {"lanes_per_request", St.LanesPerRequest},
                    {"bytes_per_lane", St.BytesPerLane},
                    {"sectors_per_request", St.SectorsPerRequest},
                    {"segments_per_request", St.SegmentsPerRequest},
                    {"block_distinct_bytes", St.BlockDistinctBytes},
                    {"footprint_bytes", St.FootprintBytes},
                    {"requested_bytes", P.RequestedBytes},
                    {"dram_bytes", P.DramBytes},
                    {"l2_hit_bytes", P.L2HitBytes},
                    {"l2_bytes", P.L2Bytes},
                    {"l1_hit_bytes", P.L1HitBytes},
                    {"load_segments_per_warp", St.LoadSegments},
                    {"store_requests_per_warp", St.StoreRequests},
                    {"store_sectors_per_warp", St.StoreSectors},
                    {"store_segments_per_warp", St.StoreSegments},
                    {"instructions", std::move(Mems)}}},
      {"n_act", P.NAct},
      {"mpd", num(P.Mpd)},
      {"cpd", num(P.Cpd)},
      {"p", num(P.P)},
      {"periods",
       json::Object{{"by_type", std::move(Types)},
                    {"compute_cycles", num(P.ComputeCycles)},
                    {"memory_cycles", num(P.MemoryCycles)},
                    {"stream_scale", St.StreamScale}}},
      {"time",
       json::Object{{"seconds", num(P.Seconds)},
                    {"kernel_seconds", num(P.KernelSeconds)},
                    {"launch_seconds", num(P.LaunchSeconds)},
                    {"compute_seconds", num(P.ComputeSeconds)},
                    {"latency_seconds", num(P.LatencySeconds)},
                    {"memory_seconds", num(P.MemorySeconds)},
                    {"dram_seconds", num(P.DramSeconds)},
                    {"path_cycles", num(P.PathCycles)},
                    {"issue_limit", P.IssueLimit},
                    {"memory_rounds", num(P.Rounds)},
                    {"block_cycles", num(P.BlockCycles)}}},
      {"bottleneck", model::bottleneckName(P.Bound)},
      {"notes", std::move(Notes)}};
}

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
  Expected<model::GpuParams> Gpu = loadProfile(Profile);
  if (!Gpu)
    return error(toString(Gpu.takeError()));

  Analysis A;
  std::string RecordText, RecordPath;
  if (!FromRecord.empty()) {
    // The build options made the record; here they would do nothing.
    cl::Option *BuildOptions[] = {
        &SampleBlocks, &Registers, std::addressof(IncludeDirs),
        std::addressof(Defines), &OptLevel, &Std, &GpuArch,
        &CudaPath, &Cxx, &KeepTemps, &SaveRecord};
    for (cl::Option *O : BuildOptions)
      if (O->getNumOccurrences())
        return error((O->ArgStr.size() == 1 ? "-" : "--") + O->ArgStr +
                     " applies when building and running the program, not "
                     "with --from-record (the record was made with its own)");
    Expected<SavedRecord> Saved = readSavedRecord(FromRecord, A);
    if (!Saved)
      return error(toString(Saved.takeError()));
    if (!Inputs.empty() || !ProgramArgs.empty())
      if (Error E = checkSameProgram(FromRecord, *Saved, ProgramArgs))
        return error(toString(std::move(E)));
    if (Saved->SmCount && Saved->SmCount != Gpu->Sms)
      WithColor::warning(errs(), "cleave analyze")
          << "the record was made telling the program " << Saved->SmCount
          << " SMs; this profile's GPU has " << Gpu->Sms
          << ": a grid sized from the SM count is not this GPU's\n";
    RecordText = std::move(Saved->Record);
    RecordPath = FromRecord;
  } else {
    if (Inputs.empty())
      return error("no input files (or --from-record=FILE)");
    // The inputs' identity now, before the build reads them.
    SavedRecord Saved;
    if (!SaveRecord.empty()) {
      for (const std::string &In : Inputs) {
        auto Id = inputIdentity(In);
        if (!Id)
          return error(toString(Id.takeError()));
        Saved.Inputs.push_back(*Id);
      }
      Saved.Args.assign(ProgramArgs.begin(), ProgramArgs.end());
      Saved.SampleBlocks = SampleBlocks;
      Saved.SmCount = Gpu->Sms;
    }
    TempDir Tmp;
    {
      SmallString<256> P;
      if (std::error_code EC =
              sys::fs::createUniqueDirectory("cleave-analyze", P))
        return error("cannot create a temporary directory: " + EC.message());
      Tmp.Path = std::string(P);
    }
    Expected<std::string> Exe = buildInstrumented(Tmp.Path, Ctx, A);
    if (!Exe) {
      std::string Msg = toString(Exe.takeError());
      if (!StringRef(Msg).contains("compilation failed"))
        error(Msg);
      return 1;
    }
    SmallString<256> Rec(Tmp.Path);
    sys::path::append(Rec, "record.txt");
    int Exit = 0;
    if (Error E =
            runProgram(*Exe, Rec, Tmp.Path, ProgramArgs, Gpu->Sms, Exit))
      return error(toString(std::move(E)));
    if (Exit != 0)
      return error("the program exited with status " + Twine(Exit) +
                   " on the CPU (its output is above); no report");
    Expected<std::string> Text = readRecordFile(Rec);
    if (!Text)
      return error(toString(Text.takeError()));
    RecordText = std::move(*Text);
    RecordPath = std::string(Rec);
    if (!SaveRecord.empty()) {
      Saved.Record = RecordText;
      if (Error E = writeSavedRecord(SaveRecord, A, Saved))
        return error(toString(std::move(E)));
      if (Verbose)
        errs() << "cleave analyze: record saved to " << SaveRecord << "\n";
      RecordPath = SaveRecord;
    }
  }
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
    Reports.push_back(std::move(R));
  }
  std::set<std::string> Launched;
  for (const LaunchRecord &L : Launches)
    Launched.insert(L.Kernel);
  std::vector<std::string> NotLaunched;
  for (auto &[K, D] : A.Display)
    if (!Launched.count(K))
      NotLaunched.push_back(K);

  std::string ModelName = Model == ModelKind::Paper ? "paper" : "hopper";
  json::Array Fixed;
  if (Model == ModelKind::Paper) {
    const luo::Corrections &C = *Fixes;
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
                      {"name", Gpu->Name},
                      {"sm_count", Gpu->Sms},
                      {"sm_clock_mhz", Gpu->ClockMHz},
                      {"dram_gbps", Gpu->DramGBps},
                      {"l2_gbps", Gpu->L2GBps}}},
        {"from_record", FromRecord.empty() ? json::Value(nullptr)
                                           : json::Value(FromRecord)},
        {"kernels", std::move(Kernels)},
        {"not_launched", std::move(NL)}};
    outs() << formatv("{0:2}", json::Value(std::move(Doc))) << "\n";
    return 0;
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
         << Gpu->Name << ", " << Gpu->Sms << " SMs, "
         << formatv("{0:f0}", Gpu->ClockMHz) << " MHz, DRAM "
         << formatv("{0:f0}", Gpu->DramGBps) << " GB/s, L2 "
         << formatv("{0:f0}", Gpu->L2GBps) << " GB/s)\n";
  outs() << "cleave analyze: " << Reports.size()
         << " launch configuration(s) recorded on the CPU";
  if (!FromRecord.empty())
    outs() << " (from the record " << FromRecord << ")";
  outs() << "\n";
  for (const Report &R : Reports)
    printText(outs(), R, *Gpu);
  for (const std::string &K : NotLaunched)
    outs() << "\nkernel " << A.Display[K] << " [" << K
           << "]: not launched by this run\n";
  return 0;
}

} // namespace cleave
