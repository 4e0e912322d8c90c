// All-pairs n-body: positions and masses in float4 (w is the mass),
// velocities in float4, each block staging tiles of bodies in shared memory
// (`__shared__ float4`), the interaction with rsqrtf and a softening term, the
// integration with __fdividef for a velocity damping, ping-pong position
// buffers over several steps. Checked against a double-precision CPU
// simulation with a relative tolerance.
//
// RUN: %build %s -o %t
// RUN: env CLEAVE_DEVICES=cpu %t | FileCheck %s
// RUN: env CLEAVE_DEVICES=cpu,cpu,cpu %t | FileCheck %s
// RUN: env CLEAVE_DEVICES=cpu,cpu,cpu CLEAVE_PARTITION=even %t | FileCheck %s
// RUN: %if nvcc %{ %nvcc %s -o %t.nvcc %}
// CHECK: time_ms:
// CHECK: PASS
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <vector>

#define CUDA_CHECK(call)                                                       \
  do {                                                                         \
    cudaError_t e = (call);                                                    \
    if (e != cudaSuccess) {                                                    \
      fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__,                       \
              cudaGetErrorString(e));                                          \
      exit(1);                                                                 \
    }                                                                          \
  } while (0)

#define BLOCK 128
#define SOFTENING 0.01f
#define DAMPING 0.05f

__device__ float3 bodyBodyInteraction(float4 bi, float4 bj, float3 ai) {
  float3 r;
  r.x = bj.x - bi.x;
  r.y = bj.y - bi.y;
  r.z = bj.z - bi.z;
  float distSqr = r.x * r.x + r.y * r.y + r.z * r.z + SOFTENING;
  float invDist = rsqrtf(distSqr);
  float invDist3 = invDist * invDist * invDist;
  float s = bj.w * invDist3;
  ai.x += r.x * s;
  ai.y += r.y * s;
  ai.z += r.z * s;
  return ai;
}

__global__ void computeForces(const float4 *pos, float4 *accel, int n) {
  __shared__ float4 shPos[BLOCK];
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  float4 myPos = i < n ? pos[i] : make_float4(0.f, 0.f, 0.f, 0.f);
  float3 acc = make_float3(0.f, 0.f, 0.f);
  for (int tile = 0; tile < (n + BLOCK - 1) / BLOCK; ++tile) {
    int j = tile * BLOCK + threadIdx.x;
    // Bodies past the end have no mass and pull nothing.
    shPos[threadIdx.x] = j < n ? pos[j] : make_float4(0.f, 0.f, 0.f, 0.f);
    __syncthreads();
    for (int k = 0; k < BLOCK; ++k)
      acc = bodyBodyInteraction(myPos, shPos[k], acc);
    __syncthreads();
  }
  if (i < n)
    accel[i] = make_float4(acc.x, acc.y, acc.z, 0.f);
}

__global__ void integrate(const float4 *oldPos, float4 *newPos, float4 *vel,
                          const float4 *accel, float dt, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n)
    return;
  float4 p = oldPos[i], v = vel[i], a = accel[i];
  float damp = __fdividef(1.0f, 1.0f + DAMPING * dt);
  v.x = (v.x + a.x * dt) * damp;
  v.y = (v.y + a.y * dt) * damp;
  v.z = (v.z + a.z * dt) * damp;
  p.x += v.x * dt;
  p.y += v.y * dt;
  p.z += v.z * dt;
  vel[i] = v;
  newPos[i] = p;
}

struct Body {
  double x, y, z, m, vx, vy, vz;
};

static void cpuSimulate(std::vector<Body> &b, int steps, double dt) {
  int n = (int)b.size();
  std::vector<double> ax(n), ay(n), az(n);
  for (int s = 0; s < steps; ++s) {
    for (int i = 0; i < n; ++i) {
      double sx = 0, sy = 0, sz = 0;
      for (int j = 0; j < n; ++j) {
        double rx = b[j].x - b[i].x, ry = b[j].y - b[i].y, rz = b[j].z - b[i].z;
        double d2 = rx * rx + ry * ry + rz * rz + SOFTENING;
        double inv = 1.0 / sqrt(d2);
        double f = b[j].m * inv * inv * inv;
        sx += rx * f;
        sy += ry * f;
        sz += rz * f;
      }
      ax[i] = sx;
      ay[i] = sy;
      az[i] = sz;
    }
    double damp = 1.0 / (1.0 + DAMPING * dt);
    for (int i = 0; i < n; ++i) {
      b[i].vx = (b[i].vx + ax[i] * dt) * damp;
      b[i].vy = (b[i].vy + ay[i] * dt) * damp;
      b[i].vz = (b[i].vz + az[i] * dt) * damp;
      b[i].x += b[i].vx * dt;
      b[i].y += b[i].vy * dt;
      b[i].z += b[i].vz * dt;
    }
  }
}

