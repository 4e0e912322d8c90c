/*===- cleave/nvcc_host.h - What nvcc gives every .cu file's host code ----===*
 *
 * Part of Cleave's runtime headers (no LLVM). nvcc includes cuda_runtime.h
 * in every .cu file, and under a CUDA compiler that header brings in the C
 * and C++ headers below and CUDA's host versions of min and max. Programs
 * that nvcc builds call fabs, sqrt, malloc, memset, time, min(a, b), ...
 * without including anything. Cleave's two Clang parses of a .cu file (host
 * and device side) include this file first (-include), and the rewritten
 * host source includes it through cleave/cuda_host.h, so that all three see
 * what nvcc's host pass sees (docs/driver.md).
 *
 * The list is what nvcc 13.0's host preprocessing includes from CUDA's
 * headers (the .cpp4.ii file of `nvcc --keep`). <stdio.h>, <assert.h> and
 * <new> are included by nvcc's device pass only: printf and assert need
 * their headers with nvcc, and with Cleave too.
 *===----------------------------------------------------------------------===*/
#ifndef CLEAVE_NVCC_HOST_H
#define CLEAVE_NVCC_HOST_H

#ifndef __cplusplus
#error "cleave/nvcc_host.h is for CUDA or C++ sources"
#endif

#include <ctype.h>
#include <limits.h>
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmath>
#include <cstdlib>
#include <utility>

/* CUDA's min and max for host code: the same overloads as its
 * crt/math_functions.hpp (same-width integers, signed and unsigned mixed
 * as unsigned; float; double, and float with double as double), so that
 * overload resolution, and its ambiguities, are nvcc's. __host__ is the
 * attribute for Clang's parses (beside CUDA's __device__ versions) and
 * nothing for the host compiler (cleave/cuda_host.h). */
#define CLEAVE_NVCC_MINMAX(T, Ta, Tb)                                          \
  __host__ inline T min(const Ta a, const Tb b) {                              \
    return static_cast<T>(a) < static_cast<T>(b) ? static_cast<T>(a)           \
                                                 : static_cast<T>(b);          \
  }                                                                            \
  __host__ inline T max(const Ta a, const Tb b) {                              \
    return static_cast<T>(a) > static_cast<T>(b) ? static_cast<T>(a)           \
                                                 : static_cast<T>(b);          \
  }
#define CLEAVE_NVCC_MINMAX_INT(S, U)                                           \
  CLEAVE_NVCC_MINMAX(S, S, S)                                                  \
  CLEAVE_NVCC_MINMAX(U, U, U)                                                  \
  CLEAVE_NVCC_MINMAX(U, S, U)                                                  \
  CLEAVE_NVCC_MINMAX(U, U, S)
CLEAVE_NVCC_MINMAX_INT(int, unsigned int)
CLEAVE_NVCC_MINMAX_INT(long int, unsigned long int)
CLEAVE_NVCC_MINMAX_INT(long long int, unsigned long long int)
#undef CLEAVE_NVCC_MINMAX_INT
#undef CLEAVE_NVCC_MINMAX

/* Floating point through fmin/fmax, as CUDA's: a NaN argument yields the
 * other one. */
__host__ inline float min(const float a, const float b) { return fminf(a, b); }
__host__ inline float max(const float a, const float b) { return fmaxf(a, b); }
__host__ inline double min(const double a, const double b) {
  return fmin(a, b);
}
__host__ inline double max(const double a, const double b) {
  return fmax(a, b);
}
__host__ inline double min(const float a, const double b) {
  return fmin(static_cast<double>(a), b);
}
__host__ inline double max(const float a, const double b) {
  return fmax(static_cast<double>(a), b);
}
__host__ inline double min(const double a, const float b) {
  return fmin(a, static_cast<double>(b));
}
__host__ inline double max(const double a, const float b) {
  return fmax(a, static_cast<double>(b));
}

/* The named forms CUDA also gives host code. */
__host__ inline unsigned int umin(const unsigned int a, const unsigned int b) {
  return min(a, b);
}
__host__ inline unsigned int umax(const unsigned int a, const unsigned int b) {
  return max(a, b);
}
__host__ inline long long int llmin(const long long int a,
                                    const long long int b) {
  return min(a, b);
}
__host__ inline long long int llmax(const long long int a,
                                    const long long int b) {
  return max(a, b);
}
__host__ inline unsigned long long int ullmin(const unsigned long long int a,
                                              const unsigned long long int b) {
  return min(a, b);
}
__host__ inline unsigned long long int ullmax(const unsigned long long int a,
                                              const unsigned long long int b) {
  return max(a, b);
}

#endif /* CLEAVE_NVCC_HOST_H */
