// The checked CPU variant places no check on a kernel's own __device__
// variables, also when the pointer into one is computed in an outer loop and
// used in an inner one (the lowering demotes it to a stack slot; cuRAND's
// skip-ahead reads its precomputed matrices this way). Checking those reads
// against the launch's buffers reported cudaErrorIllegalAddress for correct
// programs under CLEAVE_CHECK=memory. Only the write to out[] is checked.
// RUN: %cuda_to_ir %s -o %t.ll
// RUN: %opt -load-pass-plugin=%cleave_plugin -passes=cleave-cpu-lower %t.ll -S -o - | FileCheck %s

// CHECK-LABEL: define internal void @__cleave_cpu_table_rows_checked(
// CHECK-NOT: call void @__cleave_rt_check({{.*}}, i32 0,
// CHECK: call void @__cleave_rt_check(ptr %{{.*}}, i64 4, i32 1,
// CHECK-NOT: call void @__cleave_rt_check({{.*}}, i32 0,
// CHECK: declare void @__cleave_rt_check(
__device__ unsigned table[8][64];

extern "C" __global__ void table_rows(unsigned *out, unsigned long long bits) {
  unsigned acc = threadIdx.x;
  for (int r = 0; r < 8; ++r) {
    if (!(bits >> (8 * blockIdx.x + r) & 1))
      continue;
    const unsigned *row = table[r];
    for (int k = 0; k < 64; k += 3)
      acc ^= row[(k + threadIdx.x) % 64];
  }
  out[blockIdx.x * blockDim.x + threadIdx.x] = acc;
}
