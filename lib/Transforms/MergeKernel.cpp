//===- MergeKernel.cpp - SKMD merge-kernel generation ---------------------===//
//
// Part of Cleave. SKMD (digest 002 §3.4, §8.4) merges a GPU's partial
// outputs without recording the addresses it wrote: the merge kernel reruns
// the kernel's address computation for the GPU's block range and copies
// exactly those locations from the partial buffer into the output.
//
//  1. Merge-safety check on the original: every store into an output must
//     be matched to one output parameter, must not be atomic or volatile,
//     and its address and the branches that control it must not depend on
//     data the kernel writes (else the merge kernel would compute other
//     addresses than the kernel did).
//  2. Clone with clonePartitioned (same block decode as the partition-ready
//     variant) plus one partial parameter per output.
//  3. Each store into an output stores a load from the partial buffer at
//     the same address (the GEP chain rebased on the partial parameter);
//     memcpy/memset into outputs copy from the partial buffer.
//  4. Mark-sweep dead-code elimination (Cooper & Torczon, "Engineering a
//     Compiler", §10.2): live = the rewritten stores, the returns, their
//     backward data slices and the branches they are control dependent on.
//     Everything else, including other stores, atomics on shared memory,
//     shuffles and barriers, is deleted; dead branches jump towards the
//     exit. SimplifyCFG and InstCombine tidy up.
//
//===----------------------------------------------------------------------===//
#include "cleave/Transforms/MergeKernel.h"

#include "cleave/Analysis/KernelLegality.h"
#include "cleave/Analysis/ParamRoles.h"
#include "cleave/Analysis/VariantRefusals.h"
#include "cleave/Analysis/WrittenData.h"
#include "cleave/Support/KernelInfo.h"
#include "cleave/Transforms/PartitionReady.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/PostOrderIterator.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/SmallPtrSet.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/Analysis/OptimizationRemarkEmitter.h"
#include "llvm/Analysis/PostDominators.h"
#include "llvm/IR/CFG.h"
#include "llvm/IR/DiagnosticInfo.h"
#include "llvm/IR/Function.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/InstIterator.h"
#include "llvm/IR/Instructions.h"
#include "llvm/IR/IntrinsicInst.h"
#include "llvm/IR/Module.h"
#include "llvm/IR/Operator.h"
#include "llvm/Transforms/InstCombine/InstCombine.h"
#include "llvm/Transforms/Scalar/EarlyCSE.h"
#include "llvm/Transforms/Scalar/SimplifyCFG.h"
#include "llvm/Transforms/Utils/Local.h"

#include <optional>

using namespace llvm;

namespace cleave {

static constexpr const char *PassName = "cleave-merge";

// NVPTX address spaces of block-local memory: whatever a kernel stores there
// dies with the block, so the merge kernel drops it.
static constexpr unsigned SharedAS = 3;
static constexpr unsigned LocalAS = 5;

namespace {

/// The memory a pointer points into, traced through GEPs, casts, selects
/// and phis to its roots.
struct PointerBase {
  enum KindTy {
    Param,   ///< exactly one (non-byval) pointer parameter, ArgNo
    Local,   ///< shared memory, allocas, byval copies: per block or thread
    Unknown, ///< anything else, or a mix of roots
  } Kind;
  unsigned ArgNo = 0;
  bool MayBeShared = true; ///< false when known to be private memory
};

/// A store (or memory intrinsic) into an output parameter.
struct OutputWrite {
  Instruction *Inst;
  unsigned ArgNo;
};

/// Why a kernel gets no merge kernel.
struct Refusal {
  const Instruction *At;
  const char *RemarkName;
  std::string Message;
};

/// Control dependences from the post-dominator tree (Ferrante, Ottenstein
/// and Warren): block Y is control dependent on the terminator of X when Y
/// post-dominates a successor of X but does not strictly post-dominate X.
class ControlDependences {
  DenseMap<const BasicBlock *, SmallVector<BasicBlock *, 2>> Deps;

public:
  ControlDependences(Function &F, const PostDominatorTree &PDT) {
    for (BasicBlock &X : F) {
      if (X.getTerminator()->getNumSuccessors() < 2)
        continue;
      const DomTreeNode *XNode = PDT.getNode(&X);
      const DomTreeNode *Stop = XNode ? XNode->getIDom() : nullptr;
      SmallPtrSet<BasicBlock *, 4> SeenSucc;
      for (BasicBlock *S : successors(&X)) {
        if (!SeenSucc.insert(S).second)
          continue;
        for (const DomTreeNode *N = PDT.getNode(S); N && N != Stop;
             N = N->getIDom()) {
          BasicBlock *Y = N->getBlock();
          if (!Y) // The virtual root that joins several exits.
            break;
          auto &List = Deps[Y];
          if (!is_contained(List, &X))
            List.push_back(&X);
        }
      }
    }
  }

