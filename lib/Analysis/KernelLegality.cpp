//===- KernelLegality.cpp - What forbids splitting or CPU runs ------------===//
//
// Part of Cleave. Splitting runs a subset of a kernel's blocks on each
// device, so every block must be independent of the blocks elsewhere and
// every buffer it touches must be one the runtime tracks (digest 002 §3.6,
// digest 003 §3.6). The CPU variant runs blocks on host threads, so the
// kernel must not depend on GPU-only state or code we cannot translate.
// This analysis lists every construct that breaks either, with the
// instruction that carries it.
//
//===----------------------------------------------------------------------===//
#include "cleave/Analysis/KernelLegality.h"

#include "cleave/Analysis/DeviceReports.h"
#include "cleave/Analysis/HeaderAsm.h"
#include "cleave/Analysis/ParamRoles.h"
#include "cleave/Analysis/WrittenData.h"
#include "cleave/Support/KernelInfo.h"

#include "llvm/ADT/SmallPtrSet.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSwitch.h"
#include "llvm/Analysis/ValueTracking.h"
#include "llvm/Demangle/Demangle.h"
#include "llvm/IR/Function.h"
#include "llvm/IR/InlineAsm.h"
#include "llvm/IR/InstIterator.h"
#include "llvm/IR/Instructions.h"
#include "llvm/IR/IntrinsicInst.h"
#include "llvm/Support/raw_ostream.h"

#include <optional>

using namespace llvm;

