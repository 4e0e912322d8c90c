// Why the headline's nbody does not reach 4x over 4 GPUs, without Cleave:
// on one GPU, the whole grid against its first quarter (what each GPU of a
// 4-way even split runs), for the kernel with one thread per body (the
// headline's until -s25) and for one with NbodyLanes threads per body,
// which each sum a share of the interactions and then combine them with
// warp shuffles. A quarter grid of the first kernel holds about 16 warps
// per SM (262144 bodies, 128 threads per block, 132 SMs); of the second,
// 4 times as many. CUDA events around each launch, median of --reps.
// One JSON line per kernel and grid; the second kernel's result is
// compared with the first's (relative difference of the accelerations).
//   probe_nbody [--reps N]
#include "../common/CudaCheck.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>
#include <cuda_runtime.h>

namespace {

constexpr float Softening2 = 0.01f;
constexpr int OneThreads = 128;

__global__ void nbodyOne(const float4 *pos, const float4 *vel, float4 *posNext,
                         float4 *velNext, int n, float dt) {
  extern __shared__ float4 tileP[];
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  float4 p = i < n ? pos[i] : make_float4(0.0f, 0.0f, 0.0f, 0.0f);
  float ax = 0.0f, ay = 0.0f, az = 0.0f;
  for (int base = 0; base < n; base += blockDim.x) {
    int j = base + threadIdx.x;
    tileP[threadIdx.x] = j < n ? pos[j] : make_float4(0.0f, 0.0f, 0.0f, 0.0f);
    __syncthreads();
#pragma unroll 8
    for (int k = 0; k < OneThreads; ++k) {
      float4 q = tileP[k];
      float dx = q.x - p.x, dy = q.y - p.y, dz = q.z - p.z;
      float inv = rsqrtf(dx * dx + dy * dy + dz * dz + Softening2);
      float s = q.w * inv * inv * inv;
      ax += dx * s;
      ay += dy * s;
      az += dz * s;
    }
    __syncthreads();
  }
  if (i < n) {
    float4 v = vel[i];
    v.x += ax * dt;
    v.y += ay * dt;
    v.z += az * dt;
    velNext[i] = v;
    posNext[i] = make_float4(p.x + v.x * dt, p.y + v.y * dt, p.z + v.z * dt,
                             p.w);
  }
}

// Block (Lanes, Bodies): threadIdx.y picks the body, threadIdx.x the share
// of each tile of Tile bodies (every Lanes-th); the Lanes threads of a body
// are adjacent lanes of one warp.
template <int Lanes, int Bodies, int Tile>
__global__ void nbodyLanes(const float4 *pos, const float4 *vel,
                           float4 *posNext, float4 *velNext, int n, float dt) {
  __shared__ float4 tileP[Tile];
  int i = blockIdx.x * Bodies + threadIdx.y;
  int t = threadIdx.y * Lanes + threadIdx.x;
  float4 p = i < n ? pos[i] : make_float4(0.0f, 0.0f, 0.0f, 0.0f);
  float ax = 0.0f, ay = 0.0f, az = 0.0f;
  for (int base = 0; base < n; base += Tile) {
    for (int k = t; k < Tile; k += Lanes * Bodies) {
      int j = base + k;
      tileP[k] = j < n ? pos[j] : make_float4(0.0f, 0.0f, 0.0f, 0.0f);
    }
    __syncthreads();
#pragma unroll 8
    for (int m = 0; m < Tile / Lanes; ++m) {
      float4 q = tileP[m * Lanes + threadIdx.x];
      float dx = q.x - p.x, dy = q.y - p.y, dz = q.z - p.z;
      float inv = rsqrtf(dx * dx + dy * dy + dz * dz + Softening2);
      float s = q.w * inv * inv * inv;
      ax += dx * s;
      ay += dy * s;
      az += dz * s;
    }
    __syncthreads();
  }
  for (int o = Lanes / 2; o > 0; o >>= 1) {
    ax += __shfl_xor_sync(0xffffffffu, ax, o);
    ay += __shfl_xor_sync(0xffffffffu, ay, o);
    az += __shfl_xor_sync(0xffffffffu, az, o);
  }
  if (threadIdx.x == 0 && i < n) {
    float4 v = vel[i];
    v.x += ax * dt;
    v.y += ay * dt;
    v.z += az * dt;
    velNext[i] = v;
    posNext[i] = make_float4(p.x + v.x * dt, p.y + v.y * dt, p.z + v.z * dt,
                             p.w);
  }
}

float unit(unsigned Seed, unsigned I) {
  unsigned X = Seed * 0x9E3779B9u ^ (I * 0x85EBCA6Bu);
  X ^= X >> 16;
  X *= 0x7FEB352Du;
  X ^= X >> 15;
  return float(X >> 8) / float(1u << 24);
}

} // namespace

