// transpose: shared-memory tile and a barrier, 2-D blocks of 32x32 threads,
// a matrix whose sides are not multiples of the tile.
// RUN: %cuda_to_ir %s -o %t.ll
// RUN: %cpu_compile %t.ll -o %t.o
// RUN: %cpu_cxx %s -o %t.drv.o
// RUN: %cpu_ld %t.exe %t.drv.o %t.o %cpu_rt
// RUN: %t.exe
#ifndef CLEAVE_HOST_DRIVER
#include "../Inputs/transpose.cu"
#else
#include "harness.h"
CLEAVE_CPU_KERNEL(_Z9transposePfPKfii);

int main() {
  int W = 101, H = 70;
  std::vector<float> In(W * H), Out(W * H), Want(W * H);
  harness::fill(In, -100, 100);
  for (int Y = 0; Y < H; ++Y)
    for (int X = 0; X < W; ++X)
      Want[X * H + Y] = In[Y * W + X];
  float *PO = Out.data();
  const float *PI = In.data();
  void *Args[] = {&PO, &PI, &W, &H};
  auto L = harness::launch3((W + 31) / 32, (H + 31) / 32, 1, 32, 32, 1);
  return harness::runPlans(
      "transpose", __cleave_cpu__Z9transposePfPKfii_desc, Args, L,
      [&] { std::fill(Out.begin(), Out.end(), -1.0f); },
      [&] { return harness::equal("out", Out, Want); });
}
#endif
