// Wagner-Fischer edit distance of two random DNA strings of lengths N and M,
// in place over (N + 1) x (M + 1) cells; the marked nest is timed end to end.
#include "bench.h"
#include <algorithm>

#ifndef BENCH_NAIVE_PORT // naive/*.cu: the hand-written CUDA port instead
void editDistance(const char *a, const char *b, int *D, int n, int m) {
#pragma cleave tile
  for (int i = 1; i <= n; ++i)
    for (int j = 1; j <= m; ++j) {
      int sub = D[(i - 1) * (m + 1) + j - 1] + (a[i - 1] != b[j - 1]);
      int del = D[(i - 1) * (m + 1) + j] + 1;
      int ins = D[i * (m + 1) + j - 1] + 1;
      D[i * (m + 1) + j] = std::min(sub, std::min(del, ins));
    }
}
#endif

/// The first row and column: the distances to the empty prefix.
static std::vector<int> borders(int n, int m) {
  std::vector<int> D((size_t)(n + 1) * (m + 1));
  for (int i = 0; i <= n; ++i)
    D[(size_t)i * (m + 1)] = i;
  for (int j = 0; j <= m; ++j)
    D[j] = j;
  return D;
}

int main(int argc, char **argv) {
  BenchArgs A = parseArgs(argc, argv, "edit_distance");
  unsigned X = 7;
  std::vector<char> a = randomDna(A.n, X), b = randomDna(A.m, X);
  // An untimed small run first: device and runtime start-up is not the nest.
  int Wn = std::min(A.n, 64), Wm = std::min(A.m, 64);
  std::vector<int> W = borders(Wn, Wm);
  editDistance(a.data(), b.data(), W.data(), Wn, Wm);
  std::vector<int> D = borders(A.n, A.m);
  auto T0 = std::chrono::steady_clock::now();
  editDistance(a.data(), b.data(), D.data(), A.n, A.m);
  double Ms = msSince(T0);
  printResult("edit_distance", A, Ms, checksum(D));
}
