// Iterated stencils whose two grids overlap, or overlap a coefficient array
// the step reads: the run-time check sends them to the nest as written.
#include "sizes.h"
#include <utility>

void smooth(int *A, int *B, const int *w, int n, int m, int T) {
#pragma cleave tile technique(timeskew) tile(8, 8) steps(2)
  for (int t = 0; t < T; ++t) {
    for (int i = 1; i < n - 1; ++i)
      for (int j = 1; j < m - 1; ++j)
        B[i * m + j] = (w[0] * A[(i - 1) * m + j] + w[1] * A[i * m + j - 1] +
                        A[i * m + j + 1] + A[(i + 1) * m + j]) %
                       101;
    for (int i = 1; i < n - 1; ++i)
      for (int j = 1; j < m - 1; ++j)
        A[i * m + j] = B[i * m + j];
  }
}

int main() {
  unsigned X = 17;
  for (Size Z : testSizes()) {
    std::vector<int> V(2 * Z.n * Z.m + 2);
    for (int &v : V)
      v = nextRandom(X) % 7;
    // B starts one cell after A: each step's writes land on cells it reads.
    smooth(V.data(), V.data() + 1, V.data() + Z.n * Z.m + 1, Z.n, Z.m, 3);
    printHash(Z, V);
    // The coefficients lie inside A.
    smooth(V.data(), V.data() + Z.n * Z.m, V.data() + Z.n * Z.m / 2, Z.n,
           Z.m, 2);
    printHash(Z, V);
  }
}
