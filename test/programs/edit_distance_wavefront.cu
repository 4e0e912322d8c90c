// Edit distance between two strings by anti-diagonal wavefronts: one launch
// per anti-diagonal of the DP table (2n - 1 launches), each cell of the
// diagonal depending on the two previous diagonals, so the grid grows and
// then shrinks as the diagonals do. The whole table stays on the device; the
// distance and the last row are checked exactly against the CPU's DP.
//
// RUN: %build %s -o %t
// RUN: env CLEAVE_DEVICES=cpu %t | FileCheck %s
// RUN: env CLEAVE_DEVICES=cpu,cpu,cpu %t | FileCheck %s
// RUN: env CLEAVE_DEVICES=cpu,cpu,cpu CLEAVE_PARTITION=even %t | FileCheck %s
// RUN: %if nvcc %{ %nvcc %s -o %t.nvcc %}
// CHECK: time_ms:
// CHECK: PASS
#include <cstdio>
#include <cstdlib>
#include <vector>

#define CUDA_CHECK(call)                                                       \
  do {                                                                         \
    cudaError_t err_ = call;                                                   \
    if (err_ != cudaSuccess) {                                                 \
      fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__,                       \
              cudaGetErrorString(err_));                                       \
      exit(1);                                                                 \
    }                                                                          \
  } while (0)

// D is (n+1) x (m+1), row-major; row 0 and column 0 are set by the host.
// Diagonal d holds the cells (i, j) with i + j = d, 1 <= i <= n, 1 <= j <= m.
__global__ void diagonal(int *D, const char *a, const char *b, int n, int m,
                         int d, int iFirst) {
  int i = iFirst + blockIdx.x * blockDim.x + threadIdx.x;
  int j = d - i;
  if (i > n || j < 1)
    return;
  int w = m + 1;
  int sub = D[(i - 1) * w + (j - 1)] + (a[i - 1] != b[j - 1]);
  int del = D[(i - 1) * w + j] + 1;
  int ins = D[i * w + (j - 1)] + 1;
  int best = sub < del ? sub : del;
  D[i * w + j] = best < ins ? best : ins;
}

int main(int argc, char **argv) {
  int scale = argc > 1 ? atoi(argv[1]) : 1;
  int n = 700 + 200 * (scale - 1), m = n - 37;
  std::vector<char> a(n), b(m);
  srand(97);
  for (char &c : a)
    c = "ACGT"[rand() % 4];
  for (int j = 0; j < m; ++j) // b is a mutated copy of a
    b[j] = rand() % 5 == 0 ? "ACGT"[rand() % 4] : a[j + (j > m / 2 ? 37 : 0)];
  int w = m + 1;
  std::vector<int> D((size_t)(n + 1) * w, 0);
  for (int i = 0; i <= n; ++i)
    D[(size_t)i * w] = i;
  for (int j = 0; j <= m; ++j)
    D[j] = j;
  int *dD;
  char *da, *db;
  CUDA_CHECK(cudaMalloc(&dD, D.size() * sizeof(int)));
  CUDA_CHECK(cudaMalloc(&da, n));
  CUDA_CHECK(cudaMalloc(&db, m));
  CUDA_CHECK(cudaMemcpy(dD, D.data(), D.size() * sizeof(int), cudaMemcpyHostToDevice));
  CUDA_CHECK(cudaMemcpy(da, a.data(), n, cudaMemcpyHostToDevice));
  CUDA_CHECK(cudaMemcpy(db, b.data(), m, cudaMemcpyHostToDevice));
  cudaEvent_t s, e;
  cudaEventCreate(&s);
  cudaEventCreate(&e);
  cudaEventRecord(s);
  const int threads = 64;
  int launches = 0;
  for (int d = 2; d <= n + m; ++d) {
    int iFirst = d - m > 1 ? d - m : 1;
    int iLast = d - 1 < n ? d - 1 : n;
    int cells = iLast - iFirst + 1;
    diagonal<<<(cells + threads - 1) / threads, threads>>>(dD, da, db, n, m, d,
                                                          iFirst);
    ++launches;
  }
  CUDA_CHECK(cudaGetLastError());
  cudaEventRecord(e);
  cudaEventSynchronize(e);
  float ms;
  cudaEventElapsedTime(&ms, s, e);
  printf("time_ms: %.3f\n", ms);
  std::vector<int> last(w);
  CUDA_CHECK(cudaMemcpy(last.data(), dD + (size_t)n * w, w * sizeof(int),
                        cudaMemcpyDeviceToHost));
  for (int i = 1; i <= n; ++i)
    for (int j = 1; j <= m; ++j) {
      int sub = D[(size_t)(i - 1) * w + j - 1] + (a[i - 1] != b[j - 1]);
      int del = D[(size_t)(i - 1) * w + j] + 1;
      int ins = D[(size_t)i * w + j - 1] + 1;
      int best = sub < del ? sub : del;
      D[(size_t)i * w + j] = best < ins ? best : ins;
    }
  for (int j = 0; j <= m; ++j)
    if (last[j] != D[(size_t)n * w + j]) {
      printf("FAIL: D[%d][%d] = %d, expected %d\n", n, j, last[j], D[(size_t)n * w + j]);
      return 1;
    }
  printf("PASS (distance %d, %d launches)\n", last[m], launches);
  return 0;
}
