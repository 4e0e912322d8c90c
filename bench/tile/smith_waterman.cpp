// Smith-Waterman local alignment of two random DNA strings of lengths N and
// M with a linear gap (match +3, mismatch -3, gap -2), in place over
// (N + 1) x (M + 1) cells; the best score is a max reduction. The marked
// nest is timed end to end.
#include "bench.h"
#include <algorithm>

#ifndef BENCH_NAIVE_PORT // naive/*.cu: the hand-written CUDA port instead
void smithWaterman(const char *a, const char *b, int *H, int n, int m,
                   int gap, int &best) {
#pragma cleave tile
  for (int i = 1; i <= n; ++i)
    for (int j = 1; j <= m; ++j) {
      int diag = H[(i - 1) * (m + 1) + j - 1] + (a[i - 1] == b[j - 1] ? 3 : -3);
      int up = H[(i - 1) * (m + 1) + j] - gap;
      int left = H[i * (m + 1) + j - 1] - gap;
      H[i * (m + 1) + j] = std::max(std::max(0, diag), std::max(up, left));
      best = std::max(best, H[i * (m + 1) + j]);
    }
}
#endif

int main(int argc, char **argv) {
  BenchArgs A = parseArgs(argc, argv, "smith_waterman");
  unsigned X = 3;
  std::vector<char> a = randomDna(A.n, X), b = randomDna(A.m, X);
  // An untimed small run first: device and runtime start-up is not the nest.
  int Wn = std::min(A.n, 64), Wm = std::min(A.m, 64), WBest = 0;
  std::vector<int> W((size_t)(Wn + 1) * (Wm + 1), 0);
  smithWaterman(a.data(), b.data(), W.data(), Wn, Wm, 2, WBest);
  std::vector<int> H((size_t)(A.n + 1) * (A.m + 1), 0);
  int best = 0;
  auto T0 = std::chrono::steady_clock::now();
  smithWaterman(a.data(), b.data(), H.data(), A.n, A.m, 2, best);
  double Ms = msSince(T0);
  printResult("smith_waterman", A, Ms, checksum(H) ^ (unsigned)best);
}
