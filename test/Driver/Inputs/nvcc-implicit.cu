// Host code that leans on what nvcc's cuda_runtime.h brings in: <cmath>,
// <cstdlib>, <cstring>, <ctime> are not included here, and min/max are
// CUDA's host-device overloads. nvcc 13 builds this file as it is; printf
// needs <cstdio> with nvcc too (its host pass does not include it).
#include <cstdio>

__global__ void clampSqrt(const float *in, float *out, int n, float hi) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    out[i] = min(sqrtf(fabsf(in[i])), hi);
}

int main() {
  srand((unsigned)time(NULL) & 0u); // seeded with 0: the same data each run
  const int n = 1000;
  float *h = (float *)malloc(n * sizeof(float));
  float *r = (float *)malloc(n * sizeof(float));
  if (!h || !r)
    return EXIT_FAILURE;
  memset(r, 0, n * sizeof(float));
  for (int i = 0; i < n; ++i)
    h[i] = (float)(i % 17) * (i % 2 ? -1.0f : 1.0f);
  float *din, *dout;
  cudaMalloc(&din, n * sizeof(float));
  cudaMalloc(&dout, n * sizeof(float));
  cudaMemcpy(din, h, n * sizeof(float), cudaMemcpyHostToDevice);
  clampSqrt<<<(n + 127) / 128, 128>>>(din, dout, n, 3.5f);
  cudaMemcpy(r, dout, n * sizeof(float), cudaMemcpyDeviceToHost);

  int wrong = 0;
  for (int i = 0; i < n; ++i) {
    float want = (float)min(sqrt(fabs((double)h[i])), 3.5); // double, double
    if (fabs(r[i] - want) > 1e-6 * ceil(exp(1.0)))
      ++wrong;
  }
  // CUDA's host overloads: int, unsigned (mixed with int), long long,
  // float, and float with double.
  int a = min(3, -4) + max(5, 6);             // -4 + 6
  unsigned u = max(3u, 4) + min(7, 9u);       // 4 + 7
  long long ll = max(-1ll, 2ll) + min(5ll, 8ll); // 2 + 5
  float f = min(1.5f, 2.5f) + max(0.5f, -1.0f); // 1.5 + 0.5
  double d = max(1.0f, 2.25) + min(0.25, 3.0f);  // 2.25 + 0.25
  bool overloads = a == 2 && u == 11u && ll == 7 && f == 2.0f && d == 2.5;
  char buf[8];
  memcpy(buf, "ok", 3);
  printf("%s: %d of %d wrong, overloads %s\n",
         wrong == 0 && overloads ? "PASS" : "FAIL", wrong, n,
         overloads ? buf : "wrong");
  free(h);
  free(r);
  cudaFree(din);
  cudaFree(dout);
  return wrong == 0 && overloads ? 0 : EXIT_FAILURE;
}
