// A program with a memory error in its kernel, chosen by argv[1], checked
// the way CUDA programs check: the call named by argv[2] (sync, last or
// memcpy; sticky: memcpy after the error was taken twice; relaunch: a launch
// after the error) must report it;
// the program's own check then exits with 1.
#include <cstdio>
#include <cstdlib>
#include <cstring>

#define CHECK(call)                                                            \
  do {                                                                         \
    cudaError_t err = (call);                                                  \
    if (err != cudaSuccess) {                                                  \
      fprintf(stderr, "CUDA error %s at line %d: %s\n", cudaGetErrorName(err), \
              __LINE__, #call);                                                \
      exit(1);                                                                 \
    }                                                                          \
  } while (0)

// Each thread writes its element; the last thread also makes the access
// that the mode asks for through `bad` at `index`.
__global__ void fill(int *out, int n, int *bad, long long index, int read) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n)
    return;
  out[i] = 2 * i;
  if (i == n - 1 && index >= -(1 << 30)) {
    if (read)
      out[i] = bad[index];
    else
      bad[index] = 7;
  }
}

int main(int argc, char **argv) {
  const char *mode = argc > 1 ? argv[1] : "ok";
  const char *via = argc > 2 ? argv[2] : "sync";
  // n ints: a multiple of 256 bytes unless the mode is "slack".
  const int n = strcmp(mode, "slack") ? 1 << 16 : (1 << 16) - 3;
  int *d = nullptr;
  CHECK(cudaMalloc(&d, n * sizeof(int)));
  int *bad = d;
  long long index = -(1LL << 40); // no bad access
  int read = 0;
  if (!strcmp(mode, "null"))
    bad = nullptr, index = 5;
  else if (!strcmp(mode, "far"))
    index = n + 4096;
  else if (!strcmp(mode, "one") || !strcmp(mode, "slack"))
    index = n;
  else if (!strcmp(mode, "read"))
    index = n + 64, read = 1;
  else if (!strcmp(mode, "before"))
    index = -2048;
  fill<<<(n + 255) / 256, 256>>>(d, n, bad, index, read);
  int *h = (int *)malloc(n * sizeof(int));
  if (!strcmp(via, "sync")) {
    CHECK(cudaDeviceSynchronize());
  } else if (!strcmp(via, "last")) {
    cudaDeviceSynchronize();
    CHECK(cudaGetLastError());
  } else if (!strcmp(via, "relaunch")) {
    // After the error, a launch returns it and runs nowhere.
    cudaDeviceSynchronize();
    fill<<<(n + 255) / 256, 256>>>(d, n, d, -(1LL << 40), 0);
    fprintf(stderr, "relaunch: %s\n", cudaGetErrorName(cudaGetLastError()));
  } else if (!strcmp(via, "sticky")) {
    // The error is sticky: taking it does not clear it.
    cudaDeviceSynchronize();
    cudaGetLastError();
    cudaDeviceSynchronize();
  }
  CHECK(cudaMemcpy(h, d, n * sizeof(int), cudaMemcpyDeviceToHost));
  int wrong = 0;
  for (int i = 0; i < n; ++i)
    wrong += h[i] != 2 * i;
  printf("PASS: %d of %d wrong\n", wrong, n);
  fflush(stdout);
  if (!strcmp(mode, "host")) // a crash of the host code stays a crash
    *(volatile int *)(argc > 99 ? h : nullptr) = 1;
  CHECK(cudaFree(d));
  free(h);
  return wrong != 0;
}
