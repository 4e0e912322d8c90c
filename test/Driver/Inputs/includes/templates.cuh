// A kernel template, instantiated by the file that includes this header.
#ifndef TEMPLATES_CUH
#define TEMPLATES_CUH

template <typename T, int Step>
__global__ void iota(T *out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    out[i] = T(i * Step);
}

#endif
