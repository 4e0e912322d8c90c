//===- PartitionParams.h - Arguments of a partition-ready launch -*- C++ -*-===//
//
// Part of Cleave. The values a runtime passes for the parameters that
// cleave-partition and cleave-merge append to a kernel's clone
// (docs/transforms.md, "Calling convention"), and the division by invariant
// integers behind them. Plain C++17, header only, no LLVM: the runtime, the
// GPU benchmark harness and the tests all include this one file, so the
// constants are computed in exactly one place.
//
// The clone decodes its original block index without a division instruction:
//
//   n1 = ctaid.x + first.x                     (< 2^32 - 2, see below)
//   q1 = umulhi(n1 + inc.x, magic.x) >> shift.x    (= n1 / gx)
//   bx = n1 - q1 * gx
//   n2 = q1 + first.y                          (< gy * gz <= (2^16-1)^2)
//   q2 = umulhi(n2 + inc.y, magic.y) >> shift.y    (= n2 / gy)
//   by = n2 - q2 * gy
//   bz = q2 + first.z
//
// where (first.x, first.y, first.z) is the launch's first linear block
// de-linearised x-fastest on the host. Everything is 32-bit: with
// first = fx + gx * (fy + gy * fz) and block c of the launch running original
// block L = first + c,
//   L / gx = n1 / gx + fy + gy * fz, so n2 = q1 + fy <= L / gx < gy * gz,
//   n1 = fx + c <= (gx - 1) + (count - 1) <= 2 * (2^31 - 2) = 2^32 - 4,
// given gx <= 2^31 - 1, count <= 2^31 - 1 (CUDA's limits) and
// first + count <= gx * gy * gz (checked by isValidPartitionLaunch).
// Every numerator is therefore at most 2^32 - 2, the range FastDivisor is
// exact for (n + inc does not wrap).
//
//===----------------------------------------------------------------------===//
#ifndef CLEAVE_RT_PARTITIONPARAMS_H
#define CLEAVE_RT_PARTITIONPARAMS_H

#include "cleave/ABI/PartitionABI.h"

#include <cstdint>

