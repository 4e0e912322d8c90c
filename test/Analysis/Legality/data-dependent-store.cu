// Stores whose address depends on data the kernel writes: neither footprints
// nor merge kernels can tell which locations a device wrote.
// RUN: %cuda_to_ir -g %s -o - | %opt -load-pass-plugin=%cleave_plugin -passes='print<cleave-legality>' -disable-output 2>&1 | FileCheck %s --implicit-check-not=issue:

// out[i] is read before anything is stored to it, so clang cannot forward a
// stored value: the address of the outer store depends on out.
// CHECK-LABEL: cleave-legality: kernel 'scatter_self(int*, int const*, int)'
// CHECK-NEXT:    split: no
// CHECK-NEXT:    cpu: yes
// CHECK-NEXT:    issue: data-dependent-store (forbids split) 'store' at {{.*}}data-dependent-store.cu:[[@LINE+4]]:22; address depends on 'load' at {{.*}}data-dependent-store.cu:[[@LINE+4]]:13
__global__ void scatter_self(int *out, const int *idx, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    out[idx[out[i]]] = i;
}

// The index comes from a buffer the kernel only reads: a plain scatter.
// CHECK-LABEL: cleave-legality: kernel 'scatter_input(int*, int const*, int)'
// CHECK-NEXT:    split: yes
// CHECK-NEXT:    cpu: yes
__global__ void scatter_input(int *out, const int *idx, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    out[idx[i]] = out[i] + 1;
}

// A condition on written data choosing the address (clang turns the branch
// into a select).
// CHECK-LABEL: cleave-legality: kernel 'choose(int*, int const*, int)'
// CHECK-NEXT:    split: no
// CHECK-NEXT:    cpu: yes
// CHECK-NEXT:    issue: data-dependent-store (forbids split) 'store' at {{.*}}data-dependent-store.cu:[[@LINE+6]]:10; address depends on 'load' at {{.*}}data-dependent-store.cu:[[@LINE+4]]:7
__global__ void choose(int *out, const int *in, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  int j = i;
  if (out[i] > 0)
    j = i + n;
  out[j] = in[i];
}

// Shared memory written by the block is written data too: a merge kernel
// could not recompute perm.
// CHECK-LABEL: cleave-legality: kernel 'permute(float*, float const*)'
// CHECK-NEXT:    split: no
// CHECK-NEXT:    cpu: yes
// CHECK-NEXT:    issue: data-dependent-store (forbids split) 'store' at {{.*}}data-dependent-store.cu:[[@LINE+5]]:45; address depends on 'load' at {{.*}}data-dependent-store.cu:[[@LINE+5]]:26
__global__ void permute(float *out, const float *in) {
  __shared__ int perm[256];
  perm[threadIdx.x] = 255 - threadIdx.x;
  __syncthreads();
  out[blockIdx.x * 256 + perm[threadIdx.x]] = in[threadIdx.x];
}

// __constant__ tables are never written by a kernel.
// CHECK-LABEL: cleave-legality: kernel 'via_constant(float*, float const*)'
// CHECK-NEXT:    split: yes
// CHECK-NEXT:    cpu: yes
__constant__ int table[256];
__global__ void via_constant(float *out, const float *in) {
  out[blockIdx.x * 256 + table[threadIdx.x]] = in[threadIdx.x];
}
