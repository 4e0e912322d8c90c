// Malformed clauses are errors: cleave tile fails and writes nothing.
// RUN: %strip_comments %s %t/pragma-errors.cpp
// RUN: not %cleave tile %t/pragma-errors.cpp -o %t/out.cu 2>&1 | FileCheck %s
// RUN: not test -e %t/out.cu

void f(int *A, int n) {
#pragma cleave tile tile(0, 4)
// CHECK: pragma-errors.cpp:[[@LINE-1]]:26: error: #pragma cleave tile: expected the tile's rows, an integer from 1 to 1024
#pragma cleave tile tile(4 4)
// CHECK: pragma-errors.cpp:[[@LINE-1]]:28: error: #pragma cleave tile: expected ',' between the tile's rows and columns
#pragma cleave tile technique(diamond)
// CHECK: pragma-errors.cpp:[[@LINE-1]]:31: error: #pragma cleave tile: expected 'wavefront', 'timeskew' or 'blocks'
#pragma cleave tile tile(4, 4) tile(8, 8)
// CHECK: pragma-errors.cpp:[[@LINE-1]]:32: error: #pragma cleave tile: clause 'tile' given twice
#pragma cleave tile autotune(maybe)
// CHECK: pragma-errors.cpp:[[@LINE-1]]:30: error: #pragma cleave tile: expected 'on' or 'off'
#pragma cleave tile shape(4)
// CHECK: pragma-errors.cpp:[[@LINE-1]]:21: error: #pragma cleave tile: expected a clause: tile(rows, cols), technique(wavefront|timeskew|blocks), steps(n) or autotune(on|off)
  for (int i = 0; i < n; ++i)
    A[i] = 0;
}
