// Rebased variants (cleave-rebase) against the original kernel on the CPU:
// each kernel's rebased clone along each dimension is lowered for the CPU
// and run as three uneven slabs, with its extra parameters computed by the
// runtime's FootprintProgram::rebase from the `rebase` records, and must
// reproduce the original's outputs bit for bit on random inputs. A launch
// whose indices could leave int range is refused by the range checks.
// RUN: %cuda_to_ir %s -o %t.ll
// RUN: rm -rf %t.fp && mkdir -p %t.fp
// RUN: %cpu_compile --rebased=%t.fp %t.ll -o %t.o
// RUN: %cpu_cxx -DFP_DIR='"%t.fp"' %s -o %t.drv.o
// RUN: %cpu_ld %t.exe %t.drv.o %t.o %rt_footprint %cpu_rt
// RUN: %t.exe | FileCheck %s
// RUN: FileCheck %s --check-prefix=RECORDS < %t.fp/_Z9transposePfPKfii.fp
//
// RECORDS: rebase x __cleave_rbx__Z9transposePfPKfii
// RECORDS: rebase y __cleave_rby__Z9transposePfPKfii
// RECORDS-NEXT: param ptr 1 (* 128 arg2 first)
// RECORDS-NEXT: param ptr 0 (* 128 first)
// RECORDS-NEXT: param int 32 signed (+ arg3 (* -32 first))
//
// CHECK-DAG: vecadd x: 3 slabs ok
// CHECK-DAG: vecadd x: refused: an index may leave its integer type over this grid
// CHECK-DAG: blackscholes x: 3 slabs ok
// CHECK-DAG: reduce_sum x: 3 slabs ok
// CHECK-DAG: transpose x: 3 slabs ok
// CHECK-DAG: transpose y: 3 slabs ok
// CHECK-DAG: stencil3d x: 3 slabs ok
// CHECK-DAG: stencil3d y: 3 slabs ok
// CHECK-DAG: stencil3d z: 3 slabs ok
// CHECK: failures: 0
#ifndef CLEAVE_HOST_DRIVER
#include "../Inputs/blackscholes.cu"
#include "../Inputs/reduction.cu"
#include "../Inputs/stencil3d.cu"
#include "../Inputs/transpose.cu"
#include "../Inputs/vecadd.cu"
#else
#include "harness.h"

#include "cleave/rt/Footprint.h"

#include <fstream>
#include <sstream>

CLEAVE_CPU_KERNEL(_Z6vecaddPKfS0_Pfi);
CLEAVE_CPU_KERNEL(__cleave_rbx__Z6vecaddPKfS0_Pfi);
CLEAVE_CPU_KERNEL(_Z12blackscholesPfS_PKfS1_S1_ffi);
CLEAVE_CPU_KERNEL(__cleave_rbx__Z12blackscholesPfS_PKfS1_S1_ffi);
CLEAVE_CPU_KERNEL(_Z10reduce_sumPKfPfi);
CLEAVE_CPU_KERNEL(__cleave_rbx__Z10reduce_sumPKfPfi);
CLEAVE_CPU_KERNEL(_Z9transposePfPKfii);
CLEAVE_CPU_KERNEL(__cleave_rbx__Z9transposePfPKfii);
CLEAVE_CPU_KERNEL(__cleave_rby__Z9transposePfPKfii);
CLEAVE_CPU_KERNEL(_Z9stencil3dPKfPfiii);
CLEAVE_CPU_KERNEL(__cleave_rbx__Z9stencil3dPKfPfiii);
CLEAVE_CPU_KERNEL(__cleave_rby__Z9stencil3dPKfPfiii);
CLEAVE_CPU_KERNEL(__cleave_rbz__Z9stencil3dPKfPfiii);

using cleave::rt::FootprintProgram;

