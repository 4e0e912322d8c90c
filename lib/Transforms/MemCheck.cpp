//===- MemCheck.cpp - Checked CPU variants (CLEAVE_CHECK=memory) ----------===//
//
// Part of Cleave. See cleave/Transforms/MemCheck.h and docs/runtime.md.
//
// The checks go in after the lowering, on a clone: the thread loops exist
// then, so each access knows its thread from the loop that dominates it,
// and the ordinary variant's code (and its vectorization) is not touched.
//
//===----------------------------------------------------------------------===//
#include "cleave/Transforms/MemCheck.h"
#include "cleave/ABI/CpuCheckABI.h"
#include "cleave/ABI/CpuReportABI.h"

#include "llvm/Analysis/ValueTracking.h"
#include "llvm/IR/Dominators.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/InstIterator.h"
#include "llvm/IR/Instructions.h"
#include "llvm/IR/IntrinsicInst.h"
#include "llvm/IR/Module.h"
#include "llvm/Transforms/Utils/Cloning.h"
#include "llvm/Transforms/Utils/PromoteMemToReg.h"

using namespace llvm;

namespace cleave {

std::string cpuCheckedVariantName(StringRef Kernel) {
  return ("__cleave_cpu_" + Kernel + "_checked").str();
}

namespace {

/// NVPTX address spaces that hold no kernel-visible buffer of the launch:
/// shared (3), constant (4), local (5).
bool isGlobalOrGeneric(Type *PtrTy) {
  unsigned AS = PtrTy->getPointerAddressSpace();
  return AS == 0 || AS == 1;
}

/// Whether \p O is memory of the variant's own: a stack slot, a variable,
/// the scratch area or the launch descriptor (the function's arguments), or
/// a parameter's value slot (loaded from the argument array `args`).
bool isOwnMemory(const Value *O, const Function &F) {
  if (isa<AllocaInst>(O) || isa<GlobalVariable>(O) || isa<Argument>(O))
    return true;
  if (const auto *L = dyn_cast<LoadInst>(O))
    return getUnderlyingObject(L->getPointerOperand()) == F.getArg(0);
  return false;
}

bool needsCheck(Value *Ptr, const Function &F) {
  if (!isGlobalOrGeneric(Ptr->getType()))
    return false;
  SmallVector<const Value *, 4> Objects;
  getUnderlyingObjects(Ptr, Objects);
  for (const Value *O : Objects)
    if (!isOwnMemory(O, F))
      return true;
  return false;
}

struct Access {
  Instruction *I;
  Value *Ptr;
  Value *Bytes;
  uint32_t Kind;
};

/// The accesses of \p F that need a check, with their sizes.
SmallVector<Access, 32> accessesToCheck(Function &F) {
  const DataLayout &DL = F.getParent()->getDataLayout();
  Type *I64 = Type::getInt64Ty(F.getContext());
  auto Size = [&](Type *T) -> Value * {
    return ConstantInt::get(I64, DL.getTypeStoreSize(T).getFixedValue());
  };
  SmallVector<Access, 32> Out;
  auto Add = [&](Instruction &I, Value *Ptr, Value *Bytes, uint32_t Kind) {
    if (needsCheck(Ptr, F))
      Out.push_back({&I, Ptr, Bytes, Kind});
  };
  for (Instruction &I : instructions(F)) {
    if (auto *L = dyn_cast<LoadInst>(&I))
      Add(I, L->getPointerOperand(), Size(L->getType()), CLEAVE_CHECK_LOAD);
    else if (auto *S = dyn_cast<StoreInst>(&I))
      Add(I, S->getPointerOperand(), Size(S->getValueOperand()->getType()),
          CLEAVE_CHECK_STORE);
    else if (auto *A = dyn_cast<AtomicRMWInst>(&I))
      Add(I, A->getPointerOperand(), Size(A->getValOperand()->getType()),
          CLEAVE_CHECK_ATOMIC);
    else if (auto *X = dyn_cast<AtomicCmpXchgInst>(&I))
      Add(I, X->getPointerOperand(), Size(X->getNewValOperand()->getType()),
          CLEAVE_CHECK_ATOMIC);
    else if (auto *M = dyn_cast<MemIntrinsic>(&I)) {
      Value *Len = M->getLength();
      Add(I, M->getRawDest(), Len, CLEAVE_CHECK_STORE);
      if (auto *T = dyn_cast<MemTransferInst>(M))
        Add(I, T->getRawSource(), Len, CLEAVE_CHECK_LOAD);
    }
  }
  return Out;
}

} // namespace

Function *createCheckedVariant(Function &Host, const ThreadIdSites &Sites,
                               StringRef Name) {
  ValueToValueMapTy VMap;
  Function *C = CloneFunction(&Host, VMap);
  C->setName(Name);
  C->setLinkage(GlobalValue::InternalLinkage);
  // A debugging aid: optimized for size, which skips the vectorizer and
  // unrolling (most of the CPU code's compile time).
  C->addFnAttr(Attribute::MinSize);
  C->addFnAttr(Attribute::OptimizeForSize);
  LLVMContext &Ctx = Host.getContext();
  Module &M = *Host.getParent();
  Type *I64 = Type::getInt64Ty(Ctx), *I32 = Type::getInt32Ty(Ctx);
  Type *Ptr = PointerType::get(Ctx, 0);
  FunctionCallee Check = M.getOrInsertFunction(
      CLEAVE_CHECK_FUNCTION,
      FunctionType::get(Type::getVoidTy(Ctx), {Ptr, I64, I32, I64, I64},
                        false));
  Value *Unknown = ConstantInt::get(I64, CLEAVE_CHECK_UNKNOWN);
  auto *Block =
      Sites.BlockId ? dyn_cast<Instruction>(VMap[Sites.BlockId]) : nullptr;
  SmallVector<std::pair<BasicBlock *, Value *>, 8> Loops;
  for (auto [Body, Lin] : Sites.Loops)
    Loops.push_back({cast<BasicBlock>(VMap[Body]), VMap[Lin]});
  // The fast copies of guard-versioned regions exist for the vectorizer,
  // which does not run here: the optimizer drops them as dead code.
  for (Value *Fast : Sites.FastPaths) {
    auto *I = cast<Instruction>(VMap[Fast]);
    I->replaceAllUsesWith(ConstantInt::getFalse(Ctx));
    I->eraseFromParent();
  }

  // Values the lowering demoted to allocas (a pointer into a __device__
  // table computed in one loop and used in another) would hide where an
  // access points; in registers again, they show it, and no check is placed
  // on a variable's own memory.
  DominatorTree DT(*C);
  SmallVector<AllocaInst *, 16> Promotable;
  for (Instruction &I : C->getEntryBlock())
    if (auto *AI = dyn_cast<AllocaInst>(&I); AI && isAllocaPromotable(AI))
      Promotable.push_back(AI);
  if (!Promotable.empty())
    PromoteMemToReg(Promotable, DT);
  // The linear block and thread ids of a report about \p I.
  auto Ids = [&](IRBuilder<> &B,
                 Instruction *I) -> std::pair<Value *, Value *> {
    Value *Thread = Unknown;
    for (auto [Body, Lin] : Loops)
      if (DT.dominates(Body, I->getParent()) &&
          DT.dominates(cast<Instruction>(Lin), I)) {
        Thread = Lin;
        break;
      }
    Value *BlockArg = Block && DT.dominates(Block, I) ? Block : Unknown;
    return {BlockArg, B.CreateZExtOrTrunc(Thread, I64)};
  };
  for (const Access &A : accessesToCheck(*C)) {
    IRBuilder<> B(A.I);
    auto [BlockArg, Thread] = Ids(B, A.I);
    Value *P = B.CreateAddrSpaceCast(A.Ptr, Ptr);
    B.CreateCall(Check, {P, B.CreateZExtOrTrunc(A.Bytes, I64),
                         B.getInt32(A.Kind), BlockArg, Thread});
  }
  // Device printf reads the strings of its `%s` arguments, which only the
  // runtime's formatter finds: its checked entry validates them.
  if (Function *Printf = M.getFunction(CLEAVE_PRINTF_FUNCTION)) {
    FunctionCallee Checked = M.getOrInsertFunction(
        CLEAVE_PRINTF_CHECKED_FUNCTION,
        FunctionType::get(I32, {Ptr, Ptr, I64, I64, I64}, false));
    SmallVector<CallInst *, 4> Calls;
    for (Instruction &I : instructions(*C))
      if (auto *CI = dyn_cast<CallInst>(&I);
          CI && CI->getCalledFunction() == Printf)
        Calls.push_back(CI);
    for (CallInst *CI : Calls) {
      IRBuilder<> B(CI);
      auto [BlockArg, Thread] = Ids(B, CI);
      CallInst *New =
          B.CreateCall(Checked, {CI->getArgOperand(0), CI->getArgOperand(1),
                                 CI->getArgOperand(2), BlockArg, Thread});
      New->setDebugLoc(CI->getDebugLoc());
      CI->replaceAllUsesWith(New);
      CI->eraseFromParent();
    }
  }
  return C;
}

} // namespace cleave
