// Iterated box stencils (docs/tile.md, technique(timeskew)): radius 1 to 3,
// in the copy-back and the pointer-swap forms, with float, int and double
// grids. Sums and integer arithmetic only: the tiles evaluate each cell's
// expression in the order the nest does, and there is no multiply-add a
// device compiler could contract where the host compiler does not, so the
// results must be bit-exact.
#include "sizes.h"
#include <utility>

void box1(float *A, float *B, int n, int m, int T) {
#pragma cleave tile technique(timeskew) tile(8, 16) steps(3)
  for (int t = 0; t < T; ++t) {
    for (int i = 1; i < n - 1; ++i)
      for (int j = 1; j < m - 1; ++j)
        B[i * m + j] =
            (A[(i - 1) * m + j - 1] + A[(i - 1) * m + j] +
             A[(i - 1) * m + j + 1] + A[i * m + j - 1] + A[i * m + j] +
             A[i * m + j + 1] + A[(i + 1) * m + j - 1] + A[(i + 1) * m + j] +
             A[(i + 1) * m + j + 1]) /
            9.0f;
    for (int i = 1; i < n - 1; ++i)
      for (int j = 1; j < m - 1; ++j)
        A[i * m + j] = B[i * m + j];
  }
}

void box2(int *&A, int *&B, const int *w, int n, int m, int T) {
#pragma cleave tile technique(timeskew) tile(8, 16) steps(2)
  for (int t = 0; t < T; ++t) {
    for (int i = 2; i < n - 2; ++i)
      for (int j = 2; j < m - 2; ++j)
        B[i * m + j] =
            (w[0] * A[(i - 2) * m + j - 2] + w[1] * A[(i - 2) * m + j - 1] +
             w[2] * A[(i - 2) * m + j] + w[3] * A[(i - 2) * m + j + 1] +
             w[4] * A[(i - 2) * m + j + 2] + w[5] * A[(i - 1) * m + j - 2] +
             w[6] * A[(i - 1) * m + j - 1] + w[7] * A[(i - 1) * m + j] +
             w[8] * A[(i - 1) * m + j + 1] + w[9] * A[(i - 1) * m + j + 2] +
             w[10] * A[i * m + j - 2] + w[11] * A[i * m + j - 1] +
             w[12] * A[i * m + j] + w[13] * A[i * m + j + 1] +
             w[14] * A[i * m + j + 2] + w[15] * A[(i + 1) * m + j - 2] +
             w[16] * A[(i + 1) * m + j - 1] + w[17] * A[(i + 1) * m + j] +
             w[18] * A[(i + 1) * m + j + 1] + w[19] * A[(i + 1) * m + j + 2] +
             w[20] * A[(i + 2) * m + j - 2] + w[21] * A[(i + 2) * m + j - 1] +
             w[22] * A[(i + 2) * m + j] + w[23] * A[(i + 2) * m + j + 1] +
             w[24] * A[(i + 2) * m + j + 2]) /
            64;
    std::swap(A, B);
  }
}

void box3(double *A, double *B, int n, int m, int T) {
#pragma cleave tile technique(timeskew)
  for (int t = 0; t < T; ++t) {
    for (int i = 3; i < n - 3; ++i)
      for (int j = 3; j < m - 3; ++j)
        B[i * m + j] =
            (A[(i - 3) * m + j - 3] + A[(i - 3) * m + j - 2] +
             A[(i - 3) * m + j - 1] + A[(i - 3) * m + j] +
             A[(i - 3) * m + j + 1] + A[(i - 3) * m + j + 2] +
             A[(i - 3) * m + j + 3] + A[(i - 2) * m + j - 3] +
             A[(i - 2) * m + j - 2] + A[(i - 2) * m + j - 1] +
             A[(i - 2) * m + j] + A[(i - 2) * m + j + 1] +
             A[(i - 2) * m + j + 2] + A[(i - 2) * m + j + 3] +
             A[(i - 1) * m + j - 3] + A[(i - 1) * m + j - 2] +
             A[(i - 1) * m + j - 1] + A[(i - 1) * m + j] +
             A[(i - 1) * m + j + 1] + A[(i - 1) * m + j + 2] +
             A[(i - 1) * m + j + 3] + A[i * m + j - 3] + A[i * m + j - 2] +
             A[i * m + j - 1] + A[i * m + j] + A[i * m + j + 1] +
             A[i * m + j + 2] + A[i * m + j + 3] + A[(i + 1) * m + j - 3] +
             A[(i + 1) * m + j - 2] + A[(i + 1) * m + j - 1] +
             A[(i + 1) * m + j] + A[(i + 1) * m + j + 1] +
             A[(i + 1) * m + j + 2] + A[(i + 1) * m + j + 3] +
             A[(i + 2) * m + j - 3] + A[(i + 2) * m + j - 2] +
             A[(i + 2) * m + j - 1] + A[(i + 2) * m + j] +
             A[(i + 2) * m + j + 1] + A[(i + 2) * m + j + 2] +
             A[(i + 2) * m + j + 3] + A[(i + 3) * m + j - 3] +
             A[(i + 3) * m + j - 2] + A[(i + 3) * m + j - 1] +
             A[(i + 3) * m + j] + A[(i + 3) * m + j + 1] +
             A[(i + 3) * m + j + 2] + A[(i + 3) * m + j + 3]) /
            49.0;
    for (int i = 3; i < n - 3; ++i)
      for (int j = 3; j < m - 3; ++j)
        A[i * m + j] = B[i * m + j];
  }
}

template <typename E> std::vector<E> grid(Size Z, unsigned &X) {
  std::vector<E> V((size_t)Z.n * Z.m);
  for (E &v : V)
    v = E(nextRandom(X) % 1000);
  return V;
}

int main() {
  int W[25];
  for (int K = 0; K < 25; ++K)
    W[K] = K % 5 + 1;
  unsigned X = 11;
  for (Size Z : testSizes())
    for (int T : {1, 3, 8}) {
      {
        std::vector<float> A = grid<float>(Z, X), B = grid<float>(Z, X);
        box1(A.data(), B.data(), Z.n, Z.m, T);
        printf("box1 T=%d ", T);
        printHash(Z, A);
        printf("box1 T=%d ", T);
        printHash(Z, B);
      }
      {
        std::vector<int> A = grid<int>(Z, X), B = grid<int>(Z, X);
        int *PA = A.data(), *PB = B.data();
        box2(PA, PB, W, Z.n, Z.m, T);
        printf("box2 T=%d %s ", T, PA == A.data() ? "same" : "swapped");
        printHash(Z, A);
        printf("box2 T=%d ", T);
        printHash(Z, B);
      }
      {
        std::vector<double> A = grid<double>(Z, X), B = grid<double>(Z, X);
        box3(A.data(), B.data(), Z.n, Z.m, T);
        printf("box3 T=%d ", T);
        printHash(Z, A);
        printf("box3 T=%d ", T);
        printHash(Z, B);
      }
    }
}
