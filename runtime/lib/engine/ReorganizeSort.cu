// The reorganization step's sort on a GPU (docs/reorganize.md, "The sort
// on a GPU"): a stable sort of the launched threads by the trip count the
// inspector wrote, largest first, over at most 16 key bits, and the
// statistics the model needs, all queued on one stream: nothing comes back
// to the host between the inspector, the sort and the reorganized kernel.
//
// Compiled to PTX by clang when the runtime is built (runtime/CMakeLists.txt)
// and embedded in it; a GPU's driver compiles it at its first use. The same
// file is compiled for the CPU by test/Reorganize/gpu-sort.test, which runs
// the kernels through Cleave's CPU backend against a host reference.
//
// Keys: the host plans for key_bits (at most 16) bits; with M the largest
// count (cleave_sort_max, read by the kernels from memory) and
// S = max(0, bits(M) - key_bits), thread i's key is
// (M >> S) - (max(count_i, 0) >> S) < 2^key_bits: ascending keys are
// descending counts, and counts that differ only below bit S share a key
// (they fill a warp as well as equal counts, within 2^S iterations).
//
// The sort is least significant digit first, digits of at most 8 bits (one
// pass for up to 8 key bits, two for up to 16). Each pass is three kernels
// over tiles of SortTile consecutive elements, one block of SortThreads
// threads per tile:
//   histogram: each warp counts the digits of its SortWarpItems elements
//     in shared memory (match_any: one add per digit and 32 elements);
//     the block writes its counts to hist[digit * tiles + tile];
//   scan:      one block turns hist into its exclusive prefix sum: the
//     first slot of each (digit, tile), tiles in order within a digit;
//   scatter:   each block recounts its tile, each warp's first slot per
//     digit is the tile's plus the earlier warps' counts, and the lanes
//     take slots in element order (ballot/match ranks within the warp): no
//     global atomics, and the order within a digit is the input's (stable).
#include <stdint.h>

#define SortThreads 256
#define SortWarps (SortThreads / 32)
#define SortWarpItems 512
#define SortTile (SortWarps * SortWarpItems)
#define SortMaxDigits 256
#define ScanThreads 1024
#define ScanPerThread 8

namespace {

__device__ inline unsigned keyBitsOf(unsigned M) {
  return M ? 32 - __clz(M) : 0;
}

// The key of a count, for the largest count M over key_bits planned bits.
__device__ inline unsigned keyOf(int C, unsigned M, unsigned key_bits) {
  unsigned B = keyBitsOf(M);
  unsigned Shift = B > key_bits ? B - key_bits : 0;
  unsigned U = C < 0 ? 0u : unsigned(C);
  return (M >> Shift) - (U >> Shift);
}

// The digit of the element at position j of the pass's input: thread j
// itself (src null, the first pass) or thread src[j].
__device__ inline unsigned digitAt(const int *counts, const int *src,
                                   unsigned j, unsigned M, unsigned key_bits,
                                   unsigned shift, unsigned mask) {
  int T = src ? src[j] : int(j);
  return (keyOf(counts[T], M, key_bits) >> shift) & mask;
}

// cnt[w * SortMaxDigits + d] = the elements of digit d among warp w's part
// of tile blockIdx.x, for every digit below digits.
__device__ void countTile(const int *counts, const int *src, unsigned n,
                          unsigned M, unsigned key_bits, unsigned shift,
                          unsigned digits, unsigned *cnt) {
  for (unsigned k = threadIdx.x; k < SortWarps * SortMaxDigits;
       k += blockDim.x)
    cnt[k] = 0;
  __syncthreads();
  unsigned w = threadIdx.x / 32, lane = threadIdx.x % 32;
  unsigned base = blockIdx.x * SortTile + w * SortWarpItems;
  for (unsigned r = 0; r < SortWarpItems; r += 32) {
    unsigned j = base + r + lane;
    bool live = j < n;
    unsigned active = __ballot_sync(0xffffffffu, live);
    if (!active)
      break;
    if (live) {
      unsigned d = digitAt(counts, src, j, M, key_bits, shift, digits - 1);
      unsigned same = __match_any_sync(active, d);
      if (int(lane) == __ffs(same) - 1)
        cnt[w * SortMaxDigits + d] += __popc(same);
    }
    __syncwarp();
  }
  __syncthreads();
}

} // namespace

