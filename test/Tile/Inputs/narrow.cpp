// Edit distance on narrow tables of small tiles: anti-diagonals of one to
// three tiles, so that the persistent wavefront's blocks take tiles whose
// neighbours other blocks are still computing (its waits matter, also on the
// CPU's few workers), and 1-row or 1-column tile grids.
#include "sizes.h"
#include <algorithm>

void editDistance(const char *a, const char *b, int *D, int n, int m) {
#pragma cleave tile tile(4, 8)
  for (int i = 1; i <= n; ++i)
    for (int j = 1; j <= m; ++j) {
      int sub = D[(i - 1) * (m + 1) + j - 1] + (a[i - 1] != b[j - 1]);
      int del = D[(i - 1) * (m + 1) + j] + 1;
      int ins = D[i * (m + 1) + j - 1] + 1;
      D[i * (m + 1) + j] = std::min(sub, std::min(del, ins));
    }
}

int main() {
  unsigned X = 11;
  const Size Sizes[] = {{3001, 7}, {3001, 13}, {7, 5001}, {11, 3001},
                        {4, 4001}, {2001, 23}, {1, 999}, {999, 1}};
  for (Size Z : Sizes) {
    std::vector<char> a(Z.n), b(Z.m);
    for (char &c : a) c = "ACGT"[nextRandom(X) & 3];
    for (char &c : b) c = "ACGT"[nextRandom(X) & 3];
    std::vector<int> D((Z.n + 1) * (Z.m + 1));
    for (int i = 0; i <= Z.n; ++i) D[i * (Z.m + 1)] = i;
    for (int j = 0; j <= Z.m; ++j) D[j] = j;
    editDistance(a.data(), b.data(), D.data(), Z.n, Z.m);
    printHash(Z, D);
  }
}
