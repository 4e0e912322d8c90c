// The emitted CUDA of one iterated stencil in the pointer-swap form: the
// cell function on the staged windows, the time-tile kernel (staging with
// the boundary of both grids, one barrier per step, the core written back),
// the per-step kernel with the body as written, and the host function that
// lets the model choose, keeps each grid's boundary and swaps the caller's
// pointers as the nest does; the nest as written is the fallback.
// RUN: %strip_comments %s %t/timeskew.cpp
// RUN: %cleave tile %t/timeskew.cpp -o %t/out.cu 2>&1 | FileCheck %s --check-prefix=REMARK
// RUN: FileCheck %s < %t/out.cu

#include <utility>

void heat(float *A, float *B, int n, int m, int steps) {
#pragma cleave tile technique(timeskew) tile(16, 32) steps(4)
  for (int t = 0; t < steps; ++t) {
    for (int i = 1; i < n - 1; ++i)
      for (int j = 1; j < m - 1; ++j)
        B[i * m + j] = (A[(i - 1) * m + j] + A[i * m + j - 1] + A[i * m + j] +
                        A[i * m + j + 1] + A[(i + 1) * m + j]) /
                       5;
    std::swap(A, B);
  }
}
// REMARK: timeskew.cpp:[[@LINE-10]]:1: remark: cleave tile: nest tiled: star stencil of radius 1 (5 points, pointer swap), as time tiles of 16 x 32 cells, 4 step(s) and strips of 8 cell(s) per thread, or one launch per step, chosen at run time; the model (on the built-in H200 numbers) predicts time tiles / one launch per step at 512 steps: 2048^2 {{[0-9.]+}} ({{.*}}), 4096^2 {{.*}}, 8192^2 {{.*}}, 16384^2 {{.*}}; dependences: flow (1, -1, 0), (1, 0, -1), (1, 0, 0), (1, 0, 1), (1, 1, 0) through 'A'

void box(double *U, double *V, const double *c, int n, int m, int steps) {
#pragma cleave tile technique(timeskew) tile(8, 16)
  for (int t = 0; t < steps; ++t) {
    for (int i = 2; i < n - 2; ++i)
      for (int j = 2; j < m - 2; ++j)
        V[i * m + j] = c[0] * U[(i - 2) * m + j - 2] + c[1] * U[(i + 2) * m + j + 2];
    for (int i = 2; i < n - 2; ++i)
      for (int j = 2; j < m - 2; ++j)
        U[i * m + j] = V[i * m + j];
  }
}
// REMARK: timeskew.cpp:[[@LINE-10]]:1: remark: cleave tile: nest tiled: general stencil of radius 2 (2 points, copy back), as time tiles of 8 x 16 cells, {{[0-9]+}} step(s) and strips of {{[0-9]}} cell(s) per thread, or one launch per step, chosen at run time; {{.*}}; dependences: flow (1, -2, -2), (1, 2, 2) through 'U'

// The model is in the preamble, once.
// CHECK: struct __cleave_tile_span {
// CHECK: template <typename T> struct __cleave_tile_buffer {
// CHECK: static inline bool __cleave_stencil_prefer_tiles(
// CHECK-NOT: __cleave_stencil_prefer_tiles(
// CHECK: #include <utility>

// The first nest: the body on the input window (40 = 32 + 2 x 4 steps x
// 1 halo), its result in a register.
// CHECK: static __device__ __forceinline__ void
// CHECK-NEXT: __cleave_tile0_cell(const float *__restrict__ __cleave_in, float &__cleave_v,
// CHECK-NEXT: int __cleave_y, int __cleave_x, long long __cleave_gi, long long __cleave_gj, int n, int m) {
// CHECK-NEXT: const int i = (int)__cleave_gi;
// CHECK-NEXT: const int j = (int)__cleave_gj;
// CHECK: do __cleave_v = (__cleave_in[(__cleave_y + (-1)) * 40 + (__cleave_x + (0))] + __cleave_in[(__cleave_y + (0)) * 40 + (__cleave_x + (-1))] + __cleave_in[(__cleave_y + (0)) * 40 + (__cleave_x + (0))] +
// CHECK-NEXT: __cleave_in[(__cleave_y + (0)) * 40 + (__cleave_x + (1))] + __cleave_in[(__cleave_y + (1)) * 40 + (__cleave_x + (0))]) /
// CHECK-NEXT: 5; while (0);

