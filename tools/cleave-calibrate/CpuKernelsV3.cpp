//===- CpuKernelsV3.cpp - The CPU's loops for x86-64-v3 -------------------===//
//
// Part of cleave-calibrate (no LLVM). Compiled with -march=x86-64-v3.
//
//===----------------------------------------------------------------------===//
#define CLEAVE_CPU_KERNELS_NS v3
#include "CpuKernels.inc"
