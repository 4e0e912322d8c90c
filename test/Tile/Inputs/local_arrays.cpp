// Declared arrays (a VLA and a fixed-size one) instead of pointers, a
// constant pitch, a constexpr helper and a scalar parameter of the body.
#include "sizes.h"

constexpr int Pitch = 40;

constexpr int mix(int x, int y, int k) { return (x * 3 + y * 5 + k) % 1009; }

int main() {
  unsigned X = 21;
  for (Size Z : testSizes()) {
    int n = Z.n % 30 + 2, m = Z.m % (Pitch - 2) + 1;
    int T[n * Pitch];
    int K[Pitch];
    for (int &v : T) v = nextRandom(X) % 100;
    for (int &v : K) v = nextRandom(X) % 100;
    int bias = n;
#pragma cleave tile tile(4, 8)
    for (int i = 1; i < n; ++i)
      for (int j = 1; j <= m; ++j)
        T[i * Pitch + j] = mix(T[(i - 1) * Pitch + j], T[i * Pitch + j - 1], K[j] + bias);
    printHash(Z, std::vector<int>(T, T + n * Pitch));
  }
}