// Staging: the domain's cells and the boundary cells the step reads (one
// range per row offset), the boundary of both grids; then one barrier per
// step, the windows alternating, each thread computing a strip of 8 cells
// (every load before the first store; a partial strip cell by cell); then
// the core of the last two steps.
// CHECK: __global__ void __cleave_tile0_tiles(int __cleave_k, const float *__cleave_cur,
// CHECK-NEXT: const float *__cleave_oth, float *__cleave_fin, float *__cleave_pen, int n, int m) {
// CHECK-NEXT: const long long __cleave_ilo = 1, __cleave_ihi = (long long)n - 1;
// CHECK-NEXT: const long long __cleave_jlo = 1, __cleave_jhi = (long long)m - 1;
// CHECK-NEXT: __shared__ float __cleave_s0[24 * 40], __cleave_s1[24 * 40];
// CHECK-NEXT: const int __cleave_h = 1 * __cleave_k;
// CHECK: (__cleave_gi - (-1) >= __cleave_ilo && __cleave_gi - (-1) < __cleave_ihi && __cleave_gj >= __cleave_jlo + (0) && __cleave_gj < __cleave_jhi + (0)) ||
// CHECK-NEXT: (__cleave_gi - (0) >= __cleave_ilo && __cleave_gi - (0) < __cleave_ihi && __cleave_gj >= __cleave_jlo + (-1) && __cleave_gj < __cleave_jhi + (1)) ||
// CHECK-NEXT: (__cleave_gi - (1) >= __cleave_ilo && __cleave_gi - (1) < __cleave_ihi && __cleave_gj >= __cleave_jlo + (0) && __cleave_gj < __cleave_jhi + (0))) {
// CHECK-NEXT: __cleave_s0[__cleave_y * 40 + __cleave_x] = __cleave_cur[__cleave_gi * ((long long)m) + __cleave_gj];
// CHECK-NEXT: if (!__cleave_dom)
// CHECK-NEXT: __cleave_s1[__cleave_y * 40 + __cleave_x] = __cleave_oth[__cleave_gi * ((long long)m) + __cleave_gj];
// CHECK: __syncthreads();
// CHECK: for (int __cleave_s = 1; __cleave_s <= __cleave_k; ++__cleave_s) {
// CHECK-NEXT: const int __cleave_lo = 1 * __cleave_s, __cleave_hi = __cleave_rows - __cleave_lo;
// CHECK: const float *__restrict__ __cleave_in = __cleave_s & 1 ? __cleave_s0 : __cleave_s1;
// CHECK-NEXT: float *__restrict__ __cleave_out = __cleave_s & 1 ? __cleave_s1 : __cleave_s0;
// CHECK: if (__cleave_y + 8 <= __cleave_hi && __cleave_gi >= __cleave_ilo && __cleave_gi + 8 <= __cleave_ihi) {
// CHECK: float __cleave_v[8];
// CHECK-NEXT: __cleave_tile0_cell(__cleave_in, __cleave_v[0], __cleave_y + 0, __cleave_x, __cleave_gi + 0, __cleave_gj, n, m);
// CHECK: __cleave_tile0_cell(__cleave_in, __cleave_v[7], __cleave_y + 7, __cleave_x, __cleave_gi + 7, __cleave_gj, n, m);
// CHECK-NEXT: __cleave_out[(__cleave_y + 0) * 40 + __cleave_x] = __cleave_v[0];
// CHECK: __cleave_out[(__cleave_y + 7) * 40 + __cleave_x] = __cleave_v[7];
// CHECK-NEXT: } else {
// CHECK-NEXT: for (int __cleave_q = 0; __cleave_q < 8; ++__cleave_q)
// CHECK-NEXT: if (__cleave_y + __cleave_q < __cleave_hi && __cleave_gi + __cleave_q >= __cleave_ilo && __cleave_gi + __cleave_q < __cleave_ihi) {
// CHECK-NEXT: float __cleave_v;
// CHECK-NEXT: __cleave_tile0_cell(__cleave_in, __cleave_v, __cleave_y + __cleave_q, __cleave_x, __cleave_gi + __cleave_q, __cleave_gj, n, m);
// CHECK-NEXT: __cleave_out[(__cleave_y + __cleave_q) * 40 + __cleave_x] = __cleave_v;
// CHECK-NEXT: }
// CHECK-NEXT: }
// CHECK-NEXT: }
// CHECK-NEXT: __syncthreads();
// CHECK-NEXT: }
// CHECK: __cleave_fin[__cleave_gi * ((long long)m) + __cleave_gj] = __cleave_last[__cleave_y * 40 + __cleave_x];
// CHECK-NEXT: if (__cleave_pen)
// CHECK-NEXT: __cleave_pen[__cleave_gi * ((long long)m) + __cleave_gj] = __cleave_prev[__cleave_y * 40 + __cleave_x];

// One launch per step: strips of 8 cells, the input read at offsets from
// the strip's first cell, every load before the first store.
// CHECK: __cleave_tile0_stepcell(const float *__cleave_base, int __cleave_q, float &__cleave_v,
// CHECK: do __cleave_v = (__cleave_base[(long long)(__cleave_q + (-1)) * ((long long)m) + (0)] + __cleave_base[(long long)(__cleave_q + (0)) * ((long long)m) + (-1)] +
// CHECK: __global__ void __cleave_tile0_step(const float *A, float *B, int n, int m) {
// CHECK: const long long __cleave_gi = __cleave_ilo + ((long long)blockIdx.y * 8 + threadIdx.y) * 8;
// CHECK: const float *__cleave_base = A + (__cleave_gi * ((long long)m) + __cleave_gj);
// CHECK: __cleave_tile0_stepcell(__cleave_base, 7, __cleave_v[7], __cleave_gi + 7, __cleave_gj, n, m);
// CHECK-NEXT: B[(__cleave_gi + 0) * ((long long)m) + __cleave_gj] = __cleave_v[0];

