//===- HeaderAsmPtx.h - Arithmetic PTX blocks of cuda_fp16/bf16 -*- C++ -*-===//
//
// Part of Cleave. CUDA's cuda_fp16.hpp and cuda_bf16.hpp implement __half,
// __half2, __nv_bfloat16 and __nv_bfloat162 arithmetic, conversions and
// comparisons in inline PTX: a `{ ... }` block of a few instructions over
// `$N` operands and declared temporaries, generated from a few macros (about
// 350 statements). Instead of a table of strings, a strict recogniser parses
// such a block into the instructions below. It accepts only the register-only
// arithmetic those headers use, and libdevice's (integer carry chains,
// directed-rounding subtraction); anything else (memory, predication, special
// registers, an opcode or modifier not listed) makes the whole block
// unrecognised, and the asm stays refused as before.
//
//===----------------------------------------------------------------------===//
#ifndef CLEAVE_ANALYSIS_HEADERASMPTX_H
#define CLEAVE_ANALYSIS_HEADERASMPTX_H

#include "llvm/ADT/SmallVector.h"
#include "llvm/IR/InstrTypes.h"

#include <cstdint>
#include <memory>
#include <vector>

namespace cleave {

enum class PtxOp {
  Mov,
  Add,
  Sub,
  Mul,
  Fma,
  Neg,
  Abs,
  Min,
  Max,
  Div,
  Rcp,
  Sqrt,
  Rsqrt,
  Ex2,
  Lg2,
  Sin,
  Cos,
  Tanh,
  Cvt,
  Setp,
  Set,
  Selp,
  And,
  Or,
  Xor,
  Not,
  Shl,
  Shr,
  /// Integer carry chains (libdevice's wide multiplies for trigonometric
  /// argument reduction): addc, subc, mad, madc; add/sub with .cc.
  AddC,
  SubC,
  Mad,
  MadC,
};

enum class PtxType {
  B8,
  B16,
  B32,
  B64,
  U8,
  U16,
  U32,
  U64,
  S8,
  S16,
  S32,
  S64,
  F16,
  F16x2,
  BF16,
  BF16x2,
  F32,
  F64,
  Pred,
};

/// Rounding of a cvt or an arithmetic instruction: none given, to nearest
/// even, toward zero, toward -inf, toward +inf; the `i` forms (rni...) round
/// to an integral value.
enum class PtxRound { None, RN, RZ, RM, RP, RNI, RZI, RMI, RPI };

/// set/setp comparisons; the U forms are true when an operand is NaN.
enum class PtxCmp {
  EQ,
  NE,
  LT,
  LE,
  GT,
  GE,
  EQU,
  NEU,
  LTU,
  LEU,
  GTU,
  GEU,
  NUM,
  NAN_
};

struct PtxOperand {
  enum Kind { Arg, Reg, Imm, Pair } K;
  /// Arg: the asm operand number ($N); Reg: the register's index.
  unsigned Index = 0;
  /// Imm: the value.
  uint64_t Value = 0;
  /// Pair: {low, high} halves of a 16-, 32- or 64-bit value (mov.b32
  /// packing two halves, mov.b16 two bytes).
  std::vector<PtxOperand> Halves;
};

struct PtxInst {
  PtxOp Op;
  /// The destination type (cvt, set) or the operation's type.
  PtxType Type;
  /// The source type of cvt and set; the compared type of setp.
  PtxType SrcType = PtxType::B32;
  PtxRound Round = PtxRound::None;
  PtxCmp Cmp = PtxCmp::EQ;
  bool Ftz = false, Sat = false, Relu = false, PropagateNaN = false;
  /// .cc: writes the carry (borrow for sub) flag.
  bool CarryOut = false;
  /// .lo/.hi of an integer mul or mad: which half of the double-width
  /// product.
  enum { Whole, Lo, Hi } Part = Whole;
  llvm::SmallVector<PtxOperand, 4> Ops;
};

struct PtxRegister {
  /// Width in bits; 1 for a predicate.
  unsigned Bits;
};

/// A parsed block: its registers (every scope's, each declaration its own),
/// instructions in order, and the asm operands' widths and ties.
struct PtxBlock {
  std::vector<PtxRegister> Regs;
  std::vector<PtxInst> Insts;
  /// Per asm operand ($N): its width in bits and whether it is an output.
  llvm::SmallVector<unsigned, 4> OperandBits;
  unsigned NumOutputs = 0;
  /// Per output: the input operand tied to it ("0"), or -1.
  llvm::SmallVector<int, 2> TiedInput;
};

/// Parses \p CB's inline asm as one of the fp16/bf16 headers' arithmetic
/// blocks; null if it is not one (docs/cpu-backend.md lists the forms).
std::shared_ptr<const PtxBlock> parsePtxArithmetic(const llvm::CallBase &CB);

/// Width in bits of a value of \p T (a pair type is 32 bits).
unsigned ptxTypeBits(PtxType T);

} // namespace cleave

#endif
