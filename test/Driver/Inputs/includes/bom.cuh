// A header saved with a byte-order mark.
#pragma once
__global__ void bomKernel(int *p) { p[threadIdx.x] = 42; }
