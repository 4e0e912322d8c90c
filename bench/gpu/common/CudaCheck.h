//===- CudaCheck.h - CUDA_CHECK for the GPU benchmarks ----------*- C++ -*-===//
//
// Part of Cleave's benchmarks. CUDA_CHECK(call): a CUDA runtime call that
// must succeed; otherwise the file, line, call and CUDA's message go to
// stderr and the program exits with status 1. Included by the benchmarks
// built by nvcc on the GPU machine and by headline.cu, which `cleave
// compile` builds.
//
//===----------------------------------------------------------------------===//
#ifndef CLEAVE_BENCH_GPU_COMMON_CUDACHECK_H
#define CLEAVE_BENCH_GPU_COMMON_CUDACHECK_H

#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>

#define CUDA_CHECK(call)                                                       \
  do {                                                                         \
    cudaError_t err_ = (call);                                                 \
    if (err_ != cudaSuccess) {                                                 \
      std::fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call,       \
                   cudaGetErrorString(err_));                                  \
      std::exit(1);                                                            \
    }                                                                          \
  } while (0)

#endif
