// The naive CUDA ports of the benchmark nests (bench/tile/README.md): one
// kernel launch per anti-diagonal of cells, one thread per cell; each port
// copies its arrays in and out, like the tiled code. Each naive/NAME.cu
// defines the nest's function and then includes ../NAME.cpp for main().
#ifndef CLEAVE_BENCH_TILE_NAIVE_CUH
#define CLEAVE_BENCH_TILE_NAIVE_CUH

#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>
#include <utility>

#define BENCH_NAIVE_PORT 1

#define CUDA_CHECK(E)                                                          \
  do {                                                                         \
    cudaError_t Err = (E);                                                     \
    if (Err != cudaSuccess) {                                                  \
      fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__,                       \
              cudaGetErrorString(Err));                                        \
      exit(1);                                                                 \
    }                                                                          \
  } while (0)

constexpr int NaiveBlock = 256;

/// Calls Launch(d, iLo, len, blocks) for each anti-diagonal i + j = d of the
/// cells [iLo, iHi] x [jLo, jHi], in order; the diagonal's cells are
/// (iLo + t, d - iLo - t) for t < len.
template <typename F>
void forEachDiagonal(int iLo, int iHi, int jLo, int jHi, F Launch) {
  for (int d = iLo + jLo; d <= iHi + jHi; ++d) {
    int lo = d - jHi > iLo ? d - jHi : iLo;
    int hi = d - jLo < iHi ? d - jLo : iHi;
    int len = hi - lo + 1;
    Launch(d, lo, len, (len + NaiveBlock - 1) / NaiveBlock);
  }
  CUDA_CHECK(cudaGetLastError());
}

template <typename T> T *toDevice(const T *Host, size_t Count) {
  T *Dev = nullptr;
  CUDA_CHECK(cudaMalloc(&Dev, Count * sizeof(T)));
  CUDA_CHECK(cudaMemcpy(Dev, Host, Count * sizeof(T), cudaMemcpyHostToDevice));
  return Dev;
}

template <typename T> void toHost(T *Host, T *Dev, size_t Count) {
  CUDA_CHECK(cudaMemcpy(Host, Dev, Count * sizeof(T), cudaMemcpyDeviceToHost));
  CUDA_CHECK(cudaFree(Dev));
}

/// The naive port of an iterated stencil in the pointer-swap form: both
/// grids to the device, one Launch(grid, block, in, out, n, m) per step over
/// the cells [R, n - R) x [R, m - R), the device pointers swapped between
/// steps, both grids back, and the host pointers swapped as the nest swaps
/// them.
template <typename F>
void runSteps(float *&A, float *&B, int n, int m, int T, int R, F Launch) {
  if (n <= 2 * R || m <= 2 * R || T <= 0) {
    if (T > 0 && T % 2)
      std::swap(A, B);
    return;
  }
  size_t Cells = (size_t)n * m;
  float *DA = toDevice(A, Cells), *DB = toDevice(B, Cells);
  dim3 Blk(32, 8), G((m - 2 * R + 31) / 32, (n - 2 * R + 7) / 8);
  for (int t = 0; t < T; ++t) {
    Launch(G, Blk, DA, DB, n, m);
    std::swap(DA, DB);
  }
  CUDA_CHECK(cudaGetLastError());
  // DA holds step T, which the nest leaves in the array A points to after
  // its swaps; DB step T - 1.
  if (T % 2)
    std::swap(A, B);
  toHost(A, DA, Cells);
  toHost(B, DB, Cells);
}

#endif
