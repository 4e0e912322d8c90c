// A kernel template: the stub names the current specialization, every
// instantiation the host code makes is registered under the device symbol
// the device compilation gives it, and launches inside function templates
// and lambdas are rewritten like any other.
// RUN: %strip_comments %s %t/templates.cu
// RUN: %cleave compile --emit=host-source %t/templates.cu -o %t.cpp
// RUN: FileCheck %s < %t.cpp
// RUN: FileCheck %s --check-prefix=PACK < %t.cpp
// The names registered are the names the device code defines.
// RUN: %cleave compile --emit=ir %s -o %t.ll
// RUN: cat %t.cpp %t.ll | FileCheck %s --check-prefix=NAMES

namespace blas {
template <typename T, int N>
__global__ void axpy(T a, const T *x, T *y) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  for (int k = 0; k < N; ++k)
    y[i * N + k] += a * x[i * N + k];
}
} // namespace blas
// CHECK: __global__ void axpy(T a, const T *x, T *y) {
// CHECK: cleaveLaunchFromStub((const void *)static_cast<void (*)(decltype(a), decltype(x), decltype(y))>(&::blas::axpy<T, N>), __cleave_args);

template <typename T> void twice(T a, const T *x, T *y, int n) {
  blas::axpy<T, 2><<<n / 64, 64>>>(a, x, y);
  // CHECK: (cleavePushCallConfiguration(n / 64, 64) ? (void)0 : blas::axpy<T, 2>(a, x, y));
}

// An explicit specialization is a definition of its own.
template <> __global__ void blas::axpy<int, 1>(int a, const int *x, int *y) {
  y[threadIdx.x] = a * x[threadIdx.x];
}
// CHECK: template <> __global__ void blas::axpy<int, 1>(int a, const int *x, int *y) {
// CHECK: (&::blas::axpy<int, 1>), __cleave_args);

void run(float *xf, float *yf, double *xd, double *yd, int *xi, int *yi) {
  twice(2.0f, xf, yf, 1024);
  twice(3.0, xd, yd, 1024);
  auto launch = [&](int n) { blas::axpy<float, 4><<<n, 32>>>(1.0f, xf, yf); };
  // CHECK: auto launch = [&](int n) { (cleavePushCallConfiguration(n, 32) ? (void)0 : blas::axpy<float, 4>(1.0f, xf, yf)); };
  launch(8);
  blas::axpy<int, 1><<<1, 32>>>(2, xi, yi);
}
// Instantiations are registered in the order Clang made them.
// CHECK-DAG: cleave_register_kernel((const void *)static_cast<void (*)(float, const float *, float *)>(&::blas::axpy<float, 2>), "_ZN4blas4axpyIfLi2EEEvT_PKS1_PS1_");
// CHECK-DAG: static_cast<void (*)(double, const double *, double *)>(&::blas::axpy<double, 2>)
// CHECK-DAG: static_cast<void (*)(float, const float *, float *)>(&::blas::axpy<float, 4>)
// CHECK-DAG: static_cast<void (*)(int, const int *, int *)>(&::blas::axpy<int, 1>)

// NAMES-DAG: cleave_register_kernel({{.*}}axpy<float, 2>), "[[F2:_Z[A-Za-z0-9_]+]]");
// NAMES-DAG: cleave_register_kernel({{.*}}axpy<double, 2>), "[[D2:_Z[A-Za-z0-9_]+]]");
// NAMES-DAG: cleave_register_kernel({{.*}}axpy<float, 4>), "[[F4:_Z[A-Za-z0-9_]+]]");
// NAMES-DAG: cleave_register_kernel({{.*}}axpy<int, 1>), "[[I1:_Z[A-Za-z0-9_]+]]");
// NAMES: target triple = "nvptx64
// NAMES-DAG: define {{.*}}void @[[F2]](
// NAMES-DAG: define {{.*}}void @[[D2]](
// NAMES-DAG: define {{.*}}void @[[F4]](
// NAMES-DAG: define {{.*}}void @[[I1]](

// A parameter pack is passed on as its expansion.
template <typename... Ts> __global__ void sum(float *out, Ts... ts) {
  out[threadIdx.x] = (0.0f + ... + float(ts));
}
void runSum(float *out) {
  sum<<<1, 4>>>(out, 1, 2.5f);
  sum<<<1, 4>>>(out);
}
// PACK: void *__cleave_args[] = {(void *)&out, (void *)&ts..., nullptr};
// PACK-NEXT: cleaveLaunchFromStub((const void *)static_cast<void (*)(decltype(out), decltype(ts)...)>(&::sum<Ts...>), __cleave_args);
// PACK-DAG: cleave_register_kernel((const void *)static_cast<void (*)(float *, int, float)>(&::sum<int, float>), "_Z3sumIJifEEvPfDpT_");
// PACK-DAG: cleave_register_kernel((const void *)static_cast<void (*)(float *)>(&::sum<>), "_Z3sumIJEEvPfDpT_");
// NAMES-DAG: define {{.*}}void @_Z3sumIJifEEvPfDpT_(
// NAMES-DAG: define {{.*}}void @_Z3sumIJEEvPfDpT_(
