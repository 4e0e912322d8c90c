// Launch cost: a small upload, a launch and a read-back per step (a host
// loop that checks a result after every kernel).
//   copies [STEPS] [N]
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>
#include <cuda_runtime.h>

__global__ void scaleAdd(const float *in, float *out, float s, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    out[i] = in[i] * s + 1.0f;
}

int main(int argc, char **argv) {
  int steps = argc > 1 ? atoi(argv[1]) : 100;
  int n = argc > 2 ? atoi(argv[2]) : 16384;
  std::vector<float> in(n), out(n);
  float *din, *dout;
  cudaMalloc(&din, n * sizeof(float));
  cudaMalloc(&dout, n * sizeof(float));
  srand(5);
  bool ok = true;
  auto t0 = std::chrono::steady_clock::now();
  for (int s = 0; s < steps; ++s) {
    for (int i = 0; i < n; ++i)
      in[i] = float((i * 7 + s) % 101);
    cudaMemcpy(din, in.data(), n * sizeof(float), cudaMemcpyHostToDevice);
    scaleAdd<<<(n + 255) / 256, 256>>>(din, dout, float(s % 3), n);
    cudaMemcpy(out.data(), dout, n * sizeof(float), cudaMemcpyDeviceToHost);
    for (int i = 0; i < n; ++i)
      ok &= out[i] == in[i] * float(s % 3) + 1.0f;
  }
  double wallUs = std::chrono::duration<double, std::micro>(
                      std::chrono::steady_clock::now() - t0)
                      .count();
  printf("launches: %d\nwall_us_per_launch: %.2f\n%s\n", steps,
         wallUs / steps, ok ? "PASS" : "FAIL");
  return ok ? 0 : 1;
}