namespace cleave {

AnalysisKey KernelLegalityAnalysis::Key;

StringRef getIssueKindName(LegalityIssueKind Kind) {
  switch (Kind) {
  case LegalityIssueKind::GlobalAtomic:
    return "global-atomic";
  case LegalityIssueKind::GridSync:
    return "grid-sync";
  case LegalityIssueKind::Cluster:
    return "cluster";
  case LegalityIssueKind::DynamicParallelism:
    return "dynamic-parallelism";
  case LegalityIssueKind::HardwareRegister:
    return "hardware-register";
  case LegalityIssueKind::InlineAsm:
    return "inline-asm";
  case LegalityIssueKind::LoadedPointer:
    return "loaded-pointer";
  case LegalityIssueKind::ArgumentPointer:
    return "argument-pointer";
  case LegalityIssueKind::ExternalCall:
    return "external-call";
  case LegalityIssueKind::DataDependentStore:
    return "data-dependent-store";
  }
  llvm_unreachable("unknown legality issue kind");
}

bool KernelLegality::canSplit() const { return !firstSplitBlocker(); }

bool KernelLegality::canRunOnCPU() const {
  return none_of(Issues, [](const LegalityIssue &I) { return I.ForbidsCPU; });
}

const LegalityIssue *KernelLegality::firstSplitBlocker() const {
  for (const LegalityIssue &Issue : Issues)
    if (Issue.ForbidsSplit)
      return &Issue;
  return nullptr;
}

/// A short, stable description of an instruction: its opcode, refined for
/// atomics and calls.
static std::string describe(const Instruction &I) {
  if (const auto *RMW = dyn_cast<AtomicRMWInst>(&I))
    return ("atomicrmw " + AtomicRMWInst::getOperationName(RMW->getOperation()))
        .str();
  if (const auto *LI = dyn_cast<LoadInst>(&I))
    return LI->isAtomic() ? "load atomic" : "load";
  if (const auto *SI = dyn_cast<StoreInst>(&I))
    return SI->isAtomic() ? "store atomic" : "store";
  if (const auto *CB = dyn_cast<CallBase>(&I)) {
    if (CB->isInlineAsm())
      return "asm";
    if (const Function *Callee = CB->getCalledFunction())
      return ("call " + Callee->getName()).str();
    return "indirect call";
  }
  return I.getOpcodeName();
}

/// Whether \p O is a pointer loaded from a by-value struct parameter that
/// the kernel never writes, at a pointer's natural alignment: the bytes the
/// host passed, which hold buffer addresses the runtime can translate
/// (argument-pointer).
static bool isArgumentField(const Value *O) {
  const auto *LI = dyn_cast<LoadInst>(O);
  if (!LI || !LI->isSimple() || !LI->getType()->isPointerTy() ||
      LI->getAlign().value() < 8)
    return false;
  const auto *A =
      dyn_cast<Argument>(getUnderlyingObject(LI->getPointerOperand()));
  return A && A->hasByValAttr() && A->onlyReadsMemory();
}

/// A cause also names its value when the IR does (hand-written IR, -O0
/// builds), to tell apart loads on one line.
static std::string describeCause(const Instruction &I) {
  std::string Text = describe(I);
  if (I.hasName())
    Text += (" %" + I.getName()).str();
  return Text;
}

void KernelLegality::print(raw_ostream &OS) const {
  OS << "  split: " << (canSplit() ? "yes" : "no") << "\n";
  OS << "  cpu: " << (canRunOnCPU() ? "yes" : "no") << "\n";
  for (const LegalityIssue &Issue : Issues) {
    OS << "  issue: " << getIssueKindName(Issue.Kind) << " (forbids ";
    if (Issue.ForbidsSplit && Issue.ForbidsCPU)
      OS << "split, cpu";
    else if (Issue.ForbidsSplit)
      OS << "split";
    else
      OS << "cpu";
    OS << ") '" << Issue.Detail << "'";
    printLocation(OS, *Issue.Inst);
    switch (Issue.Kind) {
    case LegalityIssueKind::LoadedPointer:
      if (Issue.Cause) {
        OS << "; pointer from '" << describeCause(*Issue.Cause) << "'";
        printLocation(OS, *Issue.Cause);
      } else {
        OS << "; pointer built from an integer";
      }
      break;
    case LegalityIssueKind::ArgumentPointer:
      OS << "; pointer from '" << describeCause(*Issue.Cause) << "'";
      printLocation(OS, *Issue.Cause);
      OS << " of a by-value argument";
      break;
    case LegalityIssueKind::DataDependentStore:
      if (Issue.Cause) {
        OS << "; address depends on '" << describeCause(*Issue.Cause) << "'";
        printLocation(OS, *Issue.Cause);
      }
      break;
    default:
      break;
    }
    OS << "\n";
  }
  for (const CombinedParam &C : Combined) {
    OS << "  combine: arg " << C.Arg << " " << getCombineOpName(C.Op) << " i"
       << C.Bytes * 8 << " '" << describe(*C.First) << "'";
    printLocation(OS, *C.First);
    OS << "\n";
  }
}

/// The address of an atomic instruction: read-modify-writes, and ordered
/// loads and stores, which only make sense to communicate with other blocks.
static const Value *getAtomicPointer(const Instruction &I) {
  if (const auto *RMW = dyn_cast<AtomicRMWInst>(&I))
    return RMW->getPointerOperand();
  if (const auto *CX = dyn_cast<AtomicCmpXchgInst>(&I))
    return CX->getPointerOperand();
  if (const auto *LI = dyn_cast<LoadInst>(&I))
    return LI->isAtomic() ? LI->getPointerOperand() : nullptr;
  if (const auto *SI = dyn_cast<StoreInst>(&I))
    return SI->isAtomic() ? SI->getPointerOperand() : nullptr;
  return nullptr;
}

/// The combine operation of an atomic read-modify-write, if it has one whose
/// identity is a byte pattern (sub adds the negation: its partials combine
/// by addition).
static std::optional<CombineOp> combineOpOf(AtomicRMWInst::BinOp Op) {
  switch (Op) {
  case AtomicRMWInst::Add:
  case AtomicRMWInst::Sub:
    return CombineOp::Add;
  case AtomicRMWInst::And:
    return CombineOp::And;
  case AtomicRMWInst::Or:
    return CombineOp::Or;
  case AtomicRMWInst::Xor:
    return CombineOp::Xor;
  case AtomicRMWInst::UMin:
    return CombineOp::UMin;
  case AtomicRMWInst::UMax:
    return CombineOp::UMax;
  default: // xchg, signed min/max (identity not a byte pattern), floats
    return std::nullopt;
  }
}

/// The pointer parameters of \p Kernel that only integer atomics of one
/// combinable kind with unused results touch (KernelLegality::Combined),
/// and those atomics. Every use of a pointer derived from the parameter
/// (through GEPs, casts, phis and selects of derived pointers only) must be
/// such an atomic's address: a load, a store, a call, a comparison or an
/// escape of the pointer disqualifies it.
static void findCombined(const Function &Kernel,
                         SmallVectorImpl<CombinedParam> &Out,
                         SmallPtrSetImpl<const Instruction *> &Atomics) {
  for (const Argument &A : Kernel.args()) {
    if (!A.getType()->isPointerTy() || A.hasByValAttr())
      continue;
    SmallPtrSet<const Value *, 16> Derived;
    SmallVector<const Value *, 16> Work = {&A};
    SmallVector<const Instruction *, 4> Found;
    SmallVector<const Instruction *, 4> Merges; // phis and selects
    std::optional<CombineOp> Op;
    unsigned Bytes = 0;
    bool Ok = true;
    Derived.insert(&A);
    while (!Work.empty() && Ok) {
      const Value *V = Work.pop_back_val();
      for (const Use &U : V->uses()) {
        const auto *I = dyn_cast<Instruction>(U.getUser());
        if (!I) {
          Ok = false;
          break;
        }
        auto Follow = [&] {
          if (Derived.insert(I).second)
            Work.push_back(I);
        };
        if (const auto *G = dyn_cast<GetElementPtrInst>(I)) {
          Ok = U.getOperandNo() == G->getPointerOperandIndex();
          if (Ok)
            Follow();
        } else if (isa<BitCastInst>(I) || isa<AddrSpaceCastInst>(I)) {
          Follow();
        } else if (isa<PHINode>(I) ||
                   (isa<SelectInst>(I) && U.getOperandNo() != 0)) {
          Merges.push_back(I);
          Follow();
        } else if (const auto *RMW = dyn_cast<AtomicRMWInst>(I)) {
          std::optional<CombineOp> This = combineOpOf(RMW->getOperation());
          unsigned W = RMW->getType()->isIntegerTy()
                           ? RMW->getType()->getIntegerBitWidth() / 8
                           : 0;
          Ok = U.getOperandNo() == RMW->getPointerOperandIndex() && This &&
               (W == 4 || W == 8) && RMW->use_empty() && !RMW->isVolatile() &&
               (!Op || (*Op == *This && Bytes == W));
          Op = This;
          Bytes = W;
          Found.push_back(RMW);
        } else {
          Ok = false;
        }
        if (!Ok)
          break;
      }
    }
    // A phi or select that also takes a pointer from elsewhere may send
    // the atomics to another buffer.
    for (const Instruction *M : Merges) {
      unsigned FirstOp = isa<SelectInst>(M) ? 1 : 0;
      for (unsigned I = FirstOp; I < M->getNumOperands() && Ok; ++I)
        Ok = Derived.count(M->getOperand(I));
    }
    if (!Ok || Found.empty())
      continue;
    // The first in program order names the parameter's atomics.
    const Instruction *First = nullptr;
    for (const Instruction &I : instructions(Kernel))
      if (is_contained(Found, &I)) {
        First = &I;
        break;
      }
    Out.push_back({A.getArgNo(), *Op, Bytes, First});
    Atomics.insert(Found.begin(), Found.end());
  }
}

namespace {

/// Collects the issues of one kernel.
class LegalityScanner {
  const Function &Kernel;
  KernelLegality &Result;
  WrittenDataFinder Written;

public:
  LegalityScanner(const Function &Kernel, KernelLegality &Result)
      : Kernel(Kernel), Result(Result), Written(Kernel) {}

