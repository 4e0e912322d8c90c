//===- LibdeviceAsmLower.cpp - libdevice's inline PTX as IR ---------------===//
//
// Part of Cleave. See cleave/Transforms/LibdeviceAsmLower.h.
//
//===----------------------------------------------------------------------===//
#include "cleave/Transforms/LibdeviceAsmLower.h"

#include "llvm/IR/IntrinsicsNVPTX.h"
#include "llvm/IR/Module.h"

using namespace llvm;

namespace cleave {

/// A call of the (not overloaded) NVVM intrinsic \p Name, e.g.
/// "rcp.approx.ftz.f".
static Value *callNVVM(IRBuilder<> &B, const Twine &Name,
                       ArrayRef<Value *> Args) {
  Intrinsic::ID ID = Function::lookupIntrinsicID(("llvm.nvvm." + Name).str());
  assert(ID != Intrinsic::not_intrinsic && "no such NVVM intrinsic");
  Module &M = *B.GetInsertBlock()->getModule();
  return B.CreateCall(Intrinsic::getDeclaration(&M, ID), Args);
}

/// sub.r<rnd>[.ftz].<type> a, b. Round to nearest is add.rn(a, -b); the
/// directed f32 forms are fma.r<rnd>(b, -1, a), exact since b * -1 is.
static Value *buildSub(IRBuilder<> &B, CallBase &CB, const LibdeviceAsm &L) {
  Value *A = CB.getArgOperand(0), *Bv = CB.getArgOperand(1);
  std::string Suffix = L.Ftz ? ".ftz." : ".";
  Suffix += L.Bits == 32 ? "f" : "d";
  if (L.Rounding == 'n')
    return callNVVM(B, "add.rn" + Suffix, {A, B.CreateFNeg(Bv)});
  return callNVVM(B, "fma.r" + Twine(L.Rounding) + Suffix,
                  {Bv, ConstantFP::get(CB.getType(), -1.0), A});
}

/// {low, high} halves of \p Wide as the asm's two results.
static Value *splitResult(IRBuilder<> &B, CallBase &CB, Value *Wide) {
  auto *STy = cast<StructType>(CB.getType());
  Type *Half = STy->getElementType(0);
  unsigned Bits = Half->getIntegerBitWidth();
  Value *Lo = B.CreateTrunc(Wide, Half);
  Value *Hi = B.CreateTrunc(B.CreateLShr(Wide, Bits), Half);
  Value *R = B.CreateInsertValue(PoisonValue::get(STy), Lo, 0);
  return B.CreateInsertValue(R, Hi, 1);
}

/// The value of the (low, high) operand pair starting at \p I, widened.
static Value *joinOperands(IRBuilder<> &B, CallBase &CB, unsigned I,
                           Type *Wide) {
  unsigned Bits = CB.getArgOperand(I)->getType()->getIntegerBitWidth();
  Value *Lo = B.CreateZExt(CB.getArgOperand(I), Wide);
  Value *Hi = B.CreateZExt(CB.getArgOperand(I + 1), Wide);
  return B.CreateOr(Lo, B.CreateShl(Hi, Bits));
}

Value *buildLibdeviceAsm(IRBuilder<> &B, CallBase &CB, const LibdeviceAsm &L) {
  auto Widened = [&](unsigned I) {
    unsigned Bits = CB.getArgOperand(I)->getType()->getIntegerBitWidth();
    return B.CreateZExt(CB.getArgOperand(I), B.getIntNTy(2 * Bits));
  };
  switch (L.Kind) {
  case LibdeviceAsmKind::RcpApproxFtz:
    return callNVVM(B, "rcp.approx.ftz.f", {CB.getArgOperand(0)});
  case LibdeviceAsmKind::RsqrtApproxFtz:
    return callNVVM(B, "rsqrt.approx.ftz.d", {CB.getArgOperand(0)});
  case LibdeviceAsmKind::Sub:
    return buildSub(B, CB, L);
  case LibdeviceAsmKind::MadWide32:
  case LibdeviceAsmKind::MadWide64:
    // a * b + c never exceeds the doubled width.
    return splitResult(
        B, CB, B.CreateAdd(B.CreateMul(Widened(0), Widened(1)), Widened(2)));
  case LibdeviceAsmKind::MulWide64:
    return splitResult(B, CB, B.CreateMul(Widened(0), Widened(1)));
  case LibdeviceAsmKind::Add128:
  case LibdeviceAsmKind::Sub128: {
    Type *I128 = B.getInt128Ty();
    Value *X = joinOperands(B, CB, 0, I128), *Y = joinOperands(B, CB, 2, I128);
    return splitResult(B, CB,
                       L.Kind == LibdeviceAsmKind::Add128 ? B.CreateAdd(X, Y)
                                                          : B.CreateSub(X, Y));
  }
  case LibdeviceAsmKind::SelectEqu:
    return B.CreateSelect(
        B.CreateFCmpUEQ(CB.getArgOperand(0), CB.getArgOperand(1)),
        CB.getArgOperand(2), CB.getArgOperand(3));
  }
  llvm_unreachable("unknown libdevice asm form");
}

} // namespace cleave
