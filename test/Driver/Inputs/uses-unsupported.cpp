// Host C++ that calls CUDA runtime API outside Cleave's subset: only the
// link can tell.
#include <cuda_runtime.h>
int attach(void *p) { return cudaStreamAttachMemAsync(0, p) == cudaSuccess; }
