// restrict pointers need no run-time overlap check; the column check of the
// 2-D view stays. Two nests in one function get two kernels.
// RUN: %strip_comments %s %t/restrict.cpp
// RUN: %cleave tile %t/restrict.cpp -o - 2>/dev/null | FileCheck %s

#include <algorithm>

void twoNests(const int *__restrict in, int *__restrict A, int *__restrict B,
              int n, int m) {
#pragma cleave tile autotune(off)
  for (int i = 1; i < n; ++i)
    for (int j = 1; j < m; ++j)
      A[i * m + j] = A[(i - 1) * m + j] + in[j];
#pragma cleave tile technique(wavefront) tile(8, 8)
  for (int i = 1; i < n; ++i)
    for (int j = 1; j < m; ++j)
      B[i * m + j] = B[i * m + j - 1] + A[i * m + j];
}
// CHECK: __global__ void __cleave_tile0_kernel(
// CHECK: __shared__ int __cleave_A[129 * 64];
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

// Reductions: the host function takes the variable by reference; the kernel
// gets its result cell and first value, each thread an accumulator.
void reduce(int *__restrict A, int n, int m, int &best, long long &total) {
#pragma cleave tile tile(4, 4)
  for (int i = 1; i < n; ++i)
    for (int j = 1; j < m; ++j) {
      A[i * m + j] += A[(i - 1) * m + j];
      best = std::max(best, A[i * m + j]);
      total = total + A[i * m + j];
    }
}
// CHECK: __global__ void __cleave_tile2_kernel(long long __cleave_diag, int n, int m, int *A, int *__cleave_red_best, int __cleave_init_best, long long *__cleave_red_total, long long __cleave_init_total) {
// CHECK: int __cleave_acc_best = __cleave_init_best;
// CHECK-NEXT: long long __cleave_acc_total = 0;
// CHECK: __cleave_acc_best = std::max(__cleave_acc_best, __cleave_A[(__cleave_t + 1) * 4 + (__cleave_u + 0)]);
// CHECK-NEXT: __cleave_acc_total = __cleave_acc_total + __cleave_A[(__cleave_t + 1) * 4 + (__cleave_u + 0)];
// CHECK: atomicMax((int *)__cleave_red_best, (int)__cleave_acc_best);
// CHECK-NEXT: atomicAdd((unsigned long long *)__cleave_red_total, (unsigned long long)__cleave_acc_total);
// CHECK: static void __cleave_tile2(int n, int m, int *A, int &best, long long &total) {
// CHECK: int __cleave_best_red = best;
// CHECK: long long __cleave_total_red = 0;
// CHECK: __cleave_tile2_kernel<<<{{.*}}>>>(__cleave_d, n, m, {{.*}}, __cleave_best_red_dev, best, __cleave_total_red_dev, total);
// CHECK: best = __cleave_best_red;
// CHECK-NEXT: total = total + __cleave_total_red;
