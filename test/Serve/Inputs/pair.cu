// One of two kernels, launched ROUNDS times on the legacy stream: two
// clients running "alpha" and "beta" at once give cleave-serve's
// co-scheduler launches of two programs to pair. With a directory as the
// third argument, each waits there for the other (a file each) before it
// launches, so that their launches meet. Checks its results.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <cuda_runtime.h>
#include <string>
#include <unistd.h>

__global__ void alpha(float *P, int N) {
  int I = blockIdx.x * blockDim.x + threadIdx.x;
  if (I < N)
    for (int K = 0; K < 100; ++K)
      P[I] = P[I] + 0.01f;
}

__global__ void beta(float *P, int N) {
  int I = blockIdx.x * blockDim.x + threadIdx.x;
  if (I < N)
    for (int K = 0; K < 100; ++K)
      P[I] = P[I] + 0.02f;
}

int main(int Argc, char **Argv) {
  bool Alpha = Argc > 1 && !strcmp(Argv[1], "alpha");
  int Rounds = Argc > 2 ? atoi(Argv[2]) : 20;
  const int N = 1 << 18;
  float *P;
  cudaMalloc(&P, N * sizeof(float));
  cudaMemset(P, 0, N * sizeof(float));
  if (Argc > 3) {
    std::string Dir = Argv[3];
    if (FILE *F = fopen((Dir + "/" + Argv[1]).c_str(), "w"))
      fclose(F);
    for (int T = 0; T < 150000; ++T) {
      if (!access((Dir + "/alpha").c_str(), F_OK) &&
          !access((Dir + "/beta").c_str(), F_OK))
        break;
      usleep(200);
    }
  }
  for (int R = 0; R < Rounds; ++R) {
    if (Alpha)
      alpha<<<N / 64, 64>>>(P, N);
    else
      beta<<<N / 64, 64>>>(P, N);
  }
  float *H = (float *)malloc(N * sizeof(float));
  cudaError_t E = cudaMemcpy(H, P, N * sizeof(float), cudaMemcpyDeviceToHost);
  // The same additions in the same order as the kernels make them.
  float Want = 0;
  for (int R = 0; R < Rounds; ++R)
    for (int K = 0; K < 100; ++K)
      Want = Want + (Alpha ? 0.01f : 0.02f);
  for (int I = 0; I < N; ++I)
    if (H[I] != Want) {
      printf("%s: element %d is %f, expected %f\n", Argv[1], I, H[I], Want);
      return 1;
    }
  printf("%s: %s, %d rounds right\n", Alpha ? "alpha" : "beta",
         cudaGetErrorName(E), Rounds);
  return 0;
}
