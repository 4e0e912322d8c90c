// The checked CPU variant (CLEAVE_CHECK=memory): a twin of each variant,
// reached through the descriptor, whose accesses to global memory call
// __cleave_rt_check first (address, bytes, kind 0 read / 1 write / 2
// atomic, linear block, linear thread), and whose shared-memory, parameter
// and local accesses are not checked. The ordinary variant has no checks.
// RUN: %cuda_to_ir %s -o %t.ll
// RUN: %opt -load-pass-plugin=%cleave_plugin -passes=cleave-cpu-lower %t.ll -S -o - | FileCheck %s

// CHECK: @__cleave_cpu_stage_desc = constant { ptr, ptr, i64, i64, i32, i32, ptr } { {{.*}}, ptr @__cleave_cpu_stage, i64 1024, i64 0, i32 3, i32 2, ptr @__cleave_cpu_stage_checked }

// CHECK-LABEL: define void @__cleave_cpu_stage(
// CHECK-NOT: __cleave_rt_check

// One read of in[], one write of out[], one atomic on count: three checks,
// each with the block id and the thread's linear id; tile[] is not checked.
// CHECK-LABEL: define internal void @__cleave_cpu_stage_checked(
// CHECK-SAME: #[[ATTRS:[0-9]+]]
// CHECK-DAG: call void @__cleave_rt_check(ptr %{{.*}}, i64 4, i32 0, i64 %block.id, i64 %lin
// CHECK-DAG: call void @__cleave_rt_check(ptr %{{.*}}, i64 4, i32 1, i64 %block.id, i64 %lin
// CHECK-DAG: call void @__cleave_rt_check(ptr %{{.*}}, i64 4, i32 2, i64 %block.id, i64 %lin
// CHECK-NOT: call void @__cleave_rt_check
// CHECK: declare void @__cleave_rt_check(ptr, i64, i32, i64, i64)
// CHECK: attributes #[[ATTRS]] = { minsize {{.*}}optsize
extern "C" __global__ void stage(const float *in, float *out, int *count) {
  __shared__ float tile[256];
  tile[threadIdx.x] = in[blockIdx.x * 256 + threadIdx.x];
  __syncthreads();
  out[blockIdx.x * 256 + threadIdx.x] = tile[255 - threadIdx.x];
  if (threadIdx.x == 0)
    atomicAdd(count, 1);
}
