/* A small C library used by the CUDA program: a random number generator and
 * a checksum, compiled as C. */
#ifndef RNG_H
#define RNG_H

#ifdef __cplusplus
extern "C" {
#endif

typedef struct {
  unsigned long long state;
} Rng;

void rngSeed(Rng *r, unsigned long long seed);
/* A uniform float in [0, 1). */
float rngUniform(Rng *r);
/* Fletcher-style checksum of 32-bit words. */
unsigned long long checksum32(const unsigned int *words, int n);

#ifdef __cplusplus
}
#endif

#endif
