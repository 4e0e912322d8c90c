//===- LibdeviceAsm.h - Inline PTX of CUDA's libdevice ----------*- C++ -*-===//
//
// Part of Cleave. libdevice (nvvm/libdevice/libdevice.10.bc), which Clang
// links for the math of CUDA device code, writes a few operations in inline
// PTX: an approximate reciprocal in powf, tanf, erfcf, atanf, fmodf...; a
// 32x32+32 multiply-add with a carry chain in the argument reduction of
// sinf, cosf, sincosf, tanf; 128-bit arithmetic in the reduction of sin,
// cos, tan; rounded subtractions (__fsub_r*, fdimf, acoshf); a reciprocal
// square root in acos, asin, hypot, norm3d; a select in cbrt. Each form is
// matched exactly (asm string and constraints, CUDA 13's libdevice) and is a
// pure function of its operands; HeaderAsm.h lists these beside the
// headers' idioms, so legality accepts them and the CPU lowering rewrites
// them (LibdeviceAsmLower.h).
//
//===----------------------------------------------------------------------===//
#ifndef CLEAVE_ANALYSIS_LIBDEVICEASM_H
#define CLEAVE_ANALYSIS_LIBDEVICEASM_H

#include <optional>

namespace llvm {
class InlineAsm;
} // namespace llvm

namespace cleave {

enum class LibdeviceAsmKind {
  /// rcp.approx.ftz.f32 $0, $1.
  RcpApproxFtz,
  /// rsqrt.approx.ftz.f64 $0, $1.
  RsqrtApproxFtz,
  /// sub.{rn,rz,rm,rp}[.ftz].f32 and sub.rn.f64 $0, $1, $2.
  Sub,
  /// {$0, $1} = the 64-bit value $2 * $3 + $4 of 32-bit operands.
  MadWide32,
  /// {$0, $1} = the 128-bit value $2 * $3 + $4 of 64-bit operands.
  MadWide64,
  /// {$0, $1} = the 128-bit product $2 * $3 of 64-bit operands.
  MulWide64,
  /// {$0, $1} = {$2, $3} + {$4, $5}, 128-bit values as (low, high) halves.
  Add128,
  /// {$0, $1} = {$2, $3} - {$4, $5}, likewise.
  Sub128,
  /// $0 = ($1 == $2 or unordered) ? $3 : $4, doubles (setp.equ + selp).
  SelectEqu,
};

struct LibdeviceAsm {
  LibdeviceAsmKind Kind = LibdeviceAsmKind::RcpApproxFtz;
  /// Sub: the rounding ('n', 'z', 'm', 'p'), flush-to-zero, and 32 or 64.
  char Rounding = 'n';
  bool Ftz = false;
  unsigned Bits = 32;
};

/// The libdevice form \p IA is, if it is one.
std::optional<LibdeviceAsm> matchLibdeviceAsm(const llvm::InlineAsm &IA);

} // namespace cleave

#endif
