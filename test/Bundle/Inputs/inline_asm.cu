// Reads the lane id with inline PTX: the CPU lowering cannot run PTX, so the
// kernel is GPU-only; splitting it is still fine.
__global__ void lane_ids(unsigned *out) {
  unsigned lane;
  asm volatile("mov.u32 %0, %%laneid;" : "=r"(lane));
  out[blockIdx.x * blockDim.x + threadIdx.x] = lane;
}
