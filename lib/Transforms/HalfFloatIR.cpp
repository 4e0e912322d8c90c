//===- HalfFloatIR.cpp - IEEE half and bfloat16 as integer IR -------------===//
//
// Part of Cleave. See cleave/Transforms/HalfFloatIR.h.
//
//===----------------------------------------------------------------------===//
#include "cleave/Transforms/HalfFloatIR.h"

using namespace llvm;

namespace cleave {

namespace {

struct FormatInfo {
  /// Significand bits (with the implicit one), least normal exponent,
  /// exponent bias, and the patterns of +inf and the largest finite value.
  int P, EMin, Bias;
  uint64_t Inf, Max;
};

FormatInfo info(HalfFormat F) {
  if (F == HalfFormat::F16)
    return {11, -14, 15, 0x7c00, 0x7bff};
  return {8, -126, 127, 0x7f80, 0x7f7f};
}

/// (-1)^Neg * Sig * 2^LsbExp (Sig an i64, LsbExp an i64) rounded once to
/// \p F with \p R, as an i16 pattern.
Value *roundSignificand(IRBuilder<> &B, Value *Neg, Value *Sig, Value *LsbExp,
                        HalfFormat F, PtxRound R) {
  FormatInfo I = info(F);
  auto C = [&](int64_t V) { return B.getInt64(V); };
  Value *Zero = B.CreateICmpEQ(Sig, C(0));
  Value *Safe = B.CreateSelect(Zero, C(1), Sig);
  Value *Lz = B.CreateBinaryIntrinsic(Intrinsic::ctlz, Safe, B.getTrue());
  Value *Top = B.CreateShl(Safe, Lz);
  // The leading one at bit 61; the two bits shifted out stay as a sticky
  // bit (the target keeps at most 11 bits, so 60 are plenty).
  Value *Lost = B.CreateICmpNE(B.CreateAnd(Top, C(3)), C(0));
  Value *Norm =
      B.CreateOr(B.CreateLShr(Top, C(2)), B.CreateZExt(Lost, B.getInt64Ty()));
  // The value's exponent E (its leading one is 2^E).
  Value *E = B.CreateSub(B.CreateAdd(LsbExp, C(63)), Lz);
  // Below the least normal exponent, the target's quantum is fixed: shift
  // further. Past P + 1 more bits everything is below half the least
  // subnormal, which the sticky rest still tells apart from zero.
  Value *D =
      B.CreateBinaryIntrinsic(Intrinsic::smax, B.CreateSub(C(I.EMin), E), C(0));
  D = B.CreateBinaryIntrinsic(Intrinsic::smin, D, C(I.P + 1));
  Value *Shift = B.CreateAdd(C(62 - I.P), D);
  Value *Q = B.CreateLShr(Norm, Shift);
  Value *Rem = B.CreateAnd(Norm, B.CreateSub(B.CreateShl(C(1), Shift), C(1)));
  Value *Half = B.CreateShl(C(1), B.CreateSub(Shift, C(1)));
  Value *Inexact = B.CreateICmpNE(Rem, C(0));
  Value *Up = nullptr;
  switch (R) {
  case PtxRound::RZ:
    Up = B.getFalse();
    break;
  case PtxRound::RM:
    Up = B.CreateAnd(Neg, Inexact);
    break;
  case PtxRound::RP:
    Up = B.CreateAnd(B.CreateNot(Neg), Inexact);
    break;
  default: { // RN: ties to even
    Value *Odd = B.CreateICmpNE(B.CreateAnd(Q, C(1)), C(0));
    Up = B.CreateOr(B.CreateICmpUGT(Rem, Half),
                    B.CreateAnd(B.CreateICmpEQ(Rem, Half), Odd));
    break;
  }
  }
  Q = B.CreateAdd(Q, B.CreateZExt(Up, B.getInt64Ty()));
  // A normal result: the biased exponent above the fraction, less one for
  // the leading one of Q (a carry out of Q bumps the exponent, up to inf).
  Value *ExpField = B.CreateShl(B.CreateAdd(E, C(I.Bias - 1)), C(I.P - 1));
  Value *Bits =
      B.CreateAdd(B.CreateSelect(B.CreateICmpEQ(D, C(0)), ExpField, C(0)), Q);
  Value *Over = B.CreateICmpSGE(Bits, C(I.Inf));
  Value *OverBits = nullptr;
  switch (R) {
  case PtxRound::RZ:
    OverBits = C(I.Max);
    break;
  case PtxRound::RM:
    OverBits = B.CreateSelect(Neg, C(I.Inf), C(I.Max));
    break;
  case PtxRound::RP:
    OverBits = B.CreateSelect(Neg, C(I.Max), C(I.Inf));
    break;
  default:
    OverBits = C(I.Inf);
    break;
  }
  Bits = B.CreateSelect(Over, OverBits, Bits);
  Bits = B.CreateSelect(Zero, C(0), Bits);
  Value *Sign = B.CreateSelect(Neg, B.getInt16(0x8000), B.getInt16(0));
  return B.CreateOr(B.CreateTrunc(Bits, B.getInt16Ty()), Sign);
}

} // namespace

uint16_t halfOne(HalfFormat F) {
  return F == HalfFormat::F16 ? 0x3c00 : 0x3f80;
}

Value *halfToFloat(IRBuilder<> &B, Value *Bits, HalfFormat F) {
  Value *U = B.CreateZExt(Bits, B.getInt32Ty());
  if (F == HalfFormat::BF16)
    return B.CreateBitCast(B.CreateShl(U, 16), B.getFloatTy());
  Value *S = B.CreateShl(B.CreateAnd(U, 0x8000), 16);
  Value *E = B.CreateAnd(B.CreateLShr(U, 10), 31);
  Value *M = B.CreateAnd(U, 0x3ff);
  Value *Normal =
      B.CreateOr(S, B.CreateOr(B.CreateShl(B.CreateAdd(E, B.getInt32(112)), 23),
                               B.CreateShl(M, 13)));
  // Subnormals: M * 2^-24, exact in float.
  Value *Sub = B.CreateFMul(B.CreateUIToFP(M, B.getFloatTy()),
                            ConstantFP::get(B.getFloatTy(), 0x1p-24));
  Sub = B.CreateOr(B.CreateBitCast(Sub, B.getInt32Ty()), S);
  Value *Special = B.CreateSelect(B.CreateICmpEQ(M, B.getInt32(0)),
                                  B.CreateOr(S, B.getInt32(0x7f800000)),
                                  B.getInt32(0x7fffffff));
  Value *R = B.CreateSelect(B.CreateICmpEQ(E, B.getInt32(0)), Sub, Normal);
  R = B.CreateSelect(B.CreateICmpEQ(E, B.getInt32(31)), Special, R);
  return B.CreateBitCast(R, B.getFloatTy());
}

Value *floatToHalf(IRBuilder<> &B, Value *X, HalfFormat F, PtxRound R) {
  if (X->getType()->isFloatTy())
    X = B.CreateFPExt(X, B.getDoubleTy()); // exact
  Value *U = B.CreateBitCast(X, B.getInt64Ty());
  Value *Neg = B.CreateICmpSLT(U, B.getInt64(0));
  Value *Exp = B.CreateAnd(B.CreateLShr(U, 52), 0x7ff);
  Value *Man = B.CreateAnd(U, (uint64_t(1) << 52) - 1);
  Value *Denormal = B.CreateICmpEQ(Exp, B.getInt64(0));
  Value *Sig = B.CreateSelect(Denormal, Man,
                              B.CreateOr(Man, B.getInt64(uint64_t(1) << 52)));
  Value *LsbExp = B.CreateSub(B.CreateSelect(Denormal, B.getInt64(1), Exp),
                              B.getInt64(1075));
  Value *Finite = roundSignificand(B, Neg, Sig, LsbExp, F, R);
  FormatInfo I = info(F);
  Value *Inf =
      B.CreateSelect(Neg, B.getInt16(0x8000 | I.Inf), B.getInt16(I.Inf));
  Value *Special = B.CreateSelect(B.CreateICmpEQ(Man, B.getInt64(0)), Inf,
                                  B.getInt16(HalfCanonicalNaN));
  return B.CreateSelect(B.CreateICmpEQ(Exp, B.getInt64(0x7ff)), Special,
                        Finite);
}

Value *intToHalf(IRBuilder<> &B, Value *X, bool Signed, HalfFormat F,
                 PtxRound R) {
  Value *X64 = Signed ? B.CreateSExt(X, B.getInt64Ty())
                      : B.CreateZExt(X, B.getInt64Ty());
  Value *Neg = Signed ? B.CreateICmpSLT(X64, B.getInt64(0)) : B.getFalse();
  // |INT64_MIN| is 2^63 as an unsigned magnitude.
  Value *Abs = B.CreateSelect(Neg, B.CreateNeg(X64), X64);
  return roundSignificand(B, Neg, Abs, B.getInt64(0), F, R);
}

Value *sumRoundedToOdd(IRBuilder<> &B, Value *A, Value *C) {
  // TwoSum (Knuth): S + Err == A + C exactly, S the rounded sum.
  Value *S = B.CreateFAdd(A, C);
  Value *Bp = B.CreateFSub(S, A);
  Value *Err =
      B.CreateFAdd(B.CreateFSub(A, B.CreateFSub(S, Bp)), B.CreateFSub(C, Bp));
  Type *I64 = B.getInt64Ty();
  Value *SBits = B.CreateBitCast(S, I64);
  Value *EBits = B.CreateBitCast(Err, I64);
  Value *Finite = B.CreateFCmpOLT(B.CreateUnaryIntrinsic(Intrinsic::fabs, S),
                                  ConstantFP::getInfinity(S->getType()));
  Value *Inexact = B.CreateFCmpONE(Err, ConstantFP::get(S->getType(), 0.0));
  Value *Even = B.CreateICmpEQ(B.CreateAnd(SBits, 1), B.getInt64(0));
  // The exact sum lies beyond S in Err's direction: a step away from zero
  // when the signs agree, toward it otherwise.
  Value *SameSign = B.CreateICmpSGE(B.CreateXor(SBits, EBits), B.getInt64(0));
  Value *Step = B.CreateSelect(SameSign, B.getInt64(1), B.getInt64(-1));
  Value *Adjust = B.CreateAnd(Finite, B.CreateAnd(Inexact, Even));
  SBits = B.CreateSelect(Adjust, B.CreateAdd(SBits, Step), SBits);
  return B.CreateBitCast(SBits, S->getType());
}

} // namespace cleave
