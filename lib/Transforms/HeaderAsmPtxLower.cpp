//===- HeaderAsmPtxLower.cpp - fp16/bf16 header PTX blocks as IR ----------===//
//
// Part of Cleave. Lowers a block parsed by parsePtxArithmetic
// (HeaderAsmPtx.h) instruction by instruction. Every register and operand
// holds its bits as an integer of its width (i16 for a half, i32 for a
// half pair or a float, i1 for a predicate); each instruction reads the
// types its suffix names.
//
// Exactness (docs/cpu-backend.md): f16/bf16 add, sub and mul are done in
// double and rounded once (a product of halves is exact in double; for
// sums, 53 >= 2p + 2 makes the double rounding innocuous), fma as the exact
// product plus the addend rounded to odd, then rounded once; conversions
// round once in integer arithmetic with the instruction's mode: all
// bit-exact, NaN results canonical (0x7fff). The .approx instructions map
// to the NVVM intrinsics the CPU lowering already implements with libm
// (within the GPU's documented error, not bit-exact). libdevice's integer
// carry chains are exact in 64-bit arithmetic, the carry a value of the
// block.
//
//===----------------------------------------------------------------------===//
#include "cleave/Transforms/HalfFloatIR.h"
#include "cleave/Transforms/HeaderAsmLower.h"

#include "llvm/IR/IntrinsicsNVPTX.h"

using namespace llvm;

namespace cleave {

namespace {

bool isPair(PtxType T) { return T == PtxType::F16x2 || T == PtxType::BF16x2; }
bool isHalf(PtxType T) {
  return T == PtxType::F16 || T == PtxType::BF16 || isPair(T);
}
HalfFormat formatOf(PtxType T) {
  return T == PtxType::BF16 || T == PtxType::BF16x2 ? HalfFormat::BF16
                                                    : HalfFormat::F16;
}
bool isSigned(PtxType T) {
  return T == PtxType::S8 || T == PtxType::S16 || T == PtxType::S32 ||
         T == PtxType::S64;
}

CmpInst::Predicate predicate(PtxCmp C) {
  switch (C) {
  case PtxCmp::EQ:
    return CmpInst::FCMP_OEQ;
  case PtxCmp::NE:
    return CmpInst::FCMP_ONE;
  case PtxCmp::LT:
    return CmpInst::FCMP_OLT;
  case PtxCmp::LE:
    return CmpInst::FCMP_OLE;
  case PtxCmp::GT:
    return CmpInst::FCMP_OGT;
  case PtxCmp::GE:
    return CmpInst::FCMP_OGE;
  case PtxCmp::EQU:
    return CmpInst::FCMP_UEQ;
  case PtxCmp::NEU:
    return CmpInst::FCMP_UNE;
  case PtxCmp::LTU:
    return CmpInst::FCMP_ULT;
  case PtxCmp::LEU:
    return CmpInst::FCMP_ULE;
  case PtxCmp::GTU:
    return CmpInst::FCMP_UGT;
  case PtxCmp::GEU:
    return CmpInst::FCMP_UGE;
  case PtxCmp::NUM:
    return CmpInst::FCMP_ORD;
  case PtxCmp::NAN_:
    return CmpInst::FCMP_UNO;
  }
  return CmpInst::FCMP_FALSE;
}

class PtxLowering {
public:
  PtxLowering(CallBase &CB, const PtxBlock &P) : B(&CB), CB(CB), P(P) {}
  void run();

private:
  Value *read(const PtxOperand &O, unsigned Bits);
  void write(const PtxOperand &O, Value *V);
  unsigned width(const PtxOperand &O) const;
  Value *lower(const PtxInst &I);
  Value *lowerScalarFloat(const PtxInst &I);
  Value *lowerCarry(const PtxInst &I);
  Value *lowerHalfLane(const PtxInst &I, ArrayRef<Value *> Ops);
  Value *lowerCvt(const PtxInst &I);
  Value *lowerCompare(const PtxInst &I);
  Value *lowerBits(const PtxInst &I);
  /// Applies \p Lane to each 16-bit lane of \p I's operands 1.. (one lane,
  /// or two of a pair type) and packs the results.
  template <typename Fn> Value *lanes(const PtxInst &I, Fn Lane);
  Value *asFloat(Value *Bits) { return B.CreateBitCast(Bits, B.getFloatTy()); }
  Value *asBits(Value *F) { return B.CreateBitCast(F, B.getInt32Ty()); }

