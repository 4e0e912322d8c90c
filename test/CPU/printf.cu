// Device printf in CPU variants: a program built by `cleave compile` prints
// from its kernels on CPU devices, formatted as CUDA's device printf does
// from Clang's packed argument buffer (ints, 64-bit integers, floats and
// doubles promoted, chars, strings from literals and from device memory,
// pointers, flags, widths and precisions, `*`, length modifiers, %%), and
// returns the number of arguments. The text of one call never interleaves
// with another's, and the host's own printf output keeps program order.
// REQUIRES: cleave-rt-api
// RUN: rm -rf %t && mkdir -p %t
// RUN: %cleave compile -Rpass-missed=cleave %s -o %t/printf 2>&1 \
// RUN:   | FileCheck %s --check-prefix=REMARK --allow-empty
// RUN: env CLEAVE_DEVICES=cpu %t/printf > %t/cpu.txt
// RUN: FileCheck %s < %t/cpu.txt
// RUN: grep '^block' %t/cpu.txt | env LC_ALL=C sort | FileCheck %s --check-prefix=SORTED
// RUN: grep -c '^block [0-9]* thread [0-9]*: 0123456789abcdefghijklmnopqrstuvwxyz$' %t/cpu.txt \
// RUN:   | FileCheck %s --check-prefix=LINES
// Split over three CPU devices, more workers than cores: the same lines.
// RUN: env CLEAVE_DEVICES=cpu,cpu,cpu CLEAVE_PARTITION=even CLEAVE_CPU_THREADS=4 \
// RUN:   %t/printf > %t/split.txt
// RUN: FileCheck %s < %t/split.txt
// RUN: grep '^block' %t/split.txt | env LC_ALL=C sort | FileCheck %s --check-prefix=SORTED
// RUN: grep -c '^block [0-9]* thread [0-9]*: 0123456789abcdefghijklmnopqrstuvwxyz$' %t/split.txt \
// RUN:   | FileCheck %s --check-prefix=LINES

// REMARK-NOT: stays GPU-only
// REMARK-NOT: no CPU variant

#include <cstdio>

__global__ void formats(const char *dstr, int *ret, float f, double d) {
  ret[0] = printf("ints %d %i %u %d|%5d|%-5d|%05d|%+d|% d\n", 42, -7, 4000000000u,
                  -2147483647 - 1, 12, 12, 12, 5, 5);
  ret[1] = printf("hex %x %X %#x %o %#o|%hhd %hd %hhu\n", 255, 255, 255, 8, 8,
                  300, 70000, 257);
  ret[2] = printf("wide %llu %lld %ld %lu %zu %lx\n", 18446744073709551615ull,
                  -9223372036854775807ll - 1, -3l, 3ul, sizeof(double),
                  0xdeadbeefcafeul);
  ret[3] = printf("float %f %.2f %e %E %g %G %a %8.3f|%-8.1f|\n", f, f, d, d,
                  d, 1e-10, 1.0, d, f);
  ret[4] = printf("char %c%c%c str %s|%.3s|%8s|%-8s| dev %s\n", 'a', 66, '!',
                  "hello", "truncated", "right", "left", dstr);
  ret[5] = printf("star |%*d|%-*d|%.*f|%*.*f|\n", 6, 1, 6, 2, 3, 3.14159, -8,
                  2, 2.5);
  ret[6] = printf("pct 100%% done %c\n", '%');
  ret[7] = printf("ptr %p\n", ret);
  ret[8] = printf("no arguments\n");
  // Mixed sizes: each argument at its natural alignment after the last.
  ret[9] = printf("mixed %d %f %lld %c %f %d\n", 1, 2.5f, 3ll, 'x', 4.25, 5);
}

// CHECK: host before
// CHECK-NEXT: ints 42 -7 4000000000 -2147483648|   12|12   |00012|+5| 5
// CHECK-NEXT: hex ff FF 0xff 10 010|44 4464 1
// CHECK-NEXT: wide 18446744073709551615 -9223372036854775808 -3 3 8 deadbeefcafe
// CHECK-NEXT: float 1.500000 1.50 -2.718282e+00 -2.718282E+00 -2.71828 1E-10 0x1p+0   -2.718|1.5     |
// CHECK-NEXT: char aB! str hello|tru|   right|left    | dev from device memory
// CHECK-NEXT: star |     1|2     |3.142|2.50    |
// CHECK-NEXT: pct 100% done %
// CHECK-NEXT: ptr 0x{{[0-9a-f]+}}
// CHECK-NEXT: no arguments
// CHECK-NEXT: mixed 1 2.500000 3 x 4.250000 5
// CHECK-NEXT: returned 9 8 6 9 8 9 1 1 0 6

__global__ void many(int *out) {
  // One call, one line: threads of concurrent blocks never split it.
  out[blockIdx.x * blockDim.x + threadIdx.x] =
      printf("block %02d thread %02d: %s\n", blockIdx.x, threadIdx.x,
             "0123456789abcdefghijklmnopqrstuvwxyz");
}

// SORTED: block 00 thread 00: 0123456789abcdefghijklmnopqrstuvwxyz
// SORTED-NEXT: block 00 thread 01: 0123456789abcdefghijklmnopqrstuvwxyz
// SORTED: block 63 thread 47: 0123456789abcdefghijklmnopqrstuvwxyz
// LINES: 3072
// CHECK: many: 3072 calls returned 3
// CHECK-NEXT: host after

int main() {
  const char Msg[] = "from device memory";
  char *DStr;
  int *Ret, *Out;
  cudaMalloc(&DStr, sizeof Msg);
  cudaMemcpy(DStr, Msg, sizeof Msg, cudaMemcpyHostToDevice);
  cudaMalloc(&Ret, 10 * sizeof(int));
  const int Blocks = 64, Threads = 48;
  cudaMalloc(&Out, Blocks * Threads * sizeof(int));
  // Buffered, as the kernel's lines are: program order on one FILE.
  printf("host before\n");
  formats<<<1, 1>>>(DStr, Ret, 1.5f, -2.718281828);
  if (cudaError_t E = cudaDeviceSynchronize()) {
    printf("error %s\n", cudaGetErrorName(E));
    return 1;
  }
  int R[10];
  cudaMemcpy(R, Ret, sizeof R, cudaMemcpyDeviceToHost);
  printf("returned");
  for (int V : R)
    printf(" %d", V);
  printf("\n");
  many<<<Blocks, Threads>>>(Out);
  static int O[Blocks * Threads];
  cudaMemcpy(O, Out, sizeof O, cudaMemcpyDeviceToHost);
  int Calls = 0;
  for (int V : O)
    Calls += V == 3;
  printf("many: %d calls returned 3\n", Calls);
  printf("host after\n");
  return 0;
}
