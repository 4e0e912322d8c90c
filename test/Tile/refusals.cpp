// Every reason a marked nest is left as written: a remark at the pragma,
// a note at the construct that shows it, and the nest unchanged.
// RUN: %strip_comments %s %t/refusals.cpp
// RUN: %cleave tile %t/refusals.cpp -o %t/out.cpp 2>&1 | FileCheck %s
// RUN: diff %t/refusals.cpp %t/out.cpp

#include <algorithm>

int Global;
int opaque(int);

void cases(int *A, int *B, const int *idx, int n, int m, int s) {
#pragma cleave tile
  for (int i = 1; i < n; ++i)
    for (int j = 1; j < m; ++j)
      A[i * m + j] = A[idx[i] * m + j];
// CHECK: refusals.cpp:[[@LINE-4]]:1: remark: cleave tile: nest left as written: non-affine subscript of 'A'
// CHECK: refusals.cpp:[[@LINE-2]]:24: note: here

#pragma cleave tile
  for (int i = 1; i < n; ++i)
    for (int j = 1; j < m; ++j)
      A[i * m + j] = A[(i - 1) * m + j + 1];
// CHECK: refusals.cpp:[[@LINE-4]]:1: remark: cleave tile: nest left as written: the flow dependence through 'A' has distance (1, -1); wavefront tiles need every distance componentwise >= 0

#pragma cleave tile
  for (int i = 1; i < n; ++i)
    for (int j = 1; j < m; ++j)
      A[i * m + j] = A[(i + 1) * m + j - 1];
// CHECK: refusals.cpp:[[@LINE-4]]:1: remark: cleave tile: nest left as written: the anti dependence through 'A' has distance (1, -1)

#pragma cleave tile
  for (int i = 1; i < n; ++i)
    for (int j = 1; j < m; ++j)
      s -= A[i * m + j];
// CHECK: refusals.cpp:[[@LINE-4]]:1: remark: cleave tile: nest left as written: the nest writes 's', declared outside its body (only array elements may be written, and integer scalars updated as 's += e', 's = std::max(s, e)' or 's = std::min(s, e)')

#pragma cleave tile
  for (int i = 1; i < n; ++i)
    for (int j = 1; j < m; ++j)
      A[i * m + j] = opaque(A[i * m + j - 1]);
// CHECK: refusals.cpp:[[@LINE-4]]:1: remark: cleave tile: nest left as written: the nest calls 'opaque', which device code cannot call (only constexpr functions and builtins)

#pragma cleave tile
  for (int i = 1; i < n; ++i)
    for (int j = 1; j < m; ++j)
      A[i * m + j] = Global;
// CHECK: refusals.cpp:[[@LINE-4]]:1: remark: cleave tile: nest left as written: the nest reads the global variable 'Global', which device code cannot (a constant with a constant initializer can)

#pragma cleave tile
  for (int i = 1; i < n; ++i)
    for (int j = i; j < m; ++j)
      A[i * m + j] = 0;
// CHECK: refusals.cpp:[[@LINE-4]]:1: remark: cleave tile: nest left as written: loop bound depends on an enclosing loop index (only rectangular nests are supported yet)

#pragma cleave tile
  for (int i = 1; i < n; i += 2)
    for (int j = 1; j < m; ++j)
      A[i * m + j] = 0;
// CHECK: refusals.cpp:[[@LINE-4]]:1: remark: cleave tile: nest left as written: the loop must step its index by one

#pragma cleave tile
  for (int i = 1; i < n; ++i) {
    A[i] = 0;
    for (int j = 1; j < m; ++j)
      A[i * m + j] = 0;
  }
// CHECK: refusals.cpp:[[@LINE-6]]:1: remark: cleave tile: nest left as written: the loop's body must be exactly one inner for loop (a two-deep perfect nest)

#pragma cleave tile
  for (int i = 1; i < n; ++i)
    for (int j = 1; j < m; ++j)
      A[j * n + i] = A[j * n + i - 1];
// CHECK: refusals.cpp:[[@LINE-4]]:1: remark: cleave tile: nest left as written: the subscript of 'A', which the nest writes, is not of the form (i + a) * pitch + j + b

#pragma cleave tile
  for (int i = 1; i < n; ++i)
    for (int j = 1; j < m; ++j) {
      A[i * m + j] = 1;
      A[i * m + j - 1] = 2;
    }
// CHECK: refusals.cpp:[[@LINE-6]]:1: remark: cleave tile: nest left as written: the nest writes 'A' at two different offsets

#pragma cleave tile
  for (int i = 1; i < n; ++i)
    for (int j = 1; j < m; ++j)
      for (int k = 0; k < 2; ++k)
        A[i * m + j] += k;
// CHECK: refusals.cpp:[[@LINE-5]]:1: remark: cleave tile: nest left as written: the body holds a loop

#pragma cleave tile
  for (int i = 1; i < n; ++i)
    for (int j = 1; j < m; ++j)
      if (A[i * m + j] < 0)
        return;
// CHECK: refusals.cpp:[[@LINE-5]]:1: remark: cleave tile: nest left as written: the body leaves the nest

#pragma cleave tile
  for (int i = 1; i < n; ++i)
    for (int j = 1; j < m; ++j)
      *(B + j) = A[i * m + j];
// CHECK: refusals.cpp:[[@LINE-4]]:1: remark: cleave tile: nest left as written: the nest writes something other than an array element or a variable of its body

#pragma cleave tile
  for (int i = 1; i < n; ++i)
    for (int j = 1; j < m; ++j)
      B[j] = A[i * m + j];
// CHECK: refusals.cpp:[[@LINE-4]]:1: remark: cleave tile: nest left as written: the subscript of 'B', which the nest writes, is not of the form

#pragma cleave tile
  for (int i = 1; i < n; ++i)
    for (int j = 1; j < m; ++j)
      A[i * i + j] = 0;
// CHECK: refusals.cpp:[[@LINE-4]]:1: remark: cleave tile: nest left as written: non-affine subscript of 'A'

#pragma cleave tile tile(128, 128)
  for (int i = 1; i < n; ++i)
    for (int j = 1; j < m; ++j)
      A[i * m + j] = A[(i - 1) * m + j];
// CHECK: refusals.cpp:[[@LINE-4]]:1: remark: cleave tile: nest left as written: tiles of 128 x 128 need 66048 bytes of shared memory, more than the 49152 a block may declare: choose a smaller tile(...)

#pragma cleave tile
  A[0] = 1;
// CHECK: refusals.cpp:[[@LINE-2]]:1: remark: cleave tile: nest left as written: the pragma must be followed by a for loop inside a function
}

