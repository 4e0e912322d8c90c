// The tile sizes of the model, swept on the first run of each size and
// cached (no tile(...) clause): edit distance, in place, with the cells
// summed by a reduction that each candidate of the sweep must start
// afresh.
#include "sizes.h"
#include <algorithm>

void editDistance(const char *a, const char *b, int *D, int n, int m,
                  long long &sum) {
#pragma cleave tile
  for (int i = 1; i <= n; ++i)
    for (int j = 1; j <= m; ++j) {
      int sub = D[(i - 1) * (m + 1) + j - 1] + (a[i - 1] != b[j - 1]);
      int del = D[(i - 1) * (m + 1) + j] + 1;
      int ins = D[i * (m + 1) + j - 1] + 1;
      D[i * (m + 1) + j] = std::min(sub, std::min(del, ins));
      sum += D[i * (m + 1) + j];
    }
}

int main() {
  unsigned X = 5;
  for (Size Z : testSizes()) {
    std::vector<char> a(Z.n), b(Z.m);
    for (char &c : a) c = "ACGT"[nextRandom(X) & 3];
    for (char &c : b) c = "ACGT"[nextRandom(X) & 3];
    std::vector<int> D((Z.n + 1) * (Z.m + 1));
    for (int i = 0; i <= Z.n; ++i) D[i * (Z.m + 1)] = i;
    for (int j = 0; j <= Z.m; ++j) D[j] = j;
    long long sum = 7;
    editDistance(a.data(), b.data(), D.data(), Z.n, Z.m, sum);
    printf("sum %lld ", sum);
    printHash(Z, D);
  }
}
