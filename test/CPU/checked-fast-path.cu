// The checked twin (CLEAVE_CHECK=memory) is compiled for size and never
// vectorized, so a guard-versioned region keeps only its general copy there:
// the condition that picks the fast copy is false, and the optimizer drops
// that copy. The ordinary variant keeps both.
// RUN: %cuda_to_ir %s -o %t.ll
// RUN: %opt -load-pass-plugin=%cleave_plugin -passes=cleave-cpu-lower %t.ll -S -o - | FileCheck %s

// CHECK-LABEL: define void @__cleave_cpu_scale(
// CHECK: %all.threads.agree = freeze
// CHECK: br i1 %all.threads.agree, label %r0.fast.pre, label %r0.slow.pre
// CHECK-LABEL: define internal void @__cleave_cpu_scale_checked(
// CHECK-NOT: all.threads.agree
// CHECK: br i1 false, label %r0.fast.pre, label %r0.slow.pre
extern "C" __global__ void scale(const float *in, float *out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    out[i] = in[i] * 2.0f;
}
