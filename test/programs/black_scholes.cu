// European option pricing (Black-Scholes): call and put prices from
// expf/logf/sqrtf and two forms of the normal CDF, the polynomial
// approximation (Abramowitz-Stegun 26.2.17) in a __device__ __forceinline__
// function and erfcf, over a grid-stride loop run several times. Checked
// against a double-precision CPU pricer with a tolerance, and the two CDFs
// against each other; put-call parity is checked too.
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
    cudaError_t err = call;                                                    \
    if (err != cudaSuccess) {                                                  \
      fprintf(stderr, "CUDA error at %s:%d: %s\n", __FILE__, __LINE__,        \
              cudaGetErrorString(err));                                        \
      exit(EXIT_FAILURE);                                                      \
    }                                                                          \
  } while (0)

// Polynomial approximation of the cumulative normal distribution.
__device__ __forceinline__ float cndPoly(float d) {
  const float A1 = 0.31938153f, A2 = -0.356563782f, A3 = 1.781477937f,
              A4 = -1.821255978f, A5 = 1.330274429f;
  const float RSQRT2PI = 0.39894228040143267794f;
  float K = 1.0f / (1.0f + 0.2316419f * fabsf(d));
  float cnd = RSQRT2PI * expf(-0.5f * d * d) *
              (K * (A1 + K * (A2 + K * (A3 + K * (A4 + K * A5)))));
  if (d > 0)
    cnd = 1.0f - cnd;
  return cnd;
}

__device__ __forceinline__ float cndErfc(float d) {
  return 0.5f * erfcf(-d * 0.70710678118654752f);
}

__global__ void blackScholes(float *__restrict__ call, float *__restrict__ put,
                             float *__restrict__ callErfc,
                             const float *__restrict__ spot,
                             const float *__restrict__ strike,
                             const float *__restrict__ years, float riskFree,
                             float volatility, int n) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n;
       i += blockDim.x * gridDim.x) {
    float S = spot[i], X = strike[i], T = years[i];
    float sqrtT = sqrtf(T);
    float d1 = (logf(S / X) + (riskFree + 0.5f * volatility * volatility) * T) /
               (volatility * sqrtT);
    float d2 = d1 - volatility * sqrtT;
    float expRT = expf(-riskFree * T);
    float cndD1 = cndPoly(d1), cndD2 = cndPoly(d2);
    call[i] = S * cndD1 - X * expRT * cndD2;
    put[i] = X * expRT * (1.0f - cndD2) - S * (1.0f - cndD1);
    callErfc[i] = S * cndErfc(d1) - X * expRT * cndErfc(d2);
  }
}

static double cndRef(double d) { return 0.5 * erfc(-d / sqrt(2.0)); }

int main(int argc, char **argv) {
  int scale = argc > 1 ? atoi(argv[1]) : 1;
  const int n = 200000 * scale;
  const int iterations = 4;
  const float R = 0.02f, V = 0.30f;
  std::vector<float> S(n), X(n), T(n), call(n), put(n), callE(n);
  srand(5347);
  auto uniform = [](float lo, float hi) {
    return lo + (hi - lo) * (rand() / (float)RAND_MAX);
  };
  for (int i = 0; i < n; ++i) {
    S[i] = uniform(5.0f, 30.0f);
    X[i] = uniform(1.0f, 100.0f);
    T[i] = uniform(0.25f, 10.0f);
  }
  float *dS, *dX, *dT, *dCall, *dPut, *dCallE;
  size_t bytes = n * sizeof(float);
  CUDA_CHECK(cudaMalloc(&dS, bytes));
  CUDA_CHECK(cudaMalloc(&dX, bytes));
  CUDA_CHECK(cudaMalloc(&dT, bytes));
  CUDA_CHECK(cudaMalloc(&dCall, bytes));
  CUDA_CHECK(cudaMalloc(&dPut, bytes));
  CUDA_CHECK(cudaMalloc(&dCallE, bytes));
  CUDA_CHECK(cudaMemcpy(dS, S.data(), bytes, cudaMemcpyHostToDevice));
  CUDA_CHECK(cudaMemcpy(dX, X.data(), bytes, cudaMemcpyHostToDevice));
  CUDA_CHECK(cudaMemcpy(dT, T.data(), bytes, cudaMemcpyHostToDevice));

  cudaEvent_t start, stop;
  CUDA_CHECK(cudaEventCreate(&start));
  CUDA_CHECK(cudaEventCreate(&stop));
  CUDA_CHECK(cudaDeviceSynchronize());
  CUDA_CHECK(cudaEventRecord(start));
  for (int it = 0; it < iterations; ++it)
    blackScholes<<<480, 128>>>(dCall, dPut, dCallE, dS, dX, dT, R, V, n);
  CUDA_CHECK(cudaGetLastError());
  CUDA_CHECK(cudaEventRecord(stop));
  CUDA_CHECK(cudaEventSynchronize(stop));
  float ms;
  CUDA_CHECK(cudaEventElapsedTime(&ms, start, stop));
  printf("time_ms: %.3f\n", ms / iterations);
  CUDA_CHECK(cudaMemcpy(call.data(), dCall, bytes, cudaMemcpyDeviceToHost));
  CUDA_CHECK(cudaMemcpy(put.data(), dPut, bytes, cudaMemcpyDeviceToHost));
  CUDA_CHECK(cudaMemcpy(callE.data(), dCallE, bytes, cudaMemcpyDeviceToHost));

  double maxErrPoly = 0, maxErrErfc = 0, maxParity = 0;
  for (int i = 0; i < n; ++i) {
    double s = S[i], x = X[i], t = T[i];
    double d1 = (log(s / x) + (R + 0.5 * V * V) * t) / (V * sqrt(t));
    double d2 = d1 - V * sqrt(t);
    double disc = exp(-R * t);
    double refCall = s * cndRef(d1) - x * disc * cndRef(d2);
    double refPut = x * disc * cndRef(-d2) - s * cndRef(-d1);
    maxErrPoly = fmax(maxErrPoly, fabs(call[i] - refCall));
    maxErrPoly = fmax(maxErrPoly, fabs(put[i] - refPut));
    maxErrErfc = fmax(maxErrErfc, fabs(callE[i] - refCall));
    // C - P = S - X e^{-rT}
    maxParity = fmax(maxParity, fabs((call[i] - put[i]) - (s - x * disc)));
  }
  // The polynomial CDF is accurate to 7.5e-8; prices reach 100, so float
  // rounding dominates both errors.
  if (maxErrPoly > 2e-3 || maxErrErfc > 2e-3 || maxParity > 2e-3) {
    printf("FAIL: max error %g (polynomial CDF), %g (erfcf), parity %g\n",
           maxErrPoly, maxErrErfc, maxParity);
    return 1;
  }
  cudaFree(dS);
  cudaFree(dX);
  cudaFree(dT);
  cudaFree(dCall);
  cudaFree(dPut);
  cudaFree(dCallE);
  printf("PASS\n");
  return 0;
}
