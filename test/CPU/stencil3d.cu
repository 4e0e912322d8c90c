// stencil3d: 3-D grid of 3-D blocks, early return at the faces.
// RUN: %cuda_to_ir %s -o %t.ll
// RUN: %cpu_compile %t.ll -o %t.o
// RUN: %cpu_cxx %s -o %t.drv.o
// RUN: %cpu_ld %t.exe %t.drv.o %t.o %cpu_rt
// RUN: %t.exe
#ifndef CLEAVE_HOST_DRIVER
#include "../Inputs/stencil3d.cu"
#else
#include "harness.h"
CLEAVE_CPU_KERNEL(_Z9stencil3dPKfPfiii);

int main() {
  int NX = 37, NY = 23, NZ = 19;
  size_t Cells = size_t(NX) * NY * NZ;
  std::vector<float> In(Cells), Out(Cells), Want(Cells, -1.0f);
  harness::fill(In, 0, 1);
  long SY = NX, SZ = long(NX) * NY;
  for (int Z = 1; Z < NZ - 1; ++Z)
    for (int Y = 1; Y < NY - 1; ++Y)
      for (int X = 1; X < NX - 1; ++X) {
        long I = (long(Z) * NY + Y) * NX + X;
        float Sum = In[I - 1] + In[I + 1] + In[I - SY] + In[I + SY] +
                    In[I - SZ] + In[I + SZ];
        Want[I] = std::fma(0.4f, In[I], 0.1f * Sum);
      }
  const float *PI = In.data();
  float *PO = Out.data();
  void *Args[] = {&PI, &PO, &NX, &NY, &NZ};
  auto L = harness::launch3((NX + 7) / 8, (NY + 3) / 4, (NZ + 2) / 3, 8, 4, 3);
  return harness::runPlans(
      "stencil3d", __cleave_cpu__Z9stencil3dPKfPfiii_desc, Args, L,
      [&] { std::fill(Out.begin(), Out.end(), -1.0f); },
      [&] { return harness::near("out", Out, Want, 1); });
}
#endif
