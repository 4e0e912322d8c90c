// blackscholes: libdevice expf/logf/sqrtf inline to ex2.approx, lg2.approx,
// sqrt.approx and fma.rm. Those are approximate on the GPU (2 ulp), so the
// comparison with a libm reference allows a small relative error, and an
// absolute one where the formula cancels.
// RUN: %cuda_to_ir %s -o %t.ll
// RUN: %cpu_compile %t.ll -o %t.o
// RUN: %cpu_cxx %s -o %t.drv.o
// RUN: %cpu_ld %t.exe %t.drv.o %t.o %cpu_rt
// RUN: %t.exe
#ifndef CLEAVE_HOST_DRIVER
#include "../Inputs/blackscholes.cu"
#else
#include "harness.h"
CLEAVE_CPU_KERNEL(_Z12blackscholesPfS_PKfS1_S1_ffi);

static float cnd(float d) {
  const float A1 = 0.31938153f, A2 = -0.356563782f, A3 = 1.781477937f,
              A4 = -1.821255978f, A5 = 1.330274429f,
              RSQRT2PI = 0.39894228040143267794f;
  float K = 1.0f / (1.0f + 0.2316419f * std::fabs(d));
  float c = RSQRT2PI * std::exp(-0.5f * d * d) *
            (K * (A1 + K * (A2 + K * (A3 + K * (A4 + K * A5)))));
  return d > 0 ? 1.0f - c : c;
}

int main() {
  int N = 10007;
  float R = 0.02f, V = 0.30f;
  std::vector<float> S(N), X(N), T(N), Call(N), Put(N), WC(N), WP(N);
  harness::fill(S, 5, 30);
  harness::fill(X, 1, 100);
  harness::fill(T, 0.25f, 10);
  for (int I = 0; I < N; ++I) {
    float sqrtT = std::sqrt(T[I]);
    float d1 = (std::log(S[I] / X[I]) + (R + 0.5f * V * V) * T[I]) / (V * sqrtT);
    float d2 = d1 - V * sqrtT;
    float expRT = std::exp(-R * T[I]);
    WC[I] = S[I] * cnd(d1) - X[I] * expRT * cnd(d2);
    WP[I] = X[I] * expRT * (1.0f - cnd(d2)) - S[I] * (1.0f - cnd(d1));
  }
  float *PC = Call.data(), *PP = Put.data();
  const float *PS = S.data(), *PX = X.data(), *PT = T.data();
  void *Args[] = {&PC, &PP, &PS, &PX, &PT, &R, &V, &N};
  auto L = harness::launch3((N + 127) / 128, 1, 1, 128, 1, 1);
  return harness::runPlans(
      "blackscholes", __cleave_cpu__Z12blackscholesPfS_PKfS1_S1_ffi_desc, Args,
      L, [&] { std::fill(Call.begin(), Call.end(), -1.0f); std::fill(Put.begin(), Put.end(), -1.0f); },
      [&] {
        return harness::near("call", Call, WC, 64, 2e-4f) &&
               harness::near("put", Put, WP, 64, 2e-4f);
      });
}
#endif
