// The longest common subsequence of three strings: a 3-D table with
// uniform dependences (1, 0, 0), (0, 1, 0), (0, 0, 1), (1, 1, 1), in
// technique(blocks).
#include "sizes.h"
#include <algorithm>

void lcs3(const char *a, const char *b, const char *c, int *L, int n, int m,
          int l) {
#pragma cleave tile technique(blocks)
  for (int i = 1; i <= n; ++i)
    for (int j = 1; j <= m; ++j)
      for (int k = 1; k <= l; ++k) {
        const int at = (i * (m + 1) + j) * (l + 1) + k;
        if (a[i - 1] == b[j - 1] && b[j - 1] == c[k - 1])
          L[(i * (m + 1) + j) * (l + 1) + k] =
              L[((i - 1) * (m + 1) + j - 1) * (l + 1) + k - 1] + 1;
        else
          L[(i * (m + 1) + j) * (l + 1) + k] =
              std::max(std::max(L[((i - 1) * (m + 1) + j) * (l + 1) + k],
                                L[(i * (m + 1) + j - 1) * (l + 1) + k]),
                       L[(i * (m + 1) + j) * (l + 1) + k - 1]);
        (void)at;
      }
}

int main() {
  const int Dims[][3] = {{1, 1, 1},   {1, 40, 3},  {35, 2, 17}, {17, 17, 17},
                         {50, 33, 9}, {5, 66, 40}, {23, 41, 37}};
  unsigned X = 9;
  for (const auto &D : Dims) {
    std::vector<char> a(D[0]), b(D[1]), c(D[2]);
    for (char &x : a) x = "ACG"[nextRandom(X) % 3];
    for (char &x : b) x = "ACG"[nextRandom(X) % 3];
    for (char &x : c) x = "ACG"[nextRandom(X) % 3];
    std::vector<int> L((D[0] + 1) * (D[1] + 1) * (D[2] + 1), 0);
    lcs3(a.data(), b.data(), c.data(), L.data(), D[0], D[1], D[2]);
    printHash({D[0] * 1000 + D[1], D[2]}, L);
  }
}
