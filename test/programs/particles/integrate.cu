// The particle program's integrator: a kernel and the host function that
// launches it, in their own translation unit.
#include "particles.h"

__host__ __device__ inline void stepOne(float &x, float &y, float &vx,
                                        float &vy, const Params &p) {
  vy -= p.gravity * p.dt;
  x += vx * p.dt;
  y += vy * p.dt;
  // Bounce off the walls of the box, losing some energy.
  if (x < 0.0f) {
    x = -x;
    vx = -vx * p.damping;
  } else if (x > p.width) {
    x = 2.0f * p.width - x;
    vx = -vx * p.damping;
  }
  if (y < 0.0f) {
    y = -y;
    vy = -vy * p.damping;
  } else if (y > p.height) {
    y = 2.0f * p.height - y;
    vy = -vy * p.damping;
  }
}

__global__ void integrate(Particles p, Params params) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < p.n)
    stepOne(p.x[i], p.y[i], p.vx[i], p.vy[i], params);
}

void integrateStep(const Particles &p, const Params &params,
                   cudaStream_t stream) {
  integrate<<<(p.n + 127) / 128, 128, 0, stream>>>(p, params);
}

void integrateStepHost(float *x, float *y, float *vx, float *vy, int n,
                       const Params &params) {
  for (int i = 0; i < n; ++i)
    stepOne(x[i], y[i], vx[i], vy[i], params);
}
