// A static __device__ variable has internal linkage in the device code:
// the bundle does not list it, so the runtime could neither copy to it nor
// keep its copies on several devices consistent.
static __device__ int counter;
__global__ void count(int *p) { p[0] = atomicAdd(&counter, 1); }
int main() { return 0; }
