// No include guard, and a kernel whose name comes from the includer: each
// inclusion is rewritten differently, and one copy cannot serve both.
__global__ void KERNEL_NAME(int *p) { p[0] = 1; }
