// extern __shared__ memory sized at launch, next to a static array, with
// 2-D blocks and a barrier inside a loop whose trip count is a kernel
// argument (block-uniform).
// RUN: %cuda_to_ir %s -o %t.ll
// RUN: %cpu_compile %t.ll -o %t.o
// RUN: %cpu_cxx %s -o %t.drv.o
// RUN: %cpu_ld %t.exe %t.drv.o %t.o %cpu_rt
// RUN: %t.exe
#ifndef CLEAVE_HOST_DRIVER
extern "C" __global__ void rotate_sum(const float *in, float *out, int rounds) {
  extern __shared__ float buf[];
  __shared__ int counter[4];
  int n = blockDim.x * blockDim.y;
  int t = threadIdx.y * blockDim.x + threadIdx.x;
  int g = blockIdx.x * n + t;
  buf[t] = in[g];
  if (t < 4) counter[t] = t;
  __syncthreads();
  float acc = 0;
  for (int r = 0; r < rounds; ++r) {
    float mine = buf[(t + r) % n];
    __syncthreads();
    buf[t] = mine + 1.0f;
    acc += mine;
    __syncthreads();
  }
  out[g] = acc + counter[t % 4];
}
#else
#include "harness.h"
CLEAVE_CPU_KERNEL(rotate_sum);

int main() {
  int Rounds = 7, Fails = 0;
  for (auto [BX, BY] : {std::pair{8u, 6u}, {33u, 1u}}) {
    unsigned N = BX * BY, Grid = 9;
    std::vector<float> In(Grid * N), Out(Grid * N), Want(Grid * N);
    harness::fillInt(In, -50, 50); // small integers: sums are exact
    for (unsigned B = 0; B < Grid; ++B) {
      std::vector<float> Buf(In.begin() + B * N, In.begin() + (B + 1) * N), Acc(N, 0);
      for (int R = 0; R < Rounds; ++R) {
        std::vector<float> Mine(N);
        for (unsigned T = 0; T < N; ++T) Mine[T] = Buf[(T + R) % N];
        for (unsigned T = 0; T < N; ++T) { Buf[T] = Mine[T] + 1; Acc[T] += Mine[T]; }
      }
      for (unsigned T = 0; T < N; ++T) Want[B * N + T] = Acc[T] + float(T % 4);
    }
    const float *PI = In.data();
    float *PO = Out.data();
    void *Args[] = {&PI, &PO, &Rounds};
    auto L = harness::launch3(Grid, 1, 1, BX, BY, 1, N * sizeof(float));
    Fails += harness::runPlans(
        "dynamic_shared", __cleave_cpu_rotate_sum_desc, Args, L,
        [&] { std::fill(Out.begin(), Out.end(), -1.0f); },
        [&] { return harness::equal("out", Out, Want); });
  }
  return Fails;
}
#endif
