// The persistent wavefront kernel (docs/tile.md): --wavefront=persistent
// emits one launch whose blocks take tiles in wavefront order from an atomic
// ticket, wait on their upper and left neighbours' flags (volatile loads,
// then a fence), load their windows through volatile loads (from L2, not an
// SM's L1) and publish their own flag (barrier, fence, flag); the ticket and
// the flags live in a scratch allocation zeroed per call. A reduction
// combines each thread's value once, after the loop. --wavefront=launches
// emits only one launch per anti-diagonal; the default (auto) emits both
// and chooses at run time.
// RUN: %strip_comments %s %t/persistent.cpp
// RUN: %cleave tile --wavefront=persistent %t/persistent.cpp -o %t/p.cu 2>&1 | FileCheck %s --check-prefix=REMARK-P
// RUN: FileCheck %s --check-prefix=PERSIST < %t/p.cu
// RUN: %cleave tile --wavefront=launches %t/persistent.cpp -o %t/l.cu 2>&1 | FileCheck %s --check-prefix=REMARK-L
// RUN: FileCheck %s --check-prefix=LAUNCH < %t/l.cu
// RUN: %cleave tile %t/persistent.cpp -o %t/a.cu 2>&1 | FileCheck %s --check-prefix=REMARK-A
// RUN: FileCheck %s --check-prefix=AUTO < %t/a.cu
// RUN: not %cleave tile --wavefront=sometimes %t/persistent.cpp -o %t/x.cu 2>&1 | FileCheck %s --check-prefix=BAD

#include <algorithm>

void smithWaterman(const char *a, const char *b, int *H, int n, int m,
                   int &best) {
#pragma cleave tile tile(16, 32)
  for (int i = 1; i <= n; ++i)
    for (int j = 1; j <= m; ++j) {
      int s = H[(i - 1) * (m + 1) + j - 1] + (a[i - 1] == b[j - 1] ? 2 : -1);
      s = std::max(s, H[(i - 1) * (m + 1) + j] - 1);
      s = std::max(std::max(s, H[i * (m + 1) + j - 1] - 1), 0);
      H[i * (m + 1) + j] = s;
      best = std::max(best, s);
    }
}
// REMARK-P: persistent.cpp:[[@LINE-10]]:1: remark: cleave tile: nest tiled: wavefront of 16 x 32 tiles, one persistent launch (blocks take tiles in wavefront order from an atomic ticket and wait on per-tile flags); dependences:
// REMARK-L: persistent.cpp:[[@LINE-11]]:1: remark: cleave tile: nest tiled: wavefront of 16 x 32 tiles, one launch per anti-diagonal of tiles; dependences:
// REMARK-A: persistent.cpp:[[@LINE-12]]:1: remark: cleave tile: nest tiled: wavefront of 16 x 32 tiles, one persistent launch (blocks take tiles in wavefront order from an atomic ticket and wait on per-tile flags) from CLEAVE_TILE_PERSISTENT_MIN_DIAGONALS (8) anti-diagonals of tiles, else one launch per anti-diagonal, chosen at run time; dependences:
// BAD: Cannot find option named 'sometimes'

