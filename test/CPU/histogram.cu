// histogram: global atomics from every worker at once; integer results.
// RUN: %cuda_to_ir %s -o %t.ll
// RUN: %cpu_compile %t.ll -o %t.o
// RUN: %cpu_cxx %s -o %t.drv.o
// RUN: %cpu_ld %t.exe %t.drv.o %t.o %cpu_rt
// RUN: %t.exe
#ifndef CLEAVE_HOST_DRIVER
#include "../Inputs/histogram.cu"
#else
#include "harness.h"
CLEAVE_CPU_KERNEL(_Z9histogramPKhPji);

int main() {
  int N = 1 << 18;
  std::vector<unsigned char> Data(N);
  harness::fillInt(Data, 0, 255);
  for (int I = 0; I < N; I += 7) Data[I] = 42; // a hot bin
  std::vector<unsigned> Bins(256), Want(256, 0);
  for (unsigned char D : Data) ++Want[D];
  const unsigned char *PD = Data.data();
  unsigned *PB = Bins.data();
  void *Args[] = {&PD, &PB, &N};
  auto L = harness::launch3(61, 1, 1, 192, 1, 1);
  return harness::runPlans(
      "histogram", __cleave_cpu__Z9histogramPKhPji_desc, Args, L,
      [&] { std::fill(Bins.begin(), Bins.end(), 0u); },
      [&] { return harness::equal("bins", Bins, Want); });
}
#endif