namespace {

int Failures = 0;

FootprintProgram load(const std::string &Kernel) {
  std::ifstream In(std::string(FP_DIR) + "/" + Kernel + ".fp");
  std::stringstream SS;
  SS << In.rdbuf();
  FootprintProgram P;
  cleave::rt::Status S = FootprintProgram::parse(SS.str(), P);
  if (!S) {
    std::printf("%s: %s\n", Kernel.c_str(), S.Message.c_str());
    ++Failures;
  }
  return P;
}

/// One argument as the CPU variant takes it, with its integer value for the
/// footprint evaluator.
struct Arg {
  void *Ptr = nullptr; // pointer arguments
  int64_t Int = 0;     // integer arguments
  float F = 0;         // float arguments
  enum { P, I, Fl } Kind = P;
};

/// Runs the original over the whole grid (the reference), then the rebased
/// variant along Dim as three uneven slabs, and compares the outputs.
void check(const char *Name, const std::string &Sym,
           const cleave_cpu_kernel_desc &Orig,
           const cleave_cpu_kernel_desc &Rebased, unsigned Dim,
           std::vector<Arg> Args, cleave_cpu_launch L,
           const std::function<void()> &Reset,
           const std::function<std::vector<std::vector<float>>()> &Outputs) {
  FootprintProgram FP = load(Sym);
  std::vector<int32_t> Ints(Args.size());
  std::vector<void *> Plain(Args.size());
  cleave::rt::LaunchConfig C;
  for (int D = 0; D < 3; ++D) {
    C.Grid[D] = L.grid[D];
    C.Block[D] = L.block[D];
  }
  for (size_t A = 0; A < Args.size(); ++A) {
    C.Args.push_back(Args[A].Int);
    Ints[A] = int32_t(Args[A].Int);
    Plain[A] = Args[A].Kind == Arg::P    ? (void *)&Args[A].Ptr
               : Args[A].Kind == Arg::I  ? (void *)&Ints[A]
                                         : (void *)&Args[A].F;
  }
  uint64_t Blocks = uint64_t(L.grid[0]) * L.grid[1] * L.grid[2];
  Reset();
  cleave::rt::CpuExecutor Ex(2);
  if (!Ex.launch(Orig, Plain.data(), L, 0, Blocks).ok()) {
    std::printf("%s: original failed\n", Name);
    ++Failures;
    return;
  }
  std::vector<std::vector<float>> Want = Outputs();

  Reset();
  uint64_t G = L.grid[Dim];
  std::vector<uint64_t> Cuts{0, G / 3 + 1, G - G / 4, G};
  int Slabs = 0;
  for (size_t S = 0; S + 1 < Cuts.size(); ++S) {
    uint64_t First = Cuts[S], Count = Cuts[S + 1] - First;
    if (!Count)
      continue;
    std::vector<cleave::rt::RebaseValue> Vals;
    std::string Why;
    if (!FP.rebase(C, Dim, int64_t(First), Vals, Why)) {
      std::printf("%s %c: rebase refused: %s\n", Name, 'x' + Dim, Why.c_str());
      ++Failures;
      return;
    }
    // The variant's parameters: the extra ones, then the kernel's own.
    std::vector<void *> All;
    std::vector<void *> PtrVals(Vals.size());
    std::vector<int64_t> IntVals(Vals.size());
    std::vector<int32_t> Int32Vals(Vals.size());
    for (size_t V = 0; V < Vals.size(); ++V) {
      if (Vals[V].IsPointer) {
        PtrVals[V] = static_cast<char *>(Args[Vals[V].ArgNo].Ptr) +
                     Vals[V].Value;
        All.push_back(&PtrVals[V]);
      } else if (Vals[V].Bits == 32) {
        Int32Vals[V] = int32_t(Vals[V].Value);
        All.push_back(&Int32Vals[V]);
      } else {
        IntVals[V] = Vals[V].Value;
        All.push_back(&IntVals[V]);
      }
    }
    All.insert(All.end(), Plain.begin(), Plain.end());
    cleave_cpu_launch SL = L;
    SL.grid[Dim] = unsigned(Count);
    uint64_t SlabBlocks = uint64_t(SL.grid[0]) * SL.grid[1] * SL.grid[2];
    if (!Ex.launch(Rebased, All.data(), SL, 0, SlabBlocks).ok()) {
      std::printf("%s: rebased launch failed\n", Name);
      ++Failures;
      return;
    }
    ++Slabs;
  }
  std::vector<std::vector<float>> Got = Outputs();
  for (size_t O = 0; O < Want.size(); ++O)
    if (std::memcmp(Want[O].data(), Got[O].data(),
                    Want[O].size() * sizeof(float)) != 0) {
      size_t I = 0;
      while (std::memcmp(&Want[O][I], &Got[O][I], sizeof(float)) == 0)
        ++I;
      std::printf("%s %c: output %zu differs at %zu: %g, want %g\n", Name,
                  'x' + Dim, O, I, Got[O][I], Want[O][I]);
      ++Failures;
      return;
    }
  std::printf("%s %c: %d slabs ok\n", Name, 'x' + Dim, Slabs);
}

Arg ptr(void *P) { return Arg{P, 0, 0, Arg::P}; }
Arg i32(int V) { return Arg{nullptr, V, 0, Arg::I}; }
Arg f32(float V) { return Arg{nullptr, 0, V, Arg::Fl}; }

} // namespace

