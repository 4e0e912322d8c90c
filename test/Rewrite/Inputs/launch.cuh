// A header with a launch: Cleave rewrites only the .cu file it compiles.
__global__ void from_header(int *p);
inline void launch_from_header(int *p) { from_header<<<1, 1>>>(p); }
