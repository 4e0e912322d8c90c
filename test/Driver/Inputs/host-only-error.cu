// Host code that only the host compiler sees (CUDA compilers define
// __CUDACC__, g++ does not): its error must point at this file.
__global__ void k(int *p) { p[0] = 1; }

#ifndef __CUDACC__
int broken = "not an int";
#endif

int main() { return 0; }
