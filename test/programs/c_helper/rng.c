/* The C part of the program (compiled as C, as nvcc compiles .c files). */
#include "rng.h"

void rngSeed(Rng *r, unsigned long long seed) {
  r->state = seed * 6364136223846793005ULL + 1442695040888963407ULL;
}

float rngUniform(Rng *r) {
  /* xorshift64* */
  unsigned long long x = r->state;
  x ^= x >> 12;
  x ^= x << 25;
  x ^= x >> 27;
  r->state = x;
  return (float)((x * 2685821657736338717ULL) >> 40) / (float)(1 << 24);
}

unsigned long long checksum32(const unsigned int *words, int n) {
  unsigned long long a = 1, b = 0;
  int i;
  for (i = 0; i < n; ++i) {
    a = (a + words[i]) % 4294967291ULL;
    b = (b + a) % 4294967291ULL;
  }
  return (b << 32) | a;
}
