// Launches written with spaces between the chevrons, as nvcc accepts them,
// next to code whose `<<`, `>>`, `<` and `>` are not launches.
#include <cstdio>
#include <vector>
#include <iostream>
template <typename T> struct Box { T v; };
template <typename T> struct Pair { T a, b; };
template <int N> struct Val { static const int value = N; };
template <int N> constexpr int V = N;
template <typename T> class Wrap;
template <typename T> std::ostream &operator<<(std::ostream &, const Wrap<T> &);
template <typename T> class Wrap {
  T v;
public:
  explicit Wrap(T v) : v(v) {}
  friend std::ostream &operator<< <>(std::ostream &, const Wrap<T> &);
};
template <typename T> std::ostream &operator<<(std::ostream &os, const Wrap<T> &w) { return os << w.v; }

__global__ void inc(int *x, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] += 1;
}
template <typename T> __global__ void addT(T *x, T v, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] += v;
}

int main() {
  const int n = 100;
  int *x, h[n];
  cudaMalloc(&x, sizeof h);
  cudaMemset(x, 0, sizeof h);
  inc << < (n + 31) / 32, 32 >> > (x, n);
  inc<< <(n + 31) / 32, 32>> >(x, n);
  inc< < <(n + 31) / 32, 32> > >(x, n);
  inc<<<(n + 31) >> 5 << 1, 32 >> > (x, n);
  inc<< <V<V<3>> > 2 ? 4 : 1, 32>> >(x, n);
  addT<int> << < dim3((n + 63) >> 6 > 0 ? 2 : 1), dim3(64) >>>(x, 10, n);
  inc <<
    < 4, 32 >>
    > (x, n);
  // Not launches: shifts, template closers, comparisons, operator<< <>.
  int s = (n << 2) >> 1;                     // 200
  bool c = Val<Val<3>::value>::value > 2;    // true
  std::vector<std::vector<int> > vv(2, std::vector<int>(3, 1));
  std::vector<Box<Pair<int>> > vb(1);
  int t = Val<Val<5>::value>::value >> 1;    // 2
  bool u = V<V<3>> > 2;                      // true
  const char *str = "k << < g, b >> > (args)";
  std::cout << Wrap<int>(s) << " " << c << " " << vv[1][2] << " " << vb.size() << " " << t << " " << u << " " << str << "\n";
  cudaMemcpy(h, x, sizeof h, cudaMemcpyDeviceToHost);
  int wrong = 0;
  for (int i = 0; i < n; ++i) wrong += h[i] != 16;
  printf("%s: %d wrong\n", wrong ? "FAIL" : "PASS", wrong);
  return wrong != 0;
}
