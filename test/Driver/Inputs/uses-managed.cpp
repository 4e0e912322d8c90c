// Host C++ that calls CUDA runtime API outside Cleave's subset: only the
// link can tell.
#include <cuda_runtime.h>
int makeManaged(void **p) { return cudaMallocManaged(p, 64) == cudaSuccess; }
