// Thread-block clusters: blocks of a cluster share distributed shared memory
// and a barrier, so they must run together on one GPU.
// RUN: %cuda_to_ir -g %s -o - | %opt -load-pass-plugin=%cleave_plugin -passes='print<cleave-legality>' -disable-output 2>&1 | FileCheck %s --implicit-check-not=issue:

// CHECK-LABEL: cleave-legality: kernel 'pairs(float*)'
// CHECK-NEXT:    split: no
// CHECK-NEXT:    cpu: no
// CHECK-NEXT:    issue: cluster (forbids split, cpu) 'llvm.nvvm.read.ptx.sreg.cluster.ctarank' at {{.*}}cluster.cu:[[@LINE+5]]:16
// CHECK-NEXT:    issue: cluster (forbids split, cpu) 'llvm.nvvm.barrier.cluster.arrive' at {{.*}}cluster.cu:[[@LINE+6]]:3
// CHECK-NEXT:    issue: cluster (forbids split, cpu) 'llvm.nvvm.barrier.cluster.wait' at {{.*}}cluster.cu:[[@LINE+6]]:3
// CHECK-NEXT:    issue: cluster (forbids split, cpu) 'llvm.nvvm.read.ptx.sreg.nclusterid.x' at {{.*}}cluster.cu:[[@LINE+6]]:29
__global__ void __cluster_dims__(2, 1, 1) pairs(float *out) {
  unsigned r = __nvvm_read_ptx_sreg_cluster_ctarank();
  out[blockIdx.x * 2 + r] = 1.0f;
  __nvvm_barrier_cluster_arrive();
  __nvvm_barrier_cluster_wait();
  out[blockIdx.x * 2 + 1] = __nvvm_read_ptx_sreg_nclusterid_x();
}