// aux[0] = the largest count (0 for none); aux[0] is zeroed before.
extern "C" __global__ void cleave_sort_max(const int *counts, unsigned n,
                                           unsigned *aux) {
  unsigned M = 0;
  for (unsigned i = blockIdx.x * blockDim.x + threadIdx.x; i < n;
       i += gridDim.x * blockDim.x) {
    int C = counts[i];
    M = max(M, C < 0 ? 0u : unsigned(C));
  }
  for (int o = 16; o > 0; o /= 2)
    M = max(M, __shfl_xor_sync(0xffffffffu, M, o));
  __shared__ unsigned part[SortThreads / 32];
  if (threadIdx.x % 32 == 0)
    part[threadIdx.x / 32] = M;
  __syncthreads();
  if (threadIdx.x == 0) {
    for (unsigned w = 1; w < blockDim.x / 32; ++w)
      M = max(M, part[w]);
    atomicMax(aux, M);
  }
}

// One pass's histogram: hist[d * tiles + tile] = the elements of digit d
// (bits [shift, shift + log2(digits)) of the key) in tile. One block of
// SortThreads threads per tile of SortTile elements.
extern "C" __global__ void cleave_sort_histogram(
    const int *counts, const int *src, unsigned n, const unsigned *max_count,
    unsigned key_bits, unsigned shift, unsigned digits, unsigned *hist) {
  __shared__ unsigned cnt[SortWarps * SortMaxDigits];
  countTile(counts, src, n, *max_count, key_bits, shift, digits, cnt);
  for (unsigned d = threadIdx.x; d < digits; d += blockDim.x) {
    unsigned s = 0;
    for (unsigned w = 0; w < SortWarps; ++w)
      s += cnt[w * SortMaxDigits + d];
    hist[d * gridDim.x + blockIdx.x] = s;
  }
}

// hist[0, total) becomes its exclusive prefix sum. One block of
// ScanThreads threads, each taking ScanPerThread consecutive entries of a
// chunk of ScanThreads * ScanPerThread at a time.
extern "C" __global__ void cleave_sort_scan(unsigned *hist, unsigned total) {
  __shared__ unsigned warpSum[ScanThreads / 32];
  __shared__ unsigned carry;
  if (threadIdx.x == 0)
    carry = 0;
  __syncthreads();
  unsigned lane = threadIdx.x % 32, w = threadIdx.x / 32;
  for (unsigned c = 0; c < total; c += ScanThreads * ScanPerThread) {
    unsigned lo = c + threadIdx.x * ScanPerThread;
    unsigned v[ScanPerThread];
    unsigned mine = 0;
    for (unsigned k = 0; k < ScanPerThread; ++k) {
      v[k] = lo + k < total ? hist[lo + k] : 0;
      mine += v[k];
    }
    // Inclusive scan of the threads' sums: within the warp, then over
    // the warps' totals.
    unsigned incl = mine;
    for (unsigned o = 1; o < 32; o *= 2) {
      unsigned t = __shfl_up_sync(0xffffffffu, incl, o);
      if (lane >= o)
        incl += t;
    }
    if (lane == 31)
      warpSum[w] = incl;
    __syncthreads();
    if (w == 0) {
      unsigned s = lane < ScanThreads / 32 ? warpSum[lane] : 0;
      for (unsigned o = 1; o < 32; o *= 2) {
        unsigned t = __shfl_up_sync(0xffffffffu, s, o);
        if (lane >= o)
          s += t;
      }
      if (lane < ScanThreads / 32)
        warpSum[lane] = s; // inclusive over the warps
    }
    __syncthreads();
    unsigned run = carry + (w ? warpSum[w - 1] : 0) + incl - mine;
    for (unsigned k = 0; k < ScanPerThread; ++k)
      if (lo + k < total) {
        hist[lo + k] = run;
        run += v[k];
      }
    __syncthreads();
    if (threadIdx.x == 0)
      carry += warpSum[ScanThreads / 32 - 1];
    __syncthreads();
  }
}

