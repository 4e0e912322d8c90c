// Launch cost: one short launch per row of a dynamic program (the row index
// changes at every launch), data resident; the way a ghost-zone or
// wavefront DP loop is usually written. Prints the GPU time of all launches
// (events) and the host wall time per launch.
//   rows [ROWS] [COLS]
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>
#include <cuda_runtime.h>

__global__ void stepRow(const int *wall, const int *prev, int *cur, int cols,
                        int row) {
  int c = blockIdx.x * blockDim.x + threadIdx.x;
  if (c >= cols)
    return;
  int best = prev[c];
  if (c > 0)
    best = min(best, prev[c - 1]);
  if (c + 1 < cols)
    best = min(best, prev[c + 1]);
  cur[c] = best + wall[size_t(row) * cols + c];
}

int main(int argc, char **argv) {
  int rows = argc > 1 ? atoi(argv[1]) : 64;
  int cols = argc > 2 ? atoi(argv[2]) : 4096;
  std::vector<int> wall(size_t(rows) * cols);
  srand(7);
  for (int &w : wall)
    w = rand() % 10;
  int *dWall, *dA, *dB;
  cudaMalloc(&dWall, wall.size() * sizeof(int));
  cudaMalloc(&dA, cols * sizeof(int));
  cudaMalloc(&dB, cols * sizeof(int));
  cudaMemcpy(dWall, wall.data(), wall.size() * sizeof(int),
             cudaMemcpyHostToDevice);
  cudaMemcpy(dA, wall.data(), cols * sizeof(int), cudaMemcpyHostToDevice);
  cudaEvent_t e0, e1;
  cudaEventCreate(&e0);
  cudaEventCreate(&e1);
  cudaDeviceSynchronize();
  auto t0 = std::chrono::steady_clock::now();
  cudaEventRecord(e0);
  for (int r = 1; r < rows; ++r) {
    stepRow<<<(cols + 255) / 256, 256>>>(dWall, dA, dB, cols, r);
    std::swap(dA, dB);
  }
  cudaEventRecord(e1);
  cudaEventSynchronize(e1);
  double wallUs = std::chrono::duration<double, std::micro>(
                      std::chrono::steady_clock::now() - t0)
                      .count();
  float ms = 0;
  cudaEventElapsedTime(&ms, e0, e1);
  if (cudaGetLastError() != cudaSuccess) {
    printf("FAIL: %s\n", cudaGetErrorString(cudaGetLastError()));
    return 1;
  }
  std::vector<int> got(cols);
  cudaMemcpy(got.data(), dA, cols * sizeof(int), cudaMemcpyDeviceToHost);
  std::vector<int> p(wall.begin(), wall.begin() + cols), q(cols);
  for (int r = 1; r < rows; ++r) {
    for (int c = 0; c < cols; ++c) {
      int b = p[c];
      if (c > 0)
        b = std::min(b, p[c - 1]);
      if (c + 1 < cols)
        b = std::min(b, p[c + 1]);
      q[c] = b + wall[size_t(r) * cols + c];
    }
    std::swap(p, q);
  }
  bool ok = p == got;
  printf("launches: %d\ntime_ms: %.3f\nwall_us_per_launch: %.2f\n%s\n",
         rows - 1, ms, wallUs / (rows - 1), ok ? "PASS" : "FAIL");
  return ok ? 0 : 1;
}