  void scan();

private:
  void add(LegalityIssueKind Kind, const Instruction &I, std::string Detail,
           bool ForbidsSplit, bool ForbidsCPU,
           const Instruction *Cause = nullptr) {
    Result.Issues.push_back(
        {Kind, &I, std::move(Detail), ForbidsSplit, ForbidsCPU, Cause});
  }
  bool isGlobal(const Value *Ptr) const {
    return getPointerSpace(Ptr, Kernel, Written.getScope()) ==
           PointerSpace::Global;
  }
  void visitCall(const CallBase &CB);
  void visitInlineAsm(const CallBase &CB);
  void visitIntrinsic(const CallBase &CB, const Function &Callee);
  void visitDeclaration(const CallBase &CB, const Function &Callee);
  void visitAccesses(const Instruction &I);
};

} // namespace

void LegalityScanner::scan() {
  SmallPtrSet<const Instruction *, 8> CombinedAtomics;
  findCombined(Kernel, Result.Combined, CombinedAtomics);
  SmallVector<const Function *, 8> Order;
  getReachableFunctions(Kernel, &Order);
  for (const Function *G : Order) {
    for (const Instruction &I : instructions(*G)) {
      if (const auto *CB = dyn_cast<CallBase>(&I))
        visitCall(*CB);
      if (const Value *Ptr = getAtomicPointer(I);
          Ptr && isGlobal(Ptr) && !CombinedAtomics.count(&I))
        add(LegalityIssueKind::GlobalAtomic, I, describe(I),
            /*ForbidsSplit=*/true, /*ForbidsCPU=*/false);
      visitAccesses(I);
    }
  }
}

void LegalityScanner::visitCall(const CallBase &CB) {
  if (CB.isInlineAsm())
    return visitInlineAsm(CB);
  const auto *Callee =
      dyn_cast<Function>(CB.getCalledOperand()->stripPointerCasts());
  if (!Callee) {
    add(LegalityIssueKind::ExternalCall, CB, "indirect call",
        /*ForbidsSplit=*/true, /*ForbidsCPU=*/true);
    return;
  }
  if (Callee->isIntrinsic())
    return visitIntrinsic(CB, *Callee);
  if (Callee->isDeclaration())
    return visitDeclaration(CB, *Callee);
  // Defined callees are scanned as part of the kernel.
}

void LegalityScanner::visitInlineAsm(const CallBase &CB) {
  // The CUDA headers' own idioms have a meaning that holds on every device
  // and for any block range; dead asm does nothing.
  if (isDeadAsm(CB) || matchHeaderAsm(CB))
    return;
  const auto *IA = cast<InlineAsm>(CB.getCalledOperand());
  StringRef Asm = IA->getAsmString();
  // One line, whitespace runs collapsed, bounded, so the printer keeps one
  // line per issue.
  std::string Text = "asm";
  SmallVector<StringRef, 16> Words;
  SplitString(Asm, Words, " \t\n\r");
  for (StringRef Word : Words)
    Text += (" " + Word).str();
  if (Text.size() > 60)
    Text = Text.substr(0, 57) + "...";

  // Recognized PTX gets its specific kind; any inline asm forbids both
  // (we cannot translate it for the CPU, nor know what it touches).
  LegalityIssueKind Kind = LegalityIssueKind::InlineAsm;
  // Clang 19 with CUDA 13 headers implements cooperative_groups grid sync
  // entirely in inline PTX: the grid workspace comes from %envreg1/2.
  if (Asm.contains("%envreg")) {
    Kind = LegalityIssueKind::GridSync;
    Text = "cooperative_groups grid sync (this_grid().sync()) needs the "
           "whole grid resident: " +
           Text;
  } else if (Asm.contains("%cluster") || Asm.contains("%nclusterid") ||
             Asm.contains("barrier.cluster") ||
             Asm.contains("shared::cluster")) {
    Kind = LegalityIssueKind::Cluster;
  } else if (Asm.contains("%smid") || Asm.contains("%nsmid") ||
             Asm.contains("%warpid") || Asm.contains("%nwarpid") ||
             Asm.contains("%gridid") || Asm.contains("%clock") ||
             Asm.contains("%globaltimer") || Asm.contains("%pm")) {
    Kind = LegalityIssueKind::HardwareRegister;
  }
  add(Kind, CB, Text, /*ForbidsSplit=*/true, /*ForbidsCPU=*/true);
}

void LegalityScanner::visitIntrinsic(const CallBase &CB,
                                     const Function &Callee) {
  StringRef Name = Callee.getName();
  if (Name == "llvm.readcyclecounter" || Name == "llvm.readsteadycounter") {
    add(LegalityIssueKind::HardwareRegister, CB, Name.str(),
        /*ForbidsSplit=*/true, /*ForbidsCPU=*/false);
    return;
  }
  if (!Name.consume_front("llvm.nvvm."))
    return;
  StringRef Full = Callee.getName();
  if (Name.starts_with("atomic.")) {
    if (isGlobal(CB.getArgOperand(0)))
      add(LegalityIssueKind::GlobalAtomic, CB, Full.str(),
          /*ForbidsSplit=*/true, /*ForbidsCPU=*/false);
    return;
  }
  if (Name.contains("cluster") || Name.starts_with("mapa") ||
      Name.starts_with("getctarank")) {
    // Blocks of a cluster share distributed shared memory and barriers, so
    // they must run together on one GPU; the CPU has no clusters.
    add(LegalityIssueKind::Cluster, CB, Full.str(), /*ForbidsSplit=*/true,
        /*ForbidsCPU=*/true);
    return;
  }
  StringRef Reg = Name;
  if (!Reg.consume_front("read.ptx.sreg."))
    return;
  if (Reg.starts_with("envreg")) {
    // Driver-provided launch environment; its only known use is the
    // cooperative-launch grid workspace behind grid.sync().
    add(LegalityIssueKind::GridSync, CB, Full.str(), /*ForbidsSplit=*/true,
        /*ForbidsCPU=*/true);
    return;
  }
  // Which SM or warp slot runs the code, and performance counters, are
  // meaningless once blocks move (and on the CPU). Clocks and timers still
  // tick on the CPU (the CPU variant maps them to host counters), but a
  // split kernel compares readings from different devices.
  enum class RegUse { None, SplitOnly, Both };
  RegUse Use = StringSwitch<RegUse>(Reg)
                   .Cases("smid", "nsmid", "warpid", "nwarpid", RegUse::Both)
                   .Cases("gridid", "pm0", "pm1", "pm2", "pm3", RegUse::Both)
                   .Cases("clock", "clock64", "globaltimer", RegUse::SplitOnly)
                   .Default(RegUse::None);
  if (Use != RegUse::None)
    add(LegalityIssueKind::HardwareRegister, CB, Full.str(),
        /*ForbidsSplit=*/true, /*ForbidsCPU=*/Use == RegUse::Both);
}

void LegalityScanner::visitDeclaration(const CallBase &CB,
                                       const Function &Callee) {
  StringRef Name = Callee.getName();
  // Resolved by NVVMReflect during code generation.
  if (Name == "__nvvm_reflect")
    return;
  if (Name.starts_with("cudaCG")) {
    // Pre-CUDA-12 cooperative groups reach the device runtime by name.
    add(LegalityIssueKind::GridSync, CB, Name.str(), /*ForbidsSplit=*/true,
        /*ForbidsCPU=*/true);
    return;
  }
  // The device runtime (cudadevrt) entry points that launch work, directly
  // or under their CDP2 names.
  if (Name.contains("LaunchDevice") || Name.contains("GetParameterBuffer") ||
      Name.starts_with("cudaGraphLaunch") || Name.starts_with("cudaStream") ||
      Name == "cudaDeviceSynchronize" || Name.starts_with("__cudaCDP2Stream")) {
    add(LegalityIssueKind::DynamicParallelism, CB, Name.str(),
        /*ForbidsSplit=*/true, /*ForbidsCPU=*/true);
    return;
  }
  // printf and assert only report: each device prints and asserts for its
  // own blocks (the CPU variant through the runtime's implementations), as
  // the blocks of one GPU do in an unspecified order.
  if (isDeviceReportFunction(Callee))
    return;
  add(LegalityIssueKind::ExternalCall, CB, demangle(Name.str()),
      /*ForbidsSplit=*/true, /*ForbidsCPU=*/true);
}

void LegalityScanner::visitAccesses(const Instruction &I) {
  const FunctionSet &Scope = Written.getScope();
  bool ReportedLoaded = false;
  forEachAccessedPointer(I, [&](const Value *Ptr, MemEffect Effect) {
    if (!isGlobal(Ptr))
      return;
    // Dereferencing a pointer the runtime never saw: the buffer behind it
    // has no footprint and no replica on other devices.
    if (!ReportedLoaded) {
      SmallVector<const Value *, 4> Objects;
      getKernelUnderlyingObjects(Ptr, Kernel, Scope, Objects);
      for (const Value *O : Objects) {
        // Buffers the runtime knows: pointer arguments and globals (and
        // private slots, for completeness).
        if ((isa<Argument>(O) && O->getType()->isPointerTy()) ||
            isa<GlobalValue>(O) || isa<AllocaInst>(O) ||
            isa<ConstantPointerNull>(O) || isa<UndefValue>(O))
          continue;
        // Opaque calls are refused on their own (external-call).
        if (const auto *CB = dyn_cast<CallBase>(O);
            CB && !isa<IntrinsicInst>(CB))
          continue;
        // What is left came from memory, or from an integer: a load, an
        // integer argument, a constant address. A load of a field of a
        // by-value struct parameter that the kernel never writes reads
        // the argument's bytes as the host passed them: the runtime can
        // translate the buffer addresses among them.
        add(isArgumentField(O) ? LegalityIssueKind::ArgumentPointer
                               : LegalityIssueKind::LoadedPointer,
            I, describe(I),
            /*ForbidsSplit=*/true, /*ForbidsCPU=*/false,
            dyn_cast<Instruction>(O));
        ReportedLoaded = true;
        break;
      }
    }
    if (!Effect.Write)
      return;
    // Where the store lands must be computable without the data the kernel
    // writes, or neither footprints nor merges can tell what a device wrote.
    const Instruction *Cause = Written.find(Ptr);
    if (!Cause)
      if (const auto *MI = dyn_cast<MemIntrinsic>(&I))
        Cause = Written.find(MI->getLength());
    if (Cause)
      add(LegalityIssueKind::DataDependentStore, I, describe(I),
          /*ForbidsSplit=*/true, /*ForbidsCPU=*/false, Cause);
  });
}

KernelLegality KernelLegalityAnalysis::run(Function &F,
                                           FunctionAnalysisManager &) {
  KernelLegality Result;
  if (!isKernel(F))
    return Result;
  LegalityScanner(F, Result).scan();
  return Result;
}

PreservedAnalyses KernelLegalityPrinterPass::run(Function &F,
                                                 FunctionAnalysisManager &FAM) {
  if (!isKernel(F))
    return PreservedAnalyses::all();
  OS << "cleave-legality: kernel '" << displayName(F) << "'\n";
  FAM.getResult<KernelLegalityAnalysis>(F).print(OS);
  return PreservedAnalyses::all();
}

} // namespace cleave
