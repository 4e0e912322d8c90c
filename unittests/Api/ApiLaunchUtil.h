//===- ApiLaunchUtil.h - Kernels and launches in the API tests --*- C++ -*-===//
//
// Part of Cleave. What the API tests that launch kernels share: the loop
// over a CPU variant's threads, host stubs written the way the host
// rewriter writes them (pop the call configuration, cudaLaunchKernel), the
// <<<>>> launch, and a module registered the way a device object's
// constructor registers it.
//
//===----------------------------------------------------------------------===//
#ifndef CLEAVE_UNITTESTS_API_APILAUNCHUTIL_H
#define CLEAVE_UNITTESTS_API_APILAUNCHUTIL_H

#include "gtest/gtest.h"

#include "cleave/rt/Bundle.h"
#include "cleave/rt/CpuKernelABI.h"
#include "cleave_rt.h"
#include <cuda_runtime.h>

#include <map>
#include <string>
#include <vector>

namespace cleave_api_test {

/// Runs \p Body on the linear index of every thread of blocks
/// [First, First + Count) of a 1-D launch.
template <class F>
inline void forEachThread(const cleave_cpu_launch *L, uint64_t First,
                          uint64_t Count, F Body) {
  for (uint64_t Blk = First; Blk < First + Count; ++Blk)
    for (uint32_t T = 0; T < L->block[0]; ++T)
      Body(int64_t(Blk) * L->block[0] + T);
}

/// The CPU variant of `vecadd(const float *a, const float *b, float *c,
/// int n)`, c[i] = a[i] + b[i] for i < n, which several tests register.
inline void vecaddCpu(void **Args, const cleave_cpu_launch *L, uint64_t First,
                      uint64_t Count) {
  const float *A = *static_cast<const float **>(Args[0]);
  const float *B = *static_cast<const float **>(Args[1]);
  float *C = *static_cast<float **>(Args[2]);
  int N = *static_cast<int *>(Args[3]);
  forEachThread(L, First, Count, [&](int64_t I) {
    if (I < N)
      C[I] = A[I] + B[I];
  });
}

/// What a host stub does: pops the call configuration and launches.
inline cudaError_t launchFromStub(const void *Self, void **Args) {
  uint32_t G[3], B[3];
  size_t Shared;
  void *S;
  if (int E = cleave_pop_call_configuration(G, B, &Shared, &S))
    return static_cast<cudaError_t>(E);
  return cudaLaunchKernel(Self, dim3(G[0], G[1], G[2]), dim3(B[0], B[1], B[2]),
                          Args, Shared, static_cast<cudaStream_t>(S));
}

/// k<<<G, B, Shared, S>>>(...) as the rewriter writes it.
#define LAUNCH(K, G, B, Shared, S, ...)                                        \
  (push(G, B, Shared, S) ? (void)0 : K(__VA_ARGS__))

inline unsigned push(dim3 G, dim3 B, size_t Shared = 0, cudaStream_t S = 0) {
  const uint32_t GG[3] = {G.x, G.y, G.z}, BB[3] = {B.x, B.y, B.z};
  return cleave_push_call_configuration(GG, BB, Shared, S);
}

/// Registers \p Bytes as a module whose kernels' CPU descriptors are \p Descs
/// (by kernel name) and whose CPU variable copies are \p Vars (by variable
/// name), the way a device object's constructor does.
inline bool registerModule(const std::string &Bytes,
                           const std::map<std::string, const void *> &Descs,
                           const std::map<std::string, void *> &Vars,
                           uint32_t Flags) {
  cleave::rt::Bundle B;
  cleave::rt::BundleStatus St =
      cleave::rt::Bundle::parse(Bytes.data(), Bytes.size(), B);
  EXPECT_TRUE(St) << St.Message;
  if (!St)
    return false;
  // Kept for the life of the process, like a device object's tables.
  auto *Names = new std::vector<std::string>();
  auto *Symbols = new std::vector<cleave_symbol>();
  for (const cleave::rt::BundleKernel &K : B.Kernels) {
    const cleave::rt::BundleVariant &Cpu =
        K.variant(cleave::rt::VariantKind::CPU);
    EXPECT_TRUE(Cpu.Present) << K.Name << ": " << Cpu.Reason;
    auto It = Descs.find(K.Name);
    if (Cpu.Present && It != Descs.end())
      Names->push_back(Cpu.Entry + "_desc");
  }
  for (const cleave::rt::BundleVariable &V : B.Variables)
    if (!V.CpuSymbol.empty() && Vars.count(V.Name))
      Names->push_back(V.CpuSymbol);
  size_t I = 0;
  for (const cleave::rt::BundleKernel &K : B.Kernels)
    if (K.variant(cleave::rt::VariantKind::CPU).Present && Descs.count(K.Name))
      Symbols->push_back(
          {(*Names)[I++].c_str(), const_cast<void *>(Descs.at(K.Name))});
  for (const cleave::rt::BundleVariable &V : B.Variables)
    if (!V.CpuSymbol.empty() && Vars.count(V.Name))
      Symbols->push_back({(*Names)[I++].c_str(), Vars.at(V.Name)});
  auto *Data = new std::string(Bytes);
  auto *M = new cleave_module_desc{CLEAVE_RT_ABI_VERSION,
                                   Flags,
                                   static_cast<uint32_t>(Symbols->size()),
                                   0,
                                   Data->data(),
                                   Data->size(),
                                   Symbols->data()};
  return cleave_register_module(M) == 0;
}

} // namespace cleave_api_test

#endif
