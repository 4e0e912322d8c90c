// The naive CUDA ports of the benchmark nests (bench/tile/README.md): one
// kernel launch per anti-diagonal of cells, one thread per cell; each port
// copies its arrays in and out, like the tiled code. Each naive/NAME.cu
// defines the nest's function and then includes ../NAME.cpp for main().
#ifndef CLEAVE_BENCH_TILE_NAIVE_CUH
#define CLEAVE_BENCH_TILE_NAIVE_CUH

#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>

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

#endif
