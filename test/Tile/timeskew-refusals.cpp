// Every reason a technique(timeskew) nest is left as written: a remark at
// the pragma, a note at the construct that shows it, and the nest
// unchanged.
// RUN: %strip_comments %s %t/timeskew-refusals.cpp
// RUN: %cleave tile %t/timeskew-refusals.cpp -o %t/out.cpp 2>&1 | FileCheck %s
// RUN: diff %t/timeskew-refusals.cpp %t/out.cpp

#include <utility>

void cases(int *A, int *B, int *C, float *F, int *idx, int n, int m, int T,
           int s) {
// A two-deep nest: no time loop around a step.
#pragma cleave tile technique(timeskew)
  for (int i = 1; i < n; ++i)
    for (int j = 1; j < m; ++j)
      A[i * m + j] = A[(i - 1) * m + j];
// CHECK: timeskew-refusals.cpp:[[@LINE-4]]:1: remark: cleave tile: nest left as written: the time loop's body must be a step nest followed by a nest that copies its result back, or by a swap of the two pointers
// CHECK: timeskew-refusals.cpp:[[@LINE-3]]:5: note: here

// The time loop itself must step by one.
#pragma cleave tile technique(timeskew)
  for (int t = 0; t < T; t += 2) {
    for (int i = 1; i < n - 1; ++i)
      for (int j = 1; j < m - 1; ++j)
        B[i * m + j] = A[i * m + j + 1];
    std::swap(A, B);
  }
// CHECK: timeskew-refusals.cpp:[[@LINE-7]]:1: remark: cleave tile: nest left as written: the loop must step its index by one
// CHECK: timeskew-refusals.cpp:[[@LINE-7]]:26: note: here

// The step's own refusals (extractNest) pass through.
#pragma cleave tile technique(timeskew)
  for (int t = 0; t < T; ++t) {
    for (int i = 1; i < n - 1; ++i)
      for (int j = 1; j < m - 1; ++j)
        B[i * m + j] = A[idx[i] * m + j];
    std::swap(A, B);
  }
// CHECK: timeskew-refusals.cpp:[[@LINE-7]]:1: remark: cleave tile: nest left as written: non-affine subscript of 'A'
// CHECK: timeskew-refusals.cpp:[[@LINE-4]]:26: note: here

// Partial values of a reduction are not the ones the steps would see.
#pragma cleave tile technique(timeskew)
  for (int t = 0; t < T; ++t) {
    for (int i = 1; i < n - 1; ++i)
      for (int j = 1; j < m - 1; ++j) {
        B[i * m + j] = A[i * m + j + 1];
        s += A[i * m + j];
      }
    std::swap(A, B);
  }
// CHECK: timeskew-refusals.cpp:[[@LINE-9]]:1: remark: cleave tile: nest left as written: a time-tiled step cannot reduce a scalar
// CHECK: timeskew-refusals.cpp:[[@LINE-5]]:9: note: here

// A step that reads the time index differs from step to step.
#pragma cleave tile technique(timeskew)
  for (int t = 0; t < T; ++t) {
    for (int i = 1; i < n - 1; ++i)
      for (int j = 1; j < m - 1; ++j)
        B[i * m + j] = A[i * m + j + 1] + t;
    std::swap(A, B);
  }
// CHECK: timeskew-refusals.cpp:[[@LINE-7]]:1: remark: cleave tile: nest left as written: the step uses the time index 't' (time tiles run several steps in one kernel)
// CHECK: timeskew-refusals.cpp:[[@LINE-6]]:5: note: here

// A step writes one grid.
#pragma cleave tile technique(timeskew)
  for (int t = 0; t < T; ++t) {
    for (int i = 1; i < n - 1; ++i)
      for (int j = 1; j < m - 1; ++j) {
        B[i * m + j] = A[i * m + j + 1];
        C[i * m + j] = 0;
      }
    std::swap(A, B);
  }
// CHECK: timeskew-refusals.cpp:[[@LINE-9]]:1: remark: cleave tile: nest left as written: the step writes two arrays ('B' and 'C')
// CHECK: timeskew-refusals.cpp:[[@LINE-8]]:5: note: here

// Reading the grid it writes makes the step's iterations depend on each other.
#pragma cleave tile technique(timeskew)
  for (int t = 0; t < T; ++t) {
    for (int i = 1; i < n - 1; ++i)
      for (int j = 1; j < m - 1; ++j)
        B[i * m + j] = A[i * m + j] + B[i * m + j - 1];
    std::swap(A, B);
  }
// CHECK: timeskew-refusals.cpp:[[@LINE-7]]:1: remark: cleave tile: nest left as written: the step reads 'B', which it writes (a stencil step reads one array and writes another)
// CHECK: timeskew-refusals.cpp:[[@LINE-4]]:39: note: here

// Every step writes every cell of the grid it writes.
#pragma cleave tile technique(timeskew)
  for (int t = 0; t < T; ++t) {
    for (int i = 1; i < n - 1; ++i)
      for (int j = 1; j < m - 1; ++j)
        if (A[i * m + j] > 0)
          B[i * m + j] = A[i * m + j + 1];
    std::swap(A, B);
  }
// CHECK: timeskew-refusals.cpp:[[@LINE-8]]:1: remark: cleave tile: nest left as written: the step must write 'B' once, unconditionally, as a statement of its body
// CHECK: timeskew-refusals.cpp:[[@LINE-5]]:9: note: here

// The result must land on the cell the step computes.
#pragma cleave tile technique(timeskew)
  for (int t = 0; t < T; ++t) {
    for (int i = 1; i < n - 1; ++i)
      for (int j = 1; j < m - 1; ++j)
        B[(i + 1) * m + j] = A[i * m + j];
    std::swap(A, B);
  }
// CHECK: timeskew-refusals.cpp:[[@LINE-7]]:1: remark: cleave tile: nest left as written: the step must write 'B' at cell (i, j)
// CHECK: timeskew-refusals.cpp:[[@LINE-6]]:5: note: here

// The swap must exchange the two grids.
#pragma cleave tile technique(timeskew)
  for (int t = 0; t < T; ++t) {
    for (int i = 1; i < n - 1; ++i)
      for (int j = 1; j < m - 1; ++j)
        B[i * m + j] = A[i * m + j];
    std::swap(A, C);
  }
// CHECK: timeskew-refusals.cpp:[[@LINE-7]]:1: remark: cleave tile: nest left as written: the swap must exchange 'B' with the array the step reads
// CHECK: timeskew-refusals.cpp:[[@LINE-3]]:5: note: here

// The copy must go back to the grid the step reads.
#pragma cleave tile technique(timeskew)
  for (int t = 0; t < T; ++t) {
    for (int i = 1; i < n - 1; ++i)
      for (int j = 1; j < m - 1; ++j)
        B[i * m + j] = A[i * m + j];
    for (int i = 1; i < n - 1; ++i)
      for (int j = 1; j < m - 1; ++j)
        C[i * m + j] = B[i * m + j];
  }
// CHECK: timeskew-refusals.cpp:[[@LINE-9]]:1: remark: cleave tile: nest left as written: the copy back must write the array the step reads
// CHECK: timeskew-refusals.cpp:[[@LINE-5]]:5: note: here

// The copy must cover exactly the step's domain...
#pragma cleave tile technique(timeskew)
  for (int t = 0; t < T; ++t) {
    for (int i = 1; i < n - 1; ++i)
      for (int j = 1; j < m - 1; ++j)
        B[i * m + j] = A[i * m + j];
    for (int i = 1; i < n - 2; ++i)
      for (int j = 1; j < m - 1; ++j)
        A[i * m + j] = B[i * m + j];
  }
// CHECK: timeskew-refusals.cpp:[[@LINE-9]]:1: remark: cleave tile: nest left as written: the copy back must be 'A[cell] = B[cell]' over the step's domain
// CHECK: timeskew-refusals.cpp:[[@LINE-5]]:5: note: here

// ... and copy nothing but the cells.
#pragma cleave tile technique(timeskew)
  for (int t = 0; t < T; ++t) {
    for (int i = 1; i < n - 1; ++i)
      for (int j = 1; j < m - 1; ++j)
        B[i * m + j] = A[i * m + j];
    for (int i = 1; i < n - 1; ++i)
      for (int j = 1; j < m - 1; ++j)
        A[i * m + j] = B[i * m + j] + 1;
  }
// CHECK: timeskew-refusals.cpp:[[@LINE-9]]:1: remark: cleave tile: nest left as written: the copy back must be 'A[cell] = B[cell]' over the step's domain
// CHECK: timeskew-refusals.cpp:[[@LINE-3]]:9: note: here

// The step must read the grid it is swapped with.
#pragma cleave tile technique(timeskew)
  for (int t = 0; t < T; ++t) {
    for (int i = 1; i < n - 1; ++i)
      for (int j = 1; j < m - 1; ++j)
        B[i * m + j] = C[i * m + j];
    std::swap(A, B);
  }
// CHECK: timeskew-refusals.cpp:[[@LINE-7]]:1: remark: cleave tile: nest left as written: the step does not read 'A'
// CHECK: timeskew-refusals.cpp:[[@LINE-6]]:5: note: here

// The two grids are one shape.
#pragma cleave tile technique(timeskew)
  for (int t = 0; t < T; ++t) {
    for (int i = 1; i < n - 1; ++i)
      for (int j = 1; j < m - 1; ++j)
        B[i * m + j] = A[i * n + j];
    std::swap(A, B);
  }
// CHECK: timeskew-refusals.cpp:[[@LINE-7]]:1: remark: cleave tile: nest left as written: 'A' and 'B' must have the same row pitch
// CHECK: timeskew-refusals.cpp:[[@LINE-6]]:5: note: here

// The grid the step reads must be a 2-D view too.
#pragma cleave tile technique(timeskew)
  for (int t = 0; t < T; ++t) {
    for (int i = 1; i < n - 1; ++i)
      for (int j = 1; j < m - 1; ++j)
        B[i * m + j] = A[j * m + i];
    std::swap(A, B);
  }
// CHECK: timeskew-refusals.cpp:[[@LINE-7]]:1: remark: cleave tile: nest left as written: the subscript of 'A' is not of the form (i + a) * pitch + j + b with constants a, b and one pitch for every access
// CHECK: timeskew-refusals.cpp:[[@LINE-4]]:26: note: here

// The two grids hold one element type.
#pragma cleave tile technique(timeskew)
  for (int t = 0; t < T; ++t) {
    for (int i = 1; i < n - 1; ++i)
      for (int j = 1; j < m - 1; ++j)
        F[i * m + j] = A[i * m + j];
    for (int i = 1; i < n - 1; ++i)
      for (int j = 1; j < m - 1; ++j)
        A[i * m + j] = F[i * m + j];
  }
// CHECK: timeskew-refusals.cpp:[[@LINE-9]]:1: remark: cleave tile: nest left as written: 'A' and 'F' must have the same element type
// CHECK: timeskew-refusals.cpp:[[@LINE-8]]:5: note: here

// The staged windows must fit in a block's shared memory.
#pragma cleave tile technique(timeskew) tile(64, 64) steps(8)
  for (int t = 0; t < T; ++t) {
    for (int i = 1; i < n - 1; ++i)
      for (int j = 1; j < m - 1; ++j)
        B[i * m + j] = A[i * m + j + 1];
    std::swap(A, B);
  }
}
// CHECK: timeskew-refusals.cpp:[[@LINE-8]]:1: remark: cleave tile: nest left as written: time tiles of 64 x 64 cells and 8 step(s) need 51200 bytes of shared memory, more than the 49152 a block may declare: choose a smaller tile(...) or steps(...)
// CHECK: timeskew-refusals.cpp:[[@LINE-8]]:3: note: here

void arrays(int n, int T) {
  int A[100], B[100];
// Declared arrays cannot trade places (std::swap would copy them).
#pragma cleave tile technique(timeskew)
  for (int t = 0; t < T; ++t) {
    for (int i = 1; i < 9; ++i)
      for (int j = 1; j < 9; ++j)
        B[i * 10 + j] = A[i * 10 + j + 1];
    std::swap(A, B);
  }
}
// CHECK: timeskew-refusals.cpp:[[@LINE-8]]:1: remark: cleave tile: nest left as written: the swapped arrays must be local pointer variables
// CHECK: timeskew-refusals.cpp:[[@LINE-4]]:5: note: here
