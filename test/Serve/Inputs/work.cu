// A client's work for cleave-serve's tests: pinned memory, a stream, an
// event, asynchronous copies, a __device__ variable and two kernels, checked
// against the same arithmetic on the host, REPS times (the third argument,
// 1 by default). Prints one line.
#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>

__device__ float Scale;

__global__ void axpb(const float *X, float *Y, int N, float B) {
  int I = blockIdx.x * blockDim.x + threadIdx.x;
  if (I < N)
    Y[I] = Scale * X[I] + B;
}

__global__ void square(float *Y, int N) {
  int I = blockIdx.x * blockDim.x + threadIdx.x;
  if (I < N)
    Y[I] = Y[I] * Y[I];
}

#define CHECK(X)                                                               \
  if (cudaError_t E = (X)) {                                                   \
    printf("error %s at line %d\n", cudaGetErrorName(E), __LINE__);           \
    return 1;                                                                  \
  }

static int once(int N, int Seed, bool Print) {
  float *X, *Y, *Pinned;
  float *Host = (float *)malloc(N * sizeof(float));
  CHECK(cudaMallocHost(&Pinned, N * sizeof(float)));
  for (int I = 0; I < N; ++I)
    Pinned[I] = Host[I] = float((I * Seed) % 97) / 8;
  CHECK(cudaMalloc(&X, N * sizeof(float)));
  CHECK(cudaMalloc(&Y, N * sizeof(float)));
  float S = 0.5f * Seed;
  CHECK(cudaMemcpyToSymbol(Scale, &S, sizeof(S)));
  cudaStream_t St;
  cudaEvent_t Ev;
  CHECK(cudaStreamCreate(&St));
  CHECK(cudaEventCreate(&Ev));
  CHECK(cudaMemcpyAsync(X, Pinned, N * sizeof(float), cudaMemcpyHostToDevice,
                        St));
  axpb<<<(N + 255) / 256, 256, 0, St>>>(X, Y, N, 1.0f);
  CHECK(cudaEventRecord(Ev, St));
  CHECK(cudaStreamWaitEvent(0, Ev, 0));
  square<<<(N + 127) / 128, 128>>>(Y, N);
  CHECK(cudaGetLastError());
  CHECK(cudaDeviceSynchronize());
  CHECK(cudaMemcpyAsync(Pinned, Y, N * sizeof(float), cudaMemcpyDeviceToHost,
                        St));
  CHECK(cudaStreamSynchronize(St));
  float Back = 0;
  CHECK(cudaMemcpyFromSymbol(&Back, Scale, sizeof(Back)));
  double Sum = 0;
  for (int I = 0; I < N; ++I) {
    float Want = S * Host[I] + 1.0f;
    Want *= Want;
    if (Pinned[I] != Want) {
      printf("mismatch at %d: %f, expected %f\n", I, Pinned[I], Want);
      return 1;
    }
    Sum += Pinned[I];
  }
  // Pageable memory too (through the server's staging area).
  CHECK(cudaMemcpy(Host, Y, N * sizeof(float), cudaMemcpyDeviceToHost));
  for (int I = 0; I < N; ++I)
    if (Host[I] != Pinned[I]) {
      printf("pageable mismatch at %d\n", I);
      return 1;
    }
  if (Print)
    printf("ok n=%d seed=%d scale=%.2f sum=%.3f\n", N, Seed, Back, Sum);
  CHECK(cudaFree(X));
  CHECK(cudaFree(Y));
  CHECK(cudaFreeHost(Pinned));
  CHECK(cudaStreamDestroy(St));
  CHECK(cudaEventDestroy(Ev));
  free(Host);
  return 0;
}

int main(int Argc, char **Argv) {
  int N = Argc > 1 ? atoi(Argv[1]) : 100000;
  int Seed = Argc > 2 ? atoi(Argv[2]) : 1;
  int Reps = Argc > 3 ? atoi(Argv[3]) : 1;
  for (int R = 0; R < Reps; ++R)
    if (int RC = once(N, Seed, R + 1 == Reps))
      return RC;
  return 0;
}
