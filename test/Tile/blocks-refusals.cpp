// technique(blocks) refuses what it cannot prove or reproduce, with a
// remark at the pragma and a note at the construct.
// RUN: %strip_comments %s %t/blocks-refusals.cpp
// RUN: %cleave tile %t/blocks-refusals.cpp -o %t/out.cu 2>&1 | FileCheck %s
// RUN: FileCheck %s --check-prefix=OUT < %t/out.cu

int f(int);

void refusals(int *T, int *U, const int *C, int n, int m, int l, int s) {
#pragma cleave tile technique(blocks)
  for (int i = 1; i < n; ++i)
    for (int j = 0; j < m; ++j)
      for (int k = 0; k < l; ++k) {
        int best = 0;
        for (int c = 0; c < 4; ++c)
          best = T[(i * m + j) * l + k - C[c]];
        T[(i * m + j) * l + k] = best;
      }
// CHECK: blocks-refusals.cpp:[[@LINE-9]]:1: remark: cleave tile: nest left as written: the subscript of 'T' depends on data read by the nest: its dependences are not known statically
// CHECK: blocks-refusals.cpp:[[@LINE-4]]:20: note: here

#pragma cleave tile technique(blocks)
  for (int i = 1; i < n; ++i)
    for (int j = 0; j < m - 1; ++j)
      for (int k = 0; k < l; ++k)
        T[(i * m + j) * l + k] = T[((i - 1) * m + j + 1) * l + k];
// CHECK: blocks-refusals.cpp:[[@LINE-5]]:1: remark: cleave tile: nest left as written: a dependence through 'T' may have a negative component (flow (1, -1, 0) through 'T'): blocks need every distance componentwise >= 0

#pragma cleave tile technique(blocks)
  for (int i = 1; i < n; ++i)
    for (int j = 0; j < m; ++j)
      for (int k = 0; k < l; ++k) {
        int a = 0;
        while (a < i && T[(a * m + j) * l + k] > 0)
          ++a;
        T[(i * m + j) * l + k] = a;
      }
// CHECK: blocks-refusals.cpp:[[@LINE-9]]:1: remark: cleave tile: nest left as written: the body holds a while, do or range-for loop: its iterations, and so the cells it reads, are not known statically (write it as a for loop with affine bounds)

#pragma cleave tile technique(blocks)
  for (int i = 1; i < n; ++i)
    for (int j = 0; j < m; ++j)
      for (int k = 0; k < l; ++k) {
        int lim = T[k];
        int best = 0;
        for (int a = 0; a < lim; ++a)
          best += T[(a * m + j) * l + k];
        T[(i * m + j) * l + k] = best;
      }
// CHECK: blocks-refusals.cpp:[[@LINE-10]]:1: remark: cleave tile: nest left as written: the inner loop's bound reads 'lim', a variable of the body: its iterations are not known statically

#pragma cleave tile technique(blocks)
  for (int i = 1; i < n; ++i)
    for (int j = 0; j < m; ++j)
      for (int k = 0; k < l; ++k) {
        T[(i * m + j) * l + k] = 1;
        U[(i * m + j) * l + k] = 2;
      }
// CHECK: blocks-refusals.cpp:[[@LINE-7]]:1: remark: cleave tile: nest left as written: the nest writes two arrays ('T' and 'U'): technique(blocks) writes one table

#pragma cleave tile technique(blocks)
  for (int i = 1; i < n; ++i)
    for (int j = 0; j < m; ++j)
      for (int k = 0; k < l; ++k)
        T[((i - 1) * m + j) * l + k] = T[(i * m + j) * l + k];
// CHECK: blocks-refusals.cpp:[[@LINE-5]]:1: remark: cleave tile: nest left as written: the nest must write 'T' at its own cell (i, j, k)

#pragma cleave tile technique(blocks)
  for (int i = 1; i < n; ++i)
    for (int j = 0; j < m; ++j)
      T[i * m + j] = T[(i - 1) * m + j];
// CHECK: blocks-refusals.cpp:[[@LINE-4]]:1: remark: cleave tile: nest left as written: technique(blocks) takes a perfect nest of three for loops

#pragma cleave tile technique(blocks)
  for (int i = 1; i < n; ++i)
    for (int j = 0; j < i; ++j)
      for (int k = 0; k < l; ++k)
        T[(i * m + j) * l + k] = T[((i - 1) * m + j) * l + k];
// CHECK: blocks-refusals.cpp:[[@LINE-5]]:1: remark: cleave tile: nest left as written: loop bound depends on an enclosing loop index ('i'): the table's domain must be a box

#pragma cleave tile technique(blocks) tile(8, 8)
  for (int i = 1; i < n; ++i)
    for (int j = 0; j < m; ++j)
      for (int k = 0; k < l; ++k)
        T[(i * m + j) * l + k] = T[((i - 1) * m + j) * l + k];
// CHECK: blocks-refusals.cpp:[[@LINE-5]]:1: remark: cleave tile: nest left as written: technique(blocks) takes no tile(...) or steps(...): its blocks are 16 x 16 x 16 cells

#pragma cleave tile technique(blocks)
  for (int i = 1; i < n; ++i)
    for (int j = 0; j < m; ++j)
      for (int k = 0; k < l; ++k)
        T[(i * m + j) * l + k] = T[(i - 1) * m + k];
// CHECK: blocks-refusals.cpp:[[@LINE-5]]:1: remark: cleave tile: nest left as written: the subscript of 'T' is not of the form ((i + a) * P + j + b) * Q + k + c, with offsets a, b, c in the inner loops' indices and one pitch P, Q per dimension

#pragma cleave tile technique(blocks)
  for (int i = 1; i < n; ++i)
    for (int j = 0; j < m; ++j)
      for (int k = 0; k < l; ++k)
        for (int a = 0; a < 2; ++a)
          T[(i * m + j) * l + k] = a;
// CHECK: blocks-refusals.cpp:[[@LINE-6]]:1: remark: cleave tile: nest left as written: the nest writes 'T' inside an inner loop: each iteration must write its cell once

#pragma cleave tile technique(blocks)
  for (int i = 1; i < n; ++i)
    for (int j = 0; j < m; ++j)
      for (int k = 0; k < l; ++k) {
        s = T[((i - 1) * m + j) * l + k];
        T[(i * m + j) * l + k] = s;
      }
// CHECK: blocks-refusals.cpp:[[@LINE-7]]:1: remark: cleave tile: nest left as written: the nest writes 's', declared outside its body (technique(blocks) writes only the table's cells)

#pragma cleave tile technique(blocks)
  for (int i = 1; i < n; ++i)
    for (int j = 0; j < m; ++j)
      for (int k = 0; k < l; ++k)
        T[(i * m + j) * l + k] = f(T[((i - 1) * m + j) * l + k]);
// CHECK: blocks-refusals.cpp:[[@LINE-5]]:1: remark: cleave tile: nest left as written: the nest calls 'f', which device code cannot call (only constexpr functions and builtins)

#pragma cleave tile technique(blocks)
  for (int i = 1; i < n; ++i)
    for (int j = 0; j < m; ++j)
      for (int k = 0; k < l; ++k)
        T[(i * m + j) * l + k] = T[((i - 1) * m + j) * l + k * j];
// CHECK: blocks-refusals.cpp:[[@LINE-5]]:1: remark: cleave tile: nest left as written: non-affine subscript of 'T'
}
// OUT-NOT: __cleave_tile
