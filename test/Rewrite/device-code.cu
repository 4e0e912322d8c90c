// __device__-only functions (and function templates) are removed; __host__
// __device__ functions stay for the host; device variables stay as host
// shadows and are registered; #line markers keep the user's line numbers.
// RUN: %strip_comments %s %t/device-code.cu
// RUN: %cleave compile --emit=host-source %t/device-code.cu -o - | FileCheck %s
#include <cuda_runtime.h>

__device__ float square(float x) { return x * x; }
// CHECK: /* cleave: __device__ function 'square' removed (device code) */
static __device__ __forceinline__ float cube(float x);
// CHECK: /* cleave: __device__ function 'cube' removed (device code) */
template <typename T>
__device__ T twice(T x) {
  return x + x;
}
// CHECK: /* cleave: __device__ function template 'twice' removed (device code) */
// CHECK-NEXT: #line [[@LINE-1]] "{{.*}}device-code.cu"
__host__ __device__ inline float half(float x) { return x * 0.5f; }
// CHECK: __host__ __device__ inline float half(float x) { return x * 0.5f; }

struct Vec {
  float x, y;
  __host__ __device__ float dot(Vec o) const { return x * o.x + y * o.y; }
  __device__ float len2() const { return dot(*this); }
};
// CHECK: __host__ __device__ float dot(Vec o) const
// CHECK: /* cleave: __device__ function 'len2' removed (device code) */

__constant__ float coeffs[4] = {1, 2, 3, 4};
__device__ int counter;
namespace params {
__constant__ Vec origin;
}
// CHECK: __constant__ float coeffs[4] = {1, 2, 3, 4};
// CHECK: __device__ int counter;

__global__ void apply(float *p) {
  p[threadIdx.x] = square(p[threadIdx.x]) * coeffs[threadIdx.x % 4] +
                   cube(1.0f) + twice(1.0f) + half(2.0f) + params::origin.len2();
  atomicAdd(&counter, 1);
}
__device__ float cube(float x) { return x * x * x; }

// Shared memory inside kernels goes with the kernel's body.
__global__ void blockSum(const float *in, float *out) {
  extern __shared__ float partial[];
  __shared__ float total;
  partial[threadIdx.x] = in[threadIdx.x];
  __syncthreads();
  if (threadIdx.x == 0) {
    total = 0;
    for (unsigned i = 0; i < blockDim.x; ++i)
      total += partial[i];
    *out = total;
  }
}
// CHECK: __global__ void blockSum(const float *in, float *out) {
// CHECK-NEXT: #line
// CHECK-NEXT: // cleave: host stub

int main() {
  float h[4];
  cudaMemcpyToSymbol(coeffs, h, sizeof h);
  return half(2.0f) == 1.0f ? 0 : 1;
}
// CHECK: cleave_register_kernel((const void *)static_cast<void (*)(float *)>(&::apply), "_Z5applyPf");
// CHECK-NEXT: cleave_register_kernel((const void *)static_cast<void (*)(const float *, float *)>(&::blockSum), "_Z8blockSumPKfPf");
// CHECK-NEXT: cleave_register_variable((const void *)&::coeffs, "coeffs", sizeof(::coeffs));
// CHECK-NEXT: cleave_register_variable((const void *)&::counter, "counter", sizeof(::counter));
// CHECK-NEXT: cleave_register_variable((const void *)&::params::origin, "_ZN6params6originE", sizeof(::params::origin));
