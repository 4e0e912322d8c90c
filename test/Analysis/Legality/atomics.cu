// What clang 19 emits for CUDA's atomics. Global (and generic) atomics forbid
// splitting; shared-memory atomics are per block and fine.
// RUN: %cuda_to_ir %s -o - | %opt -load-pass-plugin=%cleave_plugin -passes='print<cleave-legality>' -disable-output 2>&1 | FileCheck %s --implicit-check-not=issue:

// CHECK-LABEL: cleave-legality: kernel 'mixed(unsigned int*)'
// CHECK-NEXT:    split: no
// CHECK-NEXT:    cpu: yes
// CHECK-NEXT:    issue: global-atomic (forbids split) 'llvm.nvvm.atomic.add.gen.i.cta.i32.p0'
// CHECK-NEXT:    issue: global-atomic (forbids split) 'llvm.nvvm.atomic.add.gen.i.sys.i32.p0'
// CHECK-NEXT:    issue: global-atomic (forbids split) 'atomicrmw umax'
// CHECK-NEXT:    issue: global-atomic (forbids split) 'cmpxchg'
// CHECK-NEXT:    issue: global-atomic (forbids split) 'atomicrmw xchg'
// CHECK-NEXT:    issue: global-atomic (forbids split) 'atomicrmw fadd'
// CHECK-NEXT:    issue: global-atomic (forbids split) 'llvm.nvvm.atomic.load.inc.32.p0'
__global__ void mixed(unsigned *out) {
  __shared__ unsigned count;
  atomicAdd(&count, 1u);
  __syncthreads();
  atomicAdd_block(out, count);
  atomicAdd_system(out + 1, count);
  atomicMax(out + 2, count);
  atomicCAS(out + 3, 0u, count);
  atomicExch((float *)out + 4, 1.0f);
  atomicAdd((double *)out + 8, 1.0);
  atomicInc(out + 5, 7u);
}

// Block-local counting in shared memory only.
// CHECK-LABEL: cleave-legality: kernel 'shared_only(unsigned int*, unsigned char const*)'
// CHECK-NEXT:    split: yes
// CHECK-NEXT:    cpu: yes
__global__ void shared_only(unsigned *out, const unsigned char *data) {
  __shared__ unsigned bins[256];
  bins[threadIdx.x] = 0;
  __syncthreads();
  atomicAdd(&bins[data[blockIdx.x * blockDim.x + threadIdx.x]], 1u);
  __syncthreads();
  out[blockIdx.x * 256 + threadIdx.x] = bins[threadIdx.x];
}