namespace cleave {
namespace rt {

/// Division of any n in [0, 2^32 - 2] by a fixed divisor d >= 1 as
///   n / d == umulhi(n + inc, magic) >> shift
/// with a 32-bit magic number (Granlund and Montgomery, PLDI 1994; the
/// "round-up or round-down" choice of Robison, ARITH 2005, that libdivide
/// uses). Let l = floor(log2 d), p = 32 + l.
///  - d = 2^l: magic = 2^32 - 1, inc = 1. umulhi(n + 1, 2^32 - 1) =
///    floor(n + 1 - (n + 1) / 2^32) = n, as 0 < n + 1 < 2^32; then >> l.
///  - otherwise 2^l < d < 2^(l+1), so 2^31 < 2^p / d < 2^32 * 2/3. Write
///    n = q d + k (0 <= k < d), r = 2^p mod d (0 < r < d), e = d - r.
///    Round-up, magic = ceil(2^p / d) = (2^p + e) / d, inc = 0:
///      magic n / 2^p = q + (k + e n / 2^p) / d, which is below q + 1
///      when e n < 2^p, true for all n < 2^32 when e <= 2^l.
///    Round-down, magic = floor(2^p / d) = (2^p - r) / d, inc = 1:
///      magic (n + 1) / 2^p = q + (k + 1 - r (n + 1) / 2^p) / d, which is
///      in [q, q + 1) when r (n + 1) <= 2^p, true for all n + 1 <= 2^32
///      when r <= 2^l.
///    As e + r = d < 2^(l+1), one of e, r is at most 2^l: round-up is used
///    when it is exact (inc = 0), round-down otherwise.
/// umulhi(x, m) >> l = floor(floor(x m / 2^32) / 2^l) = floor(x m / 2^p).
struct FastDivisor {
  uint32_t Magic = 0;
  uint32_t Shift = 0; // floor(log2 d), in [0, 31)
  uint32_t Inc = 0;   // 0 or 1
};

constexpr FastDivisor makeFastDivisor(uint32_t D) {
  FastDivisor F;
  uint32_t L = 0;
  while ((D >> L) > 1)
    ++L;
  F.Shift = L;
  if ((D & (D - 1)) == 0) {
    F.Magic = 0xFFFFFFFFu;
    F.Inc = 1;
    return F;
  }
  uint64_t Pow = uint64_t(1) << (32 + L);
  uint64_t Down = Pow / D;
  uint64_t R = Pow - Down * D;
  if (D - R <= (uint64_t(1) << L)) {
    F.Magic = uint32_t(Down + 1);
    F.Inc = 0;
  } else {
    F.Magic = uint32_t(Down);
    F.Inc = 1;
  }
  return F;
}

/// What the device computes: N / D for the D F was made for, for every
/// N <= 2^32 - 2.
constexpr uint32_t fastDivide(uint32_t N, FastDivisor F) {
  return uint32_t((uint64_t(N + F.Inc) * F.Magic) >> 32) >> F.Shift;
}

/// The parameters' count; their order is pp::PartitionParam
/// (cleave/ABI/PartitionABI.h, shared with the compiler).
using cleave::NumPartitionParams;

/// True when blocks [First, First + Count) of a grid (GX, GY, GZ) may be run
/// by one launch of a partition-ready clone of Count blocks: CUDA's grid
/// limits hold, Count is a valid 1-D grid size and the range is inside the
/// grid.
constexpr bool isValidPartitionLaunch(uint64_t First, uint64_t Count,
                                      uint32_t GX, uint32_t GY, uint32_t GZ) {
  if (GX < 1 || GX > 0x7FFFFFFFu || GY < 1 || GY > 0xFFFFu || GZ < 1 ||
      GZ > 0xFFFFu)
    return false;
  if (Count < 1 || Count > 0x7FFFFFFFu)
    return false;
  uint64_t Total = uint64_t(GX) * GY * GZ; // < 2^63
  return First < Total && Count <= Total - First;
}

/// Fills Values[0 .. NumPartitionParams) with the arguments for a launch
/// whose first block is linear block First (x fastest) of the grid
/// (GX, GY, GZ), in parameter order. Returns false, filling nothing, when
/// the grid exceeds CUDA's limits or First is outside it; the caller also
/// checks the block count (isValidPartitionLaunch).
constexpr bool computePartitionParams(uint64_t First, uint32_t GX, uint32_t GY,
                                      uint32_t GZ, uint32_t *Values) {
  if (!isValidPartitionLaunch(First, 1, GX, GY, GZ))
    return false;
  uint64_t Rows = First / GX;
  Values[pp::FirstX] = uint32_t(First % GX);
  Values[pp::FirstY] = uint32_t(Rows % GY);
  Values[pp::FirstZ] = uint32_t(Rows / GY);
  Values[pp::GridX] = GX;
  Values[pp::GridY] = GY;
  Values[pp::GridZ] = GZ;
  FastDivisor DX = makeFastDivisor(GX), DY = makeFastDivisor(GY);
  Values[pp::MagicX] = DX.Magic;
  Values[pp::ShiftX] = DX.Shift;
  Values[pp::IncX] = DX.Inc;
  Values[pp::MagicY] = DY.Magic;
  Values[pp::ShiftY] = DY.Shift;
  Values[pp::IncY] = DY.Inc;
  return true;
}

/// The device's decode, for tests and host-side executors: the original
/// block index of block C of a launch given Values.
struct BlockIndex {
  uint32_t X, Y, Z;
};

constexpr BlockIndex decodeBlockIndex(uint32_t C, const uint32_t *Values) {
  FastDivisor DX{Values[pp::MagicX], Values[pp::ShiftX], Values[pp::IncX]};
  FastDivisor DY{Values[pp::MagicY], Values[pp::ShiftY], Values[pp::IncY]};
  uint32_t N1 = C + Values[pp::FirstX];
  uint32_t Q1 = fastDivide(N1, DX);
  uint32_t N2 = Q1 + Values[pp::FirstY];
  uint32_t Q2 = fastDivide(N2, DY);
  return {N1 - Q1 * Values[pp::GridX], N2 - Q2 * Values[pp::GridY],
          Q2 + Values[pp::FirstZ]};
}

} // namespace rt
} // namespace cleave

#endif
