// histogram: a 256-bin histogram of n bytes, privatized in shared memory:
// each block counts its part of the data into its own histogram with shared
// atomics, then publishes it. Two ways to publish, both checked:
// - histogramAtomic (the textbook form): a grid-stride loop over the data,
//   and global atomicAdd of each block's counts into the result. The bins
//   are only updated by atomic adds whose results are unused: under Cleave
//   each device counts into its own zeroed bins, which are added up after
//   the launch (a combined output, docs/runtime.md).
// - histogramPartial + histogramMerge: each block handles a contiguous chunk
//   of 64 KiB and writes its counts to its own row of a per-block table,
//   which a second kernel sums per bin. No global atomics: both kernels can
//   be split across devices.
// The data is skewed (a hot bin and a narrow hot range) so that the atomics
// contend as they do on real data.
//
// Usage: histogram [n]
//   default n = 2^21 + 5 (CI); GPU benchmark: histogram 1073741824.
// Check: exact (integer counts).
#include <algorithm>
#include <climits>
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

constexpr int NUM_BINS = 256;

// bins must be zero before the launch.
__global__ void histogramAtomic(const unsigned char *data, unsigned *bins,
                                int n) {
  __shared__ unsigned local[NUM_BINS];
  for (int b = threadIdx.x; b < NUM_BINS; b += blockDim.x)
    local[b] = 0;
  __syncthreads();
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n;
       i += gridDim.x * blockDim.x)
    atomicAdd(&local[data[i]], 1u);
  __syncthreads();
  for (int b = threadIdx.x; b < NUM_BINS; b += blockDim.x)
    if (local[b] != 0)
      atomicAdd(&bins[b], local[b]);
}

// Block b counts data[b * CHUNK, min((b + 1) * CHUNK, n)) into row b of
// partial (NUM_BINS counters per row); each of its PARTIAL_THREADS threads
// takes ITEMS_PER_THREAD bytes, PARTIAL_THREADS apart (coalesced). With
// compile-time trip counts and strides, Cleave computes exactly which bytes
// each block reads and writes (loops striding by blockDim.x defeat it).
constexpr int PARTIAL_THREADS = 256;
constexpr int ITEMS_PER_THREAD = 256;
constexpr int CHUNK = PARTIAL_THREADS * ITEMS_PER_THREAD;
__global__ void histogramPartial(const unsigned char *data, unsigned *partial,
                                 int n) {
  __shared__ unsigned local[NUM_BINS];
  for (int b = threadIdx.x; b < NUM_BINS; b += PARTIAL_THREADS)
    local[b] = 0;
  __syncthreads();
  int begin = blockIdx.x * CHUNK + threadIdx.x;
  for (int k = 0; k < ITEMS_PER_THREAD; ++k) {
    int i = begin + k * PARTIAL_THREADS;
    if (i < n)
      atomicAdd(&local[data[i]], 1u);
  }
  __syncthreads();
  for (int b = threadIdx.x; b < NUM_BINS; b += PARTIAL_THREADS)
    partial[blockIdx.x * NUM_BINS + b] = local[b];
}

// bins[b] = the sum of column b of the rows x NUM_BINS table partial.
__global__ void histogramMerge(const unsigned *partial, unsigned *bins,
                               int rows) {
  int b = blockIdx.x * blockDim.x + threadIdx.x;
  if (b >= NUM_BINS)
    return;
  unsigned sum = 0;
  for (int r = 0; r < rows; ++r)
    sum += partial[r * NUM_BINS + b];
  bins[b] = sum;
}

// argv[i] as a positive int, or def when it is absent.
static int argOr(int argc, char **argv, int i, int def) {
  if (i >= argc)
    return def;
  char *end;
  long v = std::strtol(argv[i], &end, 10);
  if (*argv[i] == '\0' || *end != '\0' || v <= 0 || v > INT_MAX) {
    std::fprintf(stderr, "usage: %s [n]\n%s: bad argument '%s'\n", argv[0],
                 argv[0], argv[i]);
    std::exit(1);
  }
  return int(v);
}

// Compares bins with want and prints the result line. Returns 0 or 1.
static int check(const char *name, const std::vector<unsigned> &bins,
                 const std::vector<unsigned> &want, float ms, int n,
                 int blocks) {
  for (int b = 0; b < NUM_BINS; ++b) {
    if (bins[b] != want[b]) {
      std::printf("%s: FAIL at bin %d: got %u, expected %u (n=%d, %d blocks)\n",
                  name, b, bins[b], want[b], n, blocks);
      return 1;
    }
  }
  std::printf("%s: PASS (%.3f ms, n=%d, %d blocks)\n", name, ms, n, blocks);
  return 0;
}

