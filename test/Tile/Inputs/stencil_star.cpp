// Iterated star stencils (docs/tile.md, technique(timeskew)): radius 1 to
// 4, in both forms (the swap by std::swap and by a temporary), with int,
// float and double grids; bit-exact for the reasons stencil_box.cpp gives.
#include "sizes.h"
#include <utility>

void star1(int *&A, int *&B, int n, int m, int T) {
#pragma cleave tile technique(timeskew) tile(16, 8) steps(5)
  for (int t = 0; t < T; ++t) {
    for (int i = 1; i < n - 1; ++i)
      for (int j = 1; j < m - 1; ++j)
        B[i * m + j] =
            (A[(i - 1) * m + j] + A[i * m + j] + A[(i + 1) * m + j] +
             A[i * m + j - 1] + A[i * m + j + 1] - 4 * A[i * m + j]) /
            2;
    int *tmp = A;
    A = B;
    B = tmp;
  }
}

void star2(float *A, float *B, int n, int m, int T) {
#pragma cleave tile technique(timeskew) tile(4, 32) steps(1)
  for (int t = 0; t < T; ++t) {
    for (int i = 2; i < n - 2; ++i)
      for (int j = 2; j < m - 2; ++j)
        B[i * m + j] =
            (A[(i - 2) * m + j] + A[(i - 1) * m + j] + A[i * m + j] +
             A[(i + 1) * m + j] + A[(i + 2) * m + j] + A[i * m + j - 2] +
             A[i * m + j - 1] + A[i * m + j + 1] + A[i * m + j + 2]) *
            0.125f;
    for (int i = 2; i < n - 2; ++i)
      for (int j = 2; j < m - 2; ++j)
        A[i * m + j] = B[i * m + j];
  }
}

void star3(int *A, int *B, int n, int m, int T) {
#pragma cleave tile technique(timeskew)
  for (int t = 0; t < T; ++t) {
    for (int i = 3; i < n - 3; ++i)
      for (int j = 3; j < m - 3; ++j)
        B[i * m + j] =
            (A[(i - 3) * m + j] + A[(i - 2) * m + j] + A[(i - 1) * m + j] +
             A[i * m + j] + A[(i + 1) * m + j] + A[(i + 2) * m + j] +
             A[(i + 3) * m + j] + A[i * m + j - 3] + A[i * m + j - 2] +
             A[i * m + j - 1] + A[i * m + j + 1] + A[i * m + j + 2] +
             A[i * m + j + 3]) %
            1009;
    for (int i = 3; i < n - 3; ++i)
      for (int j = 3; j < m - 3; ++j)
        A[i * m + j] = B[i * m + j];
  }
}

void star4(double *&A, double *&B, int n, int m, int T) {
#pragma cleave tile technique(timeskew) tile(8, 8)
  for (int t = 0; t < T; ++t) {
    for (int i = 4; i < n - 4; ++i)
      for (int j = 4; j < m - 4; ++j)
        B[i * m + j] =
            (A[(i - 4) * m + j] + A[(i - 3) * m + j] + A[(i - 2) * m + j] +
             A[(i - 1) * m + j] + A[i * m + j] + A[(i + 1) * m + j] +
             A[(i + 2) * m + j] + A[(i + 3) * m + j] + A[(i + 4) * m + j] +
             A[i * m + j - 4] + A[i * m + j - 3] + A[i * m + j - 2] +
             A[i * m + j - 1] + A[i * m + j + 1] + A[i * m + j + 2] +
             A[i * m + j + 3] + A[i * m + j + 4]) /
            17;
    std::swap(A, B);
  }
}

template <typename E> std::vector<E> grid(Size Z, unsigned &X) {
  std::vector<E> V((size_t)Z.n * Z.m);
  for (E &v : V)
    v = E(nextRandom(X) % 1000);
  return V;
}

int main() {
  unsigned X = 13;
  for (Size Z : testSizes())
    for (int T : {1, 3, 8}) {
      {
        std::vector<int> A = grid<int>(Z, X), B = grid<int>(Z, X);
        int *PA = A.data(), *PB = B.data();
        star1(PA, PB, Z.n, Z.m, T);
        printf("star1 T=%d %s ", T, PA == A.data() ? "same" : "swapped");
        printHash(Z, A);
        printf("star1 T=%d ", T);
        printHash(Z, B);
      }
      {
        std::vector<float> A = grid<float>(Z, X), B = grid<float>(Z, X);
        star2(A.data(), B.data(), Z.n, Z.m, T);
        printf("star2 T=%d ", T);
        printHash(Z, A);
        printf("star2 T=%d ", T);
        printHash(Z, B);
      }
      {
        std::vector<int> A = grid<int>(Z, X), B = grid<int>(Z, X);
        star3(A.data(), B.data(), Z.n, Z.m, T);
        printf("star3 T=%d ", T);
        printHash(Z, A);
        printf("star3 T=%d ", T);
        printHash(Z, B);
      }
      {
        std::vector<double> A = grid<double>(Z, X), B = grid<double>(Z, X);
        double *PA = A.data(), *PB = B.data();
        star4(PA, PB, Z.n, Z.m, T);
        printf("star4 T=%d %s ", T, PA == A.data() ? "same" : "swapped");
        printHash(Z, A);
        printf("star4 T=%d ", T);
        printHash(Z, B);
      }
    }
}
