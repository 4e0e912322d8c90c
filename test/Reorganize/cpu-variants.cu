// The inspector and reorganized variants on the CPU (docs/reorganize.md),
// for the kernels of Inputs/irregular.cu:
//   * the inspector's counts equal those of an instrumented run of the full
//     kernel (its outputs kept), and the inspector writes no output;
//   * the reorganized variant, launched with a random permutation of the
//     items and with the items sorted by count, writes exactly the
//     original's outputs, bit for bit.
// RUN: %cuda_to_ir %s -o %t.ll
// RUN: %cpu_compile --reorganize %t.ll -o %t.o
// RUN: %cpu_cxx %s -o %t.drv.o
// RUN: %cpu_ld %t.exe %t.drv.o %t.o %cpu_rt
// RUN: %t.exe | FileCheck %s
//
// CHECK-DAG: bootstrap: counts ok, outputs kept by the instrumented run, none
// written by the inspector; random perm ok; sorted perm ok; perm honoured
// CHECK-DAG: polar: counts ok, outputs kept by the instrumented run, none
// written by the inspector; random perm ok; sorted perm ok; perm honoured
// CHECK-DAG: spmv: counts ok, outputs kept by the instrumented run, none
// written by the inspector; random perm ok; sorted perm ok; perm honoured
// CHECK-DAG: paths: counts ok, outputs kept by the instrumented run, none
// written by the inspector; random perm ok; sorted perm ok; perm honoured
// CHECK: failures: 0
#ifndef CLEAVE_HOST_DRIVER
#include "Inputs/irregular.cu"
#else
#include "harness.h"

#include <numeric>

