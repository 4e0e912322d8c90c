//===- HeaderAsmLower.cpp - CUDA headers' inline PTX as IR ----------------===//
//
// Part of Cleave. Each idiom of HeaderAsm.h becomes IR that the CPU lowering
// already understands: special-register intrinsics, a shared variable,
// integer bit operations, nothing for a sleep hint, and the fp16/bf16
// arithmetic blocks instruction by instruction (HeaderAsmPtxLower.cpp).
//
//===----------------------------------------------------------------------===//
#include "cleave/Transforms/HeaderAsmLower.h"
#include "cleave/Transforms/LibdeviceAsmLower.h"

#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/IntrinsicsNVPTX.h"
#include "llvm/IR/Module.h"

using namespace llvm;

namespace cleave {

static constexpr const char *ReservedSharedName = "__cleave_reserved_smem";

/// The module's stand-in for the block's reserved shared memory.
static GlobalVariable *getReservedShared(Module &M) {
  if (auto *GV = M.getGlobalVariable(ReservedSharedName, true))
    return GV;
  auto *Ty =
      ArrayType::get(Type::getInt8Ty(M.getContext()), ReservedSharedBytes);
  auto *GV = new GlobalVariable(M, Ty, false, GlobalValue::InternalLinkage,
                                UndefValue::get(Ty), ReservedSharedName,
                                nullptr, GlobalValue::NotThreadLocal,
                                /*AddressSpace=*/3);
  GV->setAlignment(Align(16));
  return GV;
}

/// bfind.{u32,u64}: the bit position of the most significant one;
/// .shiftamt: the left shift that moves it to the top. Both are ~0 for 0.
static Value *emitBitFind(IRBuilder<> &B, Value *X, unsigned Bits,
                          bool ShiftAmount) {
  Value *Clz = B.CreateBinaryIntrinsic(Intrinsic::ctlz, X, B.getTrue());
  Clz = B.CreateZExtOrTrunc(Clz, B.getInt32Ty());
  Value *R = ShiftAmount ? Clz : B.CreateSub(B.getInt32(Bits - 1), Clz);
  Value *IsZero = B.CreateICmpEQ(X, ConstantInt::get(X->getType(), 0));
  return B.CreateSelect(IsZero, B.getInt32(~0u), R);
}

void lowerHeaderAsm(CallBase &CB, const HeaderAsm &H) {
  IRBuilder<> B(&CB);
  Module &M = *CB.getModule();
  Value *New = nullptr;
  switch (H.Kind) {
  case HeaderAsmKind::SpecialRegister:
    New = B.CreateIntrinsic(H.SReg, {}, {});
    break;
  case HeaderAsmKind::ReservedShared: {
    Value *Generic = B.CreateAddrSpaceCast(getReservedShared(M), B.getPtrTy(0));
    New = B.CreatePtrToInt(Generic, CB.getType());
    break;
  }
  case HeaderAsmKind::Elect: {
    // Operands: the member mask, then the tied inputs of the two outputs
    // (leader lane, is-leader flag). The leader is the lowest lane of the
    // mask, which every member executes (elect.sync's contract); only it
    // sets the flag, the others keep theirs.
    Value *Mask = CB.getArgOperand(0), *OldFlag = CB.getArgOperand(2);
    Value *Leader =
        B.CreateBinaryIntrinsic(Intrinsic::cttz, Mask, B.getFalse());
    Value *Lane =
        B.CreateIntrinsic(Intrinsic::nvvm_read_ptx_sreg_laneid, {}, {});
    Value *Flag =
        B.CreateSelect(B.CreateICmpEQ(Lane, Leader), B.getInt32(1), OldFlag);
    New = B.CreateInsertValue(PoisonValue::get(CB.getType()), Leader, 0);
    New = B.CreateInsertValue(New, Flag, 1);
    break;
  }
  case HeaderAsmKind::BitFind:
    New = emitBitFind(B, CB.getArgOperand(0), H.Bits, H.ShiftAmount);
    break;
  case HeaderAsmKind::Libdevice:
    New = buildLibdeviceAsm(B, CB, H.Lib);
    break;
  case HeaderAsmKind::Arithmetic:
    lowerPtxArithmetic(CB, *H.Ptx);
    return;
  case HeaderAsmKind::Sleep:
    // No result; the spin around it goes on as it would without the hint.
    CB.eraseFromParent();
    return;
  }
  CB.replaceAllUsesWith(New);
  CB.eraseFromParent();
}

} // namespace cleave
