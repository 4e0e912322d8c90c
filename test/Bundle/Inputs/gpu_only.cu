// Three kernels for the bundle's GPU-only marking.
__constant__ float scale[4] = {1.0f, 2.0f, 3.0f, 4.0f};
__device__ unsigned launches;

// Inline PTX (not one of the CUDA headers' idioms): the legality analysis
// forbids the CPU (and splitting).
__global__ void lane_ids(unsigned *out) {
  unsigned lane;
  asm volatile("brev.b32 %0, %1;" : "=r"(lane) : "r"(threadIdx.x));
  out[blockIdx.x * blockDim.x + threadIdx.x] = lane;
}

// Legal on the CPU, but the lowering itself refuses a barrier under
// thread-divergent control flow.
extern "C" __global__ void divergent_barrier(float *p) {
  if (threadIdx.x < 16) {
    p[threadIdx.x] = 1.0f;
    __syncthreads();
  }
}

// Static shared memory, a __constant__ table read, a __device__ counter
// written: runs on the CPU, not split (global atomic).
extern "C" __global__ void reverse_scaled(const float *in, float *out) {
  __shared__ float tile[128];
  unsigned t = threadIdx.x, i = blockIdx.x * 128 + t;
  tile[t] = in[i];
  __syncthreads();
  out[i] = tile[127 - t] * scale[t % 4];
  if (t == 0)
    atomicAdd(&launches, 1u);
}
