// The shape of the CPU variant's state machine (docs/cpu-backend.md). Without
// guards, a region's dispatch goes only to the regions its threads can reach
// next, so a kernel without loops has none around its regions. Guarded
// kernels run every region, and its commit, as one loop over the threads.
// RUN: %cleave compile --emit=ir --cleave-passes=cleave-swap-grid %s -o - \
// RUN:   | %opt -load-pass-plugin=%cleave_plugin -passes=cleave-cpu-lower -S \
// RUN:   | FileCheck %s

// CHECK-LABEL: define void @__cleave_cpu_straight(
// CHECK:       r0.dispatch:
// CHECK-NEXT:    %next.key = phi
// CHECK-NEXT:    switch i32 %next.key, label %block.latch [
// CHECK-NEXT:      i32 {{[0-9]+}}, label %r1.pre
// CHECK-NEXT:    ]
extern "C" __global__ void straight(const int *in, int *out) {
  __shared__ int s[256];
  s[threadIdx.x] = in[threadIdx.x];
  __syncthreads();
  out[threadIdx.x] = s[255 - threadIdx.x];
}

// CHECK-LABEL: define void @__cleave_cpu_warp_divergent(
// CHECK-NOT:   r0.y:
// CHECK:       r0.t:
// CHECK-NEXT:    %lin{{[0-9]*}} = phi i64
// CHECK-NOT:   r0.y:
// CHECK:       r0.commit.t:
// CHECK-NOT:   r0.y:
// CHECK:       define
extern "C" __global__ void warp_divergent(const int *in, int *out) {
  int v = in[threadIdx.x];
  if (threadIdx.x < 32) // block-divergent: guarded
    v += __shfl_xor_sync(0xffffffffu, v, 1);
  out[threadIdx.x] = v;
}
