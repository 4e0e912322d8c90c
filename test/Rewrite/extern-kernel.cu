// A kernel declared here and defined in another .cu file: the launch calls
// the other file's stub (an ordinary external function), and that file
// registers the kernel and carries its device code. This file has no stub
// and registers nothing for it.
// RUN: %strip_comments %s %t/extern-kernel.cu
// RUN: %cleave compile --emit=host-source %t/extern-kernel.cu -o - | FileCheck %s

__global__ void defined_elsewhere(float *p, int n);

void run(float *p) { defined_elsewhere<<<4, 64>>>(p, 256); }
// CHECK: __global__ void defined_elsewhere(float *p, int n);
// CHECK: void run(float *p) { (cleavePushCallConfiguration(4, 64) ? (void)0 : defined_elsewhere(p, 256)); }
// CHECK: // cleave: registers this file's kernels and device variables
// CHECK-NEXT: // runtime before main runs
// CHECK-NEXT: // (none)
// CHECK-NOT: {{cleave_register_[a-z]+[(]}}
