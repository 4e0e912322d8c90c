// A kernel with an error that Clang's parse finds.
__global__ void fill2(int *x) {
  x[threadIdx.x] = notDeclared;
}
