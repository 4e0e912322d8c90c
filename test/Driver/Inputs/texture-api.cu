// Texture and surface objects handled by the host code only: refused at
// each use of their types and functions.
__global__ void scale(float *p) { p[threadIdx.x] *= 2.0f; }

int main() {
  float *d;
  cudaMalloc(&d, 64 * sizeof(float));
  cudaResourceDesc res = {};
  cudaTextureDesc td = {};
  cudaTextureObject_t t = 0;
  cudaCreateTextureObject(&t, &res, &td, nullptr);
  scale<<<1, 64>>>(d);
  cudaDestroyTextureObject(t);
  cudaSurfaceObject_t s = 0;
  cudaCreateSurfaceObject(&s, &res);
  return 0;
}
