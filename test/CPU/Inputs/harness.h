// Differential-test harness for CPU variants: runs a kernel through the
// CPU executor with several worker counts and several [first, count)
// partitions that together cover the grid (and directly on the calling
// thread), resets the outputs before each run and checks them against a
// plain C++ reference.
#ifndef CLEAVE_TEST_CPU_HARNESS_H
#define CLEAVE_TEST_CPU_HARNESS_H

#include "cleave/rt/CpuExecutor.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <random>
#include <string>
#include <utility>
#include <vector>

#define CLEAVE_CPU_KERNEL(Sym)                                                 \
  extern "C" const cleave_cpu_kernel_desc __cleave_cpu_##Sym##_desc

namespace harness {

inline std::mt19937_64 &rng() {
  static std::mt19937_64 R(0xC1EA7E);
  return R;
}
inline void fill(std::vector<float> &V, float Lo, float Hi) {
  std::uniform_real_distribution<float> D(Lo, Hi);
  for (float &X : V)
    X = D(rng());
}
template <class T> void fillInt(std::vector<T> &V, int64_t Lo, int64_t Hi) {
  std::uniform_int_distribution<int64_t> D(Lo, Hi);
  for (T &X : V)
    X = static_cast<T>(D(rng()));
}

inline cleave_cpu_launch launch3(unsigned GX, unsigned GY, unsigned GZ,
                                 unsigned BX, unsigned BY, unsigned BZ,
                                 uint64_t Dyn = 0) {
  return cleave_cpu_launch{{GX, GY, GZ}, {BX, BY, BZ}, Dyn};
}

struct Plan {
  std::string Name;
  unsigned Threads; // 0 = run directly on this thread
  std::vector<std::pair<uint64_t, uint64_t>> Pieces;
};

// Whole grid with 1, 2 and 4 workers; three random pieces with 3 workers;
// uneven pieces in reverse order on the calling thread.
inline std::vector<Plan> plans(uint64_t Blocks) {
  std::vector<Plan> P;
  for (unsigned T : {1u, 2u, 4u})
    P.push_back({"whole/" + std::to_string(T) + "w", T, {{0, Blocks}}});
  auto Split = [&](unsigned N) {
    std::vector<uint64_t> Cuts{0, Blocks};
    std::uniform_int_distribution<uint64_t> D(0, Blocks);
    for (unsigned I = 1; I < N; ++I)
      Cuts.push_back(D(rng()));
    std::sort(Cuts.begin(), Cuts.end());
    std::vector<std::pair<uint64_t, uint64_t>> Pieces;
    for (size_t I = 0; I + 1 < Cuts.size(); ++I)
      Pieces.push_back({Cuts[I], Cuts[I + 1] - Cuts[I]});
    return Pieces;
  };
  P.push_back({"3 pieces/3w", 3, Split(3)});
  auto Rev = Split(4);
  std::reverse(Rev.begin(), Rev.end());
  P.push_back({"4 pieces reversed/direct", 0, Rev});
  return P;
}

/// Runs every plan; Reset() restores inputs/outputs, Check() compares and
/// prints what differs. Returns the number of failing plans.
inline int runPlans(const char *What, const cleave_cpu_kernel_desc &K,
                    void **Args, const cleave_cpu_launch &L,
                    const std::function<void()> &Reset,
                    const std::function<bool()> &Check) {
  uint64_t Blocks = uint64_t(L.grid[0]) * L.grid[1] * L.grid[2];
  int Failures = 0;
  for (const Plan &P : plans(Blocks)) {
    Reset();
    if (P.Threads) {
      cleave::rt::CpuExecutor Ex(P.Threads);
      for (auto [First, Count] : P.Pieces) {
        cleave::rt::Result S = Ex.launch(K, Args, L, First, Count);
        if (!S.ok()) {
          std::printf("%s [%s]: launch failed: %s\n", What, P.Name.c_str(),
                      S.message().c_str());
          return Failures + 1;
        }
      }
    } else {
      uint64_t Bytes = cleave_cpu_scratch_bytes(&K, &L);
      void *Scratch = std::aligned_alloc(
          64, cleave_cpu_align_up(std::max<uint64_t>(Bytes, 64), 64));
      for (auto [First, Count] : P.Pieces)
        K.fn(Args, &L, First, Count, Scratch);
      std::free(Scratch);
    }
    if (!Check()) {
      std::printf("%s [%s]: FAILED\n", What, P.Name.c_str());
      ++Failures;
    }
  }
  if (!Failures)
    std::printf("%s: ok (%zu plans)\n", What, plans(Blocks).size());
  return Failures;
}

template <class T>
bool equal(const char *Name, const std::vector<T> &Got,
           const std::vector<T> &Want) {
  for (size_t I = 0; I < Want.size(); ++I)
    if (std::memcmp(&Got[I], &Want[I], sizeof(T)) != 0) {
      std::printf("  %s[%zu]: got %.9g, want %.9g\n", Name, I, double(Got[I]),
                  double(Want[I]));
      return false;
    }
  return true;
}

inline int64_t ulpDistance(float A, float B) {
  if (A == B)
    return 0;
  if (std::isnan(A) || std::isnan(B))
    return std::isnan(A) && std::isnan(B) ? 0 : INT64_MAX;
  auto Key = [](float F) {
    int32_t I;
    std::memcpy(&I, &F, 4);
    return I < 0 ? int64_t(INT32_MIN) - I : int64_t(I);
  };
  return std::llabs(Key(A) - Key(B));
}

/// |got - want| <= Ulps ulp, or <= Abs (for results of cancellation).
inline bool near(const char *Name, const std::vector<float> &Got,
                 const std::vector<float> &Want, int64_t Ulps,
                 float Abs = 0) {
  for (size_t I = 0; I < Want.size(); ++I)
    if (ulpDistance(Got[I], Want[I]) > Ulps &&
        !(std::fabs(Got[I] - Want[I]) <= Abs)) {
      std::printf("  %s[%zu]: got %.9g, want %.9g (%lld ulp)\n", Name, I,
                  Got[I], Want[I], (long long)ulpDistance(Got[I], Want[I]));
      return false;
    }
  return true;
}

} // namespace harness

#endif
