//===- Bfloat16.cpp - float/double to bfloat16 for CPU variants -----------===//
//
// Part of Cleave's runtime. LLVM lowers a truncation to `bfloat` on x86-64
// (user kernels with __bf16, or clang's own bf16 conversions) to the libcalls
// __truncsfbf2 and __truncdfbf2, which libgcc gained only in GCC 13; Debian
// 12 ships GCC 12, so a CPU variant with one would not link. These follow
// compiler-rt's: round to nearest even, NaN kept quiet with its sign and top
// payload bits. The bfloat16 result travels in xmm0 as a half does, so it is
// returned as _Float16.
//
//===----------------------------------------------------------------------===//
#include <cmath>
#include <cstdint>
#include <cstring>

namespace {

uint16_t floatToBfloat16(float F) {
  uint32_t U;
  std::memcpy(&U, &F, sizeof U);
  if ((U & 0x7fffffffu) > 0x7f800000u)
    return static_cast<uint16_t>((U >> 16) | 0x40u);
  U += 0x7fffu + ((U >> 16) & 1u);
  return static_cast<uint16_t>(U >> 16);
}

_Float16 inXmm0(uint16_t Bits) {
  _Float16 H;
  std::memcpy(&H, &Bits, sizeof H);
  return H;
}

} // namespace

extern "C" _Float16 __truncsfbf2(float F) { return inXmm0(floatToBfloat16(F)); }

extern "C" _Float16 __truncdfbf2(double D) {
  // Rounded to odd at float precision first (the float nearest D, moved
  // to its odd neighbour on D's side when inexact), the second rounding
  // to bfloat16's 8 bits is the only one that counts.
  float F = static_cast<float>(D);
  if (std::isfinite(D) && static_cast<double>(F) != D) {
    uint32_t U;
    std::memcpy(&U, &F, sizeof U);
    if (!(U & 1u))
      U += std::fabs(D) > std::fabs(static_cast<double>(F)) ? 1 : -1;
    std::memcpy(&F, &U, sizeof F);
  }
  return inXmm0(floatToBfloat16(F));
}
