// Summed-area table in place (digest 001 s2): every cell adds the sums
// above and to the left; unsigned, so that wrap-around is defined.
#include "sizes.h"

void summedArea(unsigned *S, long n, long m) {
#pragma cleave tile tile(32, 32)
  for (long i = 1; i < n; ++i)
    for (long j = 1; j < m; ++j)
      S[i * m + j] += S[(i - 1) * m + j] + S[i * m + j - 1] -
                      S[(i - 1) * m + j - 1];
}

int main() {
  unsigned X = 9;
  for (Size Z : testSizes()) {
    std::vector<unsigned> S(Z.n * Z.m);
    for (unsigned &v : S) v = nextRandom(X);
    summedArea(S.data(), Z.n, Z.m);
    printHash(Z, S);
  }
}
