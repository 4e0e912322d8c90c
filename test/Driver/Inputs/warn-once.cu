// One warning in host code and one in device code: each is printed once.
__device__ int dev(int x) {
  if (x)
    return 1;
}
__global__ void k(int *p) { p[0] = dev(p[1]); }
int host(int x) {
  if (x)
    return 2;
}
int main() {
  int *d = nullptr;
  k<<<1, 1>>>(d);
  return host(0) == 2 ? 0 : 1;
}
