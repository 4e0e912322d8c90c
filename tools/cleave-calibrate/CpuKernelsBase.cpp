//===- CpuKernelsBase.cpp - The CPU's loops for the baseline ISA ----------===//
//
// Part of cleave-calibrate (no LLVM). Compiled for the default target; also
// holds the run-time choice between the two builds.
//
//===----------------------------------------------------------------------===//
#define CLEAVE_CPU_KERNELS_NS base
#include "CpuKernels.inc"

namespace cleave {
namespace calibrate {
namespace v3 {
uint64_t fma(uint64_t Iters, float *Acc);
void triad(double *A, const double *B, const double *C, double S, size_t N);
} // namespace v3

CpuKernels selectCpuKernels() {
#if (defined(__x86_64__) || defined(__i386__)) && defined(CLEAVE_HAVE_V3)
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
    return {v3::fma, v3::triad, "x86-64-v3"};
#endif
  return {base::fma, base::triad, "baseline"};
}

} // namespace calibrate
} // namespace cleave
