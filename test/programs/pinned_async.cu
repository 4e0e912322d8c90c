// Pinned host memory (cudaMallocHost) streamed through the device in chunks
// on two streams: cudaMemcpyAsync up, a kernel, cudaMemcpyAsync down, each
// chunk on the stream of its parity; the output buffer is cleared with
// cudaMemset first and a cudaMemsetAsync marks a guard region that no chunk
// touches.
//
// RUN: %build %s -o %t
// RUN: env CLEAVE_DEVICES=cpu %t | FileCheck %s
// RUN: env CLEAVE_DEVICES=cpu,cpu,cpu %t | FileCheck %s
// RUN: env CLEAVE_DEVICES=cpu,cpu,cpu CLEAVE_PARTITION=even %t | FileCheck %s
// RUN: %if nvcc %{ %nvcc %s -o %t.nvcc %}
// CHECK: time_ms:
// CHECK: PASS
#include <cmath>
#include <cstdio>
#include <cstdlib>

#define CUDA_CHECK(call)                                                       \
  do {                                                                         \
    cudaError_t e = call;                                                      \
    if (e != cudaSuccess) {                                                    \
      fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__,                       \
              cudaGetErrorString(e));                                          \
      exit(1);                                                                 \
    }                                                                          \
  } while (0)

// A soft-clipping curve applied to audio samples.
__global__ void softClip(const float *in, float *out, int n, float drive) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    float v = in[i] * drive;
    out[i] = v / (1.0f + fabsf(v));
  }
}

int main(int argc, char **argv) {
  int scale = argc > 1 ? atoi(argv[1]) : 1;
  const int chunks = 8;
  const int chunk = 32768 * scale;
  const int guard = 1000;
  const int n = chunks * chunk;
  float *hIn, *hOut;
  CUDA_CHECK(cudaMallocHost(&hIn, n * sizeof(float)));
  CUDA_CHECK(cudaMallocHost((void **)&hOut, (n + guard) * sizeof(float)));
  srand(12);
  for (int i = 0; i < n; ++i)
    hIn[i] = 2.0f * rand() / (float)RAND_MAX - 1.0f;
  float *dIn, *dOut;
  CUDA_CHECK(cudaMalloc(&dIn, n * sizeof(float)));
  CUDA_CHECK(cudaMalloc(&dOut, (n + guard) * sizeof(float)));
  CUDA_CHECK(cudaMemset(dOut, 0, (n + guard) * sizeof(float)));
  cudaStream_t streams[2];
  for (int s = 0; s < 2; ++s)
    CUDA_CHECK(cudaStreamCreate(&streams[s]));
  // 0x7f in every byte: the float 3.3961514e38, which no chunk writes.
  CUDA_CHECK(cudaMemsetAsync(dOut + n, 0x7f, guard * sizeof(float), streams[1]));

  cudaEvent_t start, stop;
  CUDA_CHECK(cudaEventCreate(&start));
  CUDA_CHECK(cudaEventCreate(&stop));
  CUDA_CHECK(cudaEventRecord(start, 0));
  for (int c = 0; c < chunks; ++c) {
    cudaStream_t st = streams[c % 2];
    size_t off = (size_t)c * chunk;
    CUDA_CHECK(cudaMemcpyAsync(dIn + off, hIn + off, chunk * sizeof(float),
                               cudaMemcpyHostToDevice, st));
    softClip<<<(chunk + 255) / 256, 256, 0, st>>>(dIn + off, dOut + off, chunk,
                                                  1.0f + c);
    CUDA_CHECK(cudaMemcpyAsync(hOut + off, dOut + off, chunk * sizeof(float),
                               cudaMemcpyDeviceToHost, st));
  }
  CUDA_CHECK(cudaMemcpyAsync(hOut + n, dOut + n, guard * sizeof(float),
                             cudaMemcpyDeviceToHost, streams[1]));
  CUDA_CHECK(cudaEventRecord(stop, 0));
  CUDA_CHECK(cudaDeviceSynchronize());
  float ms;
  CUDA_CHECK(cudaEventElapsedTime(&ms, start, stop));
  printf("time_ms: %.3f\n", ms);
  for (int i = 0; i < n; ++i) {
    float v = hIn[i] * (1.0f + i / chunk);
    float want = v / (1.0f + fabsf(v));
    if (fabsf(hOut[i] - want) > 1e-6f) {
      printf("FAIL at %d: %g, expected %g\n", i, hOut[i], want);
      return 1;
    }
  }
  for (int i = n; i < n + guard; ++i)
    if (!(hOut[i] > 3.39e38f)) {
      printf("FAIL: guard element %d is %g\n", i, hOut[i]);
      return 1;
    }
  for (int s = 0; s < 2; ++s)
    CUDA_CHECK(cudaStreamDestroy(streams[s]));
  CUDA_CHECK(cudaFreeHost(hIn));
  CUDA_CHECK(cudaFreeHost(hOut));
  printf("PASS\n");
  return 0;
}
