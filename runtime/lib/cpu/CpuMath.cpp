//===- CpuMath.cpp - Host versions of GPU math the IR cannot express ------===//
//
// Part of Cleave's runtime. The CPU variants call these for PTX operations
// with a directed rounding mode (fma.rz/rm/rp), used by libdevice's expf,
// logf and friends. They are exact: no MXCSR mode switch, an error-free
// transformation instead.
//
//===----------------------------------------------------------------------===//
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>

namespace {

enum class Dir { Zero, Down, Up };

// Rounds the exact value Hi + Lo (|Lo| <= ulp(Hi)/2, both doubles) to float
// in direction D. Hi rounded to nearest float is within half a float ulp of
// the exact value; one step toward the right direction fixes it.
float roundFloat(double Hi, double Lo, Dir D) {
  float F = static_cast<float>(Hi);
  if (std::isnan(Hi) || std::isinf(Hi))
    return F;
  double Fd = F;
  // Sign of (F - exact): compare F with Hi first, then with Lo.
  int Cmp = Fd > Hi ? 1 : Fd < Hi ? -1 : (Lo < 0 ? 1 : Lo > 0 ? -1 : 0);
  if (Cmp == 0)
    return F;
  bool Negative = (Hi + Lo) < 0 || (Hi == 0 && Lo < 0);
  bool WantDown = D == Dir::Down || (D == Dir::Zero && !Negative);
  if (WantDown && Cmp > 0)
    return std::nextafter(F, -std::numeric_limits<float>::infinity());
  if (!WantDown && Cmp < 0)
    return std::nextafter(F, std::numeric_limits<float>::infinity());
  return F;
}

float fmaDirected(float A, float B, float C, Dir D) {
  // A*B is exact in double (24 + 24 bits); TwoSum gives the rounding error of
  // the addition exactly.
  double P = static_cast<double>(A) * static_cast<double>(B);
  double S = P + C;
  double Bp = S - P;
  double E = (P - (S - Bp)) + (static_cast<double>(C) - Bp);
  if (!std::isfinite(S))
    return static_cast<float>(S);
  return roundFloat(S, E, D);
}

// Double FMA with a directed rounding: the nearest result and its exact
// error come from std::fma itself (err = fma(a, b, c) - r is not exact in
// general, so use the sign test through a second fma on the residual).
double fmaDirected(double A, double B, double C, Dir D) {
  double R = std::fma(A, B, C);
  if (!std::isfinite(R))
    return R;
  // Residual sign: exact value minus R, computed as fma(A, B, C - R) when
  // C - R is exact (Sterbenz-like cases); otherwise fall back to R. Documented
  // as within 1 ulp in docs/cpu-backend.md.
  double Diff = C - R;
  double Res = std::fma(A, B, Diff);
  int Cmp = Res > 0 ? -1 : Res < 0 ? 1 : 0; // sign of (R - exact)
  bool Negative = R < 0;
  bool WantDown = D == Dir::Down || (D == Dir::Zero && !Negative);
  if (WantDown && Cmp > 0)
    return std::nextafter(R, -std::numeric_limits<double>::infinity());
  if (!WantDown && Cmp < 0)
    return std::nextafter(R, std::numeric_limits<double>::infinity());
  return R;
}

} // namespace

extern "C" {
float __cleave_rt_fma_rz_f32(float A, float B, float C) {
  return fmaDirected(A, B, C, Dir::Zero);
}
float __cleave_rt_fma_rm_f32(float A, float B, float C) {
  return fmaDirected(A, B, C, Dir::Down);
}
float __cleave_rt_fma_rp_f32(float A, float B, float C) {
  return fmaDirected(A, B, C, Dir::Up);
}
double __cleave_rt_fma_rz_f64(double A, double B, double C) {
  return fmaDirected(A, B, C, Dir::Zero);
}
double __cleave_rt_fma_rm_f64(double A, double B, double C) {
  return fmaDirected(A, B, C, Dir::Down);
}
double __cleave_rt_fma_rp_f64(double A, double B, double C) {
  return fmaDirected(A, B, C, Dir::Up);
}
}

//===----------------------------------------------------------------------===//
// Warp and block collectives with data (match, redux, __syncthreads_count).
// The CPU variant publishes each lane's operand in a per-thread slot and
// passes the slots of its warp (or block) with the mask of the lanes that
// take part: existing, at the operation, and in the member mask.
//===----------------------------------------------------------------------===//

namespace {
template <class T>
uint32_t matchAny(const T *Warp, uint32_t Part, uint32_t Lane) {
  uint32_t R = 0;
  for (uint32_t L = 0; L < 32; ++L)
    if ((Part >> L & 1) && Warp[L] == Warp[Lane])
      R |= 1u << L;
  return R;
}
template <class T> uint32_t matchAll(const T *Warp, uint32_t Part) {
  int First = -1;
  for (uint32_t L = 0; L < 32; ++L)
    if (Part >> L & 1) {
      if (First < 0)
        First = int(L);
      else if (Warp[L] != Warp[First])
        return 0;
    }
  return Part;
}
} // namespace

extern "C" {

uint32_t __cleave_rt_match_any_b32(const uint32_t *Warp, uint32_t Part,
                                   uint32_t Lane) {
  return matchAny(Warp, Part, Lane);
}
uint32_t __cleave_rt_match_any_b64(const uint64_t *Warp, uint32_t Part,
                                   uint32_t Lane) {
  return matchAny(Warp, Part, Lane);
}
/// The member mask when every taking part lane holds the same value, else 0.
uint32_t __cleave_rt_match_all_b32(const uint32_t *Warp, uint32_t Part,
                                   uint32_t) {
  return matchAll(Warp, Part);
}
uint32_t __cleave_rt_match_all_b64(const uint64_t *Warp, uint32_t Part,
                                   uint32_t) {
  return matchAll(Warp, Part);
}

/// redux.sync: Op 0 add (wrapping), 1 min (s32), 2 max (s32), 3 umin,
/// 4 umax, 5 and, 6 or, 7 xor.
uint32_t __cleave_rt_redux_b32(const uint32_t *Warp, uint32_t Part,
                               uint32_t Op) {
  bool Have = false;
  uint32_t R = 0;
  for (uint32_t L = 0; L < 32; ++L) {
    if (!(Part >> L & 1))
      continue;
    uint32_t V = Warp[L];
    if (!Have) {
      R = V;
      Have = true;
      continue;
    }
    switch (Op) {
    case 0: R += V; break;
    case 1: R = int32_t(V) < int32_t(R) ? V : R; break;
    case 2: R = int32_t(V) > int32_t(R) ? V : R; break;
    case 3: R = V < R ? V : R; break;
    case 4: R = V > R ? V : R; break;
    case 5: R &= V; break;
    case 6: R |= V; break;
    default: R ^= V; break;
    }
  }
  return R;
}

/// __syncthreads_count (Op 0: number of non-zero predicates), _and (1),
/// _or (2) over the N threads of the block.
uint32_t __cleave_rt_block_red_b32(const uint32_t *Pred, uint64_t N,
                                   uint32_t Op) {
  uint32_t Count = 0;
  for (uint64_t T = 0; T < N; ++T)
    Count += Pred[T] != 0;
  if (Op == 0)
    return Count;
  if (Op == 1)
    return Count == N;
  return Count != 0;
}

} // extern "C"
