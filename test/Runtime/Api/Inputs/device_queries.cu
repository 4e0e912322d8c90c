// A program in the style of vendor samples: device selection through
// attributes, the occupancy calculator, pitched memory, registered host
// memory, and calls CUDA 13 removed (cudaThreadSynchronize,
// cudaThreadExit). Checks its own results.
#include <cuda_profiler_api.h>
#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>
#include <vector>

#define CHECK(call)                                                            \
  do {                                                                         \
    cudaError_t e = (call);                                                    \
    if (e != cudaSuccess) {                                                    \
      std::printf("FAIL: %s: %s\n", #call, cudaGetErrorString(e));             \
      return 1;                                                                \
    }                                                                          \
  } while (0)

// Doubles each element of a pitched matrix, through dynamic shared memory
// (and a static shared factor).
__global__ void twice(float *m, size_t pitch, int width, int height) {
  extern __shared__ float row[];
  __shared__ float factor[64];
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y;
  float *r = (float *)((char *)m + y * pitch);
  row[threadIdx.x] = x < width ? r[x] : 0.0f;
  if (threadIdx.x < 64)
    factor[threadIdx.x] = 2.0f;
  __syncthreads();
  if (x < width && y < height)
    r[x] = factor[threadIdx.x % 64] * row[threadIdx.x];
}

int main() {
  // Device selection as the samples do it: SMs x clock.
  int count = 0, best = -1;
  long bestScore = -1;
  CHECK(cudaGetDeviceCount(&count));
  for (int d = 0; d < count; ++d) {
    int sms = 0, clock = 0, major = 0, minor = 0, mode = 0;
    CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, d));
    CHECK(cudaDeviceGetAttribute(&clock, cudaDevAttrClockRate, d));
    CHECK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, d));
    CHECK(cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, d));
    CHECK(cudaDeviceGetAttribute(&mode, cudaDevAttrComputeMode, d));
    if (mode != cudaComputeModeProhibited && long(sms) * clock > bestScore) {
      bestScore = long(sms) * clock;
      best = d;
    }
  }
  if (best < 0 || bestScore <= 0) {
    std::printf("FAIL: no device selected\n");
    return 1;
  }
  CHECK(cudaSetDevice(best));
  CHECK(cudaSetDeviceFlags(cudaDeviceScheduleBlockingSync));
  CHECK(cudaDeviceSetCacheConfig(cudaFuncCachePreferShared));
  CHECK(cudaFuncSetCacheConfig(twice, cudaFuncCachePreferL1));
  size_t freeMem = 0, totalMem = 0;
  CHECK(cudaMemGetInfo(&freeMem, &totalMem));
  if (freeMem == 0 || freeMem > totalMem) {
    std::printf("FAIL: cudaMemGetInfo\n");
    return 1;
  }

  // Block size from the occupancy calculator.
  cudaFuncAttributes attr;
  CHECK(cudaFuncGetAttributes(&attr, twice));
  int minGrid = 0, block = 0, perSM = 0;
  CHECK(cudaOccupancyMaxPotentialBlockSize(&minGrid, &block, twice, 0, 256));
  CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(
      &perSM, twice, block, block * sizeof(float)));
  std::printf("block %d, %d per SM, max threads %d, static shared %zu\n",
              block, perSM, attr.maxThreadsPerBlock, attr.sharedSizeBytes);
  std::printf("registers %d, local %zu, binary %d\n", attr.numRegs,
              attr.localSizeBytes, attr.binaryVersion);
  if (block <= 0 || block > 256 || perSM <= 0)
    return 1;

  const int W = 1000, H = 37;
  std::vector<float> host(W * H);
  for (int i = 0; i < W * H; ++i)
    host[i] = float(i % 1013);
  CHECK(cudaHostRegister(host.data(), host.size() * sizeof(float),
                         cudaHostRegisterPortable));
  float *m = nullptr;
  size_t pitch = 0;
  CHECK(cudaMallocPitch((void **)&m, &pitch, W * sizeof(float), H));
  CHECK(cudaMemset2D(m, pitch, 0, W * sizeof(float), H));
  CHECK(cudaMemcpy2DAsync(m, pitch, host.data(), W * sizeof(float),
                          W * sizeof(float), H, cudaMemcpyHostToDevice, 0));
  CHECK(cudaProfilerStart());
  dim3 grid((W + block - 1) / block, H);
  twice<<<grid, block, block * sizeof(float)>>>(m, pitch, W, H);
  CHECK(cudaGetLastError());
  CHECK(cudaThreadSynchronize());
  CHECK(cudaProfilerStop());
  std::vector<float> back(W * H);
  CHECK(cudaMemcpy2D(back.data(), W * sizeof(float), m, pitch,
                     W * sizeof(float), H, cudaMemcpyDeviceToHost));
  int wrong = 0;
  for (int i = 0; i < W * H; ++i)
    wrong += back[i] != 2.0f * host[i];
  CHECK(cudaFree(m));
  CHECK(cudaHostUnregister(host.data()));
  CHECK(cudaThreadExit());
  std::printf("%s: %d of %d elements wrong\n", wrong ? "FAIL" : "PASS", wrong,
              W * H);
  return wrong != 0;
}
