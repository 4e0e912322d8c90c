//===- WrittenData.cpp - Values that depend on data a kernel writes -------===//
//
// Part of Cleave. A value is recomputable by another device (for footprints
// and merge kernels) when its backward slice only reads memory the kernel
// never writes. "Written" uses the same pointer walk as ParamRoles
// (analyzePointerAccess), applied to the kernel's pointer arguments, to the
// globals it reaches and to its allocas.
//
//===----------------------------------------------------------------------===//
#include "cleave/Analysis/WrittenData.h"

#include "cleave/Analysis/HeaderAsm.h"

#include "llvm/Analysis/PostDominators.h"
#include "llvm/Analysis/ValueTracking.h"
#include "llvm/IR/Constants.h"
#include "llvm/IR/Function.h"
#include "llvm/IR/GlobalVariable.h"
#include "llvm/IR/InstIterator.h"
#include "llvm/IR/Instructions.h"
#include "llvm/IR/IntrinsicInst.h"
#include "llvm/IR/Module.h"
#include "llvm/IR/Operator.h"

using namespace llvm;

namespace cleave {

// NVPTX address spaces (llvm/Support/NVPTXAddrSpace.h is not installed).
enum : unsigned {
  GenericAS = 0,
  GlobalAS = 1,
  SharedAS = 3,
  ConstantAS = 4,
  LocalAS = 5,
  ParamAS = 101,
};

static const Function *getDefinedCallee(const CallBase &CB) {
  const Function *Callee = CB.getCalledFunction();
  if (!Callee || Callee->isDeclaration() || Callee->isIntrinsic())
    return nullptr;
  return Callee;
}

/// Call sites of G inside Scope, or false when G is also reached some other
/// way (its address is taken), so that its arguments cannot be traced.
static bool getCallSites(const Function &G, const FunctionSet &Scope,
                         SmallVectorImpl<const CallBase *> &Sites) {
  for (const Use &U : G.uses()) {
    const auto *CB = dyn_cast<CallBase>(U.getUser());
    if (!CB || !CB->isCallee(&U))
      return false;
    if (Scope.contains(CB->getFunction()))
      Sites.push_back(CB);
  }
  return true;
}

void getKernelUnderlyingObjects(const Value *Ptr, const Function &Kernel,
                                const FunctionSet &Scope,
                                SmallVectorImpl<const Value *> &Objects) {
  SmallVector<const Value *, 8> Work{Ptr};
  SmallPtrSet<const Value *, 16> Seen{Ptr};
  SmallPtrSet<const Value *, 16> Reported;
  auto Push = [&](const Value *V) {
    if (Seen.insert(V).second)
      Work.push_back(V);
  };
  auto Report = [&](const Value *V) {
    if (Reported.insert(V).second)
      Objects.push_back(V);
  };

  // The integer operands of an inttoptr: a ptrtoint gives the pointer back
  // and the other leaves are then offsets (integer address arithmetic has
  // one base, like a GEP); with no ptrtoint, every leaf we cannot place is
  // reported (a loaded integer, an integer argument, a constant address).
  auto TraceInteger = [&](const Operator *IntToPtr) {
    SmallVector<const Value *, 8> IntWork{IntToPtr->getOperand(0)};
    SmallPtrSet<const Value *, 8> IntSeen{IntToPtr->getOperand(0)};
    SmallVector<const Value *, 4> Leaves;
    bool FoundBase = false;
    while (!IntWork.empty()) {
      const Value *X = IntWork.pop_back_val();
      auto PushInt = [&](const Value *Y) {
        if (IntSeen.insert(Y).second)
          IntWork.push_back(Y);
      };
      if (isa<ConstantInt>(X))
        continue;
      if (Operator::getOpcode(X) == Instruction::PtrToInt) {
        Push(cast<Operator>(X)->getOperand(0));
        FoundBase = true;
        continue;
      }
      const auto *Op = dyn_cast<Operator>(X);
      if (Op &&
          (isa<CastInst>(X) || isa<ConstantExpr>(X) || isa<BinaryOperator>(X) ||
           isa<FreezeInst>(X) || isa<PHINode>(X))) {
        for (const Value *Operand : Op->operands())
          PushInt(Operand);
        continue;
      }
      if (const auto *Sel = dyn_cast<SelectInst>(X)) {
        PushInt(Sel->getTrueValue());
        PushInt(Sel->getFalseValue());
        continue;
      }
      // Pure integer intrinsics (umin, smax, ...) compute on their operands.
      if (const auto *II = dyn_cast<IntrinsicInst>(X);
          II && II->doesNotAccessMemory()) {
        for (const Value *Arg : II->args())
          PushInt(Arg);
        continue;
      }
      Leaves.push_back(X);
    }
    if (FoundBase)
      return;
    for (const Value *Leaf : Leaves)
      Report(Leaf);
    if (Leaves.empty())
      Report(IntToPtr);
  };

  while (!Work.empty()) {
    const Value *P = Work.pop_back_val();
    SmallVector<const Value *, 4> Objs;
    getUnderlyingObjects(P, Objs, nullptr, /*MaxLookup=*/0);
    for (const Value *O : Objs) {
      if (const auto *A = dyn_cast<Argument>(O)) {
        const Function *G = A->getParent();
        SmallVector<const CallBase *, 4> Sites;
        if (G != &Kernel && Scope.contains(G) && !A->hasByValAttr() &&
            getCallSites(*G, Scope, Sites)) {
          for (const CallBase *CB : Sites)
            Push(CB->getArgOperand(A->getArgNo()));
          continue;
        }
      } else if (const auto *CB = dyn_cast<CallBase>(O)) {
        if (const Function *Callee = getDefinedCallee(*CB)) {
          if (Scope.contains(Callee)) {
            for (const BasicBlock &BB : *Callee)
              if (const auto *Ret = dyn_cast<ReturnInst>(BB.getTerminator()))
                if (const Value *RV = Ret->getReturnValue())
                  Push(RV);
            continue;
          }
        }
      } else if (const auto *LI = dyn_cast<LoadInst>(O)) {
        // A pointer kept in a slot (private, or shared to broadcast it):
        // the slot holds only what the kernel stored into it.
        const Value *Slot = getUnderlyingObject(LI->getPointerOperand(), 0);
        SmallVector<const LoadInst *, 4> Loads;
        SmallVector<const StoreInst *, 4> Stores;
        if (getSlotLoadsAndStores(*Slot, Loads, Stores)) {
          for (const StoreInst *SI : Stores)
            Push(SI->getValueOperand());
          continue;
        }
      } else if (Operator::getOpcode(O) == Instruction::IntToPtr) {
        TraceInteger(cast<Operator>(O));
        continue;
      }
      Report(O);
    }
  }
}

static PointerSpace getSpaceOfAddrSpace(unsigned AS) {
  switch (AS) {
  case SharedAS:
    return PointerSpace::Shared;
  case LocalAS:
    return PointerSpace::Private;
  case ConstantAS:
  case ParamAS:
    return PointerSpace::Constant;
  default:
    return PointerSpace::Global;
  }
}

PointerSpace getPointerSpace(const Value *Ptr, const Function &Kernel,
                             const FunctionSet &Scope) {
  unsigned AS = Ptr->getType()->getPointerAddressSpace();
  if (AS != GenericAS)
    return getSpaceOfAddrSpace(AS);
  SmallVector<const Value *, 4> Objects;
  getKernelUnderlyingObjects(Ptr, Kernel, Scope, Objects);
  std::optional<PointerSpace> Common;
  for (const Value *O : Objects) {
    if (isa<ConstantPointerNull>(O) || isa<UndefValue>(O))
      continue;
    PointerSpace Space = PointerSpace::Global;
    if (O->getType()->isPointerTy() &&
        O->getType()->getPointerAddressSpace() != GenericAS)
      Space = getSpaceOfAddrSpace(O->getType()->getPointerAddressSpace());
    else if (isa<AllocaInst>(O))
      Space = PointerSpace::Private;
    else if (const auto *A = dyn_cast<Argument>(O); A && A->hasByValAttr())
      Space = PointerSpace::Private;
    else if (const auto *GV = dyn_cast<GlobalVariable>(O);
             GV && GV->isConstant())
      Space = PointerSpace::Constant;
    if (Common && *Common != Space)
      return PointerSpace::Global;
    Common = Space;
  }
  return Common.value_or(PointerSpace::Global);
}

//===----------------------------------------------------------------------===//
// WrittenDataFinder
//===----------------------------------------------------------------------===//

WrittenDataFinder::WrittenDataFinder(const Function &Kernel)
    : Kernel(Kernel), Scope(getReachableFunctions(Kernel)) {
  computeWrittenObjects();
}

WrittenDataFinder::~WrittenDataFinder() = default;

static bool isPlacedObject(const Value *O, const Function &Kernel) {
  if (const auto *A = dyn_cast<Argument>(O))
    return A->getParent() == &Kernel;
  return isa<GlobalVariable>(O) || isa<AllocaInst>(O) ||
         isa<ConstantPointerNull>(O) || isa<UndefValue>(O);
}

void WrittenDataFinder::computeWrittenObjects() {
  auto Note = [&](const Value &Obj, bool IsPrivate) {
    PointerAccess Acc = analyzePointerAccess(Obj, &Scope);
    if (!Acc.Written && !Acc.Escapes && !Acc.Returned)
      return;
    WrittenObjects.insert(&Obj);
    // A private object that escapes can be written through pointers we
    // cannot place, so it counts as memory anyone may reach.
    if (!IsPrivate || Acc.Escapes)
      NonPrivateWrite = true;
  };

  // The kernel's buffers: exactly the ParamRoles outputs (escaping ones
  // included, since their role is read-write).
  for (const Argument &A : Kernel.args())
    if (A.getType()->isPointerTy())
      Note(A, A.hasByValAttr());
  for (const GlobalVariable &GV : Kernel.getParent()->globals())
    if (!GV.isConstant() && GV.getAddressSpace() != ConstantAS)
      Note(GV, false);
  for (const Function *G : Scope)
    for (const Instruction &I : instructions(*G))
      if (const auto *AI = dyn_cast<AllocaInst>(&I))
        Note(*AI, true);

  // Writes through pointers we cannot place, and calls that may write
  // anything.
  for (const Function *G : Scope) {
    for (const Instruction &I : instructions(*G)) {
      forEachAccessedPointer(I, [&](const Value *Ptr, MemEffect Effect) {
        if (!Effect.Write || NonPrivateWrite)
          return;
        SmallVector<const Value *, 4> Objects;
        getKernelUnderlyingObjects(Ptr, Kernel, Scope, Objects);
        for (const Value *O : Objects)
          if (!isPlacedObject(O, Kernel))
            NonPrivateWrite = true;
      });
      const auto *CB = dyn_cast<CallBase>(&I);
      if (!CB || !CB->mayWriteToMemory())
        continue;
      const Function *Callee = CB->getCalledFunction();
      if (CB->isInlineAsm() || !Callee ||
          (Callee->isDeclaration() && !Callee->isIntrinsic()))
        NonPrivateWrite = true;
    }
  }
}

bool WrittenDataFinder::mayBeWritten(const Value *Ptr) const {
  unsigned AS = Ptr->getType()->getPointerAddressSpace();
  if (AS == ConstantAS || AS == ParamAS)
    return false;
  SmallVector<const Value *, 4> Objects;
  getKernelUnderlyingObjects(Ptr, Kernel, Scope, Objects);
  for (const Value *O : Objects) {
    if (isa<ConstantPointerNull>(O) || isa<UndefValue>(O))
      continue;
    if (const auto *GV = dyn_cast<GlobalVariable>(O))
      if (GV->isConstant() || GV->getAddressSpace() == ConstantAS)
        continue;
    if (isPlacedObject(O, Kernel)) {
      if (WrittenObjects.contains(O))
        return true;
      continue;
    }
    // A pointer read from memory, built from an integer, or returned by an
    // opaque call may alias anything the kernel writes outside private
    // memory.
    if (NonPrivateWrite)
      return true;
  }
  return false;
}

void WrittenDataFinder::appendControllingBlocks(
    const BasicBlock *BB, SmallVectorImpl<const BasicBlock *> &Blocks) {
  const Function *G = BB->getParent();
  if (!PostDomTrees.count(G)) {
    // PostDominatorTree only reads the function; its constructor just
    // predates const-correct IR APIs.
    auto PDT = std::make_unique<PostDominatorTree>(const_cast<Function &>(*G));
    // Ferrante et al.: for each edge Y->S, every block on the post-dominator
    // tree path from S up to (excluding) Y's immediate post-dominator is
    // control dependent on Y.
    for (const BasicBlock &Y : *G) {
      if (Y.getTerminator()->getNumSuccessors() < 2)
        continue;
      DomTreeNode *YNode = PDT->getNode(&Y);
      if (!YNode)
        continue;
      DomTreeNode *Stop = YNode->getIDom();
      for (const BasicBlock *S : successors(&Y)) {
        for (DomTreeNode *N = PDT->getNode(S); N && N != Stop;
             N = N->getIDom()) {
          if (!N->getBlock())
            break;
          auto &Deps = ControlDeps[N->getBlock()];
          if (!is_contained(Deps, &Y))
            Deps.push_back(&Y);
        }
      }
    }
    PostDomTrees[G] = std::move(PDT);
  }
  auto It = ControlDeps.find(BB);
  if (It != ControlDeps.end())
    Blocks.append(It->second.begin(), It->second.end());
}

/// Warp-level exchanges: their result is a function of the same operands in
/// other lanes, which belong to the same slice.
static bool isWarpExchange(const Function &Callee) {
  StringRef Name = Callee.getName();
  return Name.starts_with("llvm.nvvm.shfl.") ||
         Name.starts_with("llvm.nvvm.vote.") ||
         Name.starts_with("llvm.nvvm.match.") ||
         Name.starts_with("llvm.nvvm.redux.sync.");
}

const Instruction *WrittenDataFinder::find(const Value *V) {
  SmallVector<const Value *, 16> Work{V};
  SmallPtrSet<const Value *, 32> Seen{V};
  SmallPtrSet<const BasicBlock *, 16> SeenBlocks;
  auto Push = [&](const Value *X) {
    if (Seen.insert(X).second)
      Work.push_back(X);
  };
  // The branches that decide which input a phi takes: the terminator of
  // each incoming block and, transitively, the branches it is control
  // dependent on.
  auto PushControl = [&](const BasicBlock *Incoming) {
    SmallVector<const BasicBlock *, 8> Blocks{Incoming};
    while (!Blocks.empty()) {
      const BasicBlock *BB = Blocks.pop_back_val();
      if (!SeenBlocks.insert(BB).second)
        continue;
      const Instruction *Term = BB->getTerminator();
      if (const auto *Br = dyn_cast<BranchInst>(Term)) {
        if (Br->isConditional())
          Push(Br->getCondition());
      } else if (Term->getNumSuccessors() > 1) {
        for (const Value *Op : Term->operands())
          if (!isa<BasicBlock>(Op))
            Push(Op);
      }
      appendControllingBlocks(BB, Blocks);
    }
  };

  while (!Work.empty()) {
    const Value *X = Work.pop_back_val();
    if (const auto *CE = dyn_cast<ConstantExpr>(X)) {
      for (const Value *Op : CE->operands())
        Push(Op);
      continue;
    }
    if (isa<Constant>(X) || isa<BasicBlock>(X) || isa<MetadataAsValue>(X))
      continue;
    if (const auto *A = dyn_cast<Argument>(X)) {
      // The kernel's arguments are inputs; a callee's are whatever its call
      // sites pass.
      const Function *G = A->getParent();
      if (G == &Kernel || !Scope.contains(G))
        continue;
      SmallVector<const CallBase *, 4> Sites;
      getCallSites(*G, Scope, Sites);
      for (const CallBase *CB : Sites)
        Push(CB->getArgOperand(A->getArgNo()));
      continue;
    }
    const auto *I = dyn_cast<Instruction>(X);
    if (!I)
      continue;

    if (const auto *LI = dyn_cast<LoadInst>(I)) {
      if (LI->isVolatile() || LI->isAtomic() ||
          mayBeWritten(LI->getPointerOperand()))
        return LI;
      // The address matters too: idx[out[i]] reads a read-only buffer at a
      // position taken from a written one.
      Push(LI->getPointerOperand());
      continue;
    }
    if (isa<AtomicRMWInst>(I) || isa<AtomicCmpXchgInst>(I))
      return I;
    if (const auto *CB = dyn_cast<CallBase>(I)) {
      // The headers' idioms read registers and their operands only.
      if (CB->isInlineAsm() && matchHeaderAsm(*CB)) {
        for (const Value *Arg : CB->args())
          Push(Arg);
        continue;
      }
      if (CB->isInlineAsm())
        return I;
      const Function *Callee = CB->getCalledFunction();
      if (!Callee)
        return I;
      if (Callee->isIntrinsic()) {
        if (CB->doesNotAccessMemory() || isWarpExchange(*Callee)) {
          for (const Value *Arg : CB->args())
            Push(Arg);
          continue;
        }
        if (CB->onlyReadsMemory() && CB->onlyAccessesArgMemory()) {
          for (const Value *Arg : CB->args()) {
            if (Arg->getType()->isPointerTy() && mayBeWritten(Arg))
              return I;
            Push(Arg);
          }
          continue;
        }
        return I;
      }
      if (!Callee->isDeclaration() && Scope.contains(Callee)) {
        for (const BasicBlock &BB : *Callee)
          if (const auto *Ret = dyn_cast<ReturnInst>(BB.getTerminator()))
            if (const Value *RV = Ret->getReturnValue())
              Push(RV);
        continue;
      }
      return I;
    }
    if (const auto *Phi = dyn_cast<PHINode>(I)) {
      for (unsigned K = 0, E = Phi->getNumIncomingValues(); K != E; ++K) {
        Push(Phi->getIncomingValue(K));
        PushControl(Phi->getIncomingBlock(K));
      }
      continue;
    }
    if (isa<AllocaInst>(I))
      continue;
    if (isa<BinaryOperator>(I) || isa<UnaryOperator>(I) || isa<CastInst>(I) ||
        isa<GetElementPtrInst>(I) || isa<CmpInst>(I) || isa<SelectInst>(I) ||
        isa<FreezeInst>(I) || isa<ExtractElementInst>(I) ||
        isa<InsertElementInst>(I) || isa<ShuffleVectorInst>(I) ||
        isa<ExtractValueInst>(I) || isa<InsertValueInst>(I)) {
      for (const Value *Op : I->operands())
        Push(Op);
      continue;
    }
    // Anything else (va_arg, landing pads...) is beyond this slice.
    return I;
  }
  return nullptr;
}

const Instruction *findWrittenDataDependence(const Value *V,
                                             const Function &F) {
  WrittenDataFinder Finder(F);
  return Finder.find(V);
}

} // namespace cleave
