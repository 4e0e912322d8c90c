// Shared between the two .cu files of the particle program and its host code.
#pragma once
#include <cuda_runtime.h>

struct Particles {
  float *x, *y, *vx, *vy;
  int n;
};

struct Params {
  float dt, gravity, damping, width, height;
};

// Defined in integrate.cu: one time step, launched there.
void integrateStep(const Particles &p, const Params &params,
                   cudaStream_t stream);

// The same step on the CPU (integrate.cu), for the reference.
void integrateStepHost(float *x, float *y, float *vx, float *vy, int n,
                       const Params &params);
