#include "does-not-exist.h"
__global__ void k(float *x) { x[0] = 1; }
