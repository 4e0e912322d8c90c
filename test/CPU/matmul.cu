// matmul: 2-D grid of 2-D blocks, sizes not multiples of the block; the
// a*b+acc of the loop is contracted to fma, as nvcc does.
// RUN: %cuda_to_ir %s -o %t.ll
// RUN: %cpu_compile %t.ll -o %t.o
// RUN: %cpu_cxx %s -o %t.drv.o
// RUN: %cpu_ld %t.exe %t.drv.o %t.o %cpu_rt
// RUN: %t.exe
#ifndef CLEAVE_HOST_DRIVER
#include "../Inputs/matmul.cu"
#else
#include "harness.h"
CLEAVE_CPU_KERNEL(_Z6matmulPKfS0_Pfiii);

int main() {
  int M = 77, N = 53, K = 41;
  std::vector<float> A(M * K), B(K * N), C(M * N), Want(M * N);
  harness::fill(A, -1, 1);
  harness::fill(B, -1, 1);
  for (int R = 0; R < M; ++R)
    for (int Cc = 0; Cc < N; ++Cc) {
      float Acc = 0;
      for (int I = 0; I < K; ++I)
        Acc = std::fma(A[R * K + I], B[I * N + Cc], Acc);
      Want[R * N + Cc] = Acc;
    }
  const float *PA = A.data(), *PB = B.data();
  float *PC = C.data();
  void *Args[] = {&PA, &PB, &PC, &M, &N, &K};
  int Fails = 0;
  for (auto [BX, BY] : {std::pair{16u, 16u}, {8u, 4u}, {32u, 3u}}) {
    auto L = harness::launch3((N + BX - 1) / BX, (M + BY - 1) / BY, 1, BX, BY, 1);
    Fails += harness::runPlans(
        "matmul", __cleave_cpu__Z6matmulPKfS0_Pfiii_desc, Args, L,
        [&] { std::fill(C.begin(), C.end(), -1.0f); },
        [&] { return harness::equal("C", C, Want); });
  }
  return Fails;
}
#endif
