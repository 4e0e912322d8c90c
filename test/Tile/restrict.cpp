// restrict pointers need no run-time overlap check; the column check of the
// 2-D view stays. Two nests in one function get two kernels.
// RUN: %strip_comments %s %t/restrict.cpp
// RUN: %cleave tile %t/restrict.cpp -o - 2>/dev/null | FileCheck %s

void twoNests(const int *__restrict in, int *__restrict A, int *__restrict B,
              int n, int m) {
#pragma cleave tile
  for (int i = 1; i < n; ++i)
    for (int j = 1; j < m; ++j)
      A[i * m + j] = A[(i - 1) * m + j] + in[j];
#pragma cleave tile technique(wavefront) tile(8, 8)
  for (int i = 1; i < n; ++i)
    for (int j = 1; j < m; ++j)
      B[i * m + j] = B[i * m + j - 1] + A[i * m + j];
}
// CHECK: __global__ void __cleave_tile0_kernel(
// CHECK: __shared__ int __cleave_A[33 * 64];
// CHECK: static void __cleave_tile0(
// CHECK-NOT: overlaps
// CHECK: __global__ void __cleave_tile1_kernel(
// CHECK: __shared__ int __cleave_B[8 * 10];
// CHECK: static void __cleave_tile1(
// CHECK: __cleave_ok = __cleave_ok && __cleave_jlo + (-1) >= 0 && __cleave_jhi - 1 + (0) < (long long)m;
// CHECK-NOT: overlaps
// CHECK: void twoNests(
// CHECK-NEXT: int n, int m) {
// CHECK-NEXT: __cleave_tile0(n, m, A, in);
// CHECK-NEXT: __cleave_tile1(n, m, B, A);
