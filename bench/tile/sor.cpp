// One Gauss-Seidel SOR sweep in place over an N x M grid of random doubles:
// new values above and to the left, old ones below and to the right. The
// marked nest is timed end to end.
#include "bench.h"
#include <algorithm>

#ifndef BENCH_NAIVE_PORT // naive/*.cu: the hand-written CUDA port instead
void sweep(double *A, int n, int m) {
#pragma cleave tile
  for (int i = 1; i < n - 1; ++i)
    for (int j = 1; j < m - 1; ++j)
      A[i * m + j] = (A[(i - 1) * m + j] + A[i * m + j - 1] + A[i * m + j] +
                      A[(i + 1) * m + j] + A[i * m + j + 1]) /
                     5;
}
#endif

static std::vector<double> randomGrid(int n, int m, unsigned &X) {
  std::vector<double> G((size_t)n * m);
  for (double &V : G)
    V = nextRandom(X) % 1000;
  return G;
}

int main(int argc, char **argv) {
  BenchArgs A = parseArgs(argc, argv, "sor");
  unsigned X = 5;
  // An untimed small run first: device and runtime start-up is not the nest.
  int Wn = std::min(A.n, 64), Wm = std::min(A.m, 64);
  std::vector<double> W = randomGrid(Wn, Wm, X);
  sweep(W.data(), Wn, Wm);
  std::vector<double> G = randomGrid(A.n, A.m, X);
  auto T0 = std::chrono::steady_clock::now();
  sweep(G.data(), A.n, A.m);
  double Ms = msSince(T0);
  printResult("sor", A, Ms, checksum(G));
}
