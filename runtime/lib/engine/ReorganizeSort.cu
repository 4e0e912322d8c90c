// The reorganization step's sort on a GPU (docs/reorganize.md, "The sort
// on a GPU"): a counting sort of the launched threads by the trip count the
// inspector wrote, largest first, over at most 16 key bits, and the
// statistics the model needs, without moving the counts to the host.
//
// Compiled to PTX by clang when the runtime is built (runtime/CMakeLists.txt)
// and embedded in it; a GPU's driver compiles it at its first use. The same
// file is compiled for the CPU by test/Reorganize/gpu-sort.test, which runs
// the kernels through Cleave's CPU backend against a host reference.
//
// Keys: with M the largest count and S = max(0, bits(M) - 16), thread i's
// key is (M >> S) - (max(count_i, 0) >> S): ascending keys are descending
// counts, and counts that differ only below bit S share a key (they fill
// a warp as well as equal counts, within 2^S iterations).
#include <stdint.h>

namespace {

__device__ inline unsigned keyOf(int C, unsigned Max, unsigned Shift) {
  unsigned U = C < 0 ? 0u : unsigned(C);
  return (Max >> Shift) - (U >> Shift);
}

} // namespace

// out[0] = the largest count (0 for none).
extern "C" __global__ void cleave_sort_max(const int *counts, unsigned n,
                                             unsigned *out) {
  unsigned M = 0;
  for (unsigned i = blockIdx.x * blockDim.x + threadIdx.x; i < n;
       i += gridDim.x * blockDim.x) {
    int C = counts[i];
    M = max(M, C < 0 ? 0u : unsigned(C));
  }
  for (int o = 16; o > 0; o /= 2)
    M = max(M, __shfl_xor_sync(0xffffffffu, M, o));
  if ((threadIdx.x & 31) == 0)
    atomicMax(out, M);
}

// hist[k] = the threads of key k. hist has buckets entries, zeroed.
extern "C" __global__ void cleave_sort_histogram(const int *counts,
                                                   unsigned n, unsigned max,
                                                   unsigned shift,
                                                   unsigned buckets,
                                                   unsigned *hist) {
  // Few keys (the usual case): a block's histogram in shared memory first,
  // so that the global atomics are one per key and block.
  __shared__ unsigned local[4096];
  bool Shared = buckets <= 4096;
  if (Shared) {
    for (unsigned k = threadIdx.x; k < buckets; k += blockDim.x)
      local[k] = 0;
    __syncthreads();
  }
  for (unsigned i = blockIdx.x * blockDim.x + threadIdx.x; i < n;
       i += gridDim.x * blockDim.x) {
    unsigned k = keyOf(counts[i], max, shift);
    atomicAdd(Shared ? &local[k] : &hist[k], 1u);
  }
  if (Shared) {
    __syncthreads();
    for (unsigned k = threadIdx.x; k < buckets; k += blockDim.x)
      if (local[k])
        atomicAdd(&hist[k], local[k]);
  }
}

// hist becomes its exclusive prefix sum: the first slot of each key. One
// block of 1024 threads, each summing a contiguous run of keys.
extern "C" __global__ void cleave_sort_scan(unsigned *hist,
                                              unsigned buckets) {
  __shared__ unsigned part[1024];
  unsigned per = (buckets + blockDim.x - 1) / blockDim.x;
  unsigned lo = threadIdx.x * per;
  unsigned hi = min(buckets, lo + per);
  unsigned sum = 0;
  for (unsigned k = lo; k < hi; ++k)
    sum += hist[k];
  part[threadIdx.x] = sum;
  __syncthreads();
  if (threadIdx.x == 0) {
    unsigned run = 0;
    for (unsigned t = 0; t < blockDim.x; ++t) {
      unsigned v = part[t];
      part[t] = run;
      run += v;
    }
  }
  __syncthreads();
  unsigned run = part[threadIdx.x];
  for (unsigned k = lo; k < hi; ++k) {
    unsigned v = hist[k];
    hist[k] = run;
    run += v;
  }
}

// perm[slot] = i, each thread taking the next slot of its key. The lanes of
// a warp with one key take consecutive slots in lane order (one atomic per
// key and warp), so the order within a key follows the threads' warps.
extern "C" __global__ void cleave_sort_scatter(const int *counts,
                                                 unsigned n, unsigned max,
                                                 unsigned shift,
                                                 unsigned *next, int *perm) {
  unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  bool live = i < n;
  unsigned active = __ballot_sync(0xffffffffu, live);
  if (!live)
    return;
  unsigned k = keyOf(counts[i], max, shift);
  unsigned same = __match_any_sync(active, k);
  unsigned lane = threadIdx.x & 31;
  int leader = __ffs(same) - 1;
  unsigned base = 0;
  if (int(lane) == leader)
    base = atomicAdd(&next[k], unsigned(__popc(same)));
  base = __shfl_sync(same, base, leader);
  perm[base + __popc(same & ((1u << lane) - 1))] = int(i);
}

// The model's sums over the original launch's warps (32 consecutive
// threads of a block of block_threads): out[0] += counts, out[1] += squares,
// out[2] += each warp's largest count, out[3] += the same in perm's order.
// One thread per warp of the original launch. Doubles: exact to 2^53.
extern "C" __global__ void cleave_sort_stats(const int *counts,
                                             const int *perm, unsigned n,
                                             unsigned block_threads,
                                             double *out) {
  unsigned per_block = (block_threads + 31) / 32;
  unsigned warps = (n + block_threads - 1) / block_threads * per_block;
  for (unsigned w = blockIdx.x * blockDim.x + threadIdx.x; w < warps;
       w += gridDim.x * blockDim.x) {
    unsigned b = w / per_block, lo = b * block_threads + (w % per_block) * 32;
    unsigned hi = min(min(lo + 32, (b + 1) * block_threads), n);
    double sum = 0, sq = 0;
    unsigned top = 0, top_sorted = 0;
    for (unsigned j = lo; j < hi; ++j) {
      int C = counts[j];
      unsigned c = C < 0 ? 0u : unsigned(C);
      sum += c;
      sq += double(c) * c;
      top = max(top, c);
      int S = counts[perm[j]];
      top_sorted = max(top_sorted, S < 0 ? 0u : unsigned(S));
    }
    if (lo < hi) {
      atomicAdd(&out[0], sum);
      atomicAdd(&out[1], sq);
      atomicAdd(&out[2], double(top));
      atomicAdd(&out[3], double(top_sorted));
    }
  }
}
