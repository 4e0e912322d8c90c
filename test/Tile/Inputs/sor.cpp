// Gauss-Seidel SOR in place: new values above and to the left, old values
// below and to the right (anti-dependences), several sweeps.
#include "sizes.h"

void sweep(double *A, int n, int m) {
#pragma cleave tile tile(16, 16)
  for (int i = 1; i < n - 1; ++i)
    for (int j = 1; j < m - 1; ++j)
      A[i * m + j] = (A[(i - 1) * m + j] + A[i * m + j - 1] + A[i * m + j] +
                      A[(i + 1) * m + j] + A[i * m + j + 1]) /
                     5;
}

int main() {
  unsigned X = 5;
  for (Size Z : testSizes()) {
    std::vector<double> A(Z.n * Z.m);
    for (double &v : A) v = nextRandom(X) % 1000;
    for (int t = 0; t < 3; ++t)
      sweep(A.data(), Z.n, Z.m);
    printHash(Z, A);
  }
}
