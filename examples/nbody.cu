// nbody: all-pairs gravitational n-body simulation, a few time steps. One
// thread per body; the block stages the positions in shared-memory tiles of
// blockDim.x bodies (dynamic shared memory, opted into with
// cudaFuncSetAttribute) and every thread sums the pull of the tile's bodies.
// Positions ping-pong between two buffers; velocities are updated in place.
// Softened gravity (G = 1), semi-implicit Euler:
//   a_i = sum_j m_j (p_j - p_i) / (|p_j - p_i|^2 + eps^2)^(3/2)
//   v_i += a_i dt;  p_i += v_i dt.
//
// Usage: nbody [n [steps [block]]]
//   default 1500 bodies, 4 steps, 128 threads per block (CI); GPU benchmark:
//   nbody 16384 4 256 (the double-precision reference is O(n^2 steps) on one
//   core: a few seconds there).
// Check: against a double-precision simulation from the same initial state.
// Per component, after S steps:
//   positions:  |got - want| <= S * 2^-20 * (1 + |want|)
//   velocities: |got - want| <= S * 2^-20 * (V + |want|), V the largest
//               initial speed (0.17 here).
// Each step rounds p + v dt (half an ulp of p: 2^-24 (1 + |p|)) and v + a dt;
// a is off by a few ulp of sum_j |term| (float sums; rsqrtf is rsqrt.approx
// on the GPU, 2 ulp), and the softening bounds a term by m_j * 0.385 / eps^2
// = 38.5 m_j with masses summing to 1: |error of a| <= about 16 * 2^-24 *
// 38.5 = 3.7e-5, times dt = 3.7e-8 per step, below 2^-20 * V = 1.6e-7. A few
// steps leave no time for close encounters to amplify errors. Measured on an
// H100 (nvcc -O3): positions 1.2e-7 and velocities 1.3e-8 at most after 4
// steps, 1/30 and 1/50 of the tolerance; leaving out the last partial tile of
// bodies (a wrong answer) moves a velocity by 7.3e-5, 90 times the tolerance.
#include <algorithm>
#include <climits>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>
#include <random>
#include <vector>

#define CUDA_CHECK(call)                                                       \
  do {                                                                         \
    cudaError_t err_ = (call);                                                 \
    if (err_ != cudaSuccess) {                                                 \
      std::fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call,       \
                   cudaGetErrorString(err_));                                  \
      std::exit(1);                                                            \
    }                                                                          \
  } while (0)

constexpr float SOFTENING2 = 0.01f; // eps^2
constexpr float DT = 0.001f;

// pos and posNext hold (x, y, z, mass); vel holds (vx, vy, vz, 0). Launched
// with blockDim.x * sizeof(float4) bytes of dynamic shared memory.
__global__ void nbodyStep(const float4 *pos, float4 *posNext, float4 *vel,
                          int n) {
  extern __shared__ float4 tile[];
  int tileSize = blockDim.x;
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  float4 p = i < n ? pos[i] : make_float4(0.0f, 0.0f, 0.0f, 0.0f);
  float ax = 0.0f, ay = 0.0f, az = 0.0f;
  for (int base = 0; base < n; base += tileSize) {
    int j = base + threadIdx.x;
    // Past the last body: mass 0, no pull.
    tile[threadIdx.x] = j < n ? pos[j] : make_float4(0.0f, 0.0f, 0.0f, 0.0f);
    __syncthreads();
    for (int k = 0; k < tileSize; ++k) {
      float4 q = tile[k];
      float dx = q.x - p.x, dy = q.y - p.y, dz = q.z - p.z;
      float d2 = dx * dx + dy * dy + dz * dz + SOFTENING2;
      float inv = rsqrtf(d2);
      float s = q.w * inv * inv * inv;
      ax += dx * s;
      ay += dy * s;
      az += dz * s;
    }
    __syncthreads();
  }
  if (i < n) {
    float4 v = vel[i];
    v.x += ax * DT;
    v.y += ay * DT;
    v.z += az * DT;
    vel[i] = v;
    posNext[i] =
        make_float4(p.x + v.x * DT, p.y + v.y * DT, p.z + v.z * DT, p.w);
  }
}

// argv[i] as a positive int, or def when it is absent.
static int argOr(int argc, char **argv, int i, int def) {
  if (i >= argc)
    return def;
  char *end;
  long v = std::strtol(argv[i], &end, 10);
  if (*argv[i] == '\0' || *end != '\0' || v <= 0 || v > INT_MAX) {
    std::fprintf(stderr,
                 "usage: %s [n [steps [block]]]\n%s: bad argument '%s'\n",
                 argv[0], argv[0], argv[i]);
    std::exit(1);
  }
  return int(v);
}

struct Body {
  double p[3], v[3], m;
};

// The reference: the same steps in double.
static void simulate(std::vector<Body> &bodies, int steps) {
  size_t n = bodies.size();
  std::vector<double> acc(3 * n);
  for (int s = 0; s < steps; ++s) {
    for (size_t i = 0; i < n; ++i) {
      double a[3] = {0, 0, 0};
      for (size_t j = 0; j < n; ++j) {
        double d[3];
        for (int c = 0; c < 3; ++c)
          d[c] = bodies[j].p[c] - bodies[i].p[c];
        double d2 =
            d[0] * d[0] + d[1] * d[1] + d[2] * d[2] + double(SOFTENING2);
        double f = bodies[j].m / (d2 * std::sqrt(d2));
        for (int c = 0; c < 3; ++c)
          a[c] += d[c] * f;
      }
      for (int c = 0; c < 3; ++c)
        acc[3 * i + c] = a[c];
    }
    for (size_t i = 0; i < n; ++i)
      for (int c = 0; c < 3; ++c) {
        bodies[i].v[c] += acc[3 * i + c] * double(DT);
        bodies[i].p[c] += bodies[i].v[c] * double(DT);
      }
  }
}

