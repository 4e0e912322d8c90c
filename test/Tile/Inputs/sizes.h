// The problem sizes of the differential tests: edge cases, then sizes from
// a fixed pseudo-random sequence, none a multiple of the tile sizes used.
#include <cstdio>
#include <vector>

struct Size {
  int n, m;
};

inline std::vector<Size> testSizes() {
  std::vector<Size> S = {{1, 1}, {1, 70}, {70, 1}, {2, 3}, {33, 65}};
  unsigned X = 2024;
  for (int K = 0; K < 6; ++K) {
    X = X * 1103515245u + 12345u;
    int N = 3 + (X >> 16) % 150;
    X = X * 1103515245u + 12345u;
    int M = 3 + (X >> 16) % 200;
    S.push_back({N, M});
  }
  return S;
}

inline unsigned nextRandom(unsigned &X) {
  X = X * 1103515245u + 12345u;
  return X >> 16;
}

/// One line per size: a hash of every cell, so that any wrong cell shows.
template <typename T> void printHash(Size Z, const std::vector<T> &V) {
  unsigned long long H = 1469598103934665603ull;
  for (const T &X : V) {
    const unsigned char *B = reinterpret_cast<const unsigned char *>(&X);
    for (unsigned I = 0; I < sizeof(T); ++I)
      H = (H ^ B[I]) * 1099511628211ull;
  }
  printf("%d x %d: %016llx\n", Z.n, Z.m, H);
}