int main(int argc, char **argv) {
  int Reps = 10;
  for (int I = 1; I < argc; ++I) {
    if (!std::strcmp(argv[I], "--reps") && I + 1 < argc)
      Reps = std::atoi(argv[++I]);
    else {
      std::fprintf(stderr, "usage: %s [--reps N]\n", argv[0]);
      return 2;
    }
  }
  const int N = 262144;
  const float Dt = 0.01f;
  std::vector<float4> Pos(N), Vel(N);
  for (int I = 0; I < N; ++I) {
    Pos[I] = make_float4(unit(20, 4 * I) * 2 - 1, unit(20, 4 * I + 1) * 2 - 1,
                         unit(20, 4 * I + 2) * 2 - 1, 0.5f + unit(20, 4 * I + 3));
    Vel[I] = make_float4(unit(21, 3 * I) - 0.5f, unit(21, 3 * I + 1) - 0.5f,
                         unit(21, 3 * I + 2) - 0.5f, 0);
  }
  float4 *DP, *DV, *DPN[2], *DVN[2];
  CUDA_CHECK(cudaMalloc(&DP, N * sizeof(float4)));
  CUDA_CHECK(cudaMalloc(&DV, N * sizeof(float4)));
  for (int K = 0; K < 2; ++K) {
    CUDA_CHECK(cudaMalloc(&DPN[K], N * sizeof(float4)));
    CUDA_CHECK(cudaMalloc(&DVN[K], N * sizeof(float4)));
  }
  CUDA_CHECK(cudaMemcpy(DP, Pos.data(), N * sizeof(float4),
                        cudaMemcpyHostToDevice));
  CUDA_CHECK(cudaMemcpy(DV, Vel.data(), N * sizeof(float4),
                        cudaMemcpyHostToDevice));
  cudaEvent_t E0, E1;
  CUDA_CHECK(cudaEventCreate(&E0));
  CUDA_CHECK(cudaEventCreate(&E1));

  constexpr int Lanes = 4, Bodies = 32, Tile = 512;
  struct Kernel {
    const char *Name;
    unsigned Blocks; // whole grid
    int Kind;
  } Kernels[] = {{"one-thread-per-body", unsigned(N / OneThreads), 0},
                 {"4-lanes-per-body", unsigned(N / Bodies), 1}};
  for (const Kernel &K : Kernels)
    for (int Quarter : {0, 1}) {
      unsigned Blocks = Quarter ? K.Blocks / 4 : K.Blocks;
      auto Launch = [&] {
        if (K.Kind == 0)
          nbodyOne<<<Blocks, OneThreads, OneThreads * sizeof(float4)>>>(
              DP, DV, DPN[0], DVN[0], N, Dt);
        else
          nbodyLanes<Lanes, Bodies, Tile><<<Blocks, dim3(Lanes, Bodies)>>>(
              DP, DV, DPN[1], DVN[1], N, Dt);
        CUDA_CHECK(cudaGetLastError());
      };
      Launch();
      CUDA_CHECK(cudaDeviceSynchronize());
      std::vector<float> Ms;
      for (int R = 0; R < Reps; ++R) {
        CUDA_CHECK(cudaEventRecord(E0));
        Launch();
        CUDA_CHECK(cudaEventRecord(E1));
        CUDA_CHECK(cudaEventSynchronize(E1));
        float T = 0;
        CUDA_CHECK(cudaEventElapsedTime(&T, E0, E1));
        Ms.push_back(T);
      }
      std::sort(Ms.begin(), Ms.end());
      std::printf("{\"bench\":\"probe_nbody\",\"kernel\":\"%s\",\"n\":%d,"
                  "\"grid\":\"%s\",\"blocks\":%u,\"median_ms\":%.4f,"
                  "\"min_ms\":%.4f,\"max_ms\":%.4f}\n",
                  K.Name, N, Quarter ? "quarter" : "whole", Blocks,
                  Ms[Ms.size() / 2], Ms.front(), Ms.back());
      std::fflush(stdout);
    }
  // The whole grids' velocities, one kernel against the other.
  std::vector<float4> V0(N), V1(N);
  CUDA_CHECK(cudaMemcpy(V0.data(), DVN[0], N * sizeof(float4),
                        cudaMemcpyDeviceToHost));
  CUDA_CHECK(cudaMemcpy(V1.data(), DVN[1], N * sizeof(float4),
                        cudaMemcpyDeviceToHost));
  double Worst = 0;
  for (int I = 0; I < N; ++I) {
    double A[3] = {V0[I].x - Vel[I].x, V0[I].y - Vel[I].y, V0[I].z - Vel[I].z};
    double B[3] = {V1[I].x - Vel[I].x, V1[I].y - Vel[I].y, V1[I].z - Vel[I].z};
    double Mag = std::sqrt(A[0] * A[0] + A[1] * A[1] + A[2] * A[2]) + 1e-12;
    for (int C = 0; C < 3; ++C)
      Worst = std::max(Worst, std::fabs(A[C] - B[C]) / Mag);
  }
  std::printf("{\"bench\":\"probe_nbody\",\"check\":\"4-lanes vs one-thread, "
              "velocity change\",\"max_rel_diff\":%.3g}\n",
              Worst);
  return 0;
}
