// Overloaded kernels: each stub and each registration names its own
// overload through its parameter types. Unnamed parameters get names so that
// the stub can pass them on.
// RUN: %strip_comments %s %t/overloads.cu
// RUN: %cleave compile --emit=host-source %t/overloads.cu -o - | FileCheck %s

__global__ void fill(float *p, float v) { p[threadIdx.x] = v; }
__global__ void fill(int *p, int v) { p[threadIdx.x] = v; }
__global__ void touch(float *, int, float[4], int (*)(int)) {}
__global__ void nothing() {}
// CHECK: __global__ void fill(float *p, float v) {
// CHECK: cleaveLaunchFromStub((const void *)static_cast<void (*)(decltype(p), decltype(v))>(&::fill), __cleave_args);
// CHECK: __global__ void fill(int *p, int v) {
// CHECK: cleaveLaunchFromStub((const void *)static_cast<void (*)(decltype(p), decltype(v))>(&::fill), __cleave_args);
// CHECK: __global__ void touch(float * __cleave_arg0, int __cleave_arg1, float __cleave_arg2[4], int (* __cleave_arg3)(int)) {
// CHECK: void *__cleave_args[] = {(void *)&__cleave_arg0, (void *)&__cleave_arg1, (void *)&__cleave_arg2, (void *)&__cleave_arg3};
// CHECK: __global__ void nothing() {
// CHECK: void *__cleave_args[] = {nullptr};

void run(float *f, int *i) {
  fill<<<1, 32>>>(f, 1.0f);
  fill<<<1, 32>>>(i, 1);
  touch<<<1, 1>>>(f, 0, f, nullptr);
  nothing<<<1, 1>>>();
}
// CHECK: (cleavePushCallConfiguration(1, 32) ? (void)0 : fill(f, 1.0f));
// CHECK: (cleavePushCallConfiguration(1, 32) ? (void)0 : fill(i, 1));
// CHECK: (cleavePushCallConfiguration(1, 1) ? (void)0 : nothing());

// CHECK-DAG: cleave_register_kernel((const void *)static_cast<void (*)(float *, float)>(&::fill), "_Z4fillPff");
// CHECK-DAG: cleave_register_kernel((const void *)static_cast<void (*)(int *, int)>(&::fill), "_Z4fillPii");
// CHECK-DAG: cleave_register_kernel((const void *)static_cast<void (*)(float *, int, float *, int (*)(int))>(&::touch), "_Z5touchPfiS_PFiiE");
// CHECK-DAG: cleave_register_kernel((const void *)static_cast<void (*)()>(&::nothing), "_Z7nothingv");
