// vecadd: a size that is not a multiple of the block.
// RUN: %cuda_to_ir %s -o %t.ll
// RUN: %cpu_compile %t.ll -o %t.o
// RUN: %cpu_cxx %s -o %t.drv.o
// RUN: %cpu_ld %t.exe %t.drv.o %t.o %cpu_rt
// RUN: %t.exe
#ifndef CLEAVE_HOST_DRIVER
#include "../Inputs/vecadd.cu"
#else
#include "harness.h"
CLEAVE_CPU_KERNEL(_Z6vecaddPKfS0_Pfi);

int main() {
  int N = 100003;
  std::vector<float> A(N), B(N), C(N), Want(N);
  harness::fill(A, -10, 10);
  harness::fill(B, -10, 10);
  for (int I = 0; I < N; ++I)
    Want[I] = A[I] + B[I];
  float *PA = A.data(), *PB = B.data(), *PC = C.data();
  void *Args[] = {&PA, &PB, &PC, &N};
  unsigned Block = 128;
  auto L = harness::launch3((N + Block - 1) / Block, 1, 1, Block, 1, 1);
  return harness::runPlans(
      "vecadd", __cleave_cpu__Z6vecaddPKfS0_Pfi_desc, Args, L,
      [&] { std::fill(C.begin(), C.end(), -1.0f); },
      [&] { return harness::equal("c", C, Want); });
}
#endif
