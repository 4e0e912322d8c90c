// Lloyd's k-means on integer 2-D points: the centroids live in __constant__
// memory, set with cudaMemcpyToSymbol before every iteration; one kernel
// assigns each point to its nearest centroid, a second sums the points of
// each cluster (shared-memory atomics, then global atomics, integer sums:
// exact); the host turns the sums into the next centroids. The check: each
// label is a nearest centroid (ties within rounding accepted) and every
// cluster's count and coordinate sums equal the CPU's for those labels.
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

#define K 8
#define CUDA_CHECK(x)                                                          \
  do {                                                                         \
    cudaError_t err = (x);                                                     \
    if (err != cudaSuccess) {                                                  \
      printf("%s:%d CUDA error: %s\n", __FILE__, __LINE__,                     \
             cudaGetErrorString(err));                                         \
      exit(1);                                                                 \
    }                                                                          \
  } while (0)

__constant__ float2 c_centroids[K];

__global__ void assign(const int2 *pts, int n, int *labels) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n)
    return;
  float px = pts[i].x, py = pts[i].y;
  int best = 0;
  float bestD = 3.4e38f;
  for (int c = 0; c < K; ++c) {
    float dx = px - c_centroids[c].x, dy = py - c_centroids[c].y;
    float d = dx * dx + dy * dy;
    if (d < bestD) {
      bestD = d;
      best = c;
    }
  }
  labels[i] = best;
}

__global__ void accumulate(const int2 *pts, const int *labels, int n,
                           int *sums /* K x {count, sx, sy} */) {
  __shared__ int s[K * 3];
  if (threadIdx.x < K * 3)
    s[threadIdx.x] = 0;
  __syncthreads();
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    int c = labels[i];
    atomicAdd(&s[c * 3], 1);
    atomicAdd(&s[c * 3 + 1], pts[i].x);
    atomicAdd(&s[c * 3 + 2], pts[i].y);
  }
  __syncthreads();
  if (threadIdx.x < K * 3)
    atomicAdd(&sums[threadIdx.x], s[threadIdx.x]);
}

static float dist2(int2 p, float2 c) {
  float dx = p.x - c.x, dy = p.y - c.y;
  return dx * dx + dy * dy;
}

int main(int argc, char **argv) {
  int scale = argc > 1 ? atoi(argv[1]) : 1;
  int n = 50000 * scale;
  const int iters = 10;
  std::vector<int2> pts(n);
  srand(2024);
  for (int i = 0; i < n; ++i) {
    int blob = rand() % K;
    pts[i].x = (blob % 4) * 250 + rand() % 200;
    pts[i].y = (blob / 4) * 400 + rand() % 300;
  }
  float2 cent[K];
  for (int c = 0; c < K; ++c)
    cent[c] = make_float2((float)pts[c * 7].x, (float)pts[c * 7].y);

  int2 *dPts;
  int *dLabels, *dSums;
  CUDA_CHECK(cudaMalloc(&dPts, n * sizeof(int2)));
  CUDA_CHECK(cudaMalloc(&dLabels, n * sizeof(int)));
  CUDA_CHECK(cudaMalloc(&dSums, K * 3 * sizeof(int)));
  CUDA_CHECK(cudaMemcpy(dPts, pts.data(), n * sizeof(int2), cudaMemcpyHostToDevice));
  std::vector<int> labels(n);
  int sums[K * 3];
  cudaEvent_t a, b;
  cudaEventCreate(&a);
  cudaEventCreate(&b);
  float total = 0;
  int blocks = (n + 255) / 256;
  for (int it = 0; it < iters; ++it) {
    cudaEventRecord(a);
    CUDA_CHECK(cudaMemcpyToSymbol(c_centroids, cent, sizeof cent));
    CUDA_CHECK(cudaMemset(dSums, 0, sizeof sums));
    assign<<<blocks, 256>>>(dPts, n, dLabels);
    CUDA_CHECK(cudaGetLastError());
    accumulate<<<blocks, 256>>>(dPts, dLabels, n, dSums);
    CUDA_CHECK(cudaGetLastError());
    cudaEventRecord(b);
    CUDA_CHECK(cudaMemcpy(sums, dSums, sizeof sums, cudaMemcpyDeviceToHost));
    float ms;
    cudaEventElapsedTime(&ms, a, b);
    total += ms;
    CUDA_CHECK(cudaMemcpy(labels.data(), dLabels, n * sizeof(int),
                          cudaMemcpyDeviceToHost));
    long long ref[K * 3] = {0};
    for (int i = 0; i < n; ++i) {
      int l = labels[i];
      if (l < 0 || l >= K) {
        printf("FAIL: point %d has label %d\n", i, l);
        return 1;
      }
      float best = dist2(pts[i], cent[0]);
      for (int c = 1; c < K; ++c)
        best = fminf(best, dist2(pts[i], cent[c]));
      if (dist2(pts[i], cent[l]) > best * (1 + 1e-5f) + 1e-3f) {
        printf("FAIL: iteration %d, point %d is not nearest to %d\n", it, i, l);
        return 1;
      }
      ref[l * 3]++;
      ref[l * 3 + 1] += pts[i].x;
      ref[l * 3 + 2] += pts[i].y;
    }
    for (int j = 0; j < K * 3; ++j)
      if (ref[j] != sums[j]) {
        printf("FAIL: iteration %d, sum %d is %d, expected %lld\n", it, j,
               sums[j], ref[j]);
        return 1;
      }
    for (int c = 0; c < K; ++c)
      if (sums[c * 3] > 0)
        cent[c] = make_float2((float)sums[c * 3 + 1] / sums[c * 3],
                              (float)sums[c * 3 + 2] / sums[c * 3]);
  }
  printf("time_ms: %.3f\n", total);
  for (int c = 0; c < K; ++c)
    printf("cluster %d: %d points at (%.1f, %.1f)\n", c, sums[c * 3], cent[c].x,
           cent[c].y);
  cudaFree(dPts);
  cudaFree(dLabels);
  cudaFree(dSums);
  printf("PASS\n");
  return 0;
}
