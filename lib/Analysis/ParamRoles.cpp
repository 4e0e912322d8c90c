//===- ParamRoles.cpp - How a kernel uses each pointer parameter ----------===//
//
// Part of Cleave. The pointer walk here is the one place that decides whether
// memory reached through a pointer is read, written or escapes; ParamRoles,
// WrittenData and KernelLegality all use it.
//
//===----------------------------------------------------------------------===//
#include "cleave/Analysis/ParamRoles.h"

#include "cleave/Support/KernelInfo.h"

#include "llvm/Analysis/ValueTracking.h"
#include "llvm/IR/Constants.h"
#include "llvm/IR/Function.h"
#include "llvm/IR/GlobalVariable.h"
#include "llvm/IR/InlineAsm.h"
#include "llvm/IR/InstIterator.h"
#include "llvm/IR/Instructions.h"
#include "llvm/IR/IntrinsicInst.h"
#include "llvm/Support/raw_ostream.h"

using namespace llvm;

namespace cleave {

AnalysisKey ParamRoleAnalysis::Key;

/// NVPTX's shared (per-block) address space.
static constexpr unsigned SharedAddrSpace = 3;

bool ParamRoles::isOutput(unsigned ArgNo) const {
  if (ArgNo >= Params.size())
    return false;
  ParamRole Role = Params[ArgNo].Role;
  return Role == ParamRole::Write || Role == ParamRole::ReadWrite;
}

void ParamRoles::print(raw_ostream &OS, const Function &F) const {
  OS << "cleave-param-roles: kernel '" << displayName(F) << "'\n";
  for (unsigned I = 0, E = Params.size(); I != E; ++I) {
    OS << "  arg " << I;
    // Clang drops value names in optimized device code; print one only when
    // the IR has it, so lines stay stable either way.
    if (I < F.arg_size() && F.getArg(I)->hasName())
      OS << " '" << F.getArg(I)->getName() << "'";
    OS << ": " << getParamRoleName(Params[I].Role);
    if (Params[I].Escapes)
      OS << " (escapes)";
    OS << "\n";
  }
}

//===----------------------------------------------------------------------===//
// Shared pointer tracking
//===----------------------------------------------------------------------===//

static const Function *getDefinedCallee(const CallBase &CB) {
  const Function *Callee = CB.getCalledFunction();
  if (!Callee || Callee->isDeclaration() || Callee->isIntrinsic())
    return nullptr;
  return Callee;
}

FunctionSet getReachableFunctions(const Function &F,
                                  SmallVectorImpl<const Function *> *Order) {
  FunctionSet Reached{&F};
  // Breadth first, so that Order is stable and follows the source.
  SmallVector<const Function *, 8> Queue{&F};
  for (unsigned Next = 0; Next != Queue.size(); ++Next)
    for (const Instruction &I : instructions(*Queue[Next]))
      if (const auto *CB = dyn_cast<CallBase>(&I))
        if (const Function *Callee = getDefinedCallee(*CB))
          if (Reached.insert(Callee).second)
            Queue.push_back(Callee);
  if (Order)
    Order->append(Queue.begin(), Queue.end());
  return Reached;
}

/// Intrinsics that mark memory without reading or writing its contents.
static bool isMarkerIntrinsic(const CallBase &CB) {
  const auto *II = dyn_cast<IntrinsicInst>(&CB);
  return II && (II->isLifetimeStartOrEnd() || II->isAssumeLikeIntrinsic());
}

MemEffect getCallArgEffect(const CallBase &CB, unsigned ArgNo) {
  MemEffect Effect;
  if (isMarkerIntrinsic(CB))
    return Effect;
  // memset/memcpy/memmove carry no useful per-argument attributes on the
  // length operand, and their direction is fixed.
  if (isa<MemIntrinsic>(&CB)) {
    if (ArgNo == 0)
      Effect.Write = true;
    else if (isa<MemTransferInst>(&CB) && ArgNo == 1)
      Effect.Read = true;
    return Effect;
  }
  if (CB.doesNotAccessMemory() || CB.doesNotAccessMemory(ArgNo))
    return Effect;
  // Memory behind a pointer argument is argument memory, or "other" memory
  // when the callee is not argmemonly.
  MemoryEffects ME = CB.getMemoryEffects();
  ModRefInfo MR =
      ME.getModRef(IRMemLocation::ArgMem) | ME.getModRef(IRMemLocation::Other);
  Effect.Read = isRefSet(MR) && !CB.onlyWritesMemory(ArgNo);
  Effect.Write = isModSet(MR) && !CB.onlyReadsMemory(ArgNo);
  return Effect;
}

void forEachAccessedPointer(const Instruction &I,
                            function_ref<void(const Value *, MemEffect)> Fn) {
  if (const auto *LI = dyn_cast<LoadInst>(&I)) {
    Fn(LI->getPointerOperand(), MemEffect{true, false});
  } else if (const auto *SI = dyn_cast<StoreInst>(&I)) {
    Fn(SI->getPointerOperand(), MemEffect{false, true});
  } else if (const auto *RMW = dyn_cast<AtomicRMWInst>(&I)) {
    Fn(RMW->getPointerOperand(), MemEffect{true, true});
  } else if (const auto *CX = dyn_cast<AtomicCmpXchgInst>(&I)) {
    Fn(CX->getPointerOperand(), MemEffect{true, true});
  } else if (const auto *CB = dyn_cast<CallBase>(&I)) {
    const Function *Callee = CB->getCalledFunction();
    if (!Callee || !Callee->isIntrinsic())
      return;
    for (unsigned ArgNo = 0, E = CB->arg_size(); ArgNo != E; ++ArgNo) {
      const Value *Arg = CB->getArgOperand(ArgNo);
      if (!Arg->getType()->isPointerTy())
        continue;
      MemEffect Effect = getCallArgEffect(*CB, ArgNo);
      if (Effect.Read || Effect.Write)
        Fn(Arg, Effect);
    }
  }
}

bool getSlotLoadsAndStores(const Value &Slot,
                           SmallVectorImpl<const LoadInst *> &Loads,
                           SmallVectorImpl<const StoreInst *> &Stores) {
  if (const auto *GV = dyn_cast<GlobalVariable>(&Slot)) {
    // Shared memory is undefined when a block starts; other globals keep
    // values from earlier launches and the host.
    if (!GV->hasLocalLinkage() || GV->getAddressSpace() != SharedAddrSpace)
      return false;
  } else if (!isa<AllocaInst>(&Slot)) {
    return false;
  }
  SmallVector<const Value *, 8> Work{&Slot};
  SmallPtrSet<const Value *, 8> Seen{&Slot};
  while (!Work.empty()) {
    const Value *V = Work.pop_back_val();
    for (const Use &U : V->uses()) {
      const User *Usr = U.getUser();
      if (const auto *CE = dyn_cast<ConstantExpr>(Usr)) {
        if (!CE->isCast() && CE->getOpcode() != Instruction::GetElementPtr)
          return false;
        if (Seen.insert(CE).second)
          Work.push_back(CE);
        continue;
      }
      const auto *I = dyn_cast<Instruction>(Usr);
      if (!I)
        return false;
      if (const auto *LI = dyn_cast<LoadInst>(I)) {
        Loads.push_back(LI);
      } else if (const auto *SI = dyn_cast<StoreInst>(I)) {
        // The slot's own address stored somewhere makes it reachable from
        // memory we do not follow.
        if (U.getOperandNo() != StoreInst::getPointerOperandIndex())
          return false;
        Stores.push_back(SI);
      } else if (isa<GetElementPtrInst>(I) || isa<BitCastInst>(I) ||
                 isa<AddrSpaceCastInst>(I)) {
        if (Seen.insert(I).second)
          Work.push_back(I);
      } else if (const auto *CB = dyn_cast<CallBase>(I)) {
        if (!isMarkerIntrinsic(*CB))
          return false;
      } else {
        return false;
      }
    }
  }
  return true;
}

/// True for uses of a global that only keep it alive (llvm.used and
/// llvm.compiler.used), which are not accesses.
static bool isKeepAliveUse(const User *U) {
  if (const auto *GV = dyn_cast<GlobalVariable>(U))
    return GV->getName() == "llvm.used" ||
           GV->getName() == "llvm.compiler.used";
  if (!isa<ConstantAggregate>(U) && !isa<ConstantExpr>(U))
    return false;
  return !U->use_empty() && all_of(U->users(), isKeepAliveUse);
}

namespace {

/// One query of analyzePointerAccess. Walks values derived from a root; a
/// pointer passed to a defined callee is followed into the callee's
/// argument, with a guard against recursion.
class PointerWalker {
  const FunctionSet *Scope;
  /// Callee arguments being walked further up the recursion.
  SmallPtrSet<const Argument *, 8> InProgress;

public:
  explicit PointerWalker(const FunctionSet *Scope) : Scope(Scope) {}
  PointerAccess walk(const Value &Root);

private:
  void visitCall(const CallBase &CB, const Use &U, PointerAccess &Acc,
                 function_ref<void(const Value *)> Push);
  void visitStoredValue(const StoreInst &SI, PointerAccess &Acc,
                        function_ref<void(const Value *)> Push);
};

} // namespace

void PointerWalker::visitStoredValue(const StoreInst &SI, PointerAccess &Acc,
                                     function_ref<void(const Value *)> Push) {
  // A copy of the pointer kept in a slot (allocas that mem2reg did not
  // remove, a shared variable that broadcasts it to the block) is followed
  // through the slot's loads; anywhere else the pointer becomes reachable
  // from memory we do not track.
  const Value *Slot = getUnderlyingObject(SI.getPointerOperand(), 0);
  SmallVector<const LoadInst *, 4> Loads;
  SmallVector<const StoreInst *, 4> Stores;
  if (!getSlotLoadsAndStores(*Slot, Loads, Stores)) {
    Acc.Escapes = true;
    return;
  }
  // Every load of the slot may return the copy; over-approximating here
  // only adds accesses.
  for (const LoadInst *LI : Loads)
    Push(LI);
}

void PointerWalker::visitCall(const CallBase &CB, const Use &U,
                              PointerAccess &Acc,
                              function_ref<void(const Value *)> Push) {
  if (CB.isCallee(&U) || !CB.isArgOperand(&U)) {
    // Called through, or carried in an operand bundle: out of sight.
    Acc.Read = Acc.Written = Acc.Escapes = true;
    return;
  }
  unsigned ArgNo = CB.getArgOperandNo(&U);
  if (CB.isInlineAsm()) {
    Acc.Read = Acc.Written = Acc.Escapes = true;
    return;
  }
  const Function *Callee = CB.getCalledFunction();
  if (!Callee) {
    Acc.Read = Acc.Written = Acc.Escapes = true;
    return;
  }
  if (Callee->isIntrinsic()) {
    if (isMarkerIntrinsic(CB))
      return;
    MemEffect Effect = getCallArgEffect(CB, ArgNo);
    Acc.Read |= Effect.Read;
    Acc.Written |= Effect.Write;
    // Pure intrinsics (ptrmask, umin on an integer address, ...) and those
    // returning a pointer (launder, address-space conversions) may hand the
    // address back; values an intrinsic reads from memory are not derived
    // from the pointer and are not followed.
    if (!CB.getType()->isVoidTy() && !isa<MemIntrinsic>(&CB) &&
        (CB.doesNotAccessMemory() || CB.getType()->isPointerTy()))
      Push(&CB);
    return;
  }
  if (Callee->isDeclaration()) {
    // Trust the declaration only when it promises not to keep the pointer.
    if (CB.doesNotCapture(ArgNo)) {
      MemEffect Effect = getCallArgEffect(CB, ArgNo);
      Acc.Read |= Effect.Read;
      Acc.Written |= Effect.Write;
      if (Effect.Read || Effect.Write)
        Acc.Escapes |= !CB.onlyReadsMemory(ArgNo);
      return;
    }
    Acc.Read = Acc.Written = Acc.Escapes = true;
    return;
  }
  if (ArgNo >= Callee->arg_size()) {
    // Variadic tail: only va_arg could see it.
    Acc.Read = Acc.Written = Acc.Escapes = true;
    return;
  }
  if (CB.isByValArgument(ArgNo)) {
    // The callee gets a copy: the original is only read.
    Acc.Read = true;
    return;
  }
  const Argument *Formal = Callee->getArg(ArgNo);
  if (InProgress.contains(Formal)) {
    // Recursion: the formal's uses are being walked further up; assume it
    // may come back so that uses of the call's result are still followed.
    if (!CB.getType()->isVoidTy())
      Push(&CB);
    return;
  }
  InProgress.insert(Formal);
  PointerAccess Sub = walk(*Formal);
  InProgress.erase(Formal);
  Acc.Read |= Sub.Read;
  Acc.Written |= Sub.Written;
  Acc.Escapes |= Sub.Escapes;
  if (Sub.Returned)
    Push(&CB);
}

PointerAccess PointerWalker::walk(const Value &Root) {
  PointerAccess Acc;
  SmallVector<const Value *, 16> Work{&Root};
  SmallPtrSet<const Value *, 16> Seen{&Root};
  auto Push = [&](const Value *V) {
    if (Seen.insert(V).second)
      Work.push_back(V);
  };

  while (!Work.empty()) {
    const Value *V = Work.pop_back_val();
    for (const Use &U : V->uses()) {
      const User *Usr = U.getUser();
      if (const auto *CE = dyn_cast<ConstantExpr>(Usr)) {
        // Constant casts and GEPs of globals are copies of the address.
        if (CE->isCast() || CE->getOpcode() == Instruction::GetElementPtr)
          Push(CE);
        else if (!isKeepAliveUse(CE))
          Acc.Escapes = true;
        continue;
      }
      const auto *I = dyn_cast<Instruction>(Usr);
      if (!I) {
        // Another global's initializer holds the address.
        if (!isKeepAliveUse(Usr))
          Acc.Escapes = true;
        continue;
      }
      if (Scope && !Scope->contains(I->getFunction()))
        continue;

      switch (I->getOpcode()) {
      case Instruction::Load:
        Acc.Read = true;
        break;
      case Instruction::Store:
        if (U.getOperandNo() == StoreInst::getPointerOperandIndex())
          Acc.Written = true;
        else
          visitStoredValue(*cast<StoreInst>(I), Acc, Push);
        break;
      case Instruction::AtomicRMW:
      case Instruction::AtomicCmpXchg:
        // Only the address operand is an access; storing the pointer as
        // the new value publishes it.
        if (U.getOperandNo() == 0) {
          Acc.Read = Acc.Written = true;
        } else {
          Acc.Read = Acc.Written = Acc.Escapes = true;
        }
        break;
      case Instruction::GetElementPtr:
      case Instruction::BitCast:
      case Instruction::AddrSpaceCast:
      case Instruction::PtrToInt:
      case Instruction::IntToPtr:
      case Instruction::Trunc:
      case Instruction::ZExt:
      case Instruction::SExt:
      case Instruction::Add:
      case Instruction::Sub:
      case Instruction::Mul:
      case Instruction::Shl:
      case Instruction::LShr:
      case Instruction::AShr:
      case Instruction::And:
      case Instruction::Or:
      case Instruction::Xor:
      case Instruction::UDiv:
      case Instruction::SDiv:
      case Instruction::URem:
      case Instruction::SRem:
      case Instruction::PHI:
      case Instruction::Freeze:
        // Copies and address arithmetic (including integer round trips
        // through ptrtoint/inttoptr): whatever they address is the root's.
        Push(I);
        break;
      case Instruction::Select:
        if (U.getOperandNo() != 0)
          Push(I);
        break;
      case Instruction::ICmp:
      case Instruction::Br:
      case Instruction::Switch:
        // Comparing addresses (alignment checks) and branching on the
        // result read no memory.
        break;
      case Instruction::Ret:
        Acc.Returned = true;
        break;
      case Instruction::Call:
      case Instruction::Invoke:
      case Instruction::CallBr:
        visitCall(*cast<CallBase>(I), U, Acc, Push);
        break;
      default:
        // Aggregates, vectors, va_arg...: stop tracking, assume the worst.
        Acc.Read = Acc.Written = Acc.Escapes = true;
        break;
      }
    }
  }
  return Acc;
}

PointerAccess analyzePointerAccess(const Value &Root,
                                   const FunctionSet *Scope) {
  return PointerWalker(Scope).walk(Root);
}

//===----------------------------------------------------------------------===//
// The analysis and its printer
//===----------------------------------------------------------------------===//

ParamRoles ParamRoleAnalysis::run(Function &F, FunctionAnalysisManager &) {
  ParamRoles Result;
  if (!isKernel(F))
    return Result;
  FunctionSet Scope = getReachableFunctions(F);
  for (const Argument &A : F.args()) {
    ParamRoleEntry Entry;
    // A byval aggregate is a value the runtime copies in, not a buffer.
    if (A.getType()->isPointerTy() && !A.hasByValAttr()) {
      PointerAccess Acc = analyzePointerAccess(A, &Scope);
      if (Acc.Escapes || Acc.Returned) {
        Entry.Role = ParamRole::ReadWrite;
        Entry.Escapes = true;
      } else if (Acc.Read && Acc.Written) {
        Entry.Role = ParamRole::ReadWrite;
      } else if (Acc.Written) {
        Entry.Role = ParamRole::Write;
      } else if (Acc.Read) {
        Entry.Role = ParamRole::Read;
      } else {
        Entry.Role = ParamRole::Unused;
      }
    }
    Result.Params.push_back(Entry);
  }
  return Result;
}

PreservedAnalyses ParamRolePrinterPass::run(Function &F,
                                            FunctionAnalysisManager &FAM) {
  if (!isKernel(F))
    return PreservedAnalyses::all();
  FAM.getResult<ParamRoleAnalysis>(F).print(OS, F);
  return PreservedAnalyses::all();
}

} // namespace cleave
