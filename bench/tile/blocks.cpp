// Technique C (technique(blocks), digest 001 s4): the PTAS dynamic program
// OPT(n) = 1 + min over configurations s <= n of OPT(n - s) over a 3-D
// table of (N + 1) x (N + 1) x (M + 1) cells, the configurations being the
// job counts (a, b, c) whose sizes fit in a bin: every cell reads cells at
// non-uniform distances. The marked nest is timed end to end.
#include "bench.h"
#include <algorithm>

#ifndef BENCH_NAIVE_PORT // naive/*.cu: the hand-written CUDA port instead
void bins(int *OPT, int n0, int n1, int n2, int w0, int w1, int w2, int cap) {
#pragma cleave tile technique(blocks)
  for (int i = 0; i <= n0; ++i)
    for (int j = 0; j <= n1; ++j)
      for (int k = 0; k <= n2; ++k) {
        int best = i + j + k == 0 ? 0 : 1 << 29;
        for (int a = 0; a <= i; ++a)
          for (int b = 0; b <= j; ++b)
            for (int c = 0; c <= k; ++c)
              if ((a | b | c) != 0 && a * w0 + b * w1 + c * w2 <= cap)
                best = std::min(
                    best,
                    OPT[((i - a) * (n1 + 1) + j - b) * (n2 + 1) + k - c] + 1);
        OPT[(i * (n1 + 1) + j) * (n2 + 1) + k] = best;
      }
}
#endif

int main(int argc, char **argv) {
  BenchArgs A = parseArgs(argc, argv, "blocks");
  // Job sizes 3, 5 and 7 in bins of 20: 25 configurations.
  const int W0 = 3, W1 = 5, W2 = 7, Cap = 20;
  // An untimed small run first: device and runtime start-up is not the nest.
  int Wn = std::min(A.n, 8), Wm = std::min(A.m, 8);
  std::vector<int> W((size_t)(Wn + 1) * (Wn + 1) * (Wm + 1));
  bins(W.data(), Wn, Wn, Wm, W0, W1, W2, Cap);
  std::vector<int> OPT((size_t)(A.n + 1) * (A.n + 1) * (A.m + 1), -1);
  auto T0 = std::chrono::steady_clock::now();
  bins(OPT.data(), A.n, A.n, A.m, W0, W1, W2, Cap);
  double Ms = msSince(T0);
  printResult("blocks", A, Ms, checksum(OPT));
}
