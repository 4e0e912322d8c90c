// 7-point stencil on an nx*ny*nz volume, 3-D grid of 3-D blocks.
__global__ void stencil3d(const float *in, float *out, int nx, int ny, int nz) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  int z = blockIdx.z * blockDim.z + threadIdx.z;
  if (x < 1 || y < 1 || z < 1 || x >= nx - 1 || y >= ny - 1 || z >= nz - 1)
    return;
  long idx = ((long)z * ny + y) * nx + x;
  long sy = nx, sz = (long)nx * ny;
  out[idx] = 0.4f * in[idx] + 0.1f * (in[idx - 1] + in[idx + 1] + in[idx - sy] +
                                      in[idx + sy] + in[idx - sz] + in[idx + sz]);
}