// One pass's scatter: dst[slot] = the element (thread src[j], or j on the
// first pass), slots from the scanned hist, in element order within each
// digit. Same grid as the histogram.
extern "C" __global__ void cleave_sort_scatter(
    const int *counts, const int *src, unsigned n, const unsigned *max_count,
    unsigned key_bits, unsigned shift, unsigned digits, const unsigned *hist,
    int *dst) {
  __shared__ unsigned cnt[SortWarps * SortMaxDigits];
  unsigned M = *max_count;
  countTile(counts, src, n, M, key_bits, shift, digits, cnt);
  // Each warp's first slot per digit.
  for (unsigned d = threadIdx.x; d < digits; d += blockDim.x) {
    unsigned run = hist[d * gridDim.x + blockIdx.x];
    for (unsigned w = 0; w < SortWarps; ++w) {
      unsigned c = cnt[w * SortMaxDigits + d];
      cnt[w * SortMaxDigits + d] = run;
      run += c;
    }
  }
  __syncthreads();
  unsigned w = threadIdx.x / 32, lane = threadIdx.x % 32;
  unsigned *next = cnt + w * SortMaxDigits;
  unsigned base = blockIdx.x * SortTile + w * SortWarpItems;
  for (unsigned r = 0; r < SortWarpItems; r += 32) {
    unsigned j = base + r + lane;
    bool live = j < n;
    unsigned active = __ballot_sync(0xffffffffu, live);
    if (!active)
      break;
    unsigned d = 0, same = 0, slot = 0;
    if (live) {
      int T = src ? src[j] : int(j);
      d = (keyOf(counts[T], M, key_bits) >> shift) & (digits - 1);
      same = __match_any_sync(active, d);
      slot = next[d] + __popc(same & ((1u << lane) - 1));
      dst[slot] = T;
    }
    __syncwarp();
    if (live && int(lane) == __ffs(same) - 1)
      next[d] += __popc(same);
    __syncwarp();
  }
}

// The model's sums over the original launch's warps (32 consecutive
// threads of a block of block_threads): out[0] += counts, out[1] += squares,
// out[2] += each warp's largest count, out[3] += the same in perm's order.
// One thread per warp of the original launch, reduced in the block: four
// atomics per block. Doubles: exact to 2^53.
extern "C" __global__ void cleave_sort_stats(const int *counts,
                                             const int *perm, unsigned n,
                                             unsigned block_threads,
                                             double *out) {
  __shared__ double part[4][SortThreads];
  unsigned per_block = (block_threads + 31) / 32;
  unsigned warps = (n + block_threads - 1) / block_threads * per_block;
  double acc[4] = {0, 0, 0, 0};
  for (unsigned w = blockIdx.x * blockDim.x + threadIdx.x; w < warps;
       w += gridDim.x * blockDim.x) {
    unsigned b = w / per_block, lo = b * block_threads + (w % per_block) * 32;
    unsigned hi = min(min(lo + 32, (b + 1) * block_threads), n);
    unsigned top = 0, top_sorted = 0;
    for (unsigned j = lo; j < hi; ++j) {
      int C = counts[j];
      unsigned c = C < 0 ? 0u : unsigned(C);
      acc[0] += c;
      acc[1] += double(c) * c;
      top = max(top, c);
      int S = counts[perm[j]];
      top_sorted = max(top_sorted, S < 0 ? 0u : unsigned(S));
    }
    acc[2] += top;
    acc[3] += top_sorted;
  }
  for (unsigned k = 0; k < 4; ++k)
    part[k][threadIdx.x] = acc[k];
  __syncthreads();
  for (unsigned s = blockDim.x / 2; s > 0; s /= 2) {
    if (threadIdx.x < s)
      for (unsigned k = 0; k < 4; ++k)
        part[k][threadIdx.x] += part[k][threadIdx.x + s];
    __syncthreads();
  }
  if (threadIdx.x == 0)
    for (unsigned k = 0; k < 4; ++k)
      atomicAdd(&out[k], part[k][0]);
}
