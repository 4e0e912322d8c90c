//===- PTXEmitter.cpp - LLVM IR to PTX, checked by ptxas ------------------===//
#include "cleave/CodeGen/PTXEmitter.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/Bitcode/BitcodeReader.h"
#include "llvm/Bitcode/BitcodeWriter.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/IR/Module.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/TargetParser/Triple.h"

#include <mutex>

using namespace llvm;

namespace cleave {

static void initializeNVPTX() {
  static std::once_flag Once;
  std::call_once(Once, [] {
    LLVMInitializeNVPTXTargetInfo();
    LLVMInitializeNVPTXTarget();
    LLVMInitializeNVPTXTargetMC();
    LLVMInitializeNVPTXAsmPrinter();
  });
}

Expected<std::unique_ptr<TargetMachine>>
createNVPTXTargetMachine(Module &M, StringRef GpuArch, unsigned OptLevel) {
  initializeNVPTX();
  Triple TT(M.getTargetTriple());
  if (!TT.isNVPTX()) {
    TT = Triple("nvptx64-nvidia-cuda");
    M.setTargetTriple(TT.str());
  }
  std::string Err;
  const Target *T = TargetRegistry::lookupTarget(TT.str(), Err);
  if (!T)
    return createStringError(inconvertibleErrorCode(), "NVPTX target: %s",
                             Err.c_str());
  CodeGenOptLevel Level = OptLevel >= 3   ? CodeGenOptLevel::Aggressive
                          : OptLevel == 0 ? CodeGenOptLevel::None
                                          : CodeGenOptLevel::Default;
  // The PTX ISA version is a module-wide choice of the target machine; take
  // the one the frontend chose for the functions (e.g. +ptx85).
  std::string Features;
  for (const Function &F : M)
    if (F.hasFnAttribute("target-features")) {
      Features = F.getFnAttribute("target-features").getValueAsString().str();
      break;
    }
  std::unique_ptr<TargetMachine> TM(T->createTargetMachine(
      TT.str(), GpuArch, Features, TargetOptions(), std::nullopt, std::nullopt,
      Level));
  if (!TM)
    return createStringError(inconvertibleErrorCode(),
                             "cannot create an NVPTX target for '%s'",
                             GpuArch.str().c_str());
  if (M.getDataLayout().isDefault())
    M.setDataLayout(TM->createDataLayout());
  return std::move(TM);
}

void initializeNVPTXTarget() { initializeNVPTX(); }

Expected<std::string> emitPTX(Module &M, StringRef GpuArch, unsigned OptLevel) {
  // Code generation runs on a fresh copy of the module, as llc would. LLVM
  // 19's NVPTX backend caches each module's nvvm.annotations the first time
  // it asks whether a function is a kernel, and the optimizer's NVPTX cost
  // model asks before Cleave's passes add the partition and merge variants:
  // on the original module those variants would be emitted as .func instead
  // of .entry. A copy in its own context has never been asked about.
  SmallVector<char, 0> Bitcode;
  {
    raw_svector_ostream BOS(Bitcode);
    WriteBitcodeToFile(M, BOS);
  }
  LLVMContext Ctx;
  Expected<std::unique_ptr<Module>> Copy = parseBitcodeFile(
      MemoryBufferRef(StringRef(Bitcode.data(), Bitcode.size()), "ptx-copy"),
      Ctx);
  if (!Copy)
    return Copy.takeError();
  Module &CM = **Copy;
  auto TM = createNVPTXTargetMachine(CM, GpuArch, OptLevel);
  if (!TM)
    return TM.takeError();
  SmallString<0> PTX;
  raw_svector_ostream OS(PTX);
  legacy::PassManager PM;
  if ((*TM)->addPassesToEmitFile(PM, OS, nullptr, CodeGenFileType::AssemblyFile))
    return createStringError(inconvertibleErrorCode(),
                             "NVPTX cannot emit assembly");
  PM.run(CM);
  return std::string(PTX);
}

std::string findPtxas() {
  if (ErrorOr<std::string> P = sys::findProgramByName("ptxas"))
    return *P;
  SmallVector<std::string, 2> Dirs;
  if (const char *Cuda = std::getenv("CUDA_PATH"))
    Dirs.push_back((Twine(Cuda) + "/bin").str());
  Dirs.push_back("/usr/local/cuda/bin");
  for (const std::string &D : Dirs) {
    SmallString<128> P(D);
    sys::path::append(P, "ptxas");
    if (sys::fs::can_execute(P))
      return std::string(P);
  }
  return "";
}

namespace {

/// What one ptxas run gave: its exit status, its messages and the cubin.
struct PtxasRun {
  int Status = 0;
  std::string ExecError; ///< why ptxas could not be run at all
  std::string Messages;  ///< its stdout and stderr
  std::string Cubin;
};

/// Runs \p Ptxas on \p PTX for \p GpuArch with \p Extra options, in
/// temporary files that are removed afterwards.
Expected<PtxasRun> runPtxas(StringRef PTX, StringRef GpuArch, StringRef Ptxas,
                            ArrayRef<StringRef> Extra) {
  SmallString<128> In, Out, Log;
  if (sys::fs::createTemporaryFile("cleave", "ptx", In) ||
      sys::fs::createTemporaryFile("cleave", "cubin", Out) ||
      sys::fs::createTemporaryFile("cleave", "log", Log))
    return createStringError(inconvertibleErrorCode(),
                             "cannot create temporary files for ptxas");
  auto Cleanup = [&] {
    sys::fs::remove(In);
    sys::fs::remove(Out);
    sys::fs::remove(Log);
  };
  {
    std::error_code EC;
    raw_fd_ostream OS(In, EC);
    if (EC) {
      Cleanup();
      return createStringError(inconvertibleErrorCode(),
                               "cannot write " + In);
    }
    OS << PTX;
  }
  std::string Arch = ("-arch=" + GpuArch).str();
  SmallVector<StringRef, 8> Args = {Ptxas, Arch};
  Args.append(Extra.begin(), Extra.end());
  Args.append({In, "-o", Out});
  std::optional<StringRef> Redirects[] = {std::nullopt, StringRef(Log),
                                          StringRef(Log)};
  PtxasRun R;
  R.Status = sys::ExecuteAndWait(Ptxas, Args, std::nullopt, Redirects, 0, 0,
                                 &R.ExecError);
  if (auto Buf = MemoryBuffer::getFile(Log))
    R.Messages = (*Buf)->getBuffer().trim().str();
  if (R.Status == 0)
    if (auto Buf = MemoryBuffer::getFile(Out, /*IsText=*/false))
      R.Cubin = (*Buf)->getBuffer().str();
  Cleanup();
  return R;
}

Error ptxasFailed(const PtxasRun &R) {
  return createStringError(inconvertibleErrorCode(),
                           "ptxas rejected the generated PTX" +
                               (R.Messages.empty() ? Twine(R.ExecError)
                                                   : Twine(":\n") + R.Messages));
}

} // namespace

Expected<std::string> assemblePTX(StringRef PTX, StringRef GpuArch,
                                  StringRef Ptxas) {
  Expected<PtxasRun> R = runPtxas(PTX, GpuArch, Ptxas, {});
  if (!R)
    return R.takeError();
  if (R->Status != 0)
    return ptxasFailed(*R);
  return std::move(R->Cubin);
}

std::map<std::string, KernelResources> parsePtxasResources(StringRef Log) {
  // ptxas info    : Compiling entry function '_Z6vecadd...' for 'sm_90'
  // ptxas info    : Used 10 registers, used 0 barriers, 380 bytes cmem[0]
  //                 (and ", N bytes smem" when it has shared memory)
  std::map<std::string, KernelResources> R;
  StringRef Entry = "Compiling entry function '";
  std::string Current;
  SmallVector<StringRef, 64> Lines;
  Log.split(Lines, '\n');
  // The number before \p Unit in \p L, if any ("10 registers").
  auto NumberBefore = [](StringRef L, StringRef Unit) -> std::optional<uint64_t> {
    size_t At = L.find(Unit);
    if (At == StringRef::npos)
      return std::nullopt;
    StringRef Head = L.take_front(At).rtrim();
    StringRef Digits = Head.substr(Head.find_last_not_of("0123456789") + 1);
    uint64_t V;
    if (Digits.empty() || Digits.getAsInteger(10, V))
      return std::nullopt;
    return V;
  };
  for (StringRef L : Lines) {
    if (size_t At = L.find(Entry); At != StringRef::npos) {
      StringRef Name = L.substr(At + Entry.size());
      Current = Name.take_until([](char C) { return C == '\''; }).str();
      R[Current];
      continue;
    }
    if (Current.empty() || !L.contains("Used "))
      continue;
    if (std::optional<uint64_t> N = NumberBefore(L, " registers"))
      R[Current].Registers = unsigned(*N);
    if (std::optional<uint64_t> N = NumberBefore(L, " bytes smem"))
      R[Current].StaticShared = *N;
  }
  return R;
}

Expected<std::map<std::string, KernelResources>>
ptxasResources(StringRef PTX, StringRef GpuArch, StringRef Ptxas) {
  Expected<PtxasRun> R = runPtxas(PTX, GpuArch, Ptxas, {"-v"});
  if (!R)
    return R.takeError();
  if (R->Status != 0)
    return ptxasFailed(*R);
  return parsePtxasResources(R->Messages);
}

} // namespace cleave
