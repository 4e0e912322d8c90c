// reduction: the sum of n values. A kernel templated on the block size and
// the element type reduces 2 * BLOCK elements per block: each thread adds two,
// a shared-memory tree halves the block down to 64 partial sums, and the last
// warp finishes with shuffles. It writes one partial sum per block; the same
// kernel then reduces the partial sums, pass after pass on the device, until
// one value is left. Run on unsigned ints and on floats.
//
// Usage: reduction [n [block]]
//   block is 64, 128, 256 (default), 512 or 1024. Default n = 2^20 + 7 (CI);
//   GPU benchmark: reduction 268435456 512.
// Checks:
// - unsigned: exact. Addition modulo 2^32 is associative and commutative, so
//   the sum is the same in any order, wrap-around included.
// - float: exact, against a host emulation of the kernel's summation tree
//   (treeSum below). The kernel only adds floats, and a float addition is
//   correctly rounded everywhere, so the same tree gives the same bits on any
//   device, whichever device runs which blocks. As a check of the emulation
//   itself, its result must also lie within the rigorous error bound of
//   pairwise summation around a double sum: |sum - exact| <= (D + 1) *
//   2^-24 * sum |x|, D the depth of the tree (each pass: one level for the
//   two elements a thread loads, log2(BLOCK) for the tree over the block;
//   ceil(log_{2 BLOCK} n) passes; Higham, "Accuracy and Stability of
//   Numerical Algorithms", 4.2; the + 1 covers the double sum).
#include <climits>
#include <cmath>
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

// out[blockIdx.x] = the sum of in[2 * BLOCK * blockIdx.x ...] (2 * BLOCK
// elements, fewer in the last block). Launched with BLOCK threads, BLOCK a
// power of two >= 64.
template <unsigned BLOCK, typename T>
__global__ void reduceSum(const T *in, T *out, unsigned n) {
  __shared__ T partial[BLOCK];
  unsigned tid = threadIdx.x;
  unsigned i = blockIdx.x * (2 * BLOCK) + tid;
  T sum = 0;
  if (i < n)
    sum = in[i];
  if (i + BLOCK < n)
    sum += in[i + BLOCK];
  partial[tid] = sum;
  __syncthreads();
  // BLOCK is a constant: the compiler unrolls this loop.
  for (unsigned s = BLOCK / 2; s > 32; s >>= 1) {
    if (tid < s)
      partial[tid] = sum = sum + partial[tid + s];
    __syncthreads();
  }
  if (tid < 32) {
    sum += partial[tid + 32];
    for (int offset = 16; offset > 0; offset >>= 1)
      sum += __shfl_down_sync(0xffffffffu, sum, offset);
  }
  if (tid == 0)
    out[blockIdx.x] = sum;
}

// Reduces n elements of d (which it overwrites) to one, with scratch space of
// ceil(n / (2 * BLOCK)) elements; returns the buffer that holds the sum.
template <unsigned BLOCK, typename T>
static T *reduceOnDevice(T *d, T *scratch, unsigned n) {
  do {
    unsigned blocks = (n + 2 * BLOCK - 1) / (2 * BLOCK);
    reduceSum<BLOCK, T><<<blocks, BLOCK>>>(d, scratch, n);
    CUDA_CHECK(cudaGetLastError());
    T *t = d;
    d = scratch;
    scratch = t;
    n = blocks;
  } while (n > 1);
  return d;
}

template <typename T>
static T *reduceOnDevice(unsigned block, T *d, T *scratch, unsigned n) {
  switch (block) {
  case 64:
    return reduceOnDevice<64>(d, scratch, n);
  case 128:
    return reduceOnDevice<128>(d, scratch, n);
  case 256:
    return reduceOnDevice<256>(d, scratch, n);
  case 512:
    return reduceOnDevice<512>(d, scratch, n);
  default:
    return reduceOnDevice<1024>(d, scratch, n);
  }
}

// Sums h on the device: copies it in, reduces, copies the sum out. Returns
// the sum and the kernels' time.
template <typename T>
static T sumOnDevice(const std::vector<T> &h, unsigned block, float &ms) {
  unsigned n = unsigned(h.size());
  unsigned partials = (n + 2 * block - 1) / (2 * block);
  T *d, *scratch;
  CUDA_CHECK(cudaMalloc(&d, h.size() * sizeof(T)));
  CUDA_CHECK(cudaMalloc(&scratch, partials * sizeof(T)));
  CUDA_CHECK(
      cudaMemcpy(d, h.data(), h.size() * sizeof(T), cudaMemcpyHostToDevice));
  cudaEvent_t start, stop;
  CUDA_CHECK(cudaEventCreate(&start));
  CUDA_CHECK(cudaEventCreate(&stop));
  CUDA_CHECK(cudaEventRecord(start));
  T *result = reduceOnDevice(block, d, scratch, n);
  CUDA_CHECK(cudaEventRecord(stop));
  CUDA_CHECK(cudaEventSynchronize(stop));
  CUDA_CHECK(cudaEventElapsedTime(&ms, start, stop));
  T sum;
  CUDA_CHECK(cudaMemcpy(&sum, result, sizeof(T), cudaMemcpyDeviceToHost));
  CUDA_CHECK(cudaEventDestroy(start));
  CUDA_CHECK(cudaEventDestroy(stop));
  CUDA_CHECK(cudaFree(d));
  CUDA_CHECK(cudaFree(scratch));
  return sum;
}