// The ticket's tile in wavefront order, and the grid from the occupancy API.
// PERSIST: __host__ __device__ inline void __cleave_tile_of(long long k, long long trows,
// The spin-waits' back-off: __nanosleep on sm_70 and later only, doubling
// from 32 ns up to 512 ns.
// PERSIST: __device__ inline void __cleave_tile_backoff(unsigned *ns) {
// PERSIST-NEXT: #if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 700
// PERSIST-NEXT: *ns = *ns == 0 ? 32 : (*ns < 512 ? 2 * *ns : 512);
// PERSIST-NEXT: __nanosleep(*ns);
// PERSIST-NEXT: #else
// PERSIST-NEXT: (void)ns;
// PERSIST-NEXT: #endif
// PERSIST-NEXT: }
// PERSIST: inline long long __cleave_tile_resident(const void *kernel, int threads,
// PERSIST: cudaOccupancyMaxActiveBlocksPerMultiprocessor(&perSm, kernel, threads,
// PERSIST: const long long useful = 2 * (trows < tcols ? trows : tcols);
// PERSIST-NEXT: return grid < useful ? grid : useful;
// PERSIST: #define __CLEAVE_TILE_MAX_PERSISTENT_TILES (1ll << 30)
// PERSIST-NOT: __cleave_tile0_kernel
// PERSIST: __global__ void __cleave_tile0_persistent(unsigned *__cleave_sched, int n, int m, int *H, const char *a, const char *b, int *__cleave_red_best, int __cleave_init_best) {
// PERSIST: const long long __cleave_trows = (__cleave_ihi - __cleave_ilo + 16 - 1) / 16;
// PERSIST-NEXT: const long long __cleave_tcols = (__cleave_jhi - __cleave_jlo + 32 - 1) / 32;
// PERSIST-NEXT: volatile unsigned *__cleave_done = __cleave_sched + 1;
// PERSIST-NEXT: __shared__ unsigned __cleave_ticket;
// PERSIST-NEXT: int __cleave_acc_best = __cleave_init_best;
// PERSIST-NEXT: for (;;) {
// PERSIST-NEXT: if (threadIdx.x == 0)
// PERSIST-NEXT: __cleave_ticket = atomicAdd(__cleave_sched, 1u);
// PERSIST-NEXT: __syncthreads();
// PERSIST-NEXT: const long long __cleave_k = __cleave_ticket;
// PERSIST-NEXT: if (__cleave_k >= __cleave_trows * __cleave_tcols)
// PERSIST-NEXT: break;
// PERSIST-NEXT: long long __cleave_bi, __cleave_bj;
// PERSIST-NEXT: __cleave_tile_of(__cleave_k, __cleave_trows, __cleave_tcols, &__cleave_bi, &__cleave_bj);
// PERSIST-NEXT: const long long __cleave_diag = __cleave_bi + __cleave_bj;
// PERSIST: if (threadIdx.x == 0) {
// PERSIST-NEXT: unsigned __cleave_ns = 0;
// PERSIST-NEXT: if (__cleave_bi > 0)
// PERSIST-NEXT: while (__cleave_done[(__cleave_bi - 1) * __cleave_tcols + __cleave_bj] == 0)
// PERSIST-NEXT: __cleave_tile_backoff(&__cleave_ns);
// PERSIST-NEXT: if (__cleave_bj > 0)
// PERSIST-NEXT: while (__cleave_done[__cleave_bi * __cleave_tcols + __cleave_bj - 1] == 0)
// PERSIST-NEXT: __cleave_tile_backoff(&__cleave_ns);
// PERSIST-NEXT: __threadfence();
// PERSIST-NEXT: }
// PERSIST-NEXT: __syncthreads();
// PERSIST-NEXT: const long long __cleave_i0 = __cleave_ilo + __cleave_bi * 16;
// PERSIST-NEXT: const long long __cleave_j0 = __cleave_jlo + (__cleave_diag - __cleave_bi) * 32;
// PERSIST: __shared__ int __cleave_H[17 * 34];
// PERSIST: __cleave_H[__cleave_e] = *(const volatile int *)&H[(__cleave_i0 + __cleave_r + (-1)) * ((long long)m + 1) + (__cleave_j0 + __cleave_c + (-1))];
// PERSIST: __cleave_acc_best = std::max(__cleave_acc_best, s);
// PERSIST: H[(__cleave_i0 + __cleave_r + (0)) * ((long long)m + 1) + (__cleave_j0 + __cleave_c + (0))] =
// PERSIST-NEXT: __cleave_H[(__cleave_r + 1) * 34 + (__cleave_c + 1)];
// PERSIST-NEXT: }
// PERSIST: __syncthreads();
// PERSIST-NEXT: if (threadIdx.x == 0) {
// PERSIST-NEXT: __threadfence();
// PERSIST-NEXT: __cleave_done[__cleave_bi * __cleave_tcols + __cleave_bj] = 1;
// PERSIST-NEXT: }
// PERSIST-NEXT: }
// PERSIST-NEXT: atomicMax((int *)__cleave_red_best, (int)__cleave_acc_best);
// PERSIST-NEXT: }

