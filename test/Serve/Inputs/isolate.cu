// Two roles for cleave-serve's isolation test. "owner" fills a buffer and
// prints its device pointer, waits for a line on stdin, then checks the
// buffer. "intruder PTR" tries every way the API offers to read or write
// PTR (the owner's buffer), and past the end of its own buffer.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <cuda_runtime.h>

__global__ void poke(int *P, int V) { P[threadIdx.x] = V; }

static const char *name(cudaError_t E) { return cudaGetErrorName(E); }

int main(int Argc, char **Argv) {
  int H[64] = {0};
  if (Argc == 2 && !strcmp(Argv[1], "owner")) {
    int *D;
    cudaMalloc(&D, sizeof(H));
    cudaMemset(D, 0x5a, sizeof(H));
    cudaDeviceSynchronize();
    printf("ptr %p\n", (void *)D);
    fflush(stdout);
    char Line[16];
    if (!fgets(Line, sizeof(Line), stdin))
      return 1;
    printf("owner copy: %s\n", name(cudaMemcpy(H, D, sizeof(H),
                                               cudaMemcpyDeviceToHost)));
    for (int I = 0; I < 64; ++I)
      if (H[I] != 0x5a5a5a5a) {
        printf("owner data changed at %d: %#x\n", I, H[I]);
        return 1;
      }
    printf("owner data intact\n");
    return 0;
  }
  if (Argc != 3)
    return 2;
  void *P = (void *)strtoull(Argv[2], nullptr, 16);
  printf("memcpy from: %s\n",
         name(cudaMemcpy(H, P, sizeof(H), cudaMemcpyDeviceToHost)));
  printf("memcpy to: %s\n",
         name(cudaMemcpy(P, H, sizeof(H), cudaMemcpyHostToDevice)));
  int *Mine;
  printf("malloc: %s\n", name(cudaMalloc(&Mine, sizeof(H))));
  printf("memcpy device to device: %s\n",
         name(cudaMemcpy(Mine, P, sizeof(H), cudaMemcpyDeviceToDevice)));
  printf("memset: %s\n", name(cudaMemset(P, 0, sizeof(H))));
  printf("memset async: %s\n", name(cudaMemsetAsync(P, 0, sizeof(H), 0)));
  poke<<<1, 64>>>((int *)P, 7);
  printf("launch: %s\n", name(cudaGetLastError()));
  printf("free: %s\n", name(cudaFree(P)));
  // Its own buffer works, and nothing past its end.
  (void)cudaGetLastError(); // the free's error
  poke<<<1, 64>>>(Mine, 7);
  printf("own launch: %s\n", name(cudaGetLastError()));
  cudaError_t E = cudaMemcpy(H, Mine, sizeof(H), cudaMemcpyDeviceToHost);
  printf("own copy: %s %d\n", name(E), H[63]);
  printf("past its end: %s\n",
         name(cudaMemcpy(H, Mine + 1, sizeof(H), cudaMemcpyDeviceToHost)));
  poke<<<1, 64>>>(Mine + 1000, 7);
  printf("launch past its end: %s\n", name(cudaGetLastError()));
  printf("sync: %s\n", name(cudaDeviceSynchronize()));
  return 0;
}
