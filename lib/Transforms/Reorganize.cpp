//===- Reorganize.cpp - Inspector and reorganized variants ----------------===//
//
// Part of Cleave. See Reorganize.h.
//
//===----------------------------------------------------------------------===//
#include "cleave/Transforms/Reorganize.h"

#include "cleave/Analysis/ItemLoops.h"
#include "cleave/Analysis/ParamRoles.h"
#include "cleave/Analysis/WrittenData.h"
#include "cleave/Support/KernelInfo.h"

#include "llvm/Analysis/OptimizationRemarkEmitter.h"
#include "llvm/Analysis/ValueTracking.h"
#include "llvm/IR/DebugInfoMetadata.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/InstIterator.h"
#include "llvm/IR/Instructions.h"
#include "llvm/IR/IntrinsicInst.h"
#include "llvm/IR/Module.h"
#include "llvm/Transforms/Utils/Cloning.h"

using namespace llvm;

namespace cleave {

static constexpr const char *PassName = "cleave-reorganize";

std::string inspectorVariantName(StringRef Kernel) {
  return ("__cleave_tc_" + Kernel).str();
}

std::string reorganizedVariantName(StringRef Kernel) {
  return ("__cleave_ro_" + Kernel).str();
}

std::string countingVariantName(StringRef Kernel) {
  return ("__cleave_tci_" + Kernel).str();
}

namespace {

/// A clone of Kernel named Name with one pointer parameter appended (named
/// Extra), marked as a Cleave variant of Kind; VMap maps the kernel's
/// values to the clone's.
Function *cloneWithPointer(Function &Kernel, StringRef Name, StringRef Extra,
                           StringRef Kind, ValueToValueMapTy &VMap) {
  Module &M = *Kernel.getParent();
  FunctionType *OldTy = Kernel.getFunctionType();
  SmallVector<Type *, 16> Params(OldTy->params());
  Params.push_back(PointerType::get(M.getContext(), 0));
  auto *NewTy = FunctionType::get(OldTy->getReturnType(), Params, false);
  Function *NewF = Function::Create(NewTy, GlobalValue::ExternalLinkage,
                                    Kernel.getAddressSpace(), Name, &M);
  for (Argument &A : Kernel.args()) {
    NewF->getArg(A.getArgNo())->setName(A.getName());
    VMap[&A] = NewF->getArg(A.getArgNo());
  }
  SmallVector<ReturnInst *, 4> Returns;
  CloneFunctionInto(NewF, &Kernel, VMap,
                    CloneFunctionChangeType::LocalChangesOnly, Returns);
  // The runtime looks variants up by name: external and visible.
  NewF->setLinkage(GlobalValue::ExternalLinkage);
  NewF->setVisibility(GlobalValue::DefaultVisibility);
  // The new parameter is read or written: the kernel's memory summary no
  // longer holds.
  NewF->removeFnAttr(Attribute::Memory);
  if (DISubprogram *SP = NewF->getSubprogram())
    if (SP != Kernel.getSubprogram() && !SP->getLinkageName().empty())
      SP->replaceLinkageName(MDString::get(M.getContext(), NewF->getName()));
  Argument *P = NewF->getArg(OldTy->getNumParams());
  P->setName(Extra);
  P->addAttr(Attribute::NoUndef);
  NewF->addFnAttr(VariantAttr, Kind);
  NewF->addFnAttr(OriginAttr, Kernel.getName());
  markAsKernelLike(*NewF, Kernel);
  return NewF;
}

/// The address of Base[Index] for 32-bit elements.
Value *elementAddress(IRBuilder<> &B, Value *Base, Value *Index) {
  Value *Wide = B.CreateSExtOrTrunc(Index, B.getInt64Ty());
  return B.CreateInBoundsGEP(B.getInt32Ty(), Base, Wide);
}

void makeReorganized(Function &Kernel, const ItemLoopInfo &Info) {
  ValueToValueMapTy VMap;
  Function *F =
      cloneWithPointer(Kernel, reorganizedVariantName(Kernel.getName()), "perm",
                       "reorganized", VMap);
  auto *Index = cast<Instruction>(VMap[Info.ItemIndex]);
  IRBuilder<> B(Index->getNextNode());
  B.SetCurrentDebugLocation(Index->getDebugLoc());
  Value *Wide = B.CreateSExtOrTrunc(Index, B.getInt64Ty());
  Value *Addr =
      B.CreateInBoundsGEP(B.getInt32Ty(), F->getArg(F->arg_size() - 1), Wide);
  LoadInst *Item = B.CreateLoad(B.getInt32Ty(), Addr, "item");
  Item->setMetadata(LLVMContext::MD_invariant_load,
                    MDNode::get(F->getContext(), {}));
  Value *Mapped = B.CreateSExtOrTrunc(Item, Index->getType());
  // Every use of the index but perm's own address: the item's state, its
  // inputs and outputs, and the bounds guard.
  Index->replaceUsesWithIf(Mapped, [&](Use &U) {
    return U.getUser() != Wide && U.getUser() != Addr;
  });
}

bool isPrivateOrShared(const Value *Ptr, const Function &F,
                       const FunctionSet &Scope) {
  if (isa<AllocaInst>(getUnderlyingObject(Ptr)))
    return true;
  PointerSpace S = getPointerSpace(Ptr, F, Scope);
  return S == PointerSpace::Private || S == PointerSpace::Shared;
}

/// A clone of Kernel counting the iterations of its per-item loops into
/// counts[item]; with DropOutputs, the inspector, else the instrumented
/// kernel the tests compare it with.
void makeCounter(Function &Kernel, const ItemLoopInfo &Info, StringRef Name,
                 StringRef Kind, bool DropOutputs) {
  ValueToValueMapTy VMap;
  Function *F = cloneWithPointer(Kernel, Name, "counts", Kind, VMap);
  // The outputs: every store that leaves the thread and its block.
  FunctionSet Scope = getReachableFunctions(*F);
  SmallVector<Instruction *, 8> Dead;
  if (DropOutputs)
    for (Instruction &I : instructions(*F)) {
      if (auto *SI = dyn_cast<StoreInst>(&I)) {
        if (!isPrivateOrShared(SI->getPointerOperand(), *F, Scope))
          Dead.push_back(SI);
      } else if (auto *MI = dyn_cast<MemIntrinsic>(&I)) {
        if (!isPrivateOrShared(MI->getDest(), *F, Scope))
          Dead.push_back(MI);
      }
    }
  for (Instruction *I : Dead)
    I->eraseFromParent();

  // The count lives in a private slot: zero on entry, one more at every
  // execution of a per-item loop's header (an unrolled loop counts its
  // unrolled iterations: the work the lanes execute), written out before
  // every return.
  IRBuilder<> B(&*F->getEntryBlock().getFirstInsertionPt());
  AllocaInst *Slot = B.CreateAlloca(B.getInt32Ty(), nullptr, "trips");
  B.CreateStore(B.getInt32(0), Slot);
  for (const ItemLoop &L : Info.Loops) {
    if (!L.ItemDependent)
      continue;
    auto *Header = cast<BasicBlock>(VMap[L.Header]);
    B.SetInsertPoint(&*Header->getFirstInsertionPt());
    Value *N = B.CreateLoad(B.getInt32Ty(), Slot);
    B.CreateStore(B.CreateAdd(N, B.getInt32(1)), Slot);
  }
  auto *Index = cast<Instruction>(VMap[Info.ItemIndex]);
  Argument *Counts = F->getArg(F->arg_size() - 1);
  for (BasicBlock &BB : *F)
    if (auto *Ret = dyn_cast<ReturnInst>(BB.getTerminator())) {
      // The index dominates every return (ItemLoopAnalysis checks it).
      B.SetInsertPoint(Ret);
      B.CreateStore(B.CreateLoad(B.getInt32Ty(), Slot),
                    elementAddress(B, Counts, Index));
    }
}

/// Emits the missed remark for a kernel with per-item loops and no
/// variants; returns false when the kernel has none (no remark: nothing to
/// reorganize).
bool explainMissed(Function &K, const ItemLoopInfo &Info,
                   OptimizationRemarkEmitter &ORE) {
  const ItemLoop *Refused = nullptr;
  for (const ItemLoop &L : Info.Loops)
    if (!L.predictable() && !Refused)
      Refused = &L;
  const Instruction *At = nullptr;
  std::string Why;
  if (!Refused && Info.candidate()) {
    At = Info.ReorganizeBlocker;
    Why = Info.ReorganizeWhy;
  } else if (Refused) {
    At = Refused->At;
    Why =
        "the trip count of this loop cannot be computed ahead: " + Refused->Why;
    if (Refused->Blocker) {
      std::string S;
      raw_string_ostream OS(S);
      printLocation(OS, *Refused->Blocker);
      Why += OS.str();
    }
  } else {
    return false;
  }
  ORE.emit([&] {
    OptimizationRemarkMissed R =
        At ? OptimizationRemarkMissed(PassName, "NotReorganized",
                                      userLocation(*At), At->getParent())
           : OptimizationRemarkMissed(PassName, "NotReorganized", &K);
    return R << "kernel '" << displayName(K)
             << "' gets no reorganized variant: " << Why;
  });
  return true;
}

} // namespace

PreservedAnalyses ReorganizePass::run(Module &M, ModuleAnalysisManager &MAM) {
  FunctionAnalysisManager &FAM =
      MAM.getResult<FunctionAnalysisManagerModuleProxy>(M).getManager();
  bool Changed = false;
  for (Function *K : getKernels(M)) {
    if (isSwappedTwin(*K) ||
        M.getFunction(reorganizedVariantName(K->getName())))
      continue;
    const ItemLoopInfo &Info = FAM.getResult<ItemLoopAnalysis>(*K);
    auto &ORE = FAM.getResult<OptimizationRemarkEmitterAnalysis>(*K);
    // The inspector runs every loop of the kernel with its outputs dropped:
    // each must be predictable, or it might not end.
    const ItemLoop *Loop = Info.candidate();
    bool AllPredictable = llvm::all_of(
        Info.Loops, [](const ItemLoop &L) { return L.predictable(); });
    if (!Loop || !AllPredictable || !Info.ReorganizeWhy.empty()) {
      explainMissed(*K, Info, ORE);
      continue;
    }
    makeCounter(*K, Info, inspectorVariantName(K->getName()), "inspector",
                /*DropOutputs=*/true);
    if (Instrumented)
      makeCounter(*K, Info, countingVariantName(K->getName()), "instrumented",
                  /*DropOutputs=*/false);
    makeReorganized(*K, Info);
    Changed = true;
    ORE.emit([&] {
      return OptimizationRemark(PassName, "Reorganized",
                                userLocation(*Loop->At), Loop->At->getParent())
             << "kernel '" << displayName(*K) << "': created '"
             << inspectorVariantName(K->getName()) << "' (trip counts) and '"
             << reorganizedVariantName(K->getName())
             << "' (items permuted by trip count)";
    });
  }
  return Changed ? PreservedAnalyses::none() : PreservedAnalyses::all();
}

} // namespace cleave
