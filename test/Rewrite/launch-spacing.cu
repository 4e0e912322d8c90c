// Chevrons split by spaces are one launch, for the host parse (here) and
// the device compile alike; lines and columns stay where they were.
// RUN: %strip_comments %s %t/launch-spacing.cu
// RUN: %cleave compile --emit=host-source %t/launch-spacing.cu -o - | FileCheck %s
// The comment's own text is checked in the input as it is (the pattern is
// anchored so that it cannot match the line that holds it).
// RUN: %cleave compile --emit=host-source %s -o - | FileCheck %s --check-prefix=KEEP
// RUN: not %cleave compile --emit=host-source -DCOLUMN %s -o - 2>&1 | FileCheck %s --check-prefix=COLUMN
// RUN: not %cleave compile --emit=ir -DCOLUMN %s -o - 2>&1 | FileCheck %s --check-prefix=COLUMN
#include <cuda_runtime.h>
#include <ostream>

__global__ void k(int *p, int n) { p[0] = n; }
template <int N> constexpr int V = N;
template <typename T> struct W;
template <typename T> std::ostream &operator<<(std::ostream &, const W<T> &);
template <typename T> struct W {
  friend std::ostream &operator<< <>(std::ostream &, const W<T> &);
};
// CHECK: friend std::ostream &operator<< <>(std::ostream &, const W<T> &);

void run(int *p, int n) {
  k << < 1, 32 >> > (p, n);
  // CHECK: {{^}}  (cleavePushCallConfiguration(1, 32) ? (void)0 : k         (p, n));
  k<< <n >> 1, 32>> >(p, n >> 2);
  // CHECK: {{^}}  (cleavePushCallConfiguration(n >> 1, 32) ? (void)0 : k (p, n >> 2));
  k<<<V<V<3>> > 2 ? 4 : 1, 32>> > (p, n);
  // CHECK: {{^}}  (cleavePushCallConfiguration(V<V<3>> > 2 ? 4 : 1, 32) ? (void)0 : k  (p, n));
  k<<
      < 2, 64 >>
      > (p, n);
  // CHECK: {{^}}  (cleavePushCallConfiguration(2, 64) ? (void)0 : k {{ *$}}
  // CHECK: {{^ *}}(p, n));
  // Comments and strings keep their text: k << < 1, 1 >> > (p, n)
  // KEEP: {{^}}  // Comments and strings keep their text: k << < 1, 1 >> > (p, n){{$}}
  const char *s = "k << < 1, 1 >> > (p, n)";
  // CHECK: const char *s = "k << < 1, 1 >> > (p, n)";
  bool b = V<V<3>> > 2;
  // CHECK: bool b = V<V<3>> > 2;
  int t = (n << 2) >> 1 > 0;
  // CHECK: int t = (n << 2) >> 1 > 0;
#ifdef COLUMN
  k << < 1, 1 >> > (p, undeclared);
  // COLUMN: launch-spacing.cu:[[@LINE-1]]:24: error: use of undeclared identifier 'undeclared'
#endif
}
