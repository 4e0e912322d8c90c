// Shared by the cleave tile benchmark programs (bench/tile/README.md): their
// arguments, fixed-seed random inputs, the timer and the RESULT line. Host
// code only, so that clang++, `cleave compile` and nvcc all build it.
#ifndef CLEAVE_BENCH_TILE_H
#define CLEAVE_BENCH_TILE_H

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

struct BenchArgs {
  int n, m;
  const char *variant;
};

/// usage: PROG N [M [VARIANT]]; M defaults to N.
inline BenchArgs parseArgs(int argc, char **argv, const char *prog) {
  if (argc < 2) {
    fprintf(stderr, "usage: %s N [M [VARIANT]]\n", prog);
    exit(2);
  }
  BenchArgs A;
  A.n = atoi(argv[1]);
  A.m = argc > 2 ? atoi(argv[2]) : A.n;
  A.variant = argc > 3 ? argv[3] : "unnamed";
  if (A.n < 1 || A.m < 1) {
    fprintf(stderr, "%s: N and M must be positive\n", prog);
    exit(2);
  }
  return A;
}

inline unsigned nextRandom(unsigned &X) {
  X = X * 1103515245u + 12345u;
  return X >> 16;
}

inline std::vector<char> randomDna(size_t len, unsigned &X) {
  std::vector<char> S(len);
  for (char &C : S)
    C = "ACGT"[nextRandom(X) & 3];
  return S;
}

/// An order-dependent checksum of every cell's bits (any wrong or moved cell
/// changes it); cheap enough for 2^28 cells.
template <typename T> unsigned long long checksum(const std::vector<T> &V) {
  unsigned long long H = 1469598103934665603ull;
  for (const T &X : V) {
    unsigned long long Bits = 0;
    memcpy(&Bits, &X, sizeof(T) < 8 ? sizeof(T) : 8);
    H = (H ^ Bits) * 1099511628211ull;
  }
  return H;
}

inline double msSince(std::chrono::steady_clock::time_point T0) {
  return std::chrono::duration<double, std::milli>(
             std::chrono::steady_clock::now() - T0)
      .count();
}

inline void printResult(const char *prog, const BenchArgs &A, double Ms,
                        unsigned long long Check) {
  printf("RESULT name=%s variant=%s n=%d m=%d ms=%.3f check=%016llx\n", prog,
         A.variant, A.n, A.m, Ms, Check);
}

#endif
