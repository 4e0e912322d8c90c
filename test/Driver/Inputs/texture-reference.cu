// The texture-reference API (removed by CUDA 12) and a surface write.
__global__ void fill(cudaSurfaceObject_t s) { surf2Dwrite(1.0f, s, 0, 0); }

int main() {
  float *d;
  cudaMalloc(&d, 64 * sizeof(float));
  cudaBindTexture(0, d, 64 * sizeof(float));
  fill<<<1, 1>>>(0);
  return 0;
}