// The host: scratch for the ticket and one flag per tile, zeroed, freed.
// PERSIST: static void __cleave_tile0(int n, int m, int *H, const char *a, const char *b, int &best) {
// PERSIST-NOT: CLEAVE_TILE_WAVEFRONT
// PERSIST: unsigned *__cleave_sched = nullptr;
// PERSIST-NEXT: const long long __cleave_ntiles = __cleave_trows * __cleave_tcols;
// PERSIST-NEXT: __cleave_ok = __cleave_ok && __cleave_ntiles <= __CLEAVE_TILE_MAX_PERSISTENT_TILES &&
// PERSIST-NEXT: cudaMalloc((void **)&__cleave_sched, (size_t)(1 + __cleave_ntiles) * sizeof(unsigned)) == cudaSuccess &&
// PERSIST-NEXT: cudaMemset(__cleave_sched, 0, (size_t)(1 + __cleave_ntiles) * sizeof(unsigned)) == cudaSuccess;
// PERSIST-NEXT: if (__cleave_ok) {
// PERSIST-NEXT: const long long __cleave_grid = __cleave_tile_resident((const void *)__cleave_tile0_persistent, 16, __cleave_trows, __cleave_tcols);
// PERSIST-NEXT: __cleave_tile0_persistent<<<(unsigned)__cleave_grid, 16>>>(__cleave_sched, n, m, (int *)(__cleave_H_dev
// PERSIST: cudaFree(__cleave_sched);
// PERSIST-NOT: <<<
// PERSIST: for (int i = 1; i <= n; ++i)

// LAUNCH: __global__ void __cleave_tile0_kernel(long long __cleave_diag,
// LAUNCH: __cleave_H[__cleave_e] = H[(__cleave_i0 + __cleave_r + (-1)) * ((long long)m + 1) + (__cleave_j0 + __cleave_c + (-1))];
// LAUNCH-NOT: __cleave_tile0_persistent
// LAUNCH-NOT: __cleave_sched
// LAUNCH-NOT: CLEAVE_TILE_WAVEFRONT
// LAUNCH: __cleave_tile0_kernel<<<(unsigned)(__cleave_last - __cleave_first + 1), 16>>>(__cleave_d,
// LAUNCH-NOT: __cleave_tile0_persistent

// AUTO: #define CLEAVE_TILE_PERSISTENT_MIN_DIAGONALS 8
// AUTO: __global__ void __cleave_tile0_kernel(long long __cleave_diag,
// AUTO: __global__ void __cleave_tile0_persistent(unsigned *__cleave_sched,
// AUTO: static void __cleave_tile0(
// AUTO: #ifdef CLEAVE_TILE_WAVEFRONT
// AUTO-NEXT: const bool __cleave_persistent = CLEAVE_TILE_WAVEFRONT;
// AUTO-NEXT: #else
// AUTO-NEXT: const bool __cleave_persistent = __cleave_trows + __cleave_tcols - 1 >= CLEAVE_TILE_PERSISTENT_MIN_DIAGONALS &&
// AUTO-NEXT: __cleave_trows * __cleave_tcols <= __CLEAVE_TILE_MAX_PERSISTENT_TILES;
// AUTO-NEXT: #endif
// AUTO-NEXT: if (__cleave_persistent) {
// AUTO: __cleave_tile0_persistent<<<(unsigned)__cleave_grid, 16>>>(
// AUTO: } else {
// AUTO: __cleave_tile0_kernel<<<(unsigned)(__cleave_last - __cleave_first + 1), 16>>>(