// The float result of reduceOnDevice<BLOCK, float>, in the same order.
static float treeSum(std::vector<float> v, unsigned block) {
  do {
    unsigned n = unsigned(v.size());
    unsigned blocks = (n + 2 * block - 1) / (2 * block);
    std::vector<float> out(blocks), partial(block);
    for (unsigned b = 0; b < blocks; ++b) {
      for (unsigned t = 0; t < block; ++t) {
        size_t i = size_t(b) * 2 * block + t;
        float sum = 0;
        if (i < n)
          sum = v[i];
        if (i + block < n)
          sum += v[i + block];
        partial[t] = sum;
      }
      for (unsigned s = block / 2; s > 32; s >>= 1)
        for (unsigned t = 0; t < s; ++t)
          partial[t] = partial[t] + partial[t + s];
      for (unsigned t = 0; t < 32; ++t)
        partial[t] += partial[t + 32];
      // __shfl_down_sync: lane t adds lane t + offset; lane 0 sees only the
      // lanes below 2 * offset.
      for (unsigned offset = 16; offset > 0; offset >>= 1)
        for (unsigned t = 0; t < offset; ++t)
          partial[t] += partial[t + offset];
      out[b] = partial[0];
    }
    v.swap(out);
  } while (v.size() > 1);
  return v[0];
}

// argv[i] as a positive int, or def when it is absent.
static int argOr(int argc, char **argv, int i, int def) {
  if (i >= argc)
    return def;
  char *end;
  long v = std::strtol(argv[i], &end, 10);
  if (*argv[i] == '\0' || *end != '\0' || v <= 0 || v > INT_MAX) {
    std::fprintf(stderr, "usage: %s [n [block]]\n%s: bad argument '%s'\n",
                 argv[0], argv[0], argv[i]);
    std::exit(1);
  }
  return int(v);
}

int main(int argc, char **argv) {
  int n = argOr(argc, argv, 1, (1 << 20) + 7);
  int block = argOr(argc, argv, 2, 256);
  if (block != 64 && block != 128 && block != 256 && block != 512 &&
      block != 1024) {
    std::fprintf(stderr,
                 "%s: the block size must be 64, 128, 256, 512 or "
                 "1024\n",
                 argv[0]);
    return 1;
  }
  cudaDeviceProp prop;
  CUDA_CHECK(cudaGetDeviceProperties(&prop, 0));
  if (block > prop.maxThreadsPerBlock) {
    std::fprintf(stderr, "%s: %s runs at most %d threads per block\n", argv[0],
                 prop.name, prop.maxThreadsPerBlock);
    return 1;
  }
  int status = 0;
  std::mt19937 gen(1);

  // Unsigned: full 32-bit values, so the sum wraps many times.
  std::vector<unsigned> u(n);
  unsigned wantU = 0;
  for (unsigned &x : u) {
    x = unsigned(gen());
    wantU += x;
  }
  float ms = 0;
  unsigned gotU = sumOnDevice(u, unsigned(block), ms);
  if (gotU != wantU) {
    std::printf("reduction_u32: FAIL: got %u, expected %u (n=%d, block %d)\n",
                gotU, wantU, n, block);
    status = 1;
  } else {
    std::printf("reduction_u32: PASS (%.3f ms, n=%d, block %d)\n", ms, n,
                block);
  }

  // Float: values in [-1, 1).
  std::vector<float> f(n);
  double wantF = 0, sumAbs = 0;
  for (float &x : f) {
    x = float(gen() >> 8) * (1.0f / 8388608.0f) - 1.0f;
    wantF += x;
    sumAbs += std::fabs(x);
  }
  float gotF = sumOnDevice(f, unsigned(block), ms);
  float wantTree = treeSum(f, unsigned(block));
  int depth = 0, levelsPerPass = int(std::log2(2.0 * block) + 0.5);
  for (long long left = n; left > 1;
       left = (left + 2 * block - 1) / (2 * block))
    depth += levelsPerPass;
  double bound = (depth + 1) * std::ldexp(1.0, -24) * sumAbs;
  if (!(std::fabs(wantTree - wantF) <= bound)) {
    // The emulation is wrong, not the device.
    std::printf("reduction_f32: FAIL: the host tree sum %.9g is not within "
                "%.3g of the double sum %.9g (n=%d, block %d)\n",
                wantTree, bound, wantF, n, block);
    status = 1;
  } else if (gotF != wantTree) {
    std::printf("reduction_f32: FAIL: got %.9g, expected %.9g (double sum "
                "%.9g; n=%d, block %d)\n",
                gotF, wantTree, wantF, n, block);
    status = 1;
  } else {
    std::printf("reduction_f32: PASS (%.3f ms, n=%d, block %d)\n", ms, n,
                block);
  }
  return status;
}
