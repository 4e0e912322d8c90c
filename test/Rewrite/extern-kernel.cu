// A kernel declared here and defined in another .cu file: the launch calls
// the other file's stub (an ordinary external function), and that file
// registers the kernel and carries its device code. This file has no stub
// and registers nothing for it.
// RUN: %cleave compile --emit=host-source %s -o - | FileCheck %s

__global__ void defined_elsewhere(float *p, int n);

void run(float *p) { defined_elsewhere<<<4, 64>>>(p, 256); }
// CHECK: __global__ void defined_elsewhere(float *p, int n);
// CHECK: void run(float *p) { (cleavePushCallConfiguration(4, 64) ? (void)0 : defined_elsewhere(p, 256)); }
// CHECK: // cleave: registers this file's kernels
// CHECK-NEXT: // (none)
// CHECK-NOT: {{cleave_register_[a-z]+[(]}}
