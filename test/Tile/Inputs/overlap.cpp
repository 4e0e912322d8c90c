// A nest whose input array overlaps the one it writes: the run-time check
// sends it to the original nest.
#include "sizes.h"

void prefixRows(const int *in, int *out, int n, int m) {
#pragma cleave tile tile(16, 16)
  for (int i = 1; i < n; ++i)
    for (int j = 1; j < m; ++j)
      out[i * m + j] = out[(i - 1) * m + j] + out[i * m + j - 1] + in[i * m + j];
}

int main() {
  unsigned X = 13;
  for (Size Z : testSizes()) {
    std::vector<int> V(2 * Z.n * Z.m + 1);
    for (int &v : V) v = nextRandom(X) % 7;
    // out is in shifted by one element: every write lands on a later input.
    prefixRows(V.data() + 1, V.data(), Z.n, Z.m);
    printHash(Z, V);
  }
}
