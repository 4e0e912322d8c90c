// A kernel that writes through a pointer it receives inside a struct, between
// two launches that read the buffer split over several devices. The runtime
// cannot see the pointer: the copies the split launches left on the other
// devices must not be read again after the struct kernel wrote the host copy.
#include <cstdio>
#include <vector>
#include <cuda_runtime.h>

struct View {
  float *p;
  int n;
};

__global__ void bump(View v) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < v.n)
    v.p[i] += 1.0f;
}

__global__ void copy(const float *a, float *b, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    b[i] = a[i];
}

int main() {
  const int n = 65536;
  float *a, *b;
  cudaMalloc(&a, n * sizeof(float));
  cudaMalloc(&b, n * sizeof(float));
  cudaMemset(a, 0, n * sizeof(float));
  copy<<<n / 256, 256>>>(a, b, n);
  bump<<<n / 256, 256>>>(View{a, n});
  copy<<<n / 256, 256>>>(a, b, n);
  std::vector<float> h(n);
  if (cudaMemcpy(h.data(), b, n * sizeof(float), cudaMemcpyDeviceToHost) !=
      cudaSuccess) {
    printf("FAIL: %s\n", cudaGetErrorString(cudaGetLastError()));
    return 1;
  }
  int stale = 0;
  for (float x : h)
    stale += x != 1.0f;
  printf("%s: %d of %d elements stale\n", stale ? "FAIL" : "PASS", stale, n);
  return stale != 0;
}
