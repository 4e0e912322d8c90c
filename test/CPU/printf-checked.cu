// Device printf under CLEAVE_CHECK=memory: the checked variant validates
// the strings that `%s` reads. String literals, `__device__` arrays and
// terminated device buffers pass, a precision bounds the read; a device
// buffer without a terminating zero fails the launch with
// cudaErrorIllegalAddress before anything is read past its end, naming the
// thread and block, and nothing of that call is printed.
// REQUIRES: cleave-rt-api
// RUN: rm -rf %t && mkdir -p %t
// RUN: %cleave compile %s -o %t/checked
// RUN: env CLEAVE_DEVICES=cpu CLEAVE_CHECK=memory %t/checked > %t/out.txt 2> %t/err.txt
// RUN: FileCheck %s < %t/out.txt
// RUN: FileCheck %s --check-prefix=ERR < %t/err.txt
// A wild `%s` pointer: the checked variant names it; without checks the
// fault inside the formatter (which holds no lock) is caught as any other
// memory fault of a CPU kernel.
// RUN: env CLEAVE_DEVICES=cpu CLEAVE_CHECK=memory %t/checked wild 2>&1 \
// RUN:   | FileCheck %s --check-prefix=WILD-CHECKED
// RUN: env CLEAVE_DEVICES=cpu %t/checked wild 2>&1 | FileCheck %s --check-prefix=WILD

#include <cstdio>

__device__ char Greeting[] = "device array";

__global__ void strings(const char *term, const char *unterm) {
  printf("literal %s, %s, buffer %s, bounded %.4s\n", "text", Greeting, term,
         unterm);
}

__global__ void overrun(const char *unterm) {
  if (blockIdx.x == 1 && threadIdx.x == 3)
    printf("overrun %s\n", unterm);
}

__global__ void wild(const char *p) { printf("wild %s\n", p + 16); }

// WILD-CHECKED: invalid read of 1 byte(s) at 0x10 by thread (0,0,0) of block (0,0,0) of kernel {{.*}}wild{{.*}}: it is a null pointer (plus 16)
// WILD-CHECKED: wild: cudaErrorIllegalAddress
// WILD: illegal memory access by kernel {{.*}}wild{{.*}} at address 0x10 (not mapped)
// WILD: wild: cudaErrorIllegalAddress

// CHECK: literal text, device array, buffer terminated, bounded abcd
// CHECK-NEXT: strings: cudaSuccess
// CHECK-NOT: overrun abcd
// CHECK: overrun: cudaErrorIllegalAddress
// ERR: invalid read of 9 byte(s) at 0x{{[0-9a-f]+}} by thread (3,0,0) of block (1,0,0) of kernel {{.*}}overrun{{.*}}: it runs 1 byte(s) past the end of the 8-byte allocation at 0x{{[0-9a-f]+}}

int main(int Argc, char **Argv) {
  if (Argc > 1) {
    wild<<<1, 1>>>(nullptr);
    printf("wild: %s\n", cudaGetErrorName(cudaDeviceSynchronize()));
    return 0;
  }
  const char Term[] = "terminated";
  const char Unterm[8] = {'a', 'b', 'c', 'd', 'e', 'f', 'g', 'h'};
  char *DTerm, *DUnterm;
  cudaMalloc(&DTerm, sizeof Term);
  cudaMalloc(&DUnterm, sizeof Unterm);
  cudaMemcpy(DTerm, Term, sizeof Term, cudaMemcpyHostToDevice);
  cudaMemcpy(DUnterm, Unterm, sizeof Unterm, cudaMemcpyHostToDevice);
  strings<<<1, 1>>>(DTerm, DUnterm);
  printf("strings: %s\n", cudaGetErrorName(cudaDeviceSynchronize()));
  overrun<<<2, 8>>>(DUnterm);
  printf("overrun: %s\n", cudaGetErrorName(cudaDeviceSynchronize()));
  return 0;
}
