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
#include "cleave/Analysis/CoRunEstimate.h"
#include "cleave/Analysis/Footprint.h"
#include "cleave/Analysis/KernelLegality.h"
#include "cleave/Analysis/ParamRoles.h"
#include "cleave/Analysis/VariantRefusals.h"
#include "cleave/CodeGen/PTXEmitter.h"
#include "cleave/Plugin/Pipelines.h"
#include "cleave/Support/KernelInfo.h"
#include "cleave/Transforms/CPULower.h"
#include "cleave/Transforms/PartitionReady.h"
#include "cleave/Transforms/Rebase.h"
#include "cleave/Transforms/Reorganize.h"
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

/// While installed on a context, drops the remarks of some passes and passes
/// every other diagnostic on to the handler it replaced, which also decides
/// which remarks are enabled.
class RemarkMuter : public DiagnosticHandler {
public:
  RemarkMuter(std::unique_ptr<DiagnosticHandler> Inner,
              std::vector<std::string> Passes)
      : Inner(std::move(Inner)), Passes(std::move(Passes)) {}

  std::unique_ptr<DiagnosticHandler> Inner;

  bool isAnalysisRemarkEnabled(StringRef Pass) const override {
    return Inner->isAnalysisRemarkEnabled(Pass);
  }
  bool isMissedOptRemarkEnabled(StringRef Pass) const override {
    return Inner->isMissedOptRemarkEnabled(Pass);
  }
  bool isPassedOptRemarkEnabled(StringRef Pass) const override {
    return Inner->isPassedOptRemarkEnabled(Pass);
  }
  bool isAnyRemarkEnabled() const override {
    return Inner->isAnyRemarkEnabled();
  }
  bool handleDiagnostics(const DiagnosticInfo &DI) override {
    if (const auto *R = dyn_cast<DiagnosticInfoOptimizationBase>(&DI))
      if (is_contained(Passes, R->getPassName()))
        return true;
    return Inner->handleDiagnostics(DI);
  }

private:
  std::vector<std::string> Passes;
};

/// Installs a RemarkMuter on Ctx for its lifetime.
class MutedRemarks {
public:
  MutedRemarks(LLVMContext &Ctx, std::vector<std::string> Passes) : Ctx(Ctx) {
    Ctx.setDiagnosticHandler(std::make_unique<RemarkMuter>(
        Ctx.getDiagnosticHandler(), std::move(Passes)));
  }
  ~MutedRemarks() {
    std::unique_ptr<DiagnosticHandler> Mine = Ctx.getDiagnosticHandler();
    Ctx.setDiagnosticHandler(
        std::move(static_cast<RemarkMuter &>(*Mine).Inner));
  }

private:
  LLVMContext &Ctx;
};

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

