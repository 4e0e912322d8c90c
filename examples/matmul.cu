// matmul: C = A * B for an M x K matrix A and a K x N matrix B (row-major
// floats), with a naive kernel (one thread per element of C, A and B read
// from global memory) and a shared-memory tiled kernel templated on the tile
// size (each block stages TILE x TILE tiles of A and B in shared memory).
//
// Usage: matmul [M N K [tile]]
//   tile is 8, 16 (default) or 32. Default 257 193 161: no side is a multiple
//   of a tile (CI); GPU benchmark: matmul 4096 4096 4096 32.
// Check: exact. The inputs are small integers (-4..4) stored as floats, so
// every product and every partial sum is an integer of magnitude at most
// 16 * K < 2^24: exactly representable, whatever the order of the additions
// and whether or not they are fused into FMAs. Up to M*N*K = 2^28 every
// element is compared with a plain int64 triple loop; past that (benchmark
// sizes, where the O(MNK) reference would take minutes on one core) with
// Freivalds' algorithm: C*x == A*(B*x) in exact int64 arithmetic for two
// random vectors x with entries in [0, 2^16), O(MN + MK + KN). A row of C
// holding any wrong element passes one vector with probability at most 2^-16
// (a nonzero linear form vanishes on at most that fraction of the vectors), so
// both with at most 2^-32. A row that fails is recomputed to name the element.
#include <climits>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>
#include <random>
#include <vector>

#define CUDA_CHECK(call)                                                       \
  do {                                                                         \
    cudaError_t err_ = (call);                                                 \
    if (err_ != cudaSuccess) {                                                 \
      std::fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call,       \
                   cudaGetErrorString(err_));                                  \
      std::exit(1);                                                            \
    }                                                                          \
  } while (0)

__global__ void matmulNaive(const float *a, const float *b, float *c, int m,
                            int n, int k) {
  int row = blockIdx.y * blockDim.y + threadIdx.y;
  int col = blockIdx.x * blockDim.x + threadIdx.x;
  if (row < m && col < n) {
    float acc = 0.0f;
    for (int i = 0; i < k; ++i)
      acc += a[row * k + i] * b[i * n + col];
    c[row * n + col] = acc;
  }
}

// Launched with TILE x TILE threads per block over a ceil(n / TILE) x
// ceil(m / TILE) grid. Tiles that stick out of A or B are padded with zeros.
template <int TILE>
__global__ void matmulTiled(const float *a, const float *b, float *c, int m,
                            int n, int k) {
  __shared__ float aTile[TILE][TILE];
  __shared__ float bTile[TILE][TILE];
  int tx = threadIdx.x, ty = threadIdx.y;
  int row = blockIdx.y * TILE + ty;
  int col = blockIdx.x * TILE + tx;
  float acc = 0.0f;
  for (int k0 = 0; k0 < k; k0 += TILE) {
    aTile[ty][tx] = row < m && k0 + tx < k ? a[row * k + k0 + tx] : 0.0f;
    bTile[ty][tx] = col < n && k0 + ty < k ? b[(k0 + ty) * n + col] : 0.0f;
    __syncthreads();
    for (int i = 0; i < TILE; ++i)
      acc += aTile[ty][i] * bTile[i][tx];
    __syncthreads();
  }
  if (row < m && col < n)
    c[row * n + col] = acc;
}

// argv[i] as a positive int, or def when it is absent.
static int argOr(int argc, char **argv, int i, int def) {
  if (i >= argc)
    return def;
  char *end;
  long v = std::strtol(argv[i], &end, 10);
  if (*argv[i] == '\0' || *end != '\0' || v <= 0 || v > INT_MAX) {
    std::fprintf(stderr, "usage: %s [M N K [tile]]\n%s: bad argument '%s'\n",
                 argv[0], argv[0], argv[i]);
    std::exit(1);
  }
  return int(v);
}

// Integers in [lo, hi], as floats, from a fixed seed.
static void fillSmallIntegers(std::vector<float> &v, int lo, int hi,
                              unsigned seed) {
  std::mt19937 gen(seed);
  for (float &x : v)
    x = float(lo + int(gen() % unsigned(hi - lo + 1)));
}

