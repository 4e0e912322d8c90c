// Kernels, __device__ functions and launches in an included user file are
// rewritten in a copy of it; the .cu file includes the copy (through a copy
// of the header that includes it), and a copy names the files it includes
// by their paths. System headers stay as they are.
// RUN: %strip_comments %s %t/included-files.cu
// RUN: %cleave compile --emit=host-source -I%S/Inputs %t/included-files.cu -o - | FileCheck %s
#include <cuda_runtime.h>
#include "inc/plain.h"
#include <inc/via.h>

int main() {
  float *x;
  cudaMalloc(&x, 256 * sizeof(float));
  halveAll(x, 256);
  return 0;
}

// CHECK: #include <cuda_runtime.h>
// CHECK-NEXT: #include "inc/plain.h"
// CHECK-NEXT: #include "<temporary directory>/via.h"
// CHECK: cleave_register_kernel((const void *)static_cast<void (*)(float *, int)>(&::halve<float>), "_Z5halveIfEvPT_i");

// CHECK: // ---- cleave: <temporary directory>/via.h, the rewritten copy of {{.*}}Inputs{{/|\\}}inc{{/|\\}}via.h ----
// CHECK: #line 1 "{{.*}}Inputs{{/|\\}}inc{{/|\\}}via.h"
// CHECK: #pragma once
// CHECK-NEXT: #include "<temporary directory>/k.cuh"

// CHECK: // ---- cleave: <temporary directory>/k.cuh, the rewritten copy of {{.*}}Inputs{{/|\\}}inc{{/|\\}}k.cuh ----
// CHECK: #line 1 "{{.*}}Inputs{{/|\\}}inc{{/|\\}}k.cuh"
// CHECK-NEXT: #pragma once
// CHECK-NEXT: #include "{{.+}}Inputs{{/|\\}}inc{{/|\\}}plain.h"
// CHECK-EMPTY:
// CHECK-NEXT: /* cleave: __device__ function 'half' removed (device code) */
// CHECK: __global__ void halve(T *x, int n) {
// CHECK-NEXT: #line {{[0-9]+}} "<temporary directory>/k.cuh"
// CHECK: cleaveLaunchFromStub((const void *)static_cast<void (*)(decltype(x), decltype(n))>(&::halve<T>), __cleave_args);
// CHECK-NEXT: }
// CHECK-NEXT: #line 12 "{{.*}}Inputs{{/|\\}}inc{{/|\\}}k.cuh"
// CHECK: inline void halveAll(float *x, int n) {
// CHECK-NEXT: (cleavePushCallConfiguration((n + kBlock - 1) / kBlock, kBlock) ? (void)0 : halve(x, n));
// CHECK-NOT: ---- cleave
