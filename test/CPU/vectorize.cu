// What cleave-cpu-lower gives the loop vectorizer (docs/cpu-performance.md):
// guard versioning, rematerialized thread-id addresses, parallel-access
// metadata only on loops whose threads are independent, the inlined f32
// directed-rounding FMA. Checks the optimized host IR for x86-64-v3.
// RUN: %cuda_to_ir %s -o %t.ll
// RUN: %cpu_compile -S %t.ll -o - | FileCheck %s

// Per-thread storage: none (the tree's &s[t] is recomputed, not saved).
// CHECK: @__cleave_cpu_vadd_desc = {{.*}} i64 0, i64 0, i32 4, i32 2, ptr @__cleave_cpu_vadd_checked }
// CHECK: @__cleave_cpu_tree_desc = {{.*}} i64 1024, i64 0, i32 2, i32 2, ptr @__cleave_cpu_tree_checked }

// The guard `i < n` holds for every thread of a full block: the fast copy
// of the thread loop has plain (unmasked) vector loads and stores.
// CHECK-LABEL: define void @__cleave_cpu_vadd(
// CHECK: r0.fast.x
// CHECK: load <8 x float>, ptr {{.*}}!llvm.access.group
// CHECK: store <8 x float> {{.*}}!llvm.access.group
extern "C" __global__ void vadd(const float *a, const float *b, float *c,
                                int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    c[i] = a[i] + b[i];
}

// Every level of the shared-memory tree vectorizes (no address reloaded
// from a per-thread slot, no alias checks).
// CHECK-LABEL: define void @__cleave_cpu_tree(
// CHECK-NOT: reg2mem
// CHECK: r1.fast
// CHECK: load <8 x float>, ptr {{.*}}!llvm.access.group
// CHECK: store <8 x float> {{.*}}!llvm.access.group
// CHECK-NOT: reg2mem
// CHECK-LABEL: define void @__cleave_cpu_count(
extern "C" __global__ void tree(const float *in, float *out) {
  __shared__ float s[256];
  unsigned t = threadIdx.x;
  s[t] = in[blockIdx.x * 256 + t];
  __syncthreads();
  for (unsigned k = 128; k > 0; k >>= 1) {
    if (t < k)
      s[t] += s[t + k];
    __syncthreads();
  }
  if (t == 0)
    out[blockIdx.x] = s[0];
}

// Atomics: threads of the region are not independent, no parallel marking.
// CHECK-NOT: !llvm.access.group
// CHECK: atomicrmw add
// CHECK-NOT: !llvm.access.group
// CHECK-LABEL: define void @__cleave_cpu_expk(
extern "C" __global__ void count(const int *in, int *hist, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    atomicAdd(&hist[in[i] & 15], 1);
}

// libdevice's expf: fma.rm.ftz.f32 is inlined IR (no runtime call), so the
// thread loop vectorizes.
// CHECK-NOT: __cleave_rt_fma
// CHECK: call <8 x float> @llvm.exp2.v8f32
// CHECK-NOT: __cleave_rt_fma
// CHECK: !{!"llvm.loop.parallel_accesses", !{{[0-9]+}}}
extern "C" __global__ void expk(const float *in, float *out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    out[i] = expf(in[i]);
}
