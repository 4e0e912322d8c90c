//===- BundleWriter.cpp - A device module to a kernel bundle ---------------===//
//
// Part of Cleave. Collects what the runtime needs about each kernel from the
// analyses, the variants the passes made (or the remarks that say why they
// did not) and the code generators, and encodes it as docs/bundle.md says,
// with the primitives of cleave/ABI/BundleFormat.h that the runtime's reader
// shares.
//
//===----------------------------------------------------------------------===//
#include "cleave/Bundle/BundleWriter.h"

#include "cleave/ABI/BundleFormat.h"
#include "cleave/Analysis/Footprint.h"
#include "cleave/Analysis/KernelLegality.h"
#include "cleave/Analysis/ParamRoles.h"
#include "cleave/CodeGen/PTXEmitter.h"
#include "cleave/Plugin/PassRegistration.h"
#include "cleave/Support/KernelInfo.h"
#include "cleave/Transforms/CPULower.h"
#include "cleave/Transforms/PartitionReady.h"
#include "cleave/Transforms/Rebase.h"
#include "cleave/Transforms/SwapGrid.h"

#include "llvm/IR/DiagnosticHandler.h"
#include "llvm/IR/DiagnosticInfo.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm/IR/Verifier.h"
#include "llvm/Passes/PassBuilder.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/Transforms/Utils/Cloning.h"

#include <vector>

#ifndef CLEAVE_VERSION_STRING
#define CLEAVE_VERSION_STRING "unknown"
#endif

using namespace llvm;
namespace fmt = cleave::bundle;

namespace cleave {

namespace {

/// Pass builder and analysis managers set up with Cleave's passes, kept
/// together so that the analyses stay reachable after a pipeline ran.
struct CleavePassSetup {
  PassBuilder PB;
  LoopAnalysisManager LAM;
  FunctionAnalysisManager FAM;
  CGSCCAnalysisManager CGAM;
  ModuleAnalysisManager MAM;

  explicit CleavePassSetup(TargetMachine *TM) : PB(TM) {
    registerCleavePasses(PB);
    PB.registerModuleAnalyses(MAM);
    PB.registerCGSCCAnalyses(CGAM);
    PB.registerFunctionAnalyses(FAM);
    PB.registerLoopAnalyses(LAM);
    PB.crossRegisterProxies(LAM, FAM, CGAM, MAM);
  }

  Error run(Module &M, StringRef Pipeline) {
    ModulePassManager MPM;
    if (Error E = PB.parsePassPipeline(MPM, Pipeline))
      return E;
    MPM.addPass(VerifierPass());
    MPM.run(M, MAM);
    return Error::success();
  }
};

struct CapturedRemark {
  std::string Pass, Message, Location;
};

/// Records every remark of Cleave's passes while installed on a context
/// (whether or not the user asked for remarks) and passes each diagnostic
/// on to the handler it replaced exactly when that one wanted it, so the
/// user sees what they would have seen without it.
class RemarkRecorder : public DiagnosticHandler {
public:
  RemarkRecorder(std::unique_ptr<DiagnosticHandler> Inner,
                 std::vector<CapturedRemark> &Out)
      : Inner(std::move(Inner)), Out(Out) {}

  std::unique_ptr<DiagnosticHandler> Inner;

  static bool isCleave(StringRef Pass) { return Pass.starts_with("cleave"); }
  bool isAnalysisRemarkEnabled(StringRef Pass) const override {
    return isCleave(Pass) || Inner->isAnalysisRemarkEnabled(Pass);
  }
  bool isMissedOptRemarkEnabled(StringRef Pass) const override {
    return isCleave(Pass) || Inner->isMissedOptRemarkEnabled(Pass);
  }
  bool isPassedOptRemarkEnabled(StringRef Pass) const override {
    return isCleave(Pass) || Inner->isPassedOptRemarkEnabled(Pass);
  }
  bool isAnyRemarkEnabled() const override { return true; }

  /// Remarks of these passes are dropped (neither recorded nor passed on):
  /// the CPU module's own runs of cleave-merge and cleave-swap-grid repeat
  /// the device module's.
  std::vector<std::string> Mute;