template <typename T> void templated(T *A, int n, int m) {
#pragma cleave tile
  for (int i = 1; i < n; ++i)
    for (int j = 1; j < m; ++j)
      A[i * m + j] = A[(i - 1) * m + j];
}
// CHECK: refusals.cpp:[[@LINE-5]]:1: remark: cleave tile: nest left as written: the nest is inside a template

void twoDimensional(int A[][8], int n) {
#pragma cleave tile
  for (int i = 1; i < n; ++i)
    for (int j = 1; j < 8; ++j)
      A[i][j] = A[i - 1][j];
}
// CHECK: refusals.cpp:[[@LINE-5]]:1: remark: cleave tile: nest left as written: only subscripts of pointers and one-dimensional arrays declared outside the nest are supported

void localEnum(int *A, int n, int m) {
  enum Mode { Add, Keep } mode = Add;
#pragma cleave tile
  for (int i = 1; i < n; ++i)
    for (int j = 1; j < m; ++j)
      A[i * m + j] = mode == Add ? A[(i - 1) * m + j] + 1 : 0;
}
// CHECK: refusals.cpp:[[@LINE-5]]:1: remark: cleave tile: nest left as written: 'mode' has a type declared inside a function, which the generated code cannot name

#define TILED(loop) _Pragma("cleave tile") loop
void fromMacro(int *A, int n, int m) {
  TILED(for (int i = 1; i < n; ++i) for (int j = 1; j < m; ++j) A[i * m + j] = A[(i - 1) * m + j];)
}
// CHECK: refusals.cpp:[[@LINE-2]]:3: remark: cleave tile: nest left as written: the pragma comes from a macro

void reductions(int *A, float *F, int n, int m, int s, float f, short h) {
#pragma cleave tile
  for (int i = 1; i < n; ++i)
    for (int j = 1; j < m; ++j) {
      F[i * m + j] = F[(i - 1) * m + j];
      f += F[i * m + j];
    }
// CHECK: refusals.cpp:[[@LINE-6]]:1: remark: cleave tile: nest left as written: the reduction of 'f' has type 'float': only 32- and 64-bit integer reductions are supported (floating-point sums depend on the order)

#pragma cleave tile
  for (int i = 1; i < n; ++i)
    for (int j = 1; j < m; ++j) {
      s = std::max(s, A[(i - 1) * m + j]);
      A[i * m + j] = s;
    }
// CHECK: refusals.cpp:[[@LINE-6]]:1: remark: cleave tile: nest left as written: the nest reads 's' besides reducing it

#pragma cleave tile
  for (int i = 1; i < n; ++i)
    for (int j = 1; j < m; ++j) {
      A[i * m + j] = A[(i - 1) * m + j];
      s += A[i * m + j];
      s = std::min(A[i * m + j], s);
    }
// CHECK: refusals.cpp:[[@LINE-7]]:1: remark: cleave tile: nest left as written: the nest reduces 's' with two different operations

#pragma cleave tile
  for (int i = 1; i < n; ++i)
    for (int j = 1; j < m; ++j)
      A[i * m + j] = A[(i - 1) * m + j] + (s += 1);
// CHECK: refusals.cpp:[[@LINE-4]]:1: remark: cleave tile: nest left as written: the nest uses the value of an update of 's'

#pragma cleave tile
  for (int i = 1; i < n; ++i)
    for (int j = 1; j < m; ++j) {
      A[i * m + j] = A[(i - 1) * m + j];
      h += A[i * m + j];
    }
// CHECK: refusals.cpp:[[@LINE-6]]:1: remark: cleave tile: nest left as written: the reduction of 'h' has type 'short': only 32- and 64-bit integer reductions are supported
}
