//===- HalfFloatIR.h - IEEE half and bfloat16 as integer IR -----*- C++ -*-===//
//
// Part of Cleave. Conversions between binary16/bfloat16 bit patterns (i16)
// and float, double and integers, emitted as integer IR with every PTX
// rounding mode (rn, rz, rm, rp). They need no `half`/`bfloat` type, so the
// CPU code needs no soft-float helpers (__truncsfhf2, __truncsfbf2) and no
// rounding-mode switch. NaN results are the canonical 0x7fff, as PTX and the
// headers' host code produce.
//
//===----------------------------------------------------------------------===//
#ifndef CLEAVE_TRANSFORMS_HALFFLOATIR_H
#define CLEAVE_TRANSFORMS_HALFFLOATIR_H

#include "cleave/Analysis/HeaderAsmPtx.h"

#include "llvm/IR/IRBuilder.h"

namespace cleave {

enum class HalfFormat { F16, BF16 };

/// The canonical NaN of both formats.
inline constexpr uint16_t HalfCanonicalNaN = 0x7fff;

/// 1.0 in \p F.
uint16_t halfOne(HalfFormat F);

/// The float value of the i16 pattern \p Bits (exact; an f16 NaN becomes
/// the canonical float NaN 0x7fffffff, a bf16 NaN keeps its payload, as
/// the headers' host conversions do).
llvm::Value *halfToFloat(llvm::IRBuilder<> &B, llvm::Value *Bits, HalfFormat F);

/// \p X (float or double) rounded once to \p F with \p R (RN, RZ, RM, RP).
llvm::Value *floatToHalf(llvm::IRBuilder<> &B, llvm::Value *X, HalfFormat F,
                         PtxRound R);

/// The integer \p X (16 to 64 bits) rounded once to \p F with \p R.
llvm::Value *intToHalf(llvm::IRBuilder<> &B, llvm::Value *X, bool Signed,
                       HalfFormat F, PtxRound R);

/// A + C (doubles) rounded to odd: the sum when exact, else the neighbour
/// of the exact sum whose last significand bit is 1. Rounding that once
/// more to a format of at most 51 bits gives the exact sum correctly
/// rounded (Boldo-Melquiond), which an fma of halves needs.
llvm::Value *sumRoundedToOdd(llvm::IRBuilder<> &B, llvm::Value *A,
                             llvm::Value *C);

} // namespace cleave

#endif
