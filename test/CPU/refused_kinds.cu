// Every kind of refusal: a missed remark that names the construct and its
// source line, and no CPU variant for that kernel (never a crash). Barriers
// controlled by warp-level results (vote, ballot, shfl: uniform in a warp,
// not in a block) are thread-divergent for the block.
// RUN: %cuda_to_ir -gline-tables-only %s -o %t.ll
// RUN: %opt -load-pass-plugin=%cleave_plugin -passes=cleave-cpu-lower \
// RUN:   -pass-remarks-missed=cleave-cpu-lower %t.ll -S -o %t.cpu.ll 2>&1 \
// RUN:   | FileCheck %s --check-prefix=REMARK
// RUN: FileCheck %s --check-prefix=IR < %t.cpu.ll
extern "C" __device__ int external_fn(int);

// REMARK-DAG: refused_kinds.cu:[[@LINE+4]]:{{.*}}kernel vote_barrier stays GPU-only: __syncthreads()/barrier() under thread-divergent control flow at {{.*}}refused_kinds.cu:[[@LINE+4]]
extern "C" __global__ void vote_barrier(const int *in, int *out) {
  int v = in[threadIdx.x];
  if (__any_sync(0xffffffffu, v > 0))
    __syncthreads();
  out[threadIdx.x] = v;
}
// REMARK-DAG: kernel ballot_loop_barrier stays GPU-only: __syncthreads()/barrier() under thread-divergent control flow at {{.*}}refused_kinds.cu:[[@LINE+4]]
extern "C" __global__ void ballot_loop_barrier(const int *in, int *out) {
  unsigned b = __ballot_sync(0xffffffffu, in[threadIdx.x] > 0);
  for (int i = 0; i < __popc(b); ++i) {
    __syncthreads();
    out[threadIdx.x] += 1;
  }
}
// REMARK-DAG: kernel shfl_barrier stays GPU-only: __syncthreads()/barrier() under thread-divergent control flow at {{.*}}refused_kinds.cu:[[@LINE+3]]
extern "C" __global__ void shfl_barrier(const int *in, int *out) {
  int v = __shfl_sync(0xffffffffu, in[threadIdx.x], 0);
  if (v > 0) __syncthreads();
  out[threadIdx.x] = v;
}
// REMARK-DAG: kernel early_return stays GPU-only: __syncthreads()/barrier() under thread-divergent control flow at {{.*}}refused_kinds.cu:[[@LINE+3]]
extern "C" __global__ void early_return(int *out) {
  if (threadIdx.x < 16) return;
  __syncthreads();
  out[threadIdx.x] = 1;
}
// REMARK-DAG: kernel divergent_count stays GPU-only: __syncthreads_count/and/or under thread-divergent control flow at {{.*}}refused_kinds.cu:[[@LINE+3]]
extern "C" __global__ void divergent_count(int *out) {
  if (threadIdx.x & 1)
    out[threadIdx.x] = __syncthreads_count(out[threadIdx.x] > 0);
}
// REMARK-DAG: kernel counted_barrier stays GPU-only: {{.*}}llvm.nvvm.barrier.sync.cnt at {{.*}}refused_kinds.cu:[[@LINE+3]]
extern "C" __global__ void counted_barrier(int *out) {
  out[threadIdx.x] = 1;
  __nvvm_barrier_sync_cnt(0, 64);
  out[threadIdx.x + 1] += 1;
}
// REMARK-DAG: kernel named_barrier stays GPU-only: call to llvm.nvvm.barrier.sync at {{.*}}refused_kinds.cu:[[@LINE+3]]
extern "C" __global__ void named_barrier(int *out) {
  out[threadIdx.x] = 1;
  __nvvm_barrier_sync(1);
  out[threadIdx.x + 1] += 1;
}
// REMARK-DAG: kernel dynamic_alloca stays GPU-only: dynamic alloca {{.*}} at {{.*}}refused_kinds.cu:[[@LINE+2]]
extern "C" __global__ void dynamic_alloca(int *out, int n) {
  int *p = (int *)__builtin_alloca(n * sizeof(int));
  for (int i = 0; i < n; ++i) p[i] = out[i];
  out[threadIdx.x] = p[threadIdx.x % n];
}
// REMARK-DAG: kernel inline_asm stays GPU-only: {{.*}}asm{{.*}} at {{.*}}refused_kinds.cu:[[@LINE+3]]
extern "C" __global__ void inline_asm(int *out) {
  int r;
  asm volatile("add.s32 %0, %1, 1;" : "=r"(r) : "r"(out[threadIdx.x]));
  out[threadIdx.x] = r;
}
// REMARK-DAG: kernel clock_asm stays GPU-only: {{.*}}clock{{.*}} at {{.*}}refused_kinds.cu:[[@LINE+3]]
extern "C" __global__ void clock_asm(int *out) {
  int r;
  asm volatile("mov.u32 %0, %%clock;" : "=r"(r));
  out[threadIdx.x] = r;
}
// REMARK-DAG: kernel external_call stays GPU-only: {{.*}}external_fn{{.*}} at {{.*}}refused_kinds.cu:[[@LINE+2]]
extern "C" __global__ void external_call(int *out) {
  out[threadIdx.x] = external_fn(out[threadIdx.x]);
}
// The only kernel that gets a variant.
extern "C" __global__ void fine(int *out) { out[threadIdx.x] += 1; }

// IR: target triple = "x86_64
// IR-NOT: define {{.*}}@__cleave_cpu_{{[a-eg-z]}}
// IR: define void @__cleave_cpu_fine(
// IR-NOT: define {{.*}}@__cleave_cpu_{{[a-eg-z]}}
// IR-NOT: _desc = {{.*}}@__cleave_cpu_{{[a-eg-z]}}