template <int TILE>
static void launchTiled(const float *a, const float *b, float *c, int m, int n,
                        int k) {
  dim3 block(TILE, TILE);
  dim3 grid((n + TILE - 1) / TILE, (m + TILE - 1) / TILE);
  matmulTiled<TILE><<<grid, block>>>(a, b, c, m, n, k);
}

// Element (r, col) of A * B, exactly.
static int64_t productElement(const std::vector<float> &a,
                              const std::vector<float> &b, int r, int col,
                              int n, int k) {
  int64_t sum = 0;
  for (int i = 0; i < k; ++i)
    sum += int64_t(a[size_t(r) * k + i]) * int64_t(b[size_t(i) * n + col]);
  return sum;
}

// The first element of C that differs from A * B, or -1. See the header for
// the two methods.
static int64_t firstMismatch(const std::vector<float> &a,
                             const std::vector<float> &b,
                             const std::vector<float> &c, int m, int n, int k) {
  // An element that is not an integer below 2^24 (a NaN left by the memset,
  // say) is wrong whatever the method, and must not reach an int64
  // conversion.
  for (size_t i = 0; i < c.size(); ++i)
    if (!(std::fabs(c[i]) < 16777216.0f) || c[i] != std::trunc(c[i]))
      return int64_t(i);
  if (int64_t(m) * n * k <= (int64_t(1) << 28)) {
    // The plain reference: i-k-j loop order, int64 sums.
    std::vector<int64_t> want(size_t(m) * n, 0);
    for (int r = 0; r < m; ++r)
      for (int i = 0; i < k; ++i) {
        int64_t av = int64_t(a[size_t(r) * k + i]);
        for (int col = 0; col < n; ++col)
          want[size_t(r) * n + col] += av * int64_t(b[size_t(i) * n + col]);
      }
    for (size_t i = 0; i < c.size(); ++i)
      if (int64_t(c[i]) != want[i])
        return int64_t(i);
    return -1;
  }
  // Freivalds. |entries of B*x| < 4 * N * 2^16, of A*(B*x) and C*x below
  // 2^20 * K * N < 2^51: no overflow.
  std::mt19937 gen(7);
  for (int round = 0; round < 2; ++round) {
    std::vector<int64_t> x(n), bx(k), abx(m);
    for (int64_t &v : x)
      v = gen() & 0xffff;
    for (int i = 0; i < k; ++i) {
      int64_t sum = 0;
      for (int col = 0; col < n; ++col)
        sum += int64_t(b[size_t(i) * n + col]) * x[col];
      bx[i] = sum;
    }
    for (int r = 0; r < m; ++r) {
      int64_t abx = 0, cx = 0;
      for (int i = 0; i < k; ++i)
        abx += int64_t(a[size_t(r) * k + i]) * bx[i];
      for (int col = 0; col < n; ++col)
        cx += int64_t(c[size_t(r) * n + col]) * x[col];
      if (abx == cx)
        continue;
      for (int col = 0; col < n; ++col)
        if (int64_t(c[size_t(r) * n + col]) !=
            productElement(a, b, r, col, n, k))
          return int64_t(r) * n + col;
      // Unreachable: the row's products differ, so one element does.
    }
  }
  return -1;
}

// Checks c against A * B and prints the result line. Returns 0 or 1.
static int check(const char *name, const std::vector<float> &a,
                 const std::vector<float> &b, const std::vector<float> &c,
                 float ms, int m, int n, int k, int tile) {
  char size[96];
  if (tile)
    std::snprintf(size, sizeof(size), "M=%d N=%d K=%d, tile %d", m, n, k, tile);
  else
    std::snprintf(size, sizeof(size), "M=%d N=%d K=%d", m, n, k);
  int64_t bad = firstMismatch(a, b, c, m, n, k);
  if (bad >= 0) {
    int r = int(bad / n), col = int(bad % n);
    std::printf("%s: FAIL at C[%d][%d]: got %.9g, expected %lld (%s)\n", name,
                r, col, c[size_t(bad)],
                (long long)productElement(a, b, r, col, n, k), size);
    return 1;
  }
  std::printf("%s: PASS (%.3f ms, %s)\n", name, ms, size);
  return 0;
}