/// The variant Name of K in M, or why it is missing: the refusal its pass
/// recorded (\p Refused), else that \p Pass did not make it. \p Blocker is
/// the legality issue behind a refusal, if any: a remark points at the
/// innermost location of its instruction, often in a CUDA header
/// (atomicAdd), the issue at the user's line it was inlined into.
VariantRecord variantFrom(const Module &M, StringRef Name, StringRef Pass,
                          const VariantRefusal *Refused,
                          const LegalityIssue *Blocker) {
  if (const Function *F = M.getFunction(Name); F && !F->isDeclaration())
    return {Name.str(), "", ""};
  VariantRecord V{"", ("not generated by " + Pass).str(), ""};
  if (Refused)
    V = {"", Refused->Reason, Refused->Location};
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

/// Writes the kernel records (docs/bundle.md, "Kernels") of the device
/// module after the variant pipelines ran: each kernel's parameters,
/// legality, variants, merge outputs, combined parameters, footprint and
/// memory uses, as the analyses and passes left them.
class KernelRecordWriter {
public:
  KernelRecordWriter(fmt::ByteWriter &KW, Module &Device, const Module &Host,
                     FunctionAnalysisManager &FAM,
                     const VariantRefusals &DeviceRefusals,
                     const VariantRefusals &CPURefusals,
                     ArrayRef<GlobalVariable *> Variables)
      : KW(KW), Device(Device), Host(Host), FAM(FAM),
        DeviceRefusals(DeviceRefusals), CPURefusals(CPURefusals),
        Variables(Variables), DL(Device.getDataLayout()) {}

  Error write(Function &K) {
    KW.str(K.getName());
    KW.str(displayName(K));
    KW.u8(uint8_t(isOpenCL(Device) ? fmt::SourceLanguage::OpenCL
                                   : fmt::SourceLanguage::CUDA));
    const ParamRoles &Roles = FAM.getResult<ParamRoleAnalysis>(K);
    writeParams(K, Roles);
    const KernelLegality &Legality = FAM.getResult<KernelLegalityAnalysis>(K);
    writeLegality(Legality);
    Expected<std::string> MergeEntry = writeVariants(K, Legality);
    if (!MergeEntry)
      return MergeEntry.takeError();
    if (Error E = writeMergeOutputs(K, Roles, *MergeEntry))
      return E;
    writeCombined(Legality);
    KW.blob(appendRebaseRecords(
        Device, K, FAM.getResult<FootprintAnalysis>(K).serialize()));
    writeMemoryUses(K);
    return Error::success();
  }

private:
  void writeParams(Function &K, const ParamRoles &Roles) {
    KW.u32(K.arg_size());
    for (Argument &A : K.args()) {
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
  }

  void writeLegality(const KernelLegality &Legality) {
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
  }

  /// The variants of K and its swapped twin; returns the merge variant's
  /// entry (empty when there is none).
  Expected<std::string> writeVariants(Function &K,
                                      const KernelLegality &Legality) {
    StringRef Name = K.getName();
    const LegalityIssue *SplitBlocker = Legality.firstSplitBlocker();
    VariantRecord Merge = variantFrom(
        Device, mergeVariantName(Name), "cleave-merge",
        DeviceRefusals.lookup(Name, RefusedVariant::Merge), SplitBlocker);
    KW.u32(fmt::NumVariantKinds);
    writeVariant(KW, fmt::VariantKind::Original, {Name.str(), "", ""});
    writeVariant(KW, fmt::VariantKind::Partition,
                 variantFrom(Device, partitionVariantName(Name),
                             "cleave-partition",
                             DeviceRefusals.lookup(Name,
                                                   RefusedVariant::Partition),
                             SplitBlocker));
    if (!Merge.Entry.empty())
      Merge.CpuDescriptor = cpuDescriptorIn(Host, Merge.Entry);
    writeVariant(KW, fmt::VariantKind::Merge, Merge);
    VariantRecord Cpu =
        variantFrom(Host, cpuVariantName(Name), "cleave-cpu-lower",
                    CPURefusals.lookup(Name, RefusedVariant::CPU),
                    firstCPUBlocker(Legality));
    if (!Cpu.Entry.empty()) {
      Cpu.CpuDescriptor = cpuDescriptorIn(Host, Name);
      if (Cpu.CpuDescriptor.empty())
        return createStringError(inconvertibleErrorCode(),
                                 "bundle: the CPU variant '" + Cpu.Entry +
                                     "' has no descriptor");
    }
    writeVariant(KW, fmt::VariantKind::CPU, Cpu);
    const Function *Twin = Device.getFunction(swappedKernelName(Name));
    KW.str(Twin && isSwappedTwin(*Twin) ? Twin->getName() : StringRef());
    // cleave-reorganize makes the inspector and the reorganized variant
    // together (docs/reorganize.md); both names or neither.
    const Function *Tc = Device.getFunction(inspectorVariantName(Name));
    const Function *Ro = Device.getFunction(reorganizedVariantName(Name));
    KW.str(Tc && Ro ? Tc->getName() : StringRef());
    KW.str(Tc && Ro ? Ro->getName() : StringRef());
    // Their CPU builds, when the CPU module has both (made by the same
    // pass on the same kernel, so normally it has).
    std::string TcCpu = Tc && Ro ? cpuDescriptorIn(Host, Tc->getName()) : "";
    std::string RoCpu = Tc && Ro ? cpuDescriptorIn(Host, Ro->getName()) : "";
    bool BothCpu = !TcCpu.empty() && !RoCpu.empty();
    KW.str(BothCpu ? TcCpu : std::string());
    KW.str(BothCpu ? RoCpu : std::string());
    return Merge.Entry;
  }

  /// cleave-merge takes one partial buffer per output, in parameter order.
  Error writeMergeOutputs(Function &K, const ParamRoles &Roles,
                          const std::string &MergeEntry) {
    SmallVector<unsigned, 4> Outputs;
    if (!MergeEntry.empty()) {
      for (unsigned I = 0; I < K.arg_size(); ++I)
        if (Roles.isOutput(I))
          Outputs.push_back(I);
      const Function *MF = Device.getFunction(MergeEntry);
      if (MF->arg_size() != K.arg_size() + Outputs.size() + NumPartitionParams)
        return createStringError(
            inconvertibleErrorCode(),
            "bundle: merge kernel '" + MergeEntry +
                "' does not take one partial buffer per output parameter");
    }
    KW.u32(Outputs.size());
    for (unsigned O : Outputs)
      KW.u32(O);
    return Error::success();
  }

  /// Parameters whose atomics combine partial replicas (KernelLegality).
  void writeCombined(const KernelLegality &Legality) {
    KW.u32(Legality.Combined.size());
    for (const CombinedParam &C : Legality.Combined) {
      KW.u32(C.Arg);
      KW.u8(uint8_t(C.Op));
      KW.u8(uint8_t(C.Bytes));
    }
  }

  /// The kernel's static shared memory and the module variables it uses.
  void writeMemoryUses(Function &K) {
    // Static shared memory: the shared-memory globals the kernel's code
    // uses (an extern __shared__ array has size 0: it is the dynamic area).
    FunctionSet Reachable = getReachableFunctions(K);
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

  fmt::ByteWriter &KW;
  Module &Device;
  const Module &Host;
  FunctionAnalysisManager &FAM;
  const VariantRefusals &DeviceRefusals;
  const VariantRefusals &CPURefusals;
  ArrayRef<GlobalVariable *> Variables;
  const DataLayout &DL;
};

/// The co-run table (format version 6): each kernel's static estimate of
/// the co-run model's inputs, in kernel order; a kernel whose code the
/// estimate finds no instruction in has none.
void writeCoRunTable(fmt::ByteWriter &W, ArrayRef<Function *> Kernels,
                     FunctionAnalysisManager &FAM) {
  W.u32(Kernels.size());
  for (Function *K : Kernels) {
    CoRunEstimate E = estimateCoRun(*K, FAM);
    double Instr = 0;
    for (double C : E.PerThread)
      Instr += C;
    bool Present = Instr > 0;
    W.u8(Present);
    if (!Present)
      continue;
    W.u32(NumInstrClasses);
    for (double C : E.PerThread)
      W.f64(C);
    W.f64(E.BytesPerLane);
    W.f64(E.SectorsPerRequest);
  }
}

/// The images: one module with every kernel and variant, as PTX and, with
/// ptxas, as a cubin.
Error writeImages(fmt::ByteWriter &W, Module &Device,
                  const BundleOptions &Opts) {
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
  return Error::success();
}

/// The module variables, each with its CPU twin in \p Host if any.
void writeVariables(fmt::ByteWriter &W, ArrayRef<GlobalVariable *> Variables,
                    const Module &Host, const DataLayout &DL) {
  W.u32(Variables.size());
  for (GlobalVariable *GV : Variables) {
    W.str(GV->getName());
    W.u8(uint8_t(GV->getAddressSpace() == 4 ? fmt::VariableSpace::Constant
                                            : fmt::VariableSpace::Global));
    W.u64(DL.getTypeAllocSize(GV->getValueType()).getFixedValue());
    const GlobalVariable *CpuGV =
        Host.getNamedGlobal(cpuVariableName(GV->getName()));
    W.str(CpuGV ? CpuGV->getName() : StringRef());
  }
}

} // namespace

Expected<BuiltBundle> writeBundle(Module &Device, const BundleOptions &Opts) {
  auto TM = createNVPTXTargetMachine(Device, Opts.GpuArch);
  if (!TM)
    return TM.takeError();
  // The CPU module comes from the module as the frontend made it; its own
  // twins and merge kernels are the device module's, made again. The CPU
  // merge variant of K is __cleave_cpu___cleave_merge_<K>, whose descriptor
  // the bundle's merge variant names (docs/cpu-backend.md).
  std::unique_ptr<Module> Host = CloneModule(Device);
  CleavePassSetup Setup(TM->get());
  if (Opts.Log)
    *Opts.Log << "cleave: bundle: running " << DeviceVariantsPipeline << "\n";
  if (Error E = Setup.run(Device, DeviceVariantsPipeline))
    return std::move(E);
  CleavePassSetup CPU(TM->get());
  if (Opts.Log)
    *Opts.Log << "cleave: bundle: running " << CPUVariantsPipeline << "\n";
  {
    // Their remarks would repeat the device module's.
    MutedRemarks Muted(Device.getContext(),
                       {"cleave-merge", "cleave-swap-grid", "cleave-reorganize"});
    if (Error E = CPU.run(*Host, CPUVariantsPipeline))
      return std::move(E);
  }
  const VariantRefusals &DeviceRefusals =
      Setup.MAM.getResult<VariantRefusalAnalysis>(Device);
  const VariantRefusals &CPURefusals =
      CPU.MAM.getResult<VariantRefusalAnalysis>(*Host);
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
  KernelRecordWriter Records(KW, Device, *Host, Setup.FAM, DeviceRefusals,
                             CPURefusals, Variables);
  for (Function *K : Kernels)
    if (Error E = Records.write(*K))
      return std::move(E);
  writeCoRunTable(KW, Kernels, Setup.FAM);

  if (Error E = writeImages(W, Device, Opts))
    return std::move(E);
  writeVariables(W, Variables, *Host, DL);
  W.Bytes += KW.Bytes;

  uint64_t PayloadSize = W.Bytes.size() - fmt::HeaderSize;
  W.patchU64(fmt::PayloadSizeOffset, PayloadSize);
  const auto *Bytes = reinterpret_cast<const unsigned char *>(W.Bytes.data());
  W.patchU64(fmt::ChecksumOffset,
             fmt::bundleChecksum(Bytes, Bytes + fmt::HeaderSize, PayloadSize));
  return BuiltBundle{std::move(W.Bytes), std::move(Host)};
}

} // namespace cleave
