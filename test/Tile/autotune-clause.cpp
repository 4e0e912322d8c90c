// Tile sizes of wavefronts (docs/tile.md, "Tile sizes"): autotune(off)
// takes the model's choice alone; without tile(...) the model's candidates
// are emitted (kernels suffixed with their size) with the sweep and the
// cache around them; tile(...) fixes the size.
// RUN: %strip_comments %s %t/autotune-clause.cpp
// RUN: %cleave tile %t/autotune-clause.cpp -o %t/out.cu 2>&1 | FileCheck %s --check-prefix=REMARK
// RUN: FileCheck %s < %t/out.cu

void off(int *D, int n, int m) {
#pragma cleave tile autotune(off)
  for (int i = 1; i < n; ++i)
    for (int j = 1; j < m; ++j)
      D[i * m + j] = D[(i - 1) * m + j] + D[i * m + j - 1];
}
// REMARK: autotune-clause.cpp:[[@LINE-5]]:1: remark: cleave tile: nest tiled: wavefront of 128 x 64 tiles, the model on the built-in H200 numbers (Eq. 6.2: 128 x 64; Eq. 6.1 at 8192^2, relative to the best: 1.00, 1.10, 1.12, 1.22), one persistent launch

void swept(double *A, int n, int m) {
#pragma cleave tile
  for (int i = 1; i < n; ++i)
    for (int j = 1; j < m; ++j)
      A[i * m + j] = A[(i - 1) * m + j] + A[i * m + j - 1];
}
// REMARK: autotune-clause.cpp:[[@LINE-5]]:1: remark: cleave tile: nest tiled: wavefront of tiles of 64 x 64 (the model's choice), 64 x 32, 128 x 32 or 64 x 16, swept on the first run of each problem shape and device and cached, the model on the built-in H200 numbers (Eq. 6.2: 128 x 32; Eq. 6.1 at 8192^2, relative to the best: 1.00, 1.01, 1.11, 1.29)

void fixed(int *D, int n, int m) {
#pragma cleave tile tile(32, 32) autotune(on)
  for (int i = 1; i < n; ++i)
    for (int j = 1; j < m; ++j)
      D[i * m + j] = D[(i - 1) * m + j] + D[i * m + j - 1];
}
// REMARK: autotune-clause.cpp:[[@LINE-5]]:1: remark: cleave tile: nest tiled: wavefront of 32 x 32 tiles, one persistent launch

// CHECK: struct __cleave_tile_span {
// CHECK: bool reload(const void *base, char *dev) const {
// CHECK: inline int __cleave_tile_tuned(const char *key, long long ni, long long nj,
// CHECK: #if defined(CLEAVE_TILE_AUTOTUNE) && !CLEAVE_TILE_AUTOTUNE
// CHECK: inline void __cleave_tile_remember(

// CHECK: __global__ void __cleave_tile0_kernel(long long __cleave_diag,
// CHECK: __shared__ int __cleave_D[129 * 66];
// CHECK: static void __cleave_tile0(int n, int m, int *D) {
// CHECK-NOT: __cleave_tile_tuned
// CHECK: __cleave_tile0_kernel<<<(unsigned)(__cleave_last - __cleave_first + 1), 128>>>(

// CHECK: __global__ void __cleave_tile1_kernel_64x64(long long __cleave_diag,
// CHECK: __shared__ double __cleave_A[65 * 66];
// CHECK: __global__ void __cleave_tile1_persistent_64x64(
// CHECK: __global__ void __cleave_tile1_kernel_64x32(
// CHECK: __global__ void __cleave_tile1_kernel_128x32(
// CHECK: __shared__ double __cleave_A[129 * 34];
// CHECK: __global__ void __cleave_tile1_kernel_64x16(
// CHECK: static void __cleave_tile1(int n, int m, double *A) {
// CHECK: static const int __cleave_sizes[4][2] = {{[{][{]}}64, 64}, {64, 32}, {128, 32}, {64, 16}};
// CHECK-NEXT: const int __cleave_cached = __cleave_tile_tuned("tile1-{{[0-9a-f]+}}", __cleave_ihi - __cleave_ilo, __cleave_jhi - __cleave_jlo, 4, __cleave_sizes);
// CHECK: for (int __cleave_c = __cleave_from; __cleave_ok && __cleave_c < __cleave_to; ++__cleave_c) {
// CHECK-NEXT: if (__cleave_c != __cleave_from) {
// CHECK: __cleave_ok = __cleave_ok && __cleave_A_span.reload(A, __cleave_A_dev);
// CHECK-NEXT: }
// CHECK-NEXT: const double __cleave_t0 = __cleave_tile_now_ms();
// CHECK-NEXT: switch (__cleave_c) {
// CHECK-NEXT: case 0: {
// CHECK-NEXT: const long long __cleave_trows = (__cleave_ihi - __cleave_ilo + 64 - 1) / 64;
// CHECK-NEXT: const long long __cleave_tcols = (__cleave_jhi - __cleave_jlo + 64 - 1) / 64;
// CHECK: __cleave_tile1_persistent_64x64<<<(unsigned)__cleave_grid, 64>>>(
// CHECK: __cleave_tile1_kernel_64x64<<<
// CHECK: case 3: {
// CHECK: __cleave_tile1_kernel_64x16<<<
// CHECK: __cleave_ok = __cleave_ok && cudaDeviceSynchronize() == cudaSuccess;
// CHECK-NEXT: const double __cleave_ms = __cleave_tile_now_ms() - __cleave_t0;
// CHECK: if (__cleave_ok && __cleave_cached < 0)
// CHECK-NEXT: __cleave_tile_remember("tile1-{{[0-9a-f]+}}", __cleave_ihi - __cleave_ilo, __cleave_jhi - __cleave_jlo, 4, __cleave_sizes, __cleave_best, __cleave_best_ms);
// CHECK-NEXT: if (__cleave_ok) {
// CHECK-NEXT: __cleave_A_span.toHost(A, __cleave_A_dev);

// CHECK: __global__ void __cleave_tile2_kernel(long long __cleave_diag,
// CHECK: static void __cleave_tile2(
// CHECK-NOT: __cleave_tile_tuned
// CHECK: void fixed(int *D, int n, int m) {