// The host side: the swapped pointers by reference, both grids' spans at
// the step's offsets, the model's choice, the last launch also writing step
// T - 1, each grid back to its own array, the pointers swapped for an odd
// number of steps; the nest as written as the fallback.
// CHECK: static void __cleave_tile0(int n, int m, float *&B, float *&A, int steps) {
// CHECK-NEXT: const long long __cleave_tlo = 0, __cleave_thi = (long long)steps;
// CHECK: __cleave_ok = __cleave_ok && __cleave_jlo + (-1) >= 0 &&
// CHECK-NEXT: __cleave_jhi - 1 + (1) < (long long)m;
// CHECK: __cleave_A_span.add(&A[(i - 1) * m + j]);
// CHECK-NEXT: __cleave_B_span.add(&B[(i - 1) * m + j]);
// CHECK: __cleave_ok = __cleave_ok && !__cleave_B_span.overlaps(__cleave_A_span);
// CHECK: __cleave_ok = __cleave_ok && __cleave_d[0].copy(__cleave_A_span, A) && __cleave_d[1].copy(__cleave_B_span, B);
// CHECK-NEXT: #ifdef CLEAVE_TILE_SCHEDULE
// CHECK-NEXT: const bool __cleave_tiles = CLEAVE_TILE_SCHEDULE;
// CHECK-NEXT: #else
// CHECK-NEXT: const bool __cleave_tiles = __cleave_stencil_prefer_tiles(
// CHECK-NEXT: __cleave_stencil_device{132, {{.*}}}, __cleave_stencil_shape{5, 1, 4, 3.25},
// CHECK-NEXT: (double)__cleave_ni, (double)__cleave_nj, (double)__cleave_steps, 16, 32, 4);
// CHECK: const bool __cleave_pen = true && __cleave_t + __cleave_k == __cleave_steps;
// CHECK-NEXT: __cleave_tile0_tiles<<<__cleave_tgrid, 256>>>(__cleave_k, __cleave_r[__cleave_t & 1].at,
// CHECK-NEXT: __cleave_r[(__cleave_t + 1) & 1].at, __cleave_w[(__cleave_t + __cleave_k) & 1].at,
// CHECK-NEXT: __cleave_pen ? __cleave_w[(__cleave_t + __cleave_k - 1) & 1].at : nullptr, n, m);
// CHECK: __cleave_tile0_step<<<__cleave_sgrid, dim3(32, 8)>>>(__cleave_d[__cleave_t & 1].at, __cleave_d[(__cleave_t + 1) & 1].at, n, m);
// CHECK: __cleave_r[0].back(__cleave_A_span, A);
// CHECK-NEXT: __cleave_r[1].back(__cleave_B_span, B);
// CHECK-NEXT: if (__cleave_steps & 1)
// CHECK-NEXT: std::swap(A, B);
// CHECK: for (int t = 0; t < steps; ++t) {
// CHECK: void heat(float *A, float *B, int n, int m, int steps) {
// CHECK-NEXT: {{^  }}__cleave_tile0(n, m, B, A, steps);
// CHECK-NEXT: }

// The second nest: a third array read as a device copy; no step T - 1;
// the copy back's kernel fills the step's output grid at the end.
// CHECK: __global__ void __cleave_tile1_copy(const double *__cleave_src, double *__cleave_dst, int n, int m, const double *c) {
// CHECK: static void __cleave_tile1(int n, int m, double *V, const double *c, double *U, int steps) {
// CHECK: __cleave_ok = __cleave_ok && !__cleave_V_span.overlaps(__cleave_c_span);
// CHECK-NEXT: __cleave_ok = __cleave_ok && !__cleave_V_span.overlaps(__cleave_U_span);
// CHECK-NEXT: __cleave_ok = __cleave_ok && !__cleave_c_span.overlaps(__cleave_U_span);
// CHECK: __cleave_tile_buffer<const double> __cleave_c_dev;
// CHECK: __cleave_d[1].clone(__cleave_d[0]);
// CHECK: const bool __cleave_pen = false && __cleave_t + __cleave_k == __cleave_steps;
// CHECK: __cleave_tile1_copy<<<__cleave_grid, dim3(32, 8)>>>(__cleave_r[__cleave_steps & 1].at, __cleave_b.at, n, m, __cleave_c_dev.at);
// CHECK: __cleave_r[__cleave_steps & 1].back(__cleave_U_span, U);
// CHECK-NEXT: __cleave_b.back(__cleave_V_span, V);
// CHECK: void box(double *U, double *V, const double *c, int n, int m, int steps) {
// CHECK-NEXT: {{^  }}__cleave_tile1(n, m, V, c, U, steps);
// CHECK-NEXT: }
// CHECK-NOT: #pragma cleave
