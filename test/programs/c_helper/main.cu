// A CUDA program with a C helper file (rng.c, compiled as C): the inputs
// come from its generator, the kernel quantizes them to 16-bit codes packed
// in pairs, and the result is compared through the C checksum and element by
// element.
//
// XFAIL: *
// issue 25: .c inputs on the command line
// RUN: %build %s %S/rng.c -o %t
// RUN: env CLEAVE_DEVICES=cpu %t | FileCheck %s
// RUN: env CLEAVE_DEVICES=cpu,cpu,cpu %t | FileCheck %s
// RUN: env CLEAVE_DEVICES=cpu,cpu,cpu CLEAVE_PARTITION=even %t | FileCheck %s
// RUN: %if nvcc %{ %nvcc %s %S/rng.c -o %t.nvcc %}
// CHECK: time_ms:
// CHECK: PASS
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "rng.h"

#define CUDA_CHECK(call)                                                       \
  do {                                                                         \
    cudaError_t err_ = call;                                                   \
    if (err_ != cudaSuccess) {                                                 \
      fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__,                       \
              cudaGetErrorString(err_));                                       \
      exit(1);                                                                 \
    }                                                                          \
  } while (0)

// v is in [0, 1): scaling by a power of two is exact, so the host and the
// device agree on every code.
__host__ __device__ inline unsigned int quantize(float v) {
  int q = (int)(v * 65536.0f);
  return (unsigned)(q < 0 ? 0 : (q > 65535 ? 65535 : q));
}

__global__ void pack(const float *in, unsigned int *out, int pairs) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < pairs)
    out[i] = quantize(in[2 * i]) | (quantize(in[2 * i + 1]) << 16);
}

int main(int argc, char **argv) {
  int scale = argc > 1 ? atoi(argv[1]) : 1;
  int pairs = 150000 * scale + 1;
  std::vector<float> in(2 * pairs);
  std::vector<unsigned int> out(pairs), ref(pairs);
  Rng rng;
  rngSeed(&rng, 2718);
  for (float &v : in)
    v = rngUniform(&rng);
  float *dIn;
  unsigned int *dOut;
  CUDA_CHECK(cudaMalloc(&dIn, in.size() * sizeof(float)));
  CUDA_CHECK(cudaMalloc(&dOut, pairs * sizeof(unsigned int)));
  CUDA_CHECK(cudaMemcpy(dIn, in.data(), in.size() * sizeof(float), cudaMemcpyHostToDevice));
  cudaEvent_t s, e;
  cudaEventCreate(&s);
  cudaEventCreate(&e);
  cudaEventRecord(s);
  pack<<<(pairs + 255) / 256, 256>>>(dIn, dOut, pairs);
  CUDA_CHECK(cudaGetLastError());
  cudaEventRecord(e);
  cudaEventSynchronize(e);
  float ms;
  cudaEventElapsedTime(&ms, s, e);
  printf("time_ms: %.3f\n", ms);
  CUDA_CHECK(cudaMemcpy(out.data(), dOut, pairs * sizeof(unsigned int), cudaMemcpyDeviceToHost));
  for (int i = 0; i < pairs; ++i)
    ref[i] = quantize(in[2 * i]) | (quantize(in[2 * i + 1]) << 16);
  unsigned long long got = checksum32(out.data(), pairs),
                     want = checksum32(ref.data(), pairs);
  if (got != want) {
    for (int i = 0; i < pairs; ++i)
      if (out[i] != ref[i]) {
        printf("FAIL at %d: %08x, expected %08x\n", i, out[i], ref[i]);
        break;
      }
    printf("FAIL: checksum %llx, expected %llx\n", got, want);
    return 1;
  }
  printf("PASS (checksum %llx)\n", got);
  return 0;
}