#define VARIANTS(Sym)                                                          \
  CLEAVE_CPU_KERNEL(Sym);                                                      \
  CLEAVE_CPU_KERNEL(__cleave_tc_##Sym);                                        \
  CLEAVE_CPU_KERNEL(__cleave_tci_##Sym);                                       \
  CLEAVE_CPU_KERNEL(__cleave_ro_##Sym)
VARIANTS(_Z9bootstrapPKfifPjPfPii);
VARIANTS(_Z5polarPKjPfi);
VARIANTS(_Z4spmvPKiS0_PKfS2_Pfi);
VARIANTS(_Z5pathsPKjfPfPii);
#define DESCS(Sym)                                                             \
  __cleave_cpu_##Sym##_desc, __cleave_cpu___cleave_tc_##Sym##_desc,            \
      __cleave_cpu___cleave_tci_##Sym##_desc,                                  \
      __cleave_cpu___cleave_ro_##Sym##_desc

namespace {

int Failures = 0;

template <class T> std::string bytes(const std::vector<T> &V) {
  return std::string(reinterpret_cast<const char *>(V.data()),
                     V.size() * sizeof(T));
}

struct Case {
  const char *Name;
  const cleave_cpu_kernel_desc &Orig, &Inspector, &Instrumented, &Reorg;
  std::vector<void *> Args; // the kernel's own parameters
  unsigned Items, Block;
  std::function<void()> Reset;
  std::function<std::string()> Outputs;
};

bool run(const Case &C, const cleave_cpu_kernel_desc &K, void *Extra) {
  std::vector<void *> Args = C.Args;
  if (Extra)
    Args.push_back(&Extra);
  unsigned Grid = (C.Items + C.Block - 1) / C.Block + 1; // one spare block
  cleave_cpu_launch L = harness::launch3(Grid, 1, 1, C.Block, 1, 1);
  cleave::rt::CpuExecutor Ex(2);
  return Ex.launch(K, Args.data(), L, 0, Grid).ok();
}

void check(const Case &C) {
  unsigned Threads = ((C.Items + C.Block - 1) / C.Block + 1) * C.Block;
  C.Reset();
  std::string Fresh = C.Outputs();
  if (!run(C, C.Orig, nullptr)) {
    std::printf("%s: original failed\n", C.Name);
    ++Failures;
    return;
  }
  std::string Want = C.Outputs();

  // The counts: one per launched thread, zero past the items.
  C.Reset();
  std::vector<int32_t> Counts(Threads, -1), Instr(Threads, -1);
  bool Ok = run(C, C.Inspector, Counts.data());
  bool NoneWritten = C.Outputs() == Fresh;
  C.Reset();
  Ok = Ok && run(C, C.Instrumented, Instr.data());
  bool Kept = C.Outputs() == Want;
  if (!Ok || Counts != Instr || !Kept || !NoneWritten) {
    std::printf("%s: counts %s, instrumented outputs %s, inspector %s\n",
                C.Name, Counts == Instr ? "equal" : "DIFFER",
                Kept ? "kept" : "CHANGED",
                NoneWritten ? "wrote nothing" : "WROTE OUTPUTS");
    ++Failures;
    return;
  }
  std::printf("%s: counts ok, outputs kept by the instrumented run, none "
              "written by the inspector;",
              C.Name);

  // perm maps [0, Items) onto itself and every later thread to itself.
  std::vector<int32_t> Perm(Threads);
  std::iota(Perm.begin(), Perm.end(), 0);
  std::shuffle(Perm.begin(), Perm.begin() + C.Items, harness::rng());
  std::vector<int32_t> Sorted(Threads);
  std::iota(Sorted.begin(), Sorted.end(), 0);
  std::stable_sort(Sorted.begin(), Sorted.begin() + C.Items,
                   [&](int32_t A, int32_t B) { return Counts[A] < Counts[B]; });
  for (auto [What, P] :
       {std::pair("random perm", &Perm), std::pair("sorted perm", &Sorted)}) {
    C.Reset();
    if (!run(C, C.Reorg, P->data()) || C.Outputs() != Want) {
      std::printf(" %s DIFFERS", What);
      ++Failures;
    } else {
      std::printf(" %s ok;", What);
    }
  }
  // The variant reads perm: every thread given item 0 leaves the other
  // items' outputs unwritten.
  std::vector<int32_t> Zero(Threads, 0);
  C.Reset();
  if (!run(C, C.Reorg, Zero.data()) || C.Outputs() == Want) {
    std::printf(" perm IGNORED");
    ++Failures;
  } else {
    std::printf(" perm honoured");
  }
  std::printf("\n");
}

} // namespace

int main() {
  const unsigned Items = 1000;

  // Stationary bootstrap: 300 values, p = 0.1, one state per resampling.
  int N = 300;
  float P = 0.1f;
  int Resamples = Items;
  std::vector<float> Data(N), Means(Items);
  std::vector<uint32_t> States0(Items), States(Items);
  std::vector<int> Blocks(Items);
  harness::fill(Data, -1, 1);
  harness::fillInt(States0, 1, 0x7fffffff);
  float *DataP = Data.data(), *MeansP = Means.data();
  uint32_t *StatesP = States.data();
  int *BlocksP = Blocks.data();
  check({"bootstrap",
         DESCS(_Z9bootstrapPKfifPjPfPii),
         {&DataP, &N, &P, &StatesP, &MeansP, &BlocksP, &Resamples},
         Items,
         256,
         [&] {
           States = States0;
           std::fill(Means.begin(), Means.end(), 0.f);
           std::fill(Blocks.begin(), Blocks.end(), 0);
         },
         [&] { return bytes(States) + bytes(Means) + bytes(Blocks); }});

  // Polar rejection sampling.
  std::vector<uint32_t> Seeds(Items);
  harness::fillInt(Seeds, 1, 0x7fffffff);
  std::vector<float> Normal(Items);
  const uint32_t *SeedsP = Seeds.data();
  float *NormalP = Normal.data();
  int NItems = Items;
  check({"polar",
         DESCS(_Z5polarPKjPfi),
         {&SeedsP, &NormalP, &NItems},
         Items,
         64,
         [&] { std::fill(Normal.begin(), Normal.end(), 0.f); },
         [&] { return bytes(Normal); }});

  // CSR SpMV with power-law row lengths.
  std::vector<int> RowPtr(Items + 1, 0), Cols;
  std::vector<float> Vals, X(512), Y(Items);
  harness::fill(X, -1, 1);
  std::uniform_real_distribution<double> U(0.001, 1);
  for (unsigned R = 0; R < Items; ++R) {
    int Len = std::min(400, int(1 / std::pow(U(harness::rng()), 1.2)));
    RowPtr[R + 1] = RowPtr[R] + Len;
  }
  Cols.resize(RowPtr[Items]);
  Vals.resize(RowPtr[Items]);
  harness::fillInt(Cols, 0, 511);
  harness::fill(Vals, -1, 1);
  const int *RowPtrP = RowPtr.data(), *ColsP = Cols.data();
  const float *ValsP = Vals.data(), *XP = X.data();
  float *YP = Y.data();
  check({"spmv",
         DESCS(_Z4spmvPKiS0_PKfS2_Pfi),
         {&RowPtrP, &ColsP, &ValsP, &XP, &YP, &NItems},
         Items,
         128,
         [&] { std::fill(Y.begin(), Y.end(), 0.f); },
         [&] { return bytes(Y); }});

  // Random-length paths.
  float Absorb = 0.02f;
  std::vector<float> Dist(Items);
  std::vector<int> Steps(Items);
  float *DistP = Dist.data();
  int *StepsP = Steps.data();
  check({"paths",
         DESCS(_Z5pathsPKjfPfPii),
         {&SeedsP, &Absorb, &DistP, &StepsP, &NItems},
         Items,
         64,
         [&] {
           std::fill(Dist.begin(), Dist.end(), 0.f);
           std::fill(Steps.begin(), Steps.end(), 0);
         },
         [&] { return bytes(Dist) + bytes(Steps); }});

  std::printf("failures: %d\n", Failures);
  return Failures != 0;
}
#endif
