// Device-side launches go through the device runtime (CDP2 names since
// CUDA 12); the child grid would run outside any plan.
// RUN: %cuda_to_ir %s -o - | %opt -load-pass-plugin=%cleave_plugin -passes='print<cleave-legality>' -disable-output 2>&1 | FileCheck %s --implicit-check-not=issue:

// Clang refuses to name a kernel in device code, so the child comes in as a
// pointer.
// CHECK-LABEL: cleave-legality: kernel 'parent(int*, void*)'
// CHECK-NEXT:    split: no
// CHECK-NEXT:    cpu: no
// CHECK-NEXT:    issue: dynamic-parallelism (forbids split, cpu) '__cudaCDP2GetParameterBuffer'
// Filling the parameter buffer stores through a pointer an opaque call
// returned.
// CHECK-NEXT:    issue: data-dependent-store (forbids split) 'store'; address depends on 'call __cudaCDP2GetParameterBuffer'
// CHECK-NEXT:    issue: dynamic-parallelism (forbids split, cpu) '__cudaCDP2LaunchDevice'
__global__ void parent(int *out, void *child) {
  void *buf = cudaGetParameterBuffer(8, sizeof(int *));
  if (buf) {
    *(int **)buf = out;
    cudaLaunchDevice(child, buf, dim3(1), dim3(32), 0, 0);
  }
}
