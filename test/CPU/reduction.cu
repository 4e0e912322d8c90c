// reduction: barriers inside a loop with a block-uniform trip count, then
// __shfl_down_sync under the block-divergent tid < 32 (guarded scheduling).
// The reference replays the same tree, so the sums are bit-identical.
// RUN: %cuda_to_ir %s -o %t.ll
// RUN: %cpu_compile %t.ll -o %t.o
// RUN: %cpu_cxx %s -o %t.drv.o
// RUN: %cpu_ld %t.exe %t.drv.o %t.o %cpu_rt
// RUN: %t.exe
#ifndef CLEAVE_HOST_DRIVER
#include "../Inputs/reduction.cu"
#else
#include "harness.h"
CLEAVE_CPU_KERNEL(_Z10reduce_sumPKfPfi);

int main() {
  int N = 70001;
  const unsigned T = 256;
  unsigned Blocks = (N + 2 * T - 1) / (2 * T);
  std::vector<float> In(N), Partial(Blocks), Want(Blocks);
  harness::fill(In, -1, 1);
  for (unsigned B = 0; B < Blocks; ++B) {
    float V[T], S[T];
    for (unsigned t = 0; t < T; ++t) {
      unsigned I = B * T * 2 + t;
      float v = 0;
      if (I < unsigned(N)) v = In[I];
      if (I + T < unsigned(N)) v += In[I + T];
      V[t] = S[t] = v;
    }
    for (unsigned s = T / 2; s > 32; s >>= 1)
      for (unsigned t = 0; t < s; ++t)
        S[t] = V[t] = V[t] + S[t + s];
    float W[32];
    for (unsigned t = 0; t < 32; ++t) W[t] = S[t] + S[t + 32];
    for (int Off = 16; Off > 0; Off /= 2) {
      float Next[32];
      for (int t = 0; t < 32; ++t) Next[t] = W[t] + (t + Off < 32 ? W[t + Off] : W[t]);
      std::memcpy(W, Next, sizeof W);
    }
    Want[B] = W[0];
  }
  const float *PI = In.data();
  float *PP = Partial.data();
  void *Args[] = {&PI, &PP, &N};
  auto L = harness::launch3(Blocks, 1, 1, T, 1, 1);
  return harness::runPlans(
      "reduction", __cleave_cpu__Z10reduce_sumPKfPfi_desc, Args, L,
      [&] { std::fill(Partial.begin(), Partial.end(), -1.0f); },
      [&] { return harness::equal("partial", Partial, Want); });
}
#endif
