// Longest common subsequence; restrict pointers: no run-time overlap check.
// The matching pairs are counted by a sum reduction.
#include "sizes.h"
#include <algorithm>

void lcs(const char *__restrict a, const char *__restrict b,
         int *__restrict L, int n, int m, long long &pairs) {
#pragma cleave tile tile(32, 16)
  for (int i = 1; i < n + 1; i++)
    for (int j = 1; j < m + 1; j++) {
      L[i * (m + 1) + j] = a[i - 1] == b[j - 1]
                               ? L[(i - 1) * (m + 1) + (j - 1)] + 1
                               : std::max(L[(i - 1) * (m + 1) + j],
                                          L[i * (m + 1) + j - 1]);
      pairs += a[i - 1] == b[j - 1];
    }
}

int main() {
  unsigned X = 11;
  for (Size Z : testSizes()) {
    std::vector<char> a(Z.n), b(Z.m);
    for (char &c : a) c = "ACGT"[nextRandom(X) & 3];
    for (char &c : b) c = "ACGT"[nextRandom(X) & 3];
    std::vector<int> L((Z.n + 1) * (Z.m + 1), 0);
    long long pairs = 1000;
    lcs(a.data(), b.data(), L.data(), Z.n, Z.m, pairs);
    printf("pairs %lld ", pairs);
    printHash(Z, L);
  }
}
