// The emitted CUDA of one wavefront nest: the kernel for one anti-diagonal
// of tiles (staged in shared memory, one barrier per in-tile step), the host
// function with its run-time checks and the nest as written as the
// fallback, and the call in the nest's place.
// RUN: %strip_comments %s %t/wavefront.cpp
// RUN: %cleave tile %t/wavefront.cpp -o %t/out.cu 2>&1 | FileCheck %s --check-prefix=REMARK
// RUN: FileCheck %s < %t/out.cu

#include <algorithm>

void editDistance(const char *a, const char *b, int *D, int n, int m) {
#pragma cleave tile tile(16, 32)
  for (int i = 1; i <= n; ++i)
    for (int j = 1; j <= m; ++j) {
      int sub = D[(i - 1) * (m + 1) + j - 1] + (a[i - 1] != b[j - 1]);
      int del = D[(i - 1) * (m + 1) + j] + 1;
      int ins = D[i * (m + 1) + j - 1] + 1;
      D[i * (m + 1) + j] = std::min(sub, std::min(del, ins));
    }
}
// REMARK: wavefront.cpp:[[@LINE-9]]:1: remark: cleave tile: nest tiled: wavefront of 16 x 32 tiles, one persistent launch (blocks take tiles in wavefront order from an atomic ticket and wait on per-tile flags) from CLEAVE_TILE_PERSISTENT_MIN_DIAGONALS (8) anti-diagonals of tiles, else one launch per anti-diagonal, chosen at run time; dependences: flow (1, 1), (1, 0), (0, 1) through 'D'

// CHECK: struct __cleave_tile_span {
// CHECK: #include <algorithm>
// CHECK: __global__ void __cleave_tile0_kernel(long long __cleave_diag, int n, int m, int *D, const char *a, const char *b) {
// CHECK-NEXT: const long long __cleave_ilo = 1, __cleave_ihi = (long long)n + 1;
// CHECK-NEXT: const long long __cleave_jlo = 1, __cleave_jhi = (long long)m + 1;
// CHECK: const long long __cleave_bi = (__cleave_diag < __cleave_tcols ? 0 : __cleave_diag - __cleave_tcols + 1) + blockIdx.x;
// CHECK: const long long __cleave_j0 = __cleave_jlo + (__cleave_diag - __cleave_bi) * 32;
// CHECK: __shared__ int __cleave_D[17 * 34];
// CHECK: __cleave_D[__cleave_e] = D[(__cleave_i0 + __cleave_r + (-1)) * ((long long)m + 1) + (__cleave_j0 + __cleave_c + (-1))];
// CHECK: __syncthreads();
// CHECK: const int i = (int)(__cleave_i0 + __cleave_t);
// CHECK-NEXT: const int j = (int)(__cleave_j0 + __cleave_u);
// CHECK-NEXT: do {
// CHECK-NEXT: int sub = __cleave_D[(__cleave_t + 0) * 34 + (__cleave_u + 0)] + (a[i - 1] != b[j - 1]);
// CHECK-NEXT: int del = __cleave_D[(__cleave_t + 0) * 34 + (__cleave_u + 1)] + 1;
// CHECK-NEXT: int ins = __cleave_D[(__cleave_t + 1) * 34 + (__cleave_u + 0)] + 1;
// CHECK-NEXT: __cleave_D[(__cleave_t + 1) * 34 + (__cleave_u + 1)] = std::min(sub, std::min(del, ins));
// CHECK-NEXT: } while (0);
// CHECK-NEXT: }
// CHECK-NEXT: __syncthreads();
// CHECK: D[(__cleave_i0 + __cleave_r + (0)) * ((long long)m + 1) + (__cleave_j0 + __cleave_c + (0))] =
// CHECK-NEXT: __cleave_D[(__cleave_r + 1) * 34 + (__cleave_c + 1)];

// CHECK: static void __cleave_tile0(int n, int m, int *D, const char *a, const char *b) {
// CHECK: __cleave_ok = __cleave_ok && __cleave_jlo + (-1) >= 0 && __cleave_jhi - 1 + (0) < (long long)m + 1;
// CHECK: __cleave_D_span.add(&D[(i - 1) * (m + 1) + j - 1]);
// CHECK: __cleave_ok = __cleave_ok && !__cleave_D_span.overlaps(__cleave_a_span);
// CHECK-NEXT: __cleave_ok = __cleave_ok && !__cleave_D_span.overlaps(__cleave_b_span);
// CHECK: __cleave_tile0_kernel<<<(unsigned)(__cleave_last - __cleave_first + 1), 16>>>(__cleave_d, n, m, (int *)(__cleave_D_dev + ((uintptr_t)D - __cleave_D_span.from(D))),
// CHECK: __cleave_D_span.toHost(D, __cleave_D_dev);
// CHECK-NOT: toHost
// CHECK: for (int i = 1; i <= n; ++i)
// CHECK: void editDistance(const char *a, const char *b, int *D, int n, int m) {
// CHECK-NEXT: {{^  }}__cleave_tile0(n, m, D, a, b);
// CHECK-NEXT: }
// CHECK-NOT: #pragma cleave