int main(int argc, char **argv) {
  int m = argOr(argc, argv, 1, 257);
  int n = argOr(argc, argv, 2, 193);
  int k = argOr(argc, argv, 3, 161);
  int tile = argOr(argc, argv, 4, 16);
  if (tile != 8 && tile != 16 && tile != 32) {
    std::fprintf(stderr, "%s: the tile must be 8, 16 or 32\n", argv[0]);
    return 1;
  }
  // 16 * K < 2^24 keeps every partial sum exact (see the header); the int
  // indices of the kernels need each matrix below 2^31 elements.
  if (k >= (1 << 20) || int64_t(m) * k > INT_MAX || int64_t(k) * n > INT_MAX ||
      int64_t(m) * n > INT_MAX) {
    std::fprintf(stderr,
                 "%s: K must be below 2^20 and each matrix below 2^31 "
                 "elements\n",
                 argv[0]);
    return 1;
  }
  std::vector<float> a(size_t(m) * k), b(size_t(k) * n), c(size_t(m) * n);
  fillSmallIntegers(a, -4, 4, 1);
  fillSmallIntegers(b, -4, 4, 2);

  float *da, *db, *dc;
  CUDA_CHECK(cudaMalloc(&da, a.size() * sizeof(float)));
  CUDA_CHECK(cudaMalloc(&db, b.size() * sizeof(float)));
  CUDA_CHECK(cudaMalloc(&dc, c.size() * sizeof(float)));
  CUDA_CHECK(cudaMemcpy(da, a.data(), a.size() * sizeof(float),
                        cudaMemcpyHostToDevice));
  CUDA_CHECK(cudaMemcpy(db, b.data(), b.size() * sizeof(float),
                        cudaMemcpyHostToDevice));
  cudaEvent_t start, stop;
  CUDA_CHECK(cudaEventCreate(&start));
  CUDA_CHECK(cudaEventCreate(&stop));
  int status = 0;
  float ms = 0;

  // Naive: 16 x 16 threads per block, one element of C each.
  CUDA_CHECK(cudaMemset(dc, 0xff, c.size() * sizeof(float))); // NaNs
  dim3 block(16, 16);
  dim3 grid((n + block.x - 1) / block.x, (m + block.y - 1) / block.y);
  CUDA_CHECK(cudaEventRecord(start));
  matmulNaive<<<grid, block>>>(da, db, dc, m, n, k);
  CUDA_CHECK(cudaGetLastError());
  CUDA_CHECK(cudaEventRecord(stop));
  CUDA_CHECK(cudaEventSynchronize(stop));
  CUDA_CHECK(cudaEventElapsedTime(&ms, start, stop));
  CUDA_CHECK(cudaMemcpy(c.data(), dc, c.size() * sizeof(float),
                        cudaMemcpyDeviceToHost));
  status |= check("matmul_naive", a, b, c, ms, m, n, k, 0);

  // Tiled, on the tile the command line asks for.
  CUDA_CHECK(cudaMemset(dc, 0xff, c.size() * sizeof(float)));
  CUDA_CHECK(cudaEventRecord(start));
  if (tile == 8)
    launchTiled<8>(da, db, dc, m, n, k);
  else if (tile == 16)
    launchTiled<16>(da, db, dc, m, n, k);
  else
    launchTiled<32>(da, db, dc, m, n, k);
  CUDA_CHECK(cudaGetLastError());
  CUDA_CHECK(cudaEventRecord(stop));
  CUDA_CHECK(cudaEventSynchronize(stop));
  CUDA_CHECK(cudaEventElapsedTime(&ms, start, stop));
  CUDA_CHECK(cudaMemcpy(c.data(), dc, c.size() * sizeof(float),
                        cudaMemcpyDeviceToHost));
  status |= check("matmul_tiled", a, b, c, ms, m, n, k, tile);

  CUDA_CHECK(cudaEventDestroy(start));
  CUDA_CHECK(cudaEventDestroy(stop));
  CUDA_CHECK(cudaFree(da));
  CUDA_CHECK(cudaFree(db));
  CUDA_CHECK(cudaFree(dc));
  return status;
}