int main(int argc, char **argv) {
  int n = argOr(argc, argv, 1, (1 << 21) + 5);
  if (n > (1 << 30)) { // keeps the int indices of the kernels from overflowing
    std::fprintf(stderr, "%s: n must be at most 2^30\n", argv[0]);
    return 1;
  }
  std::vector<unsigned char> data(n);
  std::mt19937 gen(1);
  for (unsigned char &x : data) {
    unsigned r = unsigned(gen());
    switch (r % 8) {
    case 0: // 1/8 of the bytes in one hot bin
      x = 42;
      break;
    case 1: // 1/8 in a narrow range
    case 2:
      x = (unsigned char)(100 + (r >> 8) % 8);
      break;
    default:
      x = (unsigned char)(r >> 24);
    }
  }
  std::vector<unsigned> want(NUM_BINS, 0), bins(NUM_BINS);
  for (unsigned char x : data)
    ++want[x];

  cudaDeviceProp prop;
  CUDA_CHECK(cudaGetDeviceProperties(&prop, 0));
  int threads = 256;
  // histogramAtomic: enough blocks to fill the device a few times over, but
  // no more than the data needs; histogramPartial: one block per chunk.
  int blocks =
      std::min(4 * prop.multiProcessorCount, (n + threads - 1) / threads);
  int chunks = (n + CHUNK - 1) / CHUNK;
  unsigned char *dData;
  unsigned *dBins, *dPartial;
  CUDA_CHECK(cudaMalloc(&dData, size_t(n)));
  CUDA_CHECK(cudaMalloc(&dBins, NUM_BINS * sizeof(unsigned)));
  CUDA_CHECK(
      cudaMalloc(&dPartial, size_t(chunks) * NUM_BINS * sizeof(unsigned)));
  CUDA_CHECK(cudaMemcpy(dData, data.data(), size_t(n), cudaMemcpyHostToDevice));
  cudaEvent_t start, stop;
  CUDA_CHECK(cudaEventCreate(&start));
  CUDA_CHECK(cudaEventCreate(&stop));
  float ms = 0;
  int status = 0;

  // Global atomics.
  CUDA_CHECK(cudaMemset(dBins, 0, NUM_BINS * sizeof(unsigned)));
  CUDA_CHECK(cudaEventRecord(start));
  histogramAtomic<<<blocks, threads>>>(dData, dBins, n);
  CUDA_CHECK(cudaGetLastError());
  CUDA_CHECK(cudaEventRecord(stop));
  CUDA_CHECK(cudaEventSynchronize(stop));
  CUDA_CHECK(cudaEventElapsedTime(&ms, start, stop));
  CUDA_CHECK(cudaMemcpy(bins.data(), dBins, NUM_BINS * sizeof(unsigned),
                        cudaMemcpyDeviceToHost));
  status |= check("histogram_atomic", bins, want, ms, n, blocks);

  // Per-block table, then a merge kernel of 4 blocks of 64 bins.
  CUDA_CHECK(cudaMemset(dBins, 0xff, NUM_BINS * sizeof(unsigned)));
  CUDA_CHECK(cudaEventRecord(start));
  histogramPartial<<<chunks, PARTIAL_THREADS>>>(dData, dPartial, n);
  CUDA_CHECK(cudaGetLastError());
  histogramMerge<<<NUM_BINS / 64, 64>>>(dPartial, dBins, chunks);
  CUDA_CHECK(cudaGetLastError());
  CUDA_CHECK(cudaEventRecord(stop));
  CUDA_CHECK(cudaEventSynchronize(stop));
  CUDA_CHECK(cudaEventElapsedTime(&ms, start, stop));
  CUDA_CHECK(cudaMemcpy(bins.data(), dBins, NUM_BINS * sizeof(unsigned),
                        cudaMemcpyDeviceToHost));
  status |= check("histogram_partial", bins, want, ms, n, chunks);

  CUDA_CHECK(cudaEventDestroy(start));
  CUDA_CHECK(cudaEventDestroy(stop));
  CUDA_CHECK(cudaFree(dData));
  CUDA_CHECK(cudaFree(dBins));
  CUDA_CHECK(cudaFree(dPartial));
  return status;
}