int main() {
  {
    int N = 10007;
    std::vector<float> A(N), B(N), C(N);
    harness::fill(A, -1, 1);
    harness::fill(B, -1, 1);
    check("vecadd", "_Z6vecaddPKfS0_Pfi", __cleave_cpu__Z6vecaddPKfS0_Pfi_desc,
          __cleave_cpu___cleave_rbx__Z6vecaddPKfS0_Pfi_desc, 0,
          {ptr(A.data()), ptr(B.data()), ptr(C.data()), i32(N)},
          harness::launch3((N + 127) / 128, 1, 1, 128, 1, 1),
          [&] { std::fill(C.begin(), C.end(), -7.0f); },
          [&] { return std::vector<std::vector<float>>{C}; });
    // 2^31 threads and more: i = blockIdx.x * blockDim.x + threadIdx.x may
    // wrap, so the rebased variant must not be used.
    FootprintProgram FP = load("_Z6vecaddPKfS0_Pfi");
    cleave::rt::LaunchConfig Big;
    Big.Grid[0] = (int64_t(1) << 31) / 128 + 1;
    Big.Block[0] = 128;
    Big.Args = {0, 0, 0, N};
    std::vector<cleave::rt::RebaseValue> Vals;
    std::string Why;
    if (FP.rebase(Big, 0, 5, Vals, Why)) {
      std::printf("vecadd x: a grid of 2^31 threads was not refused\n");
      ++Failures;
    } else {
      std::printf("vecadd x: refused: %s\n", Why.c_str());
    }
  }
  {
    int N = 5003;
    std::vector<float> S(N), X(N), T(N), Call(N), Put(N);
    harness::fill(S, 5, 30);
    harness::fill(X, 1, 100);
    harness::fill(T, 0.25f, 10);
    check("blackscholes", "_Z12blackscholesPfS_PKfS1_S1_ffi",
          __cleave_cpu__Z12blackscholesPfS_PKfS1_S1_ffi_desc,
          __cleave_cpu___cleave_rbx__Z12blackscholesPfS_PKfS1_S1_ffi_desc, 0,
          {ptr(Call.data()), ptr(Put.data()), ptr(S.data()), ptr(X.data()),
           ptr(T.data()), f32(0.02f), f32(0.3f), i32(N)},
          harness::launch3((N + 255) / 256, 1, 1, 256, 1, 1),
          [&] {
            std::fill(Call.begin(), Call.end(), -7.0f);
            std::fill(Put.begin(), Put.end(), -7.0f);
          },
          [&] { return std::vector<std::vector<float>>{Call, Put}; });
  }
  {
    int N = 70001;
    unsigned Blocks = (N + 511) / 512;
    std::vector<float> In(N), Partial(Blocks);
    harness::fill(In, -1, 1);
    check("reduce_sum", "_Z10reduce_sumPKfPfi",
          __cleave_cpu__Z10reduce_sumPKfPfi_desc,
          __cleave_cpu___cleave_rbx__Z10reduce_sumPKfPfi_desc, 0,
          {ptr(In.data()), ptr(Partial.data()), i32(N)},
          harness::launch3(Blocks, 1, 1, 256, 1, 1),
          [&] { std::fill(Partial.begin(), Partial.end(), -7.0f); },
          [&] { return std::vector<std::vector<float>>{Partial}; });
  }
  {
    int W = 101, H = 100;
    std::vector<float> In(W * H), Out(W * H);
    harness::fill(In, -100, 100);
    auto L = harness::launch3((W + 31) / 32, (H + 31) / 32, 1, 32, 32, 1);
    const cleave_cpu_kernel_desc *Variants[] = {
        &__cleave_cpu___cleave_rbx__Z9transposePfPKfii_desc,
        &__cleave_cpu___cleave_rby__Z9transposePfPKfii_desc};
    for (unsigned D = 0; D < 2; ++D)
      check("transpose", "_Z9transposePfPKfii",
            __cleave_cpu__Z9transposePfPKfii_desc, *Variants[D], D,
            {ptr(Out.data()), ptr(In.data()), i32(W), i32(H)}, L,
            [&] { std::fill(Out.begin(), Out.end(), -7.0f); },
            [&] { return std::vector<std::vector<float>>{Out}; });
  }
  {
    int NX = 37, NY = 29, NZ = 23;
    std::vector<float> In(NX * NY * NZ), Out(NX * NY * NZ);
    harness::fill(In, -1, 1);
    auto L = harness::launch3((NX + 7) / 8, (NY + 3) / 4, (NZ + 3) / 4, 8, 4, 4);
    const cleave_cpu_kernel_desc *Variants[] = {
        &__cleave_cpu___cleave_rbx__Z9stencil3dPKfPfiii_desc,
        &__cleave_cpu___cleave_rby__Z9stencil3dPKfPfiii_desc,
        &__cleave_cpu___cleave_rbz__Z9stencil3dPKfPfiii_desc};
    for (unsigned D = 0; D < 3; ++D)
      check("stencil3d", "_Z9stencil3dPKfPfiii",
            __cleave_cpu__Z9stencil3dPKfPfiii_desc, *Variants[D], D,
            {ptr(In.data()), ptr(Out.data()), i32(NX), i32(NY), i32(NZ)}, L,
            [&] { std::fill(Out.begin(), Out.end(), -7.0f); },
            [&] { return std::vector<std::vector<float>>{Out}; });
  }
  std::printf("failures: %d\n", Failures);
  return Failures ? 1 : 0;
}
#endif
