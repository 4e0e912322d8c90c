// Technique C's representative case (digest 001 s4): the PTAS dynamic
// program OPT(n) = 1 + min over configurations s <= n of OPT(n - s) on a
// 3-D table, the configurations being the job counts (a, b, c) whose sizes
// fit in the bin: every cell depends on cells at distances (a, b, c) that
// range over the table, not uniform but componentwise >= 0.
#include "sizes.h"
#include <algorithm>

void bins(int *OPT, int n0, int n1, int n2, int w0, int w1, int w2, int cap) {
#pragma cleave tile technique(blocks)
  for (int i = 0; i <= n0; ++i)
    for (int j = 0; j <= n1; ++j)
      for (int k = 0; k <= n2; ++k) {
        if (i == 0 && j == 0 && k == 0) {
          OPT[(i * (n1 + 1) + j) * (n2 + 1) + k] = 0;
          continue;
        }
        int best = 1 << 29;
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

int main() {
  // Sizes of the three dimensions, none a multiple of the 16-cell blocks.
  const int Dims[][3] = {{0, 0, 0}, {1, 2, 3},  {17, 2, 5}, {3, 18, 4},
                         {2, 3, 20}, {20, 17, 3}, {9, 33, 2}, {21, 7, 18}};
  unsigned X = 3;
  for (const auto &D : Dims) {
    int w0 = 2 + nextRandom(X) % 5, w1 = 3 + nextRandom(X) % 6,
        w2 = 1 + nextRandom(X) % 4;
    std::vector<int> OPT((D[0] + 1) * (D[1] + 1) * (D[2] + 1), -1);
    bins(OPT.data(), D[0], D[1], D[2], w0, w1, w2, 12);
    printHash({D[0] * 1000 + D[1], D[2]}, OPT);
  }
}
