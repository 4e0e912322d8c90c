// technique(blocks) (digest 001 s4): a 3-D table whose cells depend on
// cells at non-uniform distances (an inner loop ranges over them), in
// blocks of 16 x 16 x 16 cells: one launch per block level, the block's
// cells level by level with a barrier between levels; the host function
// checks the accesses at the vertices of their domains, and runs the nest
// as written when a check fails.
// RUN: %strip_comments %s %t/blocks.cpp
// RUN: %cleave tile %t/blocks.cpp -o %t/out.cu 2>&1 | FileCheck %s --check-prefix=REMARK
// RUN: FileCheck %s < %t/out.cu

#include <algorithm>

void knap(int *V, const int *w, int n, int m, int l) {
#pragma cleave tile technique(blocks)
  for (int i = 1; i < n; ++i)
    for (int j = 0; j < m; ++j)
      for (int k = 0; k < l; ++k) {
        int best = V[((i - 1) * m + j) * l + k];
        for (int s = 1; s <= i; ++s)
          best = std::max(best, V[((i - s) * m + j) * l + k] + w[s]);
        V[(i * m + j) * l + k] = best;
      }
}
// REMARK: blocks.cpp:[[@LINE-10]]:1: remark: cleave tile: nest tiled: blocks of 16 x 16 x 16 cells of 'V', one launch per block level, in-block levels separated by barriers; dependences (distances): flow [n, m, l] -> { [i, j = 0, k = 0] : m > 0 and l > 0 and 0 < i <= -2 + n } through 'V'

// CHECK: struct __cleave_tile_span {
// CHECK: inline bool __cleave_nb_overflow(long long n0, long long n1, long long b0,
// CHECK: __global__ void __cleave_tile0_blocks(long long __cleave_level, int n, int m, int l, int *V, const int *w) {
// CHECK-NEXT: const long long __cleave_lo0 = 1, __cleave_hi0 = (long long)n;
// CHECK-NEXT: const long long __cleave_lo1 = 0, __cleave_hi1 = (long long)m;
// CHECK-NEXT: const long long __cleave_lo2 = 0, __cleave_hi2 = (long long)l;
// CHECK: const long long __cleave_b2 = __cleave_level - __cleave_b0 - __cleave_b1;
// CHECK-NEXT: if (__cleave_b2 < 0 || __cleave_b2 >= __cleave_nb2)
// CHECK-NEXT: return;
// CHECK: for (int __cleave_l = 0; __cleave_l < __cleave_n0 + __cleave_n1 + __cleave_n2 - 2; ++__cleave_l) {
// CHECK-NEXT: for (int __cleave_e = threadIdx.x; __cleave_e < __cleave_n0 * __cleave_n1; __cleave_e += blockDim.x) {
// CHECK-NEXT: const int __cleave_t1 = __cleave_e / __cleave_n1, __cleave_t2 = __cleave_e % __cleave_n1;
// CHECK-NEXT: const int __cleave_t3 = __cleave_l - __cleave_t1 - __cleave_t2;
// CHECK-NEXT: if (__cleave_t3 >= 0 && __cleave_t3 < __cleave_n2) {
// CHECK-NEXT: const int i = (int)(__cleave_o0 + __cleave_t1);
// CHECK-NEXT: const int j = (int)(__cleave_o1 + __cleave_t2);
// CHECK-NEXT: const int k = (int)(__cleave_o2 + __cleave_t3);
// CHECK-NEXT: do {
// CHECK-NEXT: int best = V[((i - 1) * m + j) * l + k];
// CHECK-NEXT: for (int s = 1; s <= i; ++s)
// CHECK-NEXT: best = std::max(best, V[((i - s) * m + j) * l + k] + w[s]);
// CHECK-NEXT: V[(i * m + j) * l + k] = best;
// CHECK-NEXT: } while (0);
// CHECK-NEXT: }
// CHECK-NEXT: }
// CHECK-NEXT: __syncthreads();
// CHECK-NEXT: }
// CHECK-NEXT: }

// The vertices: the box's 8 corners, then the inner loop's first and last s.
// CHECK: static void __cleave_tile0(int n, int m, int l, int *V, const int *w) {
// CHECK: bool __cleave_ok = !__cleave_nb_overflow(__cleave_hi0 - __cleave_lo0, __cleave_hi1 - __cleave_lo1, 16, 16);
// CHECK: for (int __cleave_c = 0; __cleave_c < 8; ++__cleave_c) {
// CHECK-NEXT: const int i = (int)(__cleave_c & 1 ? __cleave_hi0 - 1 : __cleave_lo0);
// CHECK: __cleave_V_span.add(&V[((i - 1) * m + j) * l + k]);
// CHECK-NEXT: __cleave_view(1, (long long)(j) + (0));
// CHECK-NEXT: __cleave_view(2, (long long)(k) + (0));
// CHECK: for (int __cleave_v0 = 0; __cleave_v0 < 2; ++__cleave_v0) {
// CHECK-NEXT: __cleave_ok = __cleave_ok && (1) < ((long long)i + 1);
// CHECK-NEXT: const int s = (int)(__cleave_v0 ? ((long long)i + 1) - 1 : (1));
// CHECK: __cleave_V_span.add(&V[((i - s) * m + j) * l + k]);
// CHECK: __cleave_w_span.add(&w[s]);
// CHECK: const long long __cleave_p0 = (long long)l * (long long)m, __cleave_p1 = (long long)l;
// CHECK-NEXT: __cleave_ok = __cleave_ok && __cleave_p1 > 0 && __cleave_min[2] >= 0 && __cleave_max[2] < __cleave_p1 &&
// CHECK-NEXT: __cleave_min[1] >= 0 && (__cleave_max[1] + 1) * __cleave_p1 <= __cleave_p0;
// CHECK-NEXT: __cleave_ok = __cleave_ok && !__cleave_V_span.overlaps(__cleave_w_span);
// CHECK: for (long long __cleave_l = 0; __cleave_ok && __cleave_l < __cleave_nb0 + __cleave_nb1 + __cleave_nb2 - 2; ++__cleave_l) {
// CHECK-NEXT: __cleave_tile0_blocks<<<(unsigned)(__cleave_nb0 * __cleave_nb1), 256>>>(__cleave_l, n, m, l, (int *)(__cleave_V_dev + ((uintptr_t)V - __cleave_V_span.from(V))), (const int *)(__cleave_w_dev + ((uintptr_t)w - __cleave_w_span.from(w))));
// CHECK: __cleave_V_span.toHost(V, __cleave_V_dev);
// CHECK-NOT: toHost
// CHECK: for (int i = 1; i < n; ++i)
// CHECK: void knap(int *V, const int *w, int n, int m, int l) {
// CHECK-NEXT: {{^  }}__cleave_tile0(n, m, l, V, w);
// CHECK-NEXT: }