int main(int argc, char **argv) {
  int n = argOr(argc, argv, 1, 1500);
  int steps = argOr(argc, argv, 2, 4);
  int block = argOr(argc, argv, 3, 128);
  cudaDeviceProp prop;
  CUDA_CHECK(cudaGetDeviceProperties(&prop, 0));
  size_t shared = size_t(block) * sizeof(float4);
  if (block > prop.maxThreadsPerBlock || shared > prop.sharedMemPerBlockOptin) {
    std::fprintf(stderr,
                 "%s: %s runs at most %d threads and %zu bytes of "
                 "shared memory per block\n",
                 argv[0], prop.name, prop.maxThreadsPerBlock,
                 size_t(prop.sharedMemPerBlockOptin));
    return 1;
  }
  // A cloud in the unit cube, masses summing to 1, small random velocities.
  std::vector<float4> pos(n), vel(n);
  std::mt19937 gen(1);
  auto uniform = [&gen](float lo, float hi) {
    return lo + (hi - lo) * (float(gen() >> 8) * (1.0f / 16777216.0f));
  };
  float maxSpeed = 0.0f;
  for (int i = 0; i < n; ++i) {
    pos[i] = make_float4(uniform(-1, 1), uniform(-1, 1), uniform(-1, 1),
                         uniform(0.5f, 1.5f) / float(n));
    vel[i] = make_float4(uniform(-0.1f, 0.1f), uniform(-0.1f, 0.1f),
                         uniform(-0.1f, 0.1f), 0.0f);
    maxSpeed =
        std::max(maxSpeed, std::sqrt(vel[i].x * vel[i].x + vel[i].y * vel[i].y +
                                     vel[i].z * vel[i].z));
  }

  size_t bytes = size_t(n) * sizeof(float4);
  float4 *dPos[2], *dVel;
  CUDA_CHECK(cudaMalloc(&dPos[0], bytes));
  CUDA_CHECK(cudaMalloc(&dPos[1], bytes));
  CUDA_CHECK(cudaMalloc(&dVel, bytes));
  CUDA_CHECK(cudaMemcpy(dPos[0], pos.data(), bytes, cudaMemcpyHostToDevice));
  CUDA_CHECK(cudaMemcpy(dVel, vel.data(), bytes, cudaMemcpyHostToDevice));
  // Past 48 KiB per block, dynamic shared memory must be opted into.
  CUDA_CHECK(cudaFuncSetAttribute(
      nbodyStep, cudaFuncAttributeMaxDynamicSharedMemorySize, int(shared)));

  cudaEvent_t start, stop;
  CUDA_CHECK(cudaEventCreate(&start));
  CUDA_CHECK(cudaEventCreate(&stop));
  int blocks = (n + block - 1) / block;
  CUDA_CHECK(cudaEventRecord(start));
  for (int s = 0; s < steps; ++s)
    nbodyStep<<<blocks, block, shared>>>(dPos[s % 2], dPos[(s + 1) % 2], dVel,
                                         n);
  CUDA_CHECK(cudaGetLastError());
  CUDA_CHECK(cudaEventRecord(stop));
  CUDA_CHECK(cudaEventSynchronize(stop));
  float ms = 0;
  CUDA_CHECK(cudaEventElapsedTime(&ms, start, stop));
  std::vector<float4> gotPos(n), gotVel(n);
  CUDA_CHECK(cudaMemcpy(gotPos.data(), dPos[steps % 2], bytes,
                        cudaMemcpyDeviceToHost));
  CUDA_CHECK(cudaMemcpy(gotVel.data(), dVel, bytes, cudaMemcpyDeviceToHost));
  CUDA_CHECK(cudaEventDestroy(start));
  CUDA_CHECK(cudaEventDestroy(stop));
  CUDA_CHECK(cudaFree(dPos[0]));
  CUDA_CHECK(cudaFree(dPos[1]));
  CUDA_CHECK(cudaFree(dVel));

  std::vector<Body> ref(n);
  for (int i = 0; i < n; ++i)
    ref[i] = {{pos[i].x, pos[i].y, pos[i].z},
              {vel[i].x, vel[i].y, vel[i].z},
              pos[i].w};
  simulate(ref, steps);
  for (int i = 0; i < n; ++i) {
    const float got[6] = {gotPos[i].x, gotPos[i].y, gotPos[i].z,
                          gotVel[i].x, gotVel[i].y, gotVel[i].z};
    for (int c = 0; c < 6; ++c) {
      double want = c < 3 ? ref[i].p[c] : ref[i].v[c - 3];
      double scale = c < 3 ? 1.0 : double(maxSpeed);
      double tolerance =
          steps * std::ldexp(1.0, -20) * (scale + std::fabs(want));
      if (!(std::fabs(got[c] - want) <= tolerance)) {
        std::printf("nbody: FAIL at body %d %s.%c: got %.9g, expected %.9g "
                    "within %.3g (n=%d, %d steps)\n",
                    i, c < 3 ? "position" : "velocity", "xyz"[c % 3], got[c],
                    want, tolerance, n, steps);
        return 1;
      }
    }
  }
  std::printf("nbody: PASS (%.3f ms, n=%d, %d steps)\n", ms, n, steps);
  return 0;
}
