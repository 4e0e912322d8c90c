//===- CpuKernels.h - The CPU's measured loops ------------------*- C++ -*-===//
//
// Part of cleave-calibrate (no LLVM). The loops exist twice: compiled for
// x86-64-v3 (AVX2 and FMA, the level the CPU backend targets) and for the
// baseline ISA, picked at run time, so the tool runs on any x86-64 host.
//
//===----------------------------------------------------------------------===//
#ifndef CLEAVE_CALIBRATE_CPUKERNELS_H
#define CLEAVE_CALIBRATE_CPUKERNELS_H

#include <cstddef>
#include <cstdint>

namespace cleave {
namespace calibrate {

/// Independent fp32 FMA chains per call: enough (12 AVX vectors) to cover
/// the FMA latency on two ports.
constexpr int FmaLanes = 96;

struct CpuKernels {
  /// Runs \p Iters rounds of Acc[i] = Acc[i] * Acc[FmaLanes] +
  /// Acc[FmaLanes + 1] over \p Acc[0..FmaLanes); returns the flops done.
  uint64_t (*Fma)(uint64_t Iters, float *Acc);
  /// STREAM triad: A[i] = B[i] + S * C[i].
  void (*Triad)(double *A, const double *B, const double *C, double S,
                size_t N);
  const char *Isa; ///< "x86-64-v3" or "baseline"
};

/// The x86-64-v3 loops when this CPU has AVX2 and FMA, else the baseline.
CpuKernels selectCpuKernels();

} // namespace calibrate
} // namespace cleave

#endif
