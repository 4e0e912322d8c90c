// grid_stride: a grid-stride loop reads gridDim; a*x+y is contracted.
// RUN: %cuda_to_ir %s -o %t.ll
// RUN: %cpu_compile %t.ll -o %t.o
// RUN: %cpu_cxx %s -o %t.drv.o
// RUN: %cpu_ld %t.exe %t.drv.o %t.o %cpu_rt
// RUN: %t.exe
#ifndef CLEAVE_HOST_DRIVER
#include "../Inputs/grid_stride.cu"
#else
#include "harness.h"
CLEAVE_CPU_KERNEL(_Z5saxpyfPKfPfi);

int main() {
  int N = 50021;
  float A = 1.7f;
  std::vector<float> X(N), Y0(N), Y(N), Want(N);
  harness::fill(X, -5, 5);
  harness::fill(Y0, -5, 5);
  for (int I = 0; I < N; ++I) Want[I] = std::fma(A, X[I], Y0[I]);
  const float *PX = X.data();
  float *PY = Y.data();
  void *Args[] = {&A, &PX, &PY, &N};
  auto L = harness::launch3(37, 1, 1, 96, 1, 1);
  return harness::runPlans(
      "grid_stride", __cleave_cpu__Z5saxpyfPKfPfi_desc, Args, L,
      [&] { Y = Y0; }, [&] { return harness::equal("y", Y, Want); });
}
#endif