int main(int argc, char **argv) {
  int scale = argc > 1 ? atoi(argv[1]) : 1;
  int n = 600 * scale + 37;
  const int steps = 4;
  const float dt = 0.001f;
  std::vector<float4> hPos(n), hVel(n);
  std::vector<Body> ref(n);
  srand(31337);
  auto frand = [] { return rand() / (float)RAND_MAX * 2.0f - 1.0f; };
  for (int i = 0; i < n; ++i) {
    hPos[i] = make_float4(frand(), frand(), frand(), 0.5f + 0.5f * (frand() + 1.0f));
    hVel[i] = make_float4(0.1f * frand(), 0.1f * frand(), 0.1f * frand(), 0.f);
    ref[i] = {hPos[i].x, hPos[i].y, hPos[i].z, hPos[i].w,
              hVel[i].x, hVel[i].y, hVel[i].z};
  }

  float4 *dPos[2], *dVel, *dAcc;
  CUDA_CHECK(cudaMalloc(&dPos[0], n * sizeof(float4)));
  CUDA_CHECK(cudaMalloc(&dPos[1], n * sizeof(float4)));
  CUDA_CHECK(cudaMalloc(&dVel, n * sizeof(float4)));
  CUDA_CHECK(cudaMalloc(&dAcc, n * sizeof(float4)));
  CUDA_CHECK(cudaMemcpy(dPos[0], hPos.data(), n * sizeof(float4),
                        cudaMemcpyHostToDevice));
  CUDA_CHECK(cudaMemcpy(dVel, hVel.data(), n * sizeof(float4),
                        cudaMemcpyHostToDevice));

  int blocks = (n + BLOCK - 1) / BLOCK;
  cudaEvent_t start, stop;
  cudaEventCreate(&start);
  cudaEventCreate(&stop);
  cudaEventRecord(start);
  int cur = 0;
  for (int s = 0; s < steps; ++s) {
    computeForces<<<blocks, BLOCK>>>(dPos[cur], dAcc, n);
    integrate<<<blocks, BLOCK>>>(dPos[cur], dPos[1 - cur], dVel, dAcc, dt, n);
    cur = 1 - cur;
  }
  cudaEventRecord(stop);
  CUDA_CHECK(cudaEventSynchronize(stop));
  CUDA_CHECK(cudaGetLastError());
  float ms = 0;
  cudaEventElapsedTime(&ms, start, stop);
  printf("time_ms: %.3f\n", ms);
  CUDA_CHECK(cudaMemcpy(hPos.data(), dPos[cur], n * sizeof(float4),
                        cudaMemcpyDeviceToHost));
  CUDA_CHECK(cudaMemcpy(hVel.data(), dVel, n * sizeof(float4),
                        cudaMemcpyDeviceToHost));

  cpuSimulate(ref, steps, dt);
  for (int i = 0; i < n; ++i) {
    double got[6] = {hPos[i].x, hPos[i].y, hPos[i].z,
                     hVel[i].x, hVel[i].y, hVel[i].z};
    double want[6] = {ref[i].x, ref[i].y, ref[i].z,
                      ref[i].vx, ref[i].vy, ref[i].vz};
    for (int c = 0; c < 6; ++c)
      if (fabs(got[c] - want[c]) > 1e-4 * (1.0 + fabs(want[c]))) {
        printf("FAIL: body %d component %d = %.7f, expected %.7f\n", i, c,
               got[c], want[c]);
        return 1;
      }
  }
  cudaFree(dPos[0]);
  cudaFree(dPos[1]);
  cudaFree(dVel);
  cudaFree(dAcc);
  printf("PASS\n");
  return 0;
}
