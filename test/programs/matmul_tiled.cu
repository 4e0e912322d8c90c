// Tiled single-precision matrix multiply C = alpha * A * B + beta * C with
// 16x16 shared tiles (`__shared__ float As[TILE][TILE]`), `#pragma unroll`
// over the tile, `__restrict__` pointers and `__launch_bounds__`, on sizes
// that are not multiples of the tile (the edge tiles load zeros). Timed with
// events over several repetitions and compared with a CPU gemm in double.
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
#include <vector>

#define CUDA_CHECK(call)                                                       \
  do {                                                                         \
    cudaError_t e_ = (call);                                                   \
    if (e_ != cudaSuccess) {                                                   \
      fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__,                       \
              cudaGetErrorString(e_));                                         \
      exit(1);                                                                 \
    }                                                                          \
  } while (0)

#define TILE 16

__global__ void __launch_bounds__(TILE *TILE)
    sgemmTiled(int M, int N, int K, float alpha, const float *__restrict__ A,
               const float *__restrict__ B, float beta, float *__restrict__ C) {
  __shared__ float As[TILE][TILE];
  __shared__ float Bs[TILE][TILE];
  int tx = threadIdx.x, ty = threadIdx.y;
  int row = blockIdx.y * TILE + ty;
  int col = blockIdx.x * TILE + tx;
  float acc = 0.0f;
  for (int t = 0; t < (K + TILE - 1) / TILE; ++t) {
    int ak = t * TILE + tx;
    int bk = t * TILE + ty;
    As[ty][tx] = (row < M && ak < K) ? A[row * K + ak] : 0.0f;
    Bs[ty][tx] = (bk < K && col < N) ? B[bk * N + col] : 0.0f;
    __syncthreads();
#pragma unroll
    for (int k = 0; k < TILE; ++k)
      acc += As[ty][k] * Bs[k][tx];
    __syncthreads();
  }
  if (row < M && col < N)
    C[row * N + col] = alpha * acc + beta * C[row * N + col];
}

static void cpuGemm(int M, int N, int K, float alpha, const float *A,
                    const float *B, float beta, const float *C0,
                    double *out) {
  for (int i = 0; i < M; ++i)
    for (int j = 0; j < N; ++j) {
      double s = 0.0;
      for (int k = 0; k < K; ++k)
        s += (double)A[i * K + k] * B[k * N + j];
      out[i * N + j] = alpha * s + beta * C0[i * N + j];
    }
}

int main(int argc, char **argv) {
  int scale = argc > 1 ? atoi(argv[1]) : 1;
  // The CPU reference grows as scale^1.5 in each dimension's product.
  int M = 150 + 40 * (scale - 1), N = 130 + 40 * (scale - 1),
      K = 100 + 30 * (scale - 1);
  const float alpha = 1.5f, beta = -0.5f;
  const int reps = 3;
  std::vector<float> A(M * K), B(K * N), C0(M * N), C(M * N);
  srand(1234);
  for (auto &v : A)
    v = rand() / (float)RAND_MAX - 0.5f;
  for (auto &v : B)
    v = rand() / (float)RAND_MAX - 0.5f;
  for (auto &v : C0)
    v = rand() / (float)RAND_MAX;

  float *dA, *dB, *dC;
  CUDA_CHECK(cudaMalloc((void **)&dA, sizeof(float) * M * K));
  CUDA_CHECK(cudaMalloc((void **)&dB, sizeof(float) * K * N));
  CUDA_CHECK(cudaMalloc((void **)&dC, sizeof(float) * M * N));
  CUDA_CHECK(cudaMemcpy(dA, A.data(), sizeof(float) * M * K,
                        cudaMemcpyHostToDevice));
  CUDA_CHECK(cudaMemcpy(dB, B.data(), sizeof(float) * K * N,
                        cudaMemcpyHostToDevice));

  dim3 block(TILE, TILE);
  dim3 grid((N + TILE - 1) / TILE, (M + TILE - 1) / TILE);
  cudaEvent_t start, stop;
  CUDA_CHECK(cudaEventCreate(&start));
  CUDA_CHECK(cudaEventCreate(&stop));
  float total = 0.0f;
  for (int r = 0; r < reps; ++r) {
    // C is read and written: reset it before each repetition.
    CUDA_CHECK(cudaMemcpy(dC, C0.data(), sizeof(float) * M * N,
                          cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaEventRecord(start, 0));
    sgemmTiled<<<grid, block>>>(M, N, K, alpha, dA, dB, beta, dC);
    CUDA_CHECK(cudaEventRecord(stop, 0));
    CUDA_CHECK(cudaEventSynchronize(stop));
    float ms;
    CUDA_CHECK(cudaEventElapsedTime(&ms, start, stop));
    total += ms;
  }
  CUDA_CHECK(cudaGetLastError());
  printf("time_ms: %.3f\n", total / reps);
  CUDA_CHECK(cudaMemcpy(C.data(), dC, sizeof(float) * M * N,
                        cudaMemcpyDeviceToHost));

  std::vector<double> ref(M * N);
  cpuGemm(M, N, K, alpha, A.data(), B.data(), beta, C0.data(), ref.data());
  double maxErr = 0.0;
  for (int i = 0; i < M * N; ++i) {
    double err = fabs(C[i] - ref[i]);
    if (err > maxErr)
      maxErr = err;
    if (err > 1e-4 * K) {
      printf("FAIL: C[%d][%d] = %f, expected %f\n", i / N, i % N, C[i],
             ref[i]);
      return 1;
    }
  }
  cudaFree(dA);
  cudaFree(dB);
  cudaFree(dC);
  printf("PASS\n");
  return 0;
}
