//===- NVVMConversions.cpp - libdevice's conversions for the CPU ----------===//
//
// Part of Cleave. See cleave/Transforms/NVVMConversions.h.
//
//===----------------------------------------------------------------------===//
#include "cleave/Transforms/NVVMConversions.h"

#include "llvm/ADT/StringSwitch.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/InstIterator.h"
#include "llvm/IR/IntrinsicsNVPTX.h"
#include "llvm/IR/Module.h"

using namespace llvm;

namespace cleave {

/// The generic rounding of a cvt's rounding mode ("rn", "rz", "rm", "rp").
static Intrinsic::ID roundingOf(StringRef Mode) {
  return StringSwitch<Intrinsic::ID>(Mode)
      .Case("rn", Intrinsic::roundeven)
      .Case("rz", Intrinsic::trunc)
      .Case("rm", Intrinsic::floor)
      .Case("rp", Intrinsic::ceil)
      .Default(Intrinsic::not_intrinsic);
}

/// `<f|d>2<i|ui|ll|ull>.<mode>[.ftz]`: round, then convert with saturation
/// (cvt to an integer clamps, and NaN gives 0). Flushing a subnormal input
/// changes no integer result.
static Value *floatToInt(IRBuilder<> &B, CallInst &CI, StringRef N) {
  auto [Kinds, Rest] = N.split('.');
  StringRef Mode = Rest.split('.').first;
  Intrinsic::ID Round = roundingOf(Mode);
  if (Kinds.size() < 3 || (Kinds[0] != 'f' && Kinds[0] != 'd') ||
      Kinds[1] != '2' || Round == Intrinsic::not_intrinsic)
    return nullptr;
  StringRef To = Kinds.drop_front(2);
  if (To != "i" && To != "ui" && To != "ll" && To != "ull")
    return nullptr;
  Value *X = B.CreateUnaryIntrinsic(Round, CI.getArgOperand(0));
  Intrinsic::ID Sat =
      To.starts_with("u") ? Intrinsic::fptoui_sat : Intrinsic::fptosi_sat;
  return B.CreateIntrinsic(Sat, {CI.getType(), X->getType()}, {X});
}

/// `<i|ui|ll|ull>2<f|d>.rn`: the default conversions round to nearest.
static Value *intToFloat(IRBuilder<> &B, CallInst &CI, StringRef N) {
  auto [Kinds, Mode] = N.split('.');
  if (Mode != "rn" || !(Kinds.ends_with("2f") || Kinds.ends_with("2d")))
    return nullptr;
  StringRef From = Kinds.drop_back(2);
  if (From != "i" && From != "ui" && From != "ll" && From != "ull")
    return nullptr;
  Value *X = CI.getArgOperand(0);
  return From.starts_with("u") ? B.CreateUIToFP(X, CI.getType())
                               : B.CreateSIToFP(X, CI.getType());
}

/// `add.<mode>.<f|d>` and `mul.<mode>.<f|d>` (mode rz, rm or rp, with
/// .ftz for f) as the fma of the same rounding. The lowering's directed fma
/// gets the exact result from the rounded one and the residual, which it
/// computes exactly when the addend is the larger operand (then the
/// difference between addend and rounded sum is exact, by Sterbenz's lemma
/// or because the sum was), and always for a zero addend.
static Value *directedArith(IRBuilder<> &B, CallInst &CI, StringRef N) {
  bool Add = N.starts_with("add.");
  if (!Add && !N.starts_with("mul."))
    return nullptr;
  StringRef Mode = N.substr(4, 2);
  if (Mode != "rz" && Mode != "rm" && Mode != "rp")
    return nullptr;
  StringRef Suffix = N.drop_front(6); // ".f", ".ftz.f" or ".d"
  Intrinsic::ID Fma =
      Function::lookupIntrinsicID(("llvm.nvvm.fma." + Mode + Suffix).str());
  if (Fma == Intrinsic::not_intrinsic)
    return nullptr;
  Type *Ty = CI.getType();
  Value *X = CI.getArgOperand(0), *Y = CI.getArgOperand(1);
  Value *Args[3];
  if (Add) {
    Value *Larger = B.CreateFCmpOGE(B.CreateUnaryIntrinsic(Intrinsic::fabs, Y),
                                    B.CreateUnaryIntrinsic(Intrinsic::fabs, X));
    Args[0] = B.CreateSelect(Larger, X, Y);
    Args[1] = ConstantFP::get(Ty, 1.0);
    Args[2] = B.CreateSelect(Larger, Y, X);
  } else {
    // An exact zero product keeps its sign: x + (-0) = x except in
    // round-down, where x + (+0) = x.
    Args[0] = X;
    Args[1] = Y;
    Args[2] = ConstantFP::get(Ty, Mode == "rm" ? 0.0 : -0.0);
  }
  Module &M = *CI.getModule();
  return B.CreateCall(Intrinsic::getDeclaration(&M, Fma), Args);
}

/// The replacement of NVVM call \p CI named llvm.nvvm.\p N, or null.
static Value *lowerOne(IRBuilder<> &B, CallInst &CI, StringRef N) {
  Type *I32 = B.getInt32Ty(), *I64 = B.getInt64Ty();
  if (N == "d2i.hi" || N == "d2i.lo") {
    Value *Bits = B.CreateBitCast(CI.getArgOperand(0), I64);
    if (N == "d2i.hi")
      Bits = B.CreateLShr(Bits, 32);
    return B.CreateTrunc(Bits, I32);
  }
  if (N == "lohi.i2d") {
    Value *Lo = B.CreateZExt(CI.getArgOperand(0), I64);
    Value *Hi = B.CreateShl(B.CreateZExt(CI.getArgOperand(1), I64), 32);
    return B.CreateBitCast(B.CreateOr(Hi, Lo), CI.getType());
  }
  if (N == "round.f" || N == "round.d")
    return B.CreateUnaryIntrinsic(Intrinsic::roundeven, CI.getArgOperand(0));
  if (N == "d2f.rn")
    return B.CreateFPTrunc(CI.getArgOperand(0), CI.getType());
  if (CI.getType()->isIntegerTy())
    return floatToInt(B, CI, N);
  if (Value *V = intToFloat(B, CI, N))
    return V;
  return directedArith(B, CI, N);
}

void lowerNVVMConversions(Function &K) {
  for (Instruction &I : make_early_inc_range(instructions(K))) {
    auto *CI = dyn_cast<CallInst>(&I);
    Function *F = CI ? CI->getCalledFunction() : nullptr;
    if (!F)
      continue;
    StringRef N = F->getName();
    if (!N.consume_front("llvm.nvvm."))
      continue;
    IRBuilder<> B(CI);
    if (Value *V = lowerOne(B, *CI, N)) {
      CI->replaceAllUsesWith(V);
      CI->eraseFromParent();
    }
  }
}

} // namespace cleave