  bool handleDiagnostics(const DiagnosticInfo &DI) override {
    if (const auto *R = dyn_cast<DiagnosticInfoOptimizationBase>(&DI)) {
      StringRef Pass = R->getPassName();
      if (is_contained(Mute, Pass))
        return true;
      if (isCleave(Pass)) {
        const auto *WithLoc = dyn_cast<DiagnosticInfoWithLocationBase>(R);
        Out.push_back({Pass.str(), R->getMsg(),
                       WithLoc && WithLoc->isLocationAvailable()
                           ? WithLoc->getLocationStr()
                           : std::string()});
      }
      bool InnerWants;
      switch (R->getKind()) {
      case DK_OptimizationRemark:
        InnerWants = Inner->isPassedOptRemarkEnabled(Pass);
        break;
      case DK_OptimizationRemarkMissed:
        InnerWants = Inner->isMissedOptRemarkEnabled(Pass);
        break;
      default:
        InnerWants = Inner->isAnalysisRemarkEnabled(Pass);
        break;
      }
      if (!InnerWants)
        return true;
    }
    return Inner->handleDiagnostics(DI);
  }

private:
  std::vector<CapturedRemark> &Out;
};

/// Installs a RemarkRecorder on Ctx for its lifetime.
class RecordRemarks {
public:
  RecordRemarks(LLVMContext &Ctx, std::vector<CapturedRemark> &Out)
      : Ctx(Ctx) {
    auto R = std::make_unique<RemarkRecorder>(Ctx.getDiagnosticHandler(), Out);
    Recorder = R.get();
    Ctx.setDiagnosticHandler(std::move(R));
  }
  /// Drops the remarks of \p Passes from now on (empty: none).
  void mute(std::vector<std::string> Passes) {
    Recorder->Mute = std::move(Passes);
  }
  ~RecordRemarks() {
    std::unique_ptr<DiagnosticHandler> Mine = Ctx.getDiagnosticHandler();
    Ctx.setDiagnosticHandler(
        std::move(static_cast<RemarkRecorder &>(*Mine).Inner));
  }

private:
  LLVMContext &Ctx;
  RemarkRecorder *Recorder = nullptr;
};

/// The remark of Pass about kernel K: Cleave's remarks begin with
/// "kernel 'NAME'" (partition, merge) or "kernel NAME " (CPU lowering),
/// NAME the display name, which includes the parameter list for C++.
const CapturedRemark *findRemark(const std::vector<CapturedRemark> &Remarks,
                                 StringRef Pass, const Function &K) {
  std::string Display = displayName(K);
  std::string Quoted = "kernel '" + Display + "'";
  std::string Plain = "kernel " + Display + " ";
  const CapturedRemark *Found = nullptr;
  for (const CapturedRemark &R : Remarks)
    if (R.Pass == Pass && (StringRef(R.Message).starts_with(Quoted) ||
                           StringRef(R.Message).starts_with(Plain)))
      Found = &R; // the last one: a later run repeats the same verdict
  return Found;
}

/// "file:line:col" of I's outermost inlined-at location, or empty.
std::string locationOf(const Instruction &I) {
  std::string S;
  raw_string_ostream OS(S);
  printLocation(OS, I);
  StringRef Ref(S);
  Ref.consume_front(" at ");
  return Ref.str();
}

/// True when V is used, directly or through constant expressions, by an
/// instruction of a function in Scope.
bool isUsedIn(const Value &V, const FunctionSet &Scope) {
  for (const User *U : V.users()) {
    if (const auto *I = dyn_cast<Instruction>(U)) {
      if (Scope.contains(I->getFunction()))
        return true;
    } else if (isa<Constant>(U) && !isa<GlobalValue>(U) && isUsedIn(*U, Scope)) {
      return true;
    }
  }
  return false;
}

bool isModuleVariable(const GlobalVariable &GV) {
  unsigned AS = GV.getAddressSpace();
  return (AS == 1 || AS == 4) && !GV.isDeclaration() &&
         !GV.hasLocalLinkage() && !GV.getName().starts_with("llvm.");
}

bool isOpenCL(const Module &M) {
  return M.getNamedMetadata("opencl.ocl.version") != nullptr;
}

struct VariantRecord {
  std::string Entry, Reason, Location;
  /// The descriptor of this variant's code in the CPU module, if any.
  std::string CpuDescriptor;
};

/// The variant Name of K in M, or the remark of Pass that says why it is
/// missing. \p Blocker is the legality issue behind a refusal, if any: a
/// remark points at the innermost location of its instruction, often in a
/// CUDA header (atomicAdd), the issue at the user's line it was inlined into.
VariantRecord variantFrom(const Module &M, StringRef Name, StringRef Pass,
                          const Function &K,
                          const std::vector<CapturedRemark> &Remarks,
                          const LegalityIssue *Blocker) {
  if (const Function *F = M.getFunction(Name); F && !F->isDeclaration())
    return {Name.str(), "", ""};
  VariantRecord V{"", ("not generated by " + Pass).str(), ""};
  if (const CapturedRemark *R = findRemark(Remarks, Pass, K))
    V = {"", R->Message, R->Location};
  if (Blocker)
    if (std::string Loc = locationOf(*Blocker->Inst); !Loc.empty())
      V.Location = Loc;
  return V;
}

/// The first issue of L that forbids the CPU, or null.
const LegalityIssue *firstCPUBlocker(const KernelLegality &L) {
  for (const LegalityIssue &I : L.Issues)
    if (I.ForbidsCPU)
      return &I;
  return nullptr;
}

void writeVariant(fmt::ByteWriter &W, fmt::VariantKind Kind,
                  const VariantRecord &V) {
  W.u8(static_cast<uint8_t>(Kind));
  W.u8(V.Entry.empty() ? 0 : 1);
  W.str(V.Entry);
  W.str(V.Reason);
  W.str(V.Location);
  W.str(V.CpuDescriptor);
}

/// The descriptor of the CPU variant of \p Kernel when the CPU module
/// \p Host defines one, else empty.
std::string cpuDescriptorIn(const Module &Host, StringRef Kernel) {
  std::string Name = cpuDescriptorName(Kernel);
  const GlobalVariable *GV = Host.getNamedGlobal(Name);
  return GV && !GV->isDeclaration() ? Name : std::string();
}

/// Replaces the device module \p M by its CPU module: every kernel's CPU
/// variant and its merge kernel's. The merge kernels are made first
/// (cleave-merge) and then marked as ordinary kernels, in this module only
/// (it is the CPU module's scratch copy), so that cleave-cpu-lower lowers
/// them too: the CPU merge variant of K is __cleave_cpu___cleave_merge_<K>,
/// described by __cleave_cpu___cleave_merge_<K>_desc (docs/cpu-backend.md).
/// A merge kernel the lowering refuses simply has no CPU variant.
Error lowerForCPU(CleavePassSetup &Setup, Module &M) {
  // The twins first (a no-op when the module already has them): they are
  // kernels of the bundle, with CPU variants of their own.
  if (Error E = Setup.run(M, "cleave-swap-grid,cleave-merge"))
    return E;
  for (Function &F : M)
    if (F.getFnAttribute("cleave-variant").getValueAsString() == "merge")
      F.removeFnAttr("cleave-variant");
  return Setup.run(M, "cleave-cpu-lower");
}

} // namespace

Error runCleavePipeline(Module &M, StringRef Pipeline, TargetMachine *TM) {
  CleavePassSetup Setup(TM);
  // The CPU object (`cleave compile --emit=cpu-obj|cpu-ir`) must define what
  // the bundle's CPU variants assume, merge variants included.
  if (Pipeline == "cleave-cpu-lower")
    return lowerForCPU(Setup, M);
  return Setup.run(M, Pipeline);
}

Expected<std::string> writeBundle(Module &Device, const BundleOptions &Opts) {
  auto TM = createNVPTXTargetMachine(Device, Opts.GpuArch);
  if (!TM)
    return TM.takeError();
  std::vector<CapturedRemark> Remarks;
  RecordRemarks Recorder(Device.getContext(), Remarks);

  // CPU variants: the pass form of the lowering on a clone, so the bundle
  // names exactly what `cleave compile --emit=cpu-obj` defines. The merge
  // kernels are made first and lowered too: the CPU merge variant of K is
  // __cleave_cpu___cleave_merge_<K>, whose descriptor the bundle's merge
  // variant names (docs/cpu-backend.md).
  // The twins of 2-D kernels (cleave-swap-grid) are kernels like the
  // others: made first, so the CPU clone and every pass below see them.
  {
    CleavePassSetup Swap(TM->get());
    if (Error E = Swap.run(Device, "cleave-swap-grid"))
      return std::move(E);
  }
  std::unique_ptr<Module> Host = CloneModule(Device);
  {
    CleavePassSetup CPU(TM->get());
    if (Opts.Log)
      *Opts.Log << "cleave: bundle: lowering kernels for the CPU\n";
    Recorder.mute({"cleave-merge", "cleave-swap-grid"});
    Error E = lowerForCPU(CPU, *Host);
    Recorder.mute({});
    if (E)
      return std::move(E);
  }

  CleavePassSetup Setup(TM->get());
  if (Opts.Log)
    *Opts.Log
        << "cleave: bundle: running cleave-partition,cleave-rebase,cleave-merge\n";
  if (Error E =
          Setup.run(Device, "cleave-partition,cleave-rebase,cleave-merge"))
    return std::move(E);
  FunctionAnalysisManager &FAM = Setup.FAM;
  const DataLayout &DL = Device.getDataLayout();

  fmt::ByteWriter W;
  W.Bytes.assign(fmt::Magic, sizeof fmt::Magic);
  W.u32(fmt::FormatVersion);
  W.u32(0);        // flags
  W.u64(0);        // payload size, patched below
  W.u64(0);        // checksum, patched below
  W.str("cleave " CLEAVE_VERSION_STRING);
  W.str(Device.getSourceFileName());

  // The kernels' metadata first: codegen below may change the module.
  fmt::ByteWriter KW;
  SmallVector<GlobalVariable *, 8> Variables;
  for (GlobalVariable &GV : Device.globals())
    if (isModuleVariable(GV))
      Variables.push_back(&GV);
  SmallVector<Function *, 8> Kernels = getKernels(Device);
  KW.u32(Kernels.size());
  for (Function *K : Kernels) {
    KW.str(K->getName());
    KW.str(displayName(*K));
    KW.u8(uint8_t(isOpenCL(Device) ? fmt::SourceLanguage::OpenCL
                                   : fmt::SourceLanguage::CUDA));

    const ParamRoles &Roles = FAM.getResult<ParamRoleAnalysis>(*K);
    KW.u32(K->arg_size());
    for (Argument &A : K->args()) {
      fmt::ParamKind Kind = fmt::ParamKind::Scalar;
      Type *Ty = A.getType();
      if (A.hasByValAttr()) {
        Kind = fmt::ParamKind::ByValue;
        Ty = A.getParamByValType();
      } else if (Ty->isPointerTy()) {
        Kind = fmt::ParamKind::Pointer;
      }
      ParamRoleEntry Role;
      if (A.getArgNo() < Roles.Params.size())
        Role = Roles.Params[A.getArgNo()];
      Align Al = A.getParamAlign().value_or(DL.getABITypeAlign(Ty));
      KW.u8(uint8_t(Kind));
      KW.u8(uint8_t(Role.Role));
      KW.u8(Role.Escapes ? fmt::ParamRoleIsGuess : 0);
      KW.u32(uint32_t(DL.getTypeAllocSize(Ty).getFixedValue()));
      KW.u32(uint32_t(Al.value()));
    }

    const KernelLegality &Legality = FAM.getResult<KernelLegalityAnalysis>(*K);
    KW.u8((Legality.canSplit() ? fmt::KernelCanSplit : 0) |
          (Legality.canRunOnCPU() ? fmt::KernelCanRunOnCPU : 0));
    KW.u32(Legality.Issues.size());
    for (const LegalityIssue &I : Legality.Issues) {
      KW.str(getIssueKindName(I.Kind));
      KW.str(I.Detail);
      KW.str(locationOf(*I.Inst));
      KW.u8((I.ForbidsSplit ? fmt::IssueForbidsSplit : 0) |
            (I.ForbidsCPU ? fmt::IssueForbidsCPU : 0));
    }

    StringRef Name = K->getName();
    const LegalityIssue *SplitBlocker = Legality.firstSplitBlocker();
    VariantRecord Merge = variantFrom(Device, mergeVariantName(Name),
                                      "cleave-merge", *K, Remarks,
                                      SplitBlocker);
    KW.u32(fmt::NumVariantKinds);
    writeVariant(KW, fmt::VariantKind::Original, {Name.str(), "", ""});
    writeVariant(KW, fmt::VariantKind::Partition,
                 variantFrom(Device, partitionVariantName(Name),
                             "cleave-partition", *K, Remarks, SplitBlocker));
    if (!Merge.Entry.empty())
      Merge.CpuDescriptor = cpuDescriptorIn(*Host, Merge.Entry);
    writeVariant(KW, fmt::VariantKind::Merge, Merge);
    VariantRecord Cpu =
        variantFrom(*Host, cpuVariantName(Name), "cleave-cpu-lower", *K,
                    Remarks, firstCPUBlocker(Legality));
    if (!Cpu.Entry.empty()) {
      Cpu.CpuDescriptor = cpuDescriptorIn(*Host, Name);
      if (Cpu.CpuDescriptor.empty())
        return createStringError(inconvertibleErrorCode(),
                                 "bundle: the CPU variant '" + Cpu.Entry +
                                     "' has no descriptor");
    }
    writeVariant(KW, fmt::VariantKind::CPU, Cpu);
    const Function *Twin = Device.getFunction(swappedKernelName(Name));
    KW.str(Twin && isSwappedTwin(*Twin) ? Twin->getName() : StringRef());

    // cleave-merge takes one partial buffer per output, in parameter order.
    SmallVector<unsigned, 4> Outputs;
    if (!Merge.Entry.empty()) {
      for (unsigned I = 0; I < K->arg_size(); ++I)
        if (Roles.isOutput(I))
          Outputs.push_back(I);
      const Function *MF = Device.getFunction(Merge.Entry);
      if (MF->arg_size() != K->arg_size() + Outputs.size() + NumPartitionParams)
        return createStringError(
            inconvertibleErrorCode(),
            "bundle: merge kernel '" + Merge.Entry +
                "' does not take one partial buffer per output parameter");
    }
    KW.u32(Outputs.size());
    for (unsigned O : Outputs)
      KW.u32(O);

    // Parameters whose atomics combine partial replicas (KernelLegality).
    KW.u32(Legality.Combined.size());
    for (const CombinedParam &C : Legality.Combined) {
      KW.u32(C.Arg);
      KW.u8(uint8_t(C.Op));
      KW.u8(uint8_t(C.Bytes));
    }

    KW.blob(appendRebaseRecords(
        Device, *K, FAM.getResult<FootprintAnalysis>(*K).serialize()));

    // Static shared memory: the shared-memory globals the kernel's code
    // uses (an extern __shared__ array has size 0: it is the dynamic area).
    FunctionSet Reachable = getReachableFunctions(*K);
    uint64_t Shared = 0;
    for (GlobalVariable &GV : Device.globals())
      if (GV.getAddressSpace() == 3 && isUsedIn(GV, Reachable))
        Shared = alignTo(Shared, GV.getAlign().value_or(
                                     DL.getABITypeAlign(GV.getValueType()))) +
                 DL.getTypeAllocSize(GV.getValueType()).getFixedValue();
    KW.u64(Shared);

    SmallVector<std::pair<unsigned, uint8_t>, 4> Uses;
    for (unsigned V = 0; V < Variables.size(); ++V)
      if (isUsedIn(*Variables[V], Reachable)) {
        PointerAccess PA = analyzePointerAccess(*Variables[V], &Reachable);
        // An access the walk cannot see may be a write.
        Uses.push_back({V, uint8_t((PA.Read || PA.Escapes ? fmt::VariableRead
                                                           : 0) |
                                   (PA.Written || PA.Escapes
                                        ? fmt::VariableWritten
                                        : 0))});
      }
    KW.u32(Uses.size());
    for (auto [V, Flags] : Uses) {
      KW.u32(V);
      KW.u8(Flags);
    }
  }

  // Images: one module with every kernel and variant.
  if (Opts.Log)
    *Opts.Log << "cleave: bundle: emitting PTX for " << Opts.GpuArch << "\n";
  Expected<std::string> PTX = emitPTX(Device, Opts.GpuArch);
  if (!PTX)
    return PTX.takeError();
  std::string Cubin;
  if (!Opts.Ptxas.empty()) {
    if (Opts.Log)
      *Opts.Log << "cleave: bundle: assembling with " << Opts.Ptxas << "\n";
    Expected<std::string> C = assemblePTX(*PTX, Opts.GpuArch, Opts.Ptxas);
    if (!C)
      return C.takeError();
    Cubin = std::move(*C);
  }
  W.u32(Cubin.empty() ? 1 : 2);
  W.u8(uint8_t(fmt::ImageKind::PTX));
  W.str(Opts.GpuArch);
  W.blob(*PTX);
  if (!Cubin.empty()) {
    W.u8(uint8_t(fmt::ImageKind::Cubin));
    W.str(Opts.GpuArch);
    W.blob(Cubin);
  }

  W.u32(Variables.size());
  for (GlobalVariable *GV : Variables) {
    W.str(GV->getName());
    W.u8(uint8_t(GV->getAddressSpace() == 4 ? fmt::VariableSpace::Constant
                                            : fmt::VariableSpace::Global));
    W.u64(DL.getTypeAllocSize(GV->getValueType()).getFixedValue());
    const GlobalVariable *CpuGV =
        Host->getNamedGlobal(cpuVariableName(GV->getName()));
    W.str(CpuGV ? CpuGV->getName() : StringRef());
  }
  W.Bytes += KW.Bytes;

  uint64_t PayloadSize = W.Bytes.size() - fmt::HeaderSize;
  W.patchU64(fmt::PayloadSizeOffset, PayloadSize);
  const auto *Bytes = reinterpret_cast<const unsigned char *>(W.Bytes.data());
  W.patchU64(fmt::ChecksumOffset,
             fmt::bundleChecksum(Bytes, Bytes + fmt::HeaderSize, PayloadSize));
  return std::move(W.Bytes);
}

} // namespace cleave
