// A client that holds three buffers, a stream and an event on cleave-serve
// and keeps kernels in flight until it is killed (the crash test).
#include <cstdio>
#include <cuda_runtime.h>

__global__ void churn(float *P, int N) {
  int I = blockIdx.x * blockDim.x + threadIdx.x;
  if (I < N)
    for (int K = 0; K < 64; ++K)
      P[I] = P[I] * 0.5f + 1.0f;
}

int main() {
  const int N = 1 << 18;
  float *A, *B, *C;
  cudaStream_t S;
  cudaEvent_t E;
  cudaMalloc(&A, N * sizeof(float));
  cudaMalloc(&B, N * sizeof(float));
  cudaMalloc(&C, N * sizeof(float));
  cudaStreamCreate(&S);
  cudaEventCreate(&E);
  printf("ready\n");
  fflush(stdout);
  for (;;) {
    churn<<<N / 256, 256, 0, S>>>(A, N);
    churn<<<N / 256, 256>>>(B, N);
    cudaEventRecord(E, S);
    cudaEventSynchronize(E);
  }
}
