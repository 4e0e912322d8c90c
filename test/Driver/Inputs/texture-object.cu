// A kernel that reads through a texture object: refused at the fetch.
#include <cstdio>

__global__ void copy(cudaTextureObject_t t, float *out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    out[i] = tex1Dfetch<float>(t, i);
}

int main() {
  const int n = 64;
  float *in, *out;
  cudaMalloc(&in, n * sizeof(float));
  cudaMalloc(&out, n * sizeof(float));
  cudaResourceDesc res = {};
  res.resType = cudaResourceTypeLinear;
  res.res.linear.devPtr = in;
  res.res.linear.desc = cudaCreateChannelDesc<float>();
  res.res.linear.sizeInBytes = n * sizeof(float);
  cudaTextureDesc td = {};
  cudaTextureObject_t t = 0;
  cudaCreateTextureObject(&t, &res, &td, nullptr);
  copy<<<1, n>>>(t, out, n);
  cudaDestroyTextureObject(t);
  return 0;
}
