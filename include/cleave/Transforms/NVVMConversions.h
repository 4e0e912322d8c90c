//===- NVVMConversions.h - libdevice's conversions for the CPU --*- C++ -*-===//
//
// Part of Cleave. libdevice's math (sinf, powf, roundf, rintf, log1pf, and
// most double functions) calls NVVM intrinsics for conversions between
// integers and floating point with a rounding mode, for moving the halves of
// a double, and for adds and multiplies with a directed rounding. The CPU
// lowering rewrites them first (docs/cpu-backend.md, "Math").
//
//===----------------------------------------------------------------------===//
#ifndef CLEAVE_TRANSFORMS_NVVMCONVERSIONS_H
#define CLEAVE_TRANSFORMS_NVVMCONVERSIONS_H

namespace llvm {
class Function;
} // namespace llvm

namespace cleave {

/// Rewrites in \p K, with their PTX meaning:
/// - `{f,d}2{i,ui,ll,ull}.{rn,rz,rm,rp}[.ftz]` (cvt.rni/rzi/rmi/rpi to an
///   integer: saturating, NaN to 0) into a rounding and `fpto[su]i.sat`;
/// - `{i,ui,ll,ull}2{f,d}.rn` and `d2f.rn` into plain conversions;
/// - `d2i.hi`, `d2i.lo`, `lohi.i2d` into bit moves;
/// - `round.{f,d}` (cvt.rni: to nearest, ties to even) into `roundeven`;
/// - `add.{rz,rm,rp}` into `fma.r*(x, 1, y)` with `y` the operand of larger
///   magnitude, and `mul.{rz,rm,rp}` into `fma.r*(a, b, ±0)`, which the
///   lowering computes exactly.
/// Other forms are left for the lowering, which refuses what it cannot map.
void lowerNVVMConversions(llvm::Function &K);

} // namespace cleave

#endif