  /// The blocks whose terminators BB is directly control dependent on.
  ArrayRef<BasicBlock *> get(const BasicBlock *BB) const {
    auto It = Deps.find(BB);
    return It == Deps.end() ? ArrayRef<BasicBlock *>() : It->second;
  }

  /// Every block whose terminator decides, directly or through other
  /// branches, whether BB executes.
  SmallVector<BasicBlock *, 8> getTransitive(const BasicBlock *BB) const {
    SmallSetVector<BasicBlock *, 8> Result;
    SmallVector<const BasicBlock *, 8> Worklist{BB};
    while (!Worklist.empty())
      for (BasicBlock *X : get(Worklist.pop_back_val()))
        if (Result.insert(X))
          Worklist.push_back(X);
    return SmallVector<BasicBlock *, 8>(Result.begin(), Result.end());
  }
};

} // namespace

//===----------------------------------------------------------------------===//
// Pointer bases
//===----------------------------------------------------------------------===//

static PointerBase tracePointerBase(const Value *Ptr) {
  unsigned AS = Ptr->getType()->getPointerAddressSpace();
  if (AS == SharedAS)
    return {PointerBase::Local};
  if (AS == LocalAS)
    return {PointerBase::Local, 0, /*MayBeShared=*/false};

  std::optional<unsigned> Arg;
  bool SawLocal = false, SawShared = false;
  SmallVector<const Value *, 8> Worklist{Ptr};
  SmallPtrSet<const Value *, 16> Seen{Ptr};
  auto Push = [&](const Value *V) {
    if (Seen.insert(V).second)
      Worklist.push_back(V);
  };
  while (!Worklist.empty()) {
    const Value *V = Worklist.pop_back_val();
    if (const auto *A = dyn_cast<Argument>(V)) {
      if (A->hasByValAttr()) {
        SawLocal = true;
      } else {
        if (Arg && *Arg != A->getArgNo())
          return {PointerBase::Unknown};
        Arg = A->getArgNo();
      }
    } else if (isa<AllocaInst>(V)) {
      SawLocal = true;
    } else if (const auto *GV = dyn_cast<GlobalVariable>(V)) {
      if (GV->getAddressSpace() != SharedAS)
        return {PointerBase::Unknown};
      SawLocal = SawShared = true;
    } else if (const auto *GEP = dyn_cast<GEPOperator>(V)) {
      Push(GEP->getPointerOperand());
    } else if (isa<BitCastOperator>(V) || isa<AddrSpaceCastOperator>(V)) {
      Push(cast<Operator>(V)->getOperand(0));
    } else if (const auto *Sel = dyn_cast<SelectInst>(V)) {
      Push(Sel->getTrueValue());
      Push(Sel->getFalseValue());
    } else if (const auto *Phi = dyn_cast<PHINode>(V)) {
      for (const Value *In : Phi->incoming_values())
        Push(In);
    } else {
      // Loaded pointers, integer casts, calls: nothing to match.
      return {PointerBase::Unknown};
    }
  }
  if (Arg && SawLocal)
    return {PointerBase::Unknown};
  if (Arg)
    return {PointerBase::Param, *Arg, false};
  if (SawLocal)
    return {PointerBase::Local, 0, SawShared};
  return {PointerBase::Unknown};
}

/// Rebuilds the address computation of Ptr, which is rooted at From only,
/// on To: the same GEPs, casts, selects and phis, so the result points at
/// the same offset in To's buffer. Clones go right after their originals,
/// where all their operands are available.
static Value *rebasePointer(Value *Ptr, Argument *From, Argument *To,
                            DenseMap<Value *, Value *> &Memo) {
  if (Ptr == From)
    return To;
  if (Value *Done = Memo.lookup(Ptr))
    return Done;
  auto *I = cast<Instruction>(Ptr);
  Instruction *Copy = I->clone();
  Copy->setName(I->getName().empty() ? "" : I->getName() + ".partial");
  Copy->insertAfter(I);
  Memo[Ptr] = Copy;
  if (auto *Phi = dyn_cast<PHINode>(Copy)) {
    for (unsigned In = 0; In < Phi->getNumIncomingValues(); ++In)
      Phi->setIncomingValue(
          In, rebasePointer(Phi->getIncomingValue(In), From, To, Memo));
  } else if (auto *Sel = dyn_cast<SelectInst>(Copy)) {
    Sel->setTrueValue(rebasePointer(Sel->getTrueValue(), From, To, Memo));
    Sel->setFalseValue(rebasePointer(Sel->getFalseValue(), From, To, Memo));
  } else {
    // GEP, bitcast or addrspacecast: the pointer is operand 0.
    Copy->setOperand(0, rebasePointer(Copy->getOperand(0), From, To, Memo));
  }
  return Copy;
}

//===----------------------------------------------------------------------===//
// Merge-safety check
//===----------------------------------------------------------------------===//

static bool isBarrierOrFence(const CallBase &CB) {
  const Function *Callee = CB.getCalledFunction();
  if (!Callee || !Callee->isIntrinsic())
    return false;
  StringRef Name = Callee->getName();
  return Name.starts_with("llvm.nvvm.barrier") ||
         Name.starts_with("llvm.nvvm.bar.") ||
         Name.starts_with("llvm.nvvm.membar") ||
         Name.starts_with("llvm.nvvm.fence");
}

static std::string describeParam(const Function &F, unsigned ArgNo) {
  const Argument *A = F.getArg(ArgNo);
  if (A->hasName())
    return "'" + A->getName().str() + "'";
  return "#" + std::to_string(ArgNo);
}

static std::string describeLocation(const Instruction &I) {
  std::string S;
  raw_string_ostream OS(S);
  printLocation(OS, I);
  return S;
}

static std::string describeInst(const Instruction &I) {
  std::string S;
  raw_string_ostream OS(S);
  if (const auto *CB = dyn_cast<CallBase>(&I)) {
    OS << "call";
    if (const Function *Callee = CB->getCalledFunction())
      OS << " to '" << Callee->getName() << "'";
  } else if (const auto *RMW = dyn_cast<AtomicRMWInst>(&I)) {
    OS << "atomicrmw " << AtomicRMWInst::getOperationName(RMW->getOperation());
  } else {
    OS << I.getOpcodeName();
  }
  return OS.str() + describeLocation(I);
}

/// The write into an output that I makes, its refusal, or neither (I does
/// not write memory the merge kernel must reproduce).
static std::optional<Refusal>
classifyWrite(Instruction &I, const Function &F, const ParamRoles &Roles,
              SmallVectorImpl<OutputWrite> &Writes) {
  const Value *Dest = nullptr;
  bool Volatile = false, Atomic = false;
  if (auto *SI = dyn_cast<StoreInst>(&I)) {
    Dest = SI->getPointerOperand();
    Volatile = SI->isVolatile();
    Atomic = SI->isAtomic();
  } else if (auto *RMW = dyn_cast<AtomicRMWInst>(&I)) {
    Dest = RMW->getPointerOperand();
    Atomic = true;
  } else if (auto *CX = dyn_cast<AtomicCmpXchgInst>(&I)) {
    Dest = CX->getPointerOperand();
    Atomic = true;
  } else if (auto *MI = dyn_cast<AnyMemIntrinsic>(&I)) {
    Dest = MI->getRawDest();
    Atomic = isa<AtomicMemIntrinsic>(MI);
    Volatile = !Atomic && cast<MemIntrinsic>(MI)->isVolatile();
  } else if (auto *CB = dyn_cast<CallBase>(&I)) {
    if (CB->onlyReadsMemory() || CB->onlyAccessesInaccessibleMemory() ||
        isBarrierOrFence(*CB) || isa<DbgInfoIntrinsic>(CB))
      return std::nullopt;
    if (!CB->onlyAccessesArgMemory())
      return Refusal{&I, "OpaqueCall",
                     describeInst(I) + " may write memory the merge kernel "
                                       "cannot attribute to an output"};
    for (const Use &U : CB->args()) {
      unsigned ArgNo = CB->getArgOperandNo(&U);
      if (!U->getType()->isPointerTy() || CB->onlyReadsMemory(ArgNo))
        continue;
      if (tracePointerBase(U.get()).Kind != PointerBase::Local)
        return Refusal{&I, "OpaqueCall",
                       describeInst(I) + " may write an output" +
                           (isa<IntrinsicInst>(CB) ? "" : "; inline it")};
    }
    return std::nullopt;
  } else {
    return std::nullopt;
  }

  PointerBase Base = tracePointerBase(Dest);
  if (Base.Kind == PointerBase::Local)
    return std::nullopt;
  if (Base.Kind == PointerBase::Unknown)
    return Refusal{&I, "UnknownStoreBase",
                   describeInst(I) + " writes through a pointer that cannot "
                                     "be traced to exactly one parameter"};
  std::string Param = describeParam(F, Base.ArgNo);
  if (!Roles.isOutput(Base.ArgNo))
    return Refusal{&I, "UnknownStoreBase",
                   describeInst(I) + " writes parameter " + Param +
                       ", which is not classified as an output"};
  if (Atomic)
    return Refusal{&I, "AtomicOutput",
                   "atomic " + describeInst(I) + " into output " + Param +
                       ": the result depends on the order of the updates"};
  if (Volatile)
    return Refusal{&I, "VolatileOutput",
                   "volatile " + describeInst(I) + " into output " + Param};
  Writes.push_back({&I, Base.ArgNo});
  return std::nullopt;
}

/// The values that decide where W writes: the address (and length).
static SmallVector<const Value *, 2> getAddressOperands(const Instruction &I) {
  if (const auto *SI = dyn_cast<StoreInst>(&I))
    return {SI->getPointerOperand()};
  const auto *MI = cast<MemIntrinsic>(&I);
  return {MI->getRawDest(), MI->getLength()};
}

/// Step 1: collects the writes into outputs of K, or the first reason it
/// cannot be merged.
static std::optional<Refusal>
checkMergeSafety(Function &K, const ParamRoles &Roles,
                 const PostDominatorTree &PDT,
                 SmallVectorImpl<OutputWrite> &Writes) {
  for (Instruction &I : instructions(K))
    if (std::optional<Refusal> R = classifyWrite(I, K, Roles, Writes))
      return R;

  // Stores share index computations and branches: ask once per value.
  DenseMap<const Value *, const Instruction *> Deps;
  auto FindDep = [&](const Value *V) {
    auto [It, New] = Deps.try_emplace(V, nullptr);
    if (New)
      It->second = findWrittenDataDependence(V, K);
    return It->second;
  };
  ControlDependences CD(K, PDT);
  for (const OutputWrite &W : Writes) {
    std::string Param = describeParam(K, W.ArgNo);
    for (const Value *Addr : getAddressOperands(*W.Inst))
      if (const Instruction *Dep = FindDep(Addr))
        return Refusal{W.Inst, "DataDependentAddress",
                       "the address of " + describeInst(*W.Inst) +
                           " into output " + Param +
                           " depends on data the kernel writes (" +
                           describeInst(*Dep) + ")"};
    for (BasicBlock *Ctl : CD.getTransitive(W.Inst->getParent())) {
      const Instruction *Term = Ctl->getTerminator();
      for (const Value *Op : Term->operands()) {
        if (isa<BasicBlock>(Op))
          continue;
        if (const Instruction *Dep = FindDep(Op))
          return Refusal{W.Inst, "DataDependentPredicate",
                         describeInst(*W.Inst) + " into output " + Param +
                             " is controlled by a branch" +
                             describeLocation(*Term) +
                             " that depends on data the kernel writes (" +
                             describeInst(*Dep) + ")"};
      }
    }
  }
  return std::nullopt;
}

//===----------------------------------------------------------------------===//
// Rewrite and mark-sweep
//===----------------------------------------------------------------------===//

/// Step 3: makes W copy from Partial at the address it writes in Output.
/// Returns the instruction that now performs the write.
static Instruction *rewriteWrite(Instruction *W, Argument *Output,
                                 Argument *Partial,
                                 DenseMap<Value *, Value *> &Memo) {
  if (auto *SI = dyn_cast<StoreInst>(W)) {
    Value *From = rebasePointer(SI->getPointerOperand(), Output, Partial, Memo);
    auto *Load =
        new LoadInst(SI->getValueOperand()->getType(), From, "cleave.partial",
                     /*isVolatile=*/false, SI->getAlign(), SI->getIterator());
    Load->setDebugLoc(SI->getDebugLoc());
    SI->setOperand(0, Load);
    return SI;
  }
  if (auto *MT = dyn_cast<MemTransferInst>(W)) {
    MT->setSource(rebasePointer(MT->getRawDest(), Output, Partial, Memo));
    if (MaybeAlign A = MT->getDestAlign())
      MT->setSourceAlignment(*A);
    return MT;
  }
  // memset(out + i, v, n) becomes memcpy(out + i, partial + i, n): the value
  // stored is whatever the partial buffer holds.
  auto *MS = cast<MemSetInst>(W);
  IRBuilder<> B(MS);
  Value *From = rebasePointer(MS->getRawDest(), Output, Partial, Memo);
  CallInst *Copy = B.CreateMemCpy(MS->getRawDest(), MS->getDestAlign(), From,
                                  MS->getDestAlign(), MS->getLength());
  Copy->setDebugLoc(MS->getDebugLoc());
  MS->eraseFromParent();
  return Copy;
}

/// True when I may read shared memory.
static bool mayReadShared(const Instruction &I) {
  if (const auto *LI = dyn_cast<LoadInst>(&I))
    return tracePointerBase(LI->getPointerOperand()).MayBeShared;
  if (const auto *CB = dyn_cast<CallBase>(&I)) {
    if (CB->onlyWritesMemory() || CB->onlyAccessesInaccessibleMemory() ||
        isBarrierOrFence(*CB))
      return false;
    if (!CB->onlyAccessesArgMemory())
      return true;
    // E.g. the rewritten memcpy, which reads the partial buffer.
    for (const Use &U : CB->args())
      if (U->getType()->isPointerTy() &&
          !CB->onlyWritesMemory(CB->getArgOperandNo(&U)) &&
          tracePointerBase(U.get()).MayBeShared)
        return true;
    return false;
  }
  return I.mayReadFromMemory();
}

/// Step 4: keeps Roots, the returns, their backward slices and the branches
/// they depend on; deletes the rest.
static void markAndSweep(Function &F, ArrayRef<Instruction *> Roots) {
  PostDominatorTree PDT(F);
  ControlDependences CD(F, PDT);

  // Numbering of the blocks in post-order of the reverse CFG from the
  // exits: a dead branch jumps to its successor with the highest number,
  // which is strictly closer to an exit, so the rewrite creates no cycle
  // (the same choice as LLVM's ADCE).
  DenseMap<const BasicBlock *, unsigned> PostOrder;
  {
    SmallPtrSet<BasicBlock *, 16> Visited;
    unsigned N = 1;
    for (BasicBlock &BB : F)
      if (succ_empty(&BB))
        for (BasicBlock *Block : inverse_post_order_ext(&BB, Visited))
          PostOrder[Block] = N++;
  }

  SmallPtrSet<Instruction *, 32> Live;
  SmallPtrSet<const BasicBlock *, 16> LiveBlocks;
  SmallVector<Instruction *, 64> Worklist;
  auto MarkInst = [&](Instruction *I) {
    if (Live.insert(I).second)
      Worklist.push_back(I);
  };
  // A block that executes needs the branches that decide it executes.
  auto MarkBlock = [&](BasicBlock *BB) {
    if (!LiveBlocks.insert(BB).second)
      return;
    for (BasicBlock *Ctl : CD.get(BB))
      MarkInst(Ctl->getTerminator());
  };

  for (Instruction *R : Roots)
    MarkInst(R);
  MarkBlock(&F.getEntryBlock());
  for (BasicBlock &BB : F) {
    Instruction *Term = BB.getTerminator();
    if (isa<ReturnInst>(Term))
      MarkInst(Term);
    // A block from which no exit is reachable keeps its branch: there is no
    // successor to prefer (ADCE does the same).
    if (!PostOrder.count(&BB) && Term->getNumSuccessors() > 1)
      MarkInst(Term);
  }

  bool BarriersLive = false;
  for (;;) {
    while (!Worklist.empty()) {
      Instruction *I = Worklist.pop_back_val();
      MarkBlock(I->getParent());
      for (Value *Op : I->operands())
        if (auto *OpI = dyn_cast<Instruction>(Op))
          MarkInst(OpI);
      // Which value a phi takes depends on the edge control arrived on.
      if (auto *Phi = dyn_cast<PHINode>(I))
        for (BasicBlock *Pred : Phi->blocks())
          MarkBlock(Pred);
    }
    // The merge-safety check leaves no live read of memory the kernel
    // writes; should a live instruction still read shared memory, keep the
    // barriers that order it.
    if (BarriersLive ||
        none_of(Live, [](const Instruction *I) { return mayReadShared(*I); }))
      break;
    BarriersLive = true;
    for (Instruction &I : instructions(F))
      if (auto *CB = dyn_cast<CallBase>(&I); CB && isBarrierOrFence(*CB))
        MarkInst(&I);
  }

  // Sweep: dead conditional branches become jumps towards the exit...
  for (BasicBlock &BB : F) {
    Instruction *Term = BB.getTerminator();
    if (Live.contains(Term) || Term->getNumSuccessors() < 2)
      continue;
    BasicBlock *Preferred = nullptr;
    for (BasicBlock *Succ : successors(&BB))
      if (!Preferred || PostOrder.lookup(Succ) > PostOrder.lookup(Preferred))
        Preferred = Succ;
    bool Kept = false;
    for (BasicBlock *Succ : successors(&BB)) {
      if (Succ == Preferred && !Kept) {
        Kept = true;
        continue;
      }
      Succ->removePredecessor(&BB);
    }
    BranchInst *Br = BranchInst::Create(Preferred, Term->getIterator());
    Br->setDebugLoc(Term->getDebugLoc());
    Term->eraseFromParent();
  }
  // ...and every other dead instruction goes.
  SmallVector<Instruction *, 64> Dead;
  for (Instruction &I : instructions(F))
    if (!I.isTerminator() && !Live.contains(&I))
      Dead.push_back(&I);
  for (Instruction *I : Dead) {
    salvageDebugInfo(*I);
    I->dropAllReferences();
  }
  for (Instruction *I : Dead) {
    I->replaceAllUsesWith(PoisonValue::get(I->getType()));
    I->eraseFromParent();
  }
}

//===----------------------------------------------------------------------===//
// The pass
//===----------------------------------------------------------------------===//

static std::string partialParamName(const Function &K, unsigned ArgNo) {
  const Argument *A = K.getArg(ArgNo);
  return PartialParamPrefix +
         (A->hasName() ? A->getName().str() : std::to_string(ArgNo));
}

/// Builds the merge kernel of K for the output parameters Outputs and the
/// writes into them that the safety check collected.
static Function *buildMergeKernel(Function &K, ArrayRef<unsigned> Outputs,
                                  ArrayRef<OutputWrite> Writes,
                                  FunctionAnalysisManager &FAM) {
  SmallVector<ExtraParam, 4> Extra;
  for (unsigned ArgNo : Outputs)
    Extra.push_back(
        {K.getArg(ArgNo)->getType(), partialParamName(K, ArgNo), int(ArgNo)});
  ValueToValueMapTy VMap;
  Function *Merge =
      clonePartitioned(K, mergeVariantName(K.getName()), Extra, &VMap);
  if (!Merge)
    return nullptr;
  Merge->addFnAttr(VariantAttr, "merge");
  // The merge kernel reads the partial buffers, whatever the original did.
  MemoryEffects ME = Merge->getMemoryEffects();
  if (!isRefSet(ME.getModRef(IRMemLocation::ArgMem)))
    Merge->setMemoryEffects(ME | MemoryEffects::argMemOnly(ModRefInfo::Ref));

  // The partial buffers are host or device temporaries of their own that
  // the merge kernel only reads.
  DenseMap<unsigned, Argument *> PartialOf;
  for (auto [I, ArgNo] : enumerate(Outputs)) {
    Argument *P = Merge->getArg(K.arg_size() + I);
    P->addAttr(Attribute::NoAlias);
    P->addAttr(Attribute::NoCapture);
    P->addAttr(Attribute::ReadOnly);
    P->addAttr(Attribute::NoUndef);
    PartialOf[ArgNo] = P;
  }

  SmallVector<Instruction *, 16> Roots;
  DenseMap<unsigned, DenseMap<Value *, Value *>> Memos;
  for (const OutputWrite &W : Writes) {
    auto *Inst = cast<Instruction>(VMap.lookup(W.Inst));
    Roots.push_back(rewriteWrite(Inst, Merge->getArg(W.ArgNo),
                                 PartialOf[W.ArgNo], Memos[W.ArgNo]));
  }
  markAndSweep(*Merge, Roots);

  FunctionPassManager Cleanup;
  Cleanup.addPass(SimplifyCFGPass());
  Cleanup.addPass(InstCombinePass());
  Cleanup.addPass(EarlyCSEPass());
  Cleanup.addPass(SimplifyCFGPass());
  Cleanup.run(*Merge, FAM);
  return Merge;
}

PreservedAnalyses MergeKernelPass::run(Module &M, ModuleAnalysisManager &MAM) {
  FunctionAnalysisManager &FAM =
      MAM.getResult<FunctionAnalysisManagerModuleProxy>(M).getManager();
  VariantRefusals &Refusals = MAM.getResult<VariantRefusalAnalysis>(M);
  bool Changed = false;
  for (Function *K : getKernels(M)) {
    auto &ORE = FAM.getResult<OptimizationRemarkEmitterAnalysis>(*K);
    const KernelLegality &Legality = FAM.getResult<KernelLegalityAnalysis>(*K);
    if (!Legality.canSplit()) {
      // A kernel that runs whole on one device has nothing to merge.
      OptimizationRemarkMissed R = notSplittableRemark(*K, Legality, PassName);
      Refusals.record(K->getName(), RefusedVariant::Merge, R);
      ORE.emit(R);
      continue;
    }
    const ParamRoles &Roles = FAM.getResult<ParamRoleAnalysis>(*K);
    SmallVector<unsigned, 4> Outputs;
    for (unsigned I = 0; I < K->arg_size(); ++I)
      if (Roles.isOutput(I))
        Outputs.push_back(I);
    if (Outputs.empty()) {
      OptimizationRemarkAnalysis R(PassName, "NoOutputs", K);
      R << "kernel '" << displayName(*K)
        << "' writes no parameter: no merge kernel";
      Refusals.record(K->getName(), RefusedVariant::Merge, R);
      ORE.emit(R);
      continue;
    }
    if (M.getFunction(mergeVariantName(K->getName())))
      continue; // Made by an earlier run of the pass.

    std::optional<Refusal> Refused;
    SmallVector<OutputWrite, 8> Writes;
    if (const Instruction *Call = findUnremappableCall(*K))
      Refused = Refusal{Call, "NotRemappable",
                        "a call that cannot be inlined may read the block "
                        "index or grid size"};
    else
      Refused = checkMergeSafety(
          *K, Roles, FAM.getResult<PostDominatorTreeAnalysis>(*K), Writes);
    if (Refused) {
      OptimizationRemarkMissed R(PassName, Refused->RemarkName,
                                 userLocation(*Refused->At),
                                 Refused->At->getParent());
      R << "kernel '" << displayName(*K)
        << "' gets no merge kernel: " << Refused->Message;
      Refusals.record(K->getName(), RefusedVariant::Merge, R);
      ORE.emit(R);
      continue;
    }

    Function *Merge = buildMergeKernel(*K, Outputs, Writes, FAM);
    if (!Merge)
      continue;
    Changed = true;
    ORE.emit([&] {
      std::string Params;
      for (unsigned ArgNo : Outputs)
        Params += (Params.empty() ? "" : ", ") + describeParam(*K, ArgNo);
      return OptimizationRemark(PassName, "MergeKernel", K)
             << "kernel '" << displayName(*K) << "': created '"
             << Merge->getName() << "' copying "
             << std::to_string(Writes.size()) << " write(s) into output(s) "
             << Params << " from partial buffers";
    });
  }
  return Changed ? PreservedAnalyses::none() : PreservedAnalyses::all();
}

} // namespace cleave