  IRBuilder<> B;
  CallBase &CB;
  const PtxBlock &P;
  std::vector<Value *> Regs;
  SmallVector<Value *, 2> Outs;
  /// The carry flag (CC.CF) the last .cc instruction wrote.
  Value *Carry = nullptr;
};

unsigned PtxLowering::width(const PtxOperand &O) const {
  return O.K == PtxOperand::Reg ? P.Regs[O.Index].Bits : P.OperandBits[O.Index];
}

Value *PtxLowering::read(const PtxOperand &O, unsigned Bits) {
  switch (O.K) {
  case PtxOperand::Imm:
    return B.getIntN(Bits, O.Value);
  case PtxOperand::Reg:
    return Regs[O.Index];
  case PtxOperand::Pair: {
    Value *Lo = B.CreateZExt(read(O.Halves[0], Bits / 2), B.getIntNTy(Bits));
    Value *Hi = B.CreateZExt(read(O.Halves[1], Bits / 2), B.getIntNTy(Bits));
    return B.CreateOr(Lo, B.CreateShl(Hi, Bits / 2));
  }
  case PtxOperand::Arg:
    if (O.Index < P.NumOutputs)
      return Outs[O.Index];
    Value *V = CB.getArgOperand(O.Index - P.NumOutputs);
    return B.CreateBitCast(V, B.getIntNTy(P.OperandBits[O.Index]));
  }
  return nullptr;
}

void PtxLowering::write(const PtxOperand &O, Value *V) {
  switch (O.K) {
  case PtxOperand::Reg:
    Regs[O.Index] = V;
    return;
  case PtxOperand::Arg:
    Outs[O.Index] = V;
    return;
  case PtxOperand::Pair: {
    unsigned Half = V->getType()->getIntegerBitWidth() / 2;
    write(O.Halves[0], B.CreateTrunc(V, B.getIntNTy(Half)));
    write(O.Halves[1], B.CreateTrunc(B.CreateLShr(V, Half), B.getIntNTy(Half)));
    return;
  }
  case PtxOperand::Imm:
    return;
  }
}

void PtxLowering::run() {
  Regs.assign(P.Regs.size(), nullptr);
  for (unsigned O = 0; O < P.NumOutputs; ++O) {
    int Tied = P.TiedInput[O];
    Outs.push_back(Tied == -1 ? nullptr
                              : read({PtxOperand::Arg, unsigned(Tied)},
                                     P.OperandBits[Tied]));
  }
  for (const PtxInst &I : P.Insts)
    write(I.Ops[0], lower(I));
  Value *Result = nullptr;
  auto *ST = dyn_cast<StructType>(CB.getType());
  for (unsigned O = 0; O < P.NumOutputs; ++O) {
    Type *T = ST ? ST->getElementType(O) : CB.getType();
    Value *V = B.CreateBitCast(Outs[O], T);
    Result =
        ST ? B.CreateInsertValue(Result ? Result : PoisonValue::get(ST), V, O)
           : V;
  }
  CB.replaceAllUsesWith(Result);
  CB.eraseFromParent();
}

template <typename Fn> Value *PtxLowering::lanes(const PtxInst &I, Fn Lane) {
  unsigned N = isPair(I.Type) ? 2 : 1;
  unsigned Bits = 16 * N;
  Value *Result = nullptr;
  for (unsigned L = 0; L < N; ++L) {
    SmallVector<Value *, 3> Ops;
    for (unsigned K = 1; K < I.Ops.size(); ++K) {
      Value *V = read(I.Ops[K], Bits);
      Ops.push_back(B.CreateTrunc(B.CreateLShr(V, 16 * L), B.getInt16Ty()));
    }
    Value *R = Lane(ArrayRef<Value *>(Ops));
    if (N == 1)
      return R;
    R = B.CreateShl(B.CreateZExt(R, B.getInt32Ty()), 16 * L);
    Result = Result ? B.CreateOr(Result, R) : R;
  }
  return Result;
}

/// min/max on \p A, \p Bv (float) with their patterns \p RA, \p RB: NaN
/// operands ignored unless \p PropagateNaN (then any NaN gives NaN), two
/// NaNs give \p NaN, and -0 orders below +0.
Value *minMax(IRBuilder<> &B, bool Max, bool PropagateNaN, Value *A, Value *Bv,
              Value *RA, Value *RB, Value *NaN) {
  Value *ANaN = B.CreateFCmpUNO(A, A), *BNaN = B.CreateFCmpUNO(Bv, Bv);
  Value *Pick = B.CreateSelect(
      Max ? B.CreateFCmpOGT(A, Bv) : B.CreateFCmpOLT(A, Bv), RA, RB);
  // Equal values have equal patterns except +0/-0.
  Value *Tie = Max ? B.CreateAnd(RA, RB) : B.CreateOr(RA, RB);
  Value *R = B.CreateSelect(B.CreateFCmpOEQ(A, Bv), Tie, Pick);
  if (PropagateNaN)
    return B.CreateSelect(B.CreateOr(ANaN, BNaN), NaN, R);
  R = B.CreateSelect(ANaN, RB, B.CreateSelect(BNaN, RA, R));
  return B.CreateSelect(B.CreateAnd(ANaN, BNaN), NaN, R);
}

/// tanh in double, then float: within the error of tanh.approx.f32.
Value *tanhF32(IRBuilder<> &B, Value *X) {
  Type *D = B.getDoubleTy();
  Value *AX = B.CreateUnaryIntrinsic(Intrinsic::fabs, B.CreateFPExt(X, D));
  Value *T = B.CreateUnaryIntrinsic(Intrinsic::exp,
                                    B.CreateFMul(AX, ConstantFP::get(D, 2.0)));
  Value *R =
      B.CreateFSub(ConstantFP::get(D, 1.0),
                   B.CreateFDiv(ConstantFP::get(D, 2.0),
                                B.CreateFAdd(T, ConstantFP::get(D, 1.0))));
  // Below 2^-12, tanh(x) = x to float precision; the formula cancels there.
  R = B.CreateSelect(B.CreateFCmpOLT(AX, ConstantFP::get(D, 0x1p-12)), AX, R);
  return B.CreateBinaryIntrinsic(Intrinsic::copysign,
                                 B.CreateFPTrunc(R, B.getFloatTy()), X);
}

Value *PtxLowering::lowerHalfLane(const PtxInst &I, ArrayRef<Value *> Ops) {
  HalfFormat F = formatOf(I.Type);
  auto Float = [&](unsigned K) { return halfToFloat(B, Ops[K], F); };
  auto Double = [&](unsigned K) {
    return B.CreateFPExt(Float(K), B.getDoubleTy());
  };
  Value *NaN = B.getInt16(HalfCanonicalNaN);
  auto IsNaN = [&](Value *Bits) {
    return B.CreateICmpUGT(B.CreateAnd(Bits, 0x7fff),
                           B.getInt16(F == HalfFormat::F16 ? 0x7c00 : 0x7f80));
  };
  Value *R = nullptr;
  switch (I.Op) {
  case PtxOp::Add:
    R = floatToHalf(B, B.CreateFAdd(Double(0), Double(1)), F, PtxRound::RN);
    break;
  case PtxOp::Sub:
    R = floatToHalf(B, B.CreateFSub(Double(0), Double(1)), F, PtxRound::RN);
    break;
  case PtxOp::Mul:
    R = floatToHalf(B, B.CreateFMul(Double(0), Double(1)), F, PtxRound::RN);
    break;
  case PtxOp::Fma: {
    Value *Product = B.CreateFMul(Double(0), Double(1)); // exact
    R = floatToHalf(B, sumRoundedToOdd(B, Product, Double(2)), F, PtxRound::RN);
    break;
  }
  case PtxOp::Neg:
  case PtxOp::Abs: {
    Value *V = I.Op == PtxOp::Neg ? B.CreateXor(Ops[0], 0x8000)
                                  : B.CreateAnd(Ops[0], 0x7fff);
    return B.CreateSelect(IsNaN(Ops[0]), NaN, V);
  }
  case PtxOp::Min:
  case PtxOp::Max:
    return minMax(B, I.Op == PtxOp::Max, I.PropagateNaN, Float(0), Float(1),
                  Ops[0], Ops[1], NaN);
  case PtxOp::Tanh:
    return floatToHalf(B, tanhF32(B, Float(0)), F, PtxRound::RN);
  default:
    llvm_unreachable("not a half-lane instruction");
  }
  Value *Zero = B.getInt16(0);
  if (I.Sat) {
    // Clamped to [+0, 1]; NaN and -0 give +0.
    Value *Neg = B.CreateICmpNE(B.CreateAnd(R, 0x8000), Zero);
    Value *One = B.getInt16(halfOne(F));
    Value *V = B.CreateSelect(B.CreateICmpUGT(R, One), One, R);
    return B.CreateSelect(B.CreateOr(IsNaN(R), Neg), Zero, V);
  }
  if (I.Relu) {
    // Negative results (-0 included) become +0; NaN stays canonical.
    Value *Neg = B.CreateICmpNE(B.CreateAnd(R, 0x8000), Zero);
    return B.CreateSelect(B.CreateAnd(Neg, B.CreateNot(IsNaN(R))), Zero, R);
  }
  return R;
}

/// The NVVM fma with \p I's directed rounding (f32 only): a + b or a - b
/// rounded once that way is fma(a, 1, +-b), which the CPU lowering computes
/// exactly.
static Intrinsic::ID directedFma(const PtxInst &I) {
  switch (I.Round) {
  case PtxRound::RZ:
    return I.Ftz ? Intrinsic::nvvm_fma_rz_ftz_f : Intrinsic::nvvm_fma_rz_f;
  case PtxRound::RM:
    return I.Ftz ? Intrinsic::nvvm_fma_rm_ftz_f : Intrinsic::nvvm_fma_rm_f;
  case PtxRound::RP:
    return I.Ftz ? Intrinsic::nvvm_fma_rp_ftz_f : Intrinsic::nvvm_fma_rp_f;
  default:
    return Intrinsic::not_intrinsic;
  }
}

Value *PtxLowering::lowerScalarFloat(const PtxInst &I) {
  unsigned Bits = ptxTypeBits(I.Type);
  Type *FT = Bits == 32 ? B.getFloatTy() : B.getDoubleTy();
  SmallVector<Value *, 3> Ops;
  for (unsigned K = 1; K < I.Ops.size(); ++K)
    Ops.push_back(B.CreateBitCast(read(I.Ops[K], Bits), FT));
  auto Out = [&](Value *V) {
    return B.CreateBitCast(V, B.getIntNTy(Bits));
  };
  auto Nvvm = [&](Intrinsic::ID Plain, Intrinsic::ID Ftz) {
    return Out(B.CreateIntrinsic(I.Ftz ? Ftz : Plain, {}, Ops));
  };
  switch (I.Op) {
  case PtxOp::Add:
  case PtxOp::Sub: {
    Value *C = I.Op == PtxOp::Sub ? B.CreateFNeg(Ops[1]) : Ops[1];
    if (Intrinsic::ID ID = directedFma(I))
      return Out(B.CreateIntrinsic(ID, {}, {Ops[0], ConstantFP::get(FT, 1.0), C}));
    if (I.Ftz)
      return Out(B.CreateIntrinsic(Intrinsic::nvvm_add_rn_ftz_f, {}, {Ops[0], C}));
    return Out(I.Op == PtxOp::Sub ? B.CreateFSub(Ops[0], Ops[1])
                                  : B.CreateFAdd(Ops[0], Ops[1]));
  }
  case PtxOp::Mul:
    return Out(B.CreateFMul(Ops[0], Ops[1]));
  case PtxOp::Fma:
    return Out(B.CreateIntrinsic(Intrinsic::fma, {FT}, Ops));
  case PtxOp::Rsqrt:
    if (Bits == 64)
      return Nvvm(Intrinsic::nvvm_rsqrt_approx_d,
                  Intrinsic::nvvm_rsqrt_approx_ftz_d);
    return Nvvm(Intrinsic::nvvm_rsqrt_approx_f,
                Intrinsic::nvvm_rsqrt_approx_ftz_f);
  default:
    break;
  }
  // The rest are f32 only.
  switch (I.Op) {
  case PtxOp::Min:
  case PtxOp::Max:
    return minMax(B, I.Op == PtxOp::Max, I.PropagateNaN, Ops[0], Ops[1],
                  asBits(Ops[0]), asBits(Ops[1]), B.getInt32(0x7fffffff));
  case PtxOp::Div:
    return Nvvm(Intrinsic::nvvm_div_approx_f, Intrinsic::nvvm_div_approx_ftz_f);
  case PtxOp::Rcp:
    if (I.Ftz)
      return Nvvm(Intrinsic::nvvm_rcp_approx_ftz_f,
                  Intrinsic::nvvm_rcp_approx_ftz_f);
    return asBits(B.CreateFDiv(ConstantFP::get(B.getFloatTy(), 1.0), Ops[0]));
  case PtxOp::Sqrt:
    return Nvvm(Intrinsic::nvvm_sqrt_approx_f,
                Intrinsic::nvvm_sqrt_approx_ftz_f);
  case PtxOp::Ex2:
    return Nvvm(Intrinsic::nvvm_ex2_approx_f, Intrinsic::nvvm_ex2_approx_ftz_f);
  case PtxOp::Lg2:
    return Nvvm(Intrinsic::nvvm_lg2_approx_f, Intrinsic::nvvm_lg2_approx_ftz_f);
  case PtxOp::Sin:
    return Nvvm(Intrinsic::nvvm_sin_approx_f, Intrinsic::nvvm_sin_approx_ftz_f);
  case PtxOp::Cos:
    return Nvvm(Intrinsic::nvvm_cos_approx_f, Intrinsic::nvvm_cos_approx_ftz_f);
  case PtxOp::Tanh:
    return asBits(tanhF32(B, Ops[0]));
  default:
    llvm_unreachable("not a float instruction");
  }
}

/// \p X (float) rounded to an integral value as \p R says.
Value *roundIntegral(IRBuilder<> &B, Value *X, PtxRound R) {
  Intrinsic::ID ID = R == PtxRound::RNI   ? Intrinsic::roundeven
                     : R == PtxRound::RZI ? Intrinsic::trunc
                     : R == PtxRound::RMI ? Intrinsic::floor
                                          : Intrinsic::ceil;
  return B.CreateUnaryIntrinsic(ID, X);
}

Value *PtxLowering::lowerCvt(const PtxInst &I) {
  PtxType D = I.Type, S = I.SrcType;
  Value *Src = read(I.Ops[1], ptxTypeBits(S));
  auto SrcFloat = [&]() -> Value * {
    return isHalf(S) ? halfToFloat(B, Src, formatOf(S)) : asFloat(Src);
  };
  if (isPair(D)) {
    // cvt.rn.f16x2.f32 d, a, b: a to the upper half, b to the lower.
    Value *Hi = floatToHalf(B, asFloat(Src), formatOf(D), I.Round);
    Value *Lo =
        floatToHalf(B, asFloat(read(I.Ops[2], 32)), formatOf(D), I.Round);
    return B.CreateOr(B.CreateZExt(Lo, B.getInt32Ty()),
                      B.CreateShl(B.CreateZExt(Hi, B.getInt32Ty()), 16));
  }
  if (D == PtxType::F32 && isHalf(S))
    return asBits(SrcFloat());
  if (D == PtxType::F64)
    return B.CreateBitCast(B.CreateFPExt(asFloat(Src), B.getDoubleTy()),
                           B.getInt64Ty());
  if (D == PtxType::F32 && S == PtxType::F64)
    return asBits(
        B.CreateFPTrunc(B.CreateBitCast(Src, B.getDoubleTy()), B.getFloatTy()));
  if (D == S) // rounding to an integral value in the same format
    return isHalf(D) ? floatToHalf(B, roundIntegral(B, SrcFloat(), I.Round),
                                   formatOf(D), PtxRound::RN)
                     : asBits(roundIntegral(B, asFloat(Src), I.Round));
  if (isHalf(D)) {
    if (S == PtxType::F32 || S == PtxType::F64)
      return floatToHalf(B,
                         B.CreateBitCast(Src, S == PtxType::F32
                                                  ? B.getFloatTy()
                                                  : B.getDoubleTy()),
                         formatOf(D), I.Round);
    return intToHalf(B, Src, isSigned(S), formatOf(D), I.Round);
  }
  // Float to integer: NaN gives 0, out-of-range values saturate (PTX), as
  // llvm.fpto[su]i.sat do; a narrow result is extended into its register.
  Type *Int = B.getIntNTy(ptxTypeBits(D));
  Value *V = roundIntegral(B, SrcFloat(), I.Round);
  V = B.CreateIntrinsic(isSigned(D) ? Intrinsic::fptosi_sat
                                    : Intrinsic::fptoui_sat,
                        {Int, B.getFloatTy()}, {V});
  Type *Reg = B.getIntNTy(width(I.Ops[0]));
  return isSigned(D) ? B.CreateSExt(V, Reg) : B.CreateZExt(V, Reg);
}

Value *PtxLowering::lowerCompare(const PtxInst &I) {
  CmpInst::Predicate Pred = predicate(I.Cmp);
  PtxType S = I.SrcType, D = I.Type;
  auto Compare = [&](Value *A, Value *Bv) { return B.CreateFCmp(Pred, A, Bv); };
  if (I.Op == PtxOp::Setp) {
    unsigned Bits = ptxTypeBits(S);
    Value *A = read(I.Ops[1], Bits), *Bv = read(I.Ops[2], Bits);
    if (isHalf(S))
      return Compare(halfToFloat(B, A, formatOf(S)),
                     halfToFloat(B, Bv, formatOf(S)));
    Type *FT = S == PtxType::F32 ? B.getFloatTy() : B.getDoubleTy();
    return Compare(B.CreateBitCast(A, FT), B.CreateBitCast(Bv, FT));
  }
  // set: per lane of a pair, else once; true is all ones for an integer
  // destination, 1.0 for a floating one.
  bool IntDest = D == PtxType::U32 || D == PtxType::S32;
  if (isHalf(S)) {
    auto Lane = [&](ArrayRef<Value *> Ops) {
      Value *C = Compare(halfToFloat(B, Ops[0], formatOf(S)),
                         halfToFloat(B, Ops[1], formatOf(S)));
      uint16_t True = IntDest ? 0xffff : halfOne(formatOf(D));
      return B.CreateSelect(C, B.getInt16(True), B.getInt16(0));
    };
    PtxInst L = I;
    L.Type = S; // the lanes are the source's
    Value *R = lanes(L, Lane);
    unsigned DBits = ptxTypeBits(D);
    if (!isPair(S) && IntDest) // one f16 compared: the whole word
      return B.CreateSExt(R, B.getIntNTy(DBits));
    return DBits == 16 ? R : B.CreateZExt(R, B.getIntNTy(DBits));
  }
  Value *C = Compare(asFloat(read(I.Ops[1], 32)), asFloat(read(I.Ops[2], 32)));
  uint32_t True = IntDest ? 0xffffffff : 0x3f800000;
  return B.CreateSelect(C, B.getInt32(True), B.getInt32(0));
}

Value *PtxLowering::lowerBits(const PtxInst &I) {
  unsigned Bits = ptxTypeBits(I.Type);
  Value *A = read(I.Ops[1], Bits);
  if (I.Op == PtxOp::Not)
    return B.CreateNot(A);
  if (I.Op == PtxOp::Shl || I.Op == PtxOp::Shr) {
    // PTX clamps the amount to the width: all bits out (or sign-filled).
    Value *Amount = B.CreateZExtOrTrunc(
        B.CreateBinaryIntrinsic(Intrinsic::umin, read(I.Ops[2], 32),
                                B.getInt32(Bits)),
        A->getType());
    Value *Last = ConstantInt::get(A->getType(), Bits - 1);
    Value *Out = B.CreateICmpEQ(Amount, ConstantInt::get(A->getType(), Bits));
    if (I.Op == PtxOp::Shr && isSigned(I.Type))
      return B.CreateAShr(A, B.CreateSelect(Out, Last, Amount));
    Value *Safe = B.CreateSelect(Out, Last, Amount);
    Value *V =
        I.Op == PtxOp::Shl ? B.CreateShl(A, Safe) : B.CreateLShr(A, Safe);
    return B.CreateSelect(Out, ConstantInt::get(A->getType(), 0), V);
  }
  Value *C = read(I.Ops[2], Bits);
  switch (I.Op) {
  case PtxOp::And:
    return B.CreateAnd(A, C);
  case PtxOp::Or:
    return B.CreateOr(A, C);
  default:
    return B.CreateXor(A, C);
  }
}

Value *PtxLowering::lowerCarry(const PtxInst &I) {
  Type *I64 = B.getInt64Ty();
  bool Signed = I.Type == PtxType::S32;
  auto Wide = [&](unsigned K, bool Sign) {
    Value *V = read(I.Ops[K], 32);
    return Sign ? B.CreateSExt(V, I64) : B.CreateZExt(V, I64);
  };
  bool CarryIn = I.Op == PtxOp::AddC || I.Op == PtxOp::SubC ||
                 I.Op == PtxOp::MadC;
  Value *In = CarryIn ? B.CreateZExt(Carry, I64) : B.getInt64(0);
  bool Subtract = I.Op == PtxOp::Sub || I.Op == PtxOp::SubC;
  Value *Sum = nullptr;
  if (I.Op == PtxOp::Mul || I.Op == PtxOp::Mad || I.Op == PtxOp::MadC) {
    // The 64-bit product of two 32-bit words is exact; .lo/.hi pick half.
    Value *P = B.CreateMul(Wide(1, Signed), Wide(2, Signed));
    if (I.Part == PtxInst::Hi)
      P = B.CreateLShr(P, 32);
    P = B.CreateAnd(P, B.getInt64(0xffffffff));
    if (I.Op == PtxOp::Mul)
      return B.CreateTrunc(P, B.getInt32Ty());
    Sum = B.CreateAdd(B.CreateAdd(P, Wide(3, false)), In);
  } else if (Subtract) {
    Sum = B.CreateSub(B.CreateSub(Wide(1, false), Wide(2, false)), In);
  } else {
    Sum = B.CreateAdd(B.CreateAdd(Wide(1, false), Wide(2, false)), In);
  }
  // The carry out of bit 31; for a subtraction, the borrow (CC.CF).
  if (I.CarryOut)
    Carry = Subtract ? B.CreateICmpSLT(Sum, B.getInt64(0))
                     : B.CreateICmpNE(B.CreateLShr(Sum, 32), B.getInt64(0));
  return B.CreateTrunc(Sum, B.getInt32Ty());
}

Value *PtxLowering::lower(const PtxInst &I) {
  if (I.Type == PtxType::U32 || I.Type == PtxType::S32) {
    switch (I.Op) {
    case PtxOp::Add:
    case PtxOp::Sub:
    case PtxOp::Mul:
    case PtxOp::AddC:
    case PtxOp::SubC:
    case PtxOp::Mad:
    case PtxOp::MadC:
      return lowerCarry(I);
    default:
      break;
    }
  }
  switch (I.Op) {
  case PtxOp::Mov:
    return read(I.Ops[1], ptxTypeBits(I.Type));
  case PtxOp::Cvt:
    return lowerCvt(I);
  case PtxOp::Setp:
  case PtxOp::Set:
    return lowerCompare(I);
  case PtxOp::Selp: {
    unsigned Bits = ptxTypeBits(I.Type);
    return B.CreateSelect(read(I.Ops[3], 1), read(I.Ops[1], Bits),
                          read(I.Ops[2], Bits));
  }
  case PtxOp::And:
  case PtxOp::Or:
  case PtxOp::Xor:
  case PtxOp::Not:
  case PtxOp::Shl:
  case PtxOp::Shr:
    return lowerBits(I);
  default:
    if (isHalf(I.Type))
      return lanes(
          I, [&](ArrayRef<Value *> Ops) { return lowerHalfLane(I, Ops); });
    return lowerScalarFloat(I);
  }
}

} // namespace

void lowerPtxArithmetic(CallBase &CB, const PtxBlock &P) {
  PtxLowering(CB, P).run();
}

} // namespace cleave
