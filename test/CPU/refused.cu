// A barrier under thread-divergent control flow is refused with a remark
// naming it and its line; the kernel gets no CPU variant, the others do.
// RUN: %cuda_to_ir -gline-tables-only %s -o %t.ll
// RUN: %opt -load-pass-plugin=%cleave_plugin -passes=cleave-cpu-lower \
// RUN:   -pass-remarks=cleave-cpu-lower -pass-remarks-missed=cleave-cpu-lower \
// RUN:   %t.ll -S -o %t.cpu.ll 2>&1 | FileCheck %s --check-prefix=REMARK
// RUN: FileCheck %s --check-prefix=IR < %t.cpu.ll

// REMARK: refused.cu:[[@LINE+5]]:{{.*}}kernel divergent_barrier stays GPU-only: __syncthreads()/barrier() under thread-divergent control flow
// REMARK: kernel fine: CPU variant __cleave_cpu_fine with 2 region(s)
extern "C" __global__ void divergent_barrier(float *p) {
  if (threadIdx.x < 16) {
    p[threadIdx.x] = 1.0f;
    __syncthreads();
  }
}
extern "C" __global__ void fine(float *p) {
  p[threadIdx.x] = 2.0f;
  __syncthreads();
  p[threadIdx.x + 1] += 1.0f;
}
// IR: target triple = "x86_64
// IR-NOT: __cleave_cpu_divergent_barrier
// IR: define void @__cleave_cpu_fine(
// IR-NOT: addrspace
// IR-NOT: __cleave_cpu_divergent_barrier
