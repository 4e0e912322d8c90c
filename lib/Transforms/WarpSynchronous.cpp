//===- WarpSynchronous.cpp - Lockstep for volatile shared memory ----------===//
//
// Part of Cleave. See cleave/Transforms/WarpSynchronous.h.
//
//===----------------------------------------------------------------------===//
#include "cleave/Transforms/WarpSynchronous.h"

#include "llvm/Analysis/ValueTracking.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/InstIterator.h"
#include "llvm/IR/Instructions.h"
#include "llvm/IR/IntrinsicsNVPTX.h"

using namespace llvm;

namespace cleave {

static constexpr unsigned SharedAddrSpace = 3;

/// Whether \p Ptr may point into shared memory: its own address space, or
/// one of the objects it is derived from (a generic pointer cast from a
/// shared variable, as `volatile T *s = sdata;` gives after inlining).
static bool mayPointToShared(const Value *Ptr) {
  if (Ptr->getType()->getPointerAddressSpace() == SharedAddrSpace)
    return true;
  SmallVector<const Value *, 4> Objects;
  getUnderlyingObjects(Ptr, Objects);
  for (const Value *O : Objects) {
    const Value *Stripped = O->stripPointerCasts();
    if (Stripped->getType()->getPointerAddressSpace() == SharedAddrSpace)
      return true;
    if (auto *ASC = dyn_cast<AddrSpaceCastOperator>(O);
        ASC && ASC->getSrcAddressSpace() == SharedAddrSpace)
      return true;
  }
  return false;
}

unsigned syncVolatileSharedStores(Function &K) {
  SmallVector<StoreInst *, 16> Stores;
  for (Instruction &I : instructions(K))
    if (auto *SI = dyn_cast<StoreInst>(&I);
        SI && SI->isVolatile() && mayPointToShared(SI->getPointerOperand()))
      Stores.push_back(SI);
  if (Stores.empty())
    return 0;
  Function *SyncWarp =
      Intrinsic::getDeclaration(K.getParent(), Intrinsic::nvvm_bar_warp_sync);
  unsigned Inserted = 0;
  for (StoreInst *SI : Stores) {
    // The whole warp's mask: the CPU lowering's warp-level sync orders the
    // lanes at it, whichever they are.
    IRBuilder<> B(SI);
    // A store right after another store's sync shares it.
    auto *Prev = dyn_cast_or_null<CallInst>(SI->getPrevNode());
    if (!Prev || Prev->getCalledFunction() != SyncWarp) {
      B.CreateCall(SyncWarp, B.getInt32(~0u));
      ++Inserted;
    }
    B.SetInsertPoint(SI->getNextNode());
    B.CreateCall(SyncWarp, B.getInt32(~0u));
    ++Inserted;
  }
  return Inserted;
}

} // namespace cleave
