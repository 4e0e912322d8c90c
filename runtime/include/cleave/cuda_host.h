/*===- cleave/cuda_host.h - What a rewritten CUDA host source includes ----===*
 *
 * Part of Cleave's runtime (no LLVM). `cleave compile app.cu` rewrites the
 * host side of app.cu into app.cleave.cpp, plain C++ that g++ or clang++
 * compiles with -I<CUDA include> -I<Cleave runtime include>; its first line
 * includes this header (docs/driver.md).
 *
 * CUDA's crt/host_defines.h defines __global__, __device__, ... only when
 * they are not defined yet (or when a CUDA compiler, __CUDACC__, is at
 * work), so defining them as nothing before <cuda_runtime.h> makes the
 * attributes vanish from the host compiler's view. Kernel bodies and
 * __device__ functions are already gone from the rewritten source; what
 * remains of the attributes is on declarations, __host__ __device__
 * functions and the host shadows of __device__/__constant__ variables.
 *
 * The helpers below are what the rewritten launches and kernel stubs call:
 *   k<<<g, b, s, st>>>(args)
 *     -> (cleavePushCallConfiguration(g, b, s, st) ? (void)0 : k(args))
 *   the body of __global__ void k(params)
 *     -> { void *args[] = {&params...}; cleaveLaunchFromStub(&k, args); }
 * (the protocol of CUDA's own __cudaPushCallConfiguration and host stubs).
 *===----------------------------------------------------------------------===*/
#ifndef CLEAVE_CUDA_HOST_H
#define CLEAVE_CUDA_HOST_H

#if defined(__CUDACC__)
#error "cleave/cuda_host.h is for the host compiler (g++, clang++), not a CUDA compiler"
#endif
#ifndef __cplusplus
#error "cleave/cuda_host.h needs C++ (the rewritten source is C++)"
#endif

#define __global__
#define __device__
#define __host__
#define __shared__
#define __constant__
#define __managed__
#define __grid_constant__
/* Empty, not __attribute__((noinline)): libstdc++ spells the attribute
 * __attribute__((__noinline__)), which must stay valid. */
#define __noinline__
#define __launch_bounds__(...)
#define __cluster_dims__(...)
#define __block_size__(...)

/* The C API first, so that the kernel overloads below come before
 * <cuda_runtime.h>: its occupancy templates
 * (cudaOccupancyMaxPotentialBlockSize) call cudaFuncGetAttributes(attr,
 * kernel), which must find the overload for a kernel where the template is
 * defined. */
#include <cuda_runtime_api.h>

/* Overloads that cuda_runtime.h declares only for a CUDA compiler (under
 * __CUDACC__): the kernel itself instead of a const void *. The same
 * templates as CUDA's, so overload resolution picks the same functions. */
template <class T>
static inline cudaError_t cudaFuncGetAttributes(struct cudaFuncAttributes *attr,
                                                T *entry) {
  return ::cudaFuncGetAttributes(attr, (const void *)entry);
}

template <class T>
static inline cudaError_t cudaFuncSetCacheConfig(T *func,
                                                 enum cudaFuncCache config) {
  return ::cudaFuncSetCacheConfig((const void *)func, config);
}

#include <cuda_runtime.h>

#include "cuda_removed_api.h"

#include <stddef.h>
#include <stdint.h>

#include "cleave_rt.h"

/* <cooperative_groups.h> is empty for a host compiler; keep
 * `namespace cg = cooperative_groups;` at file scope valid. */
namespace cooperative_groups {}

/* The C++ overloads that cuda_runtime.h declares only for a CUDA compiler
 * (under __CUDACC__), for the functions of the runtime's subset: CUDA code
 * passes the symbol itself (cudaMemcpyToSymbol(coeffs, ...)) or the kernel
 * (cudaFuncSetAttribute(kernel, ...)); the host shadow's or the stub's
 * address is what the runtime registered. The same templates as CUDA's, so
 * overload resolution picks the same functions. */
template <class T>
static inline cudaError_t
cudaMemcpyToSymbol(const T &symbol, const void *src, size_t count,
                   size_t offset = 0,
                   enum cudaMemcpyKind kind = cudaMemcpyHostToDevice) {
  return ::cudaMemcpyToSymbol((const void *)&symbol, src, count, offset, kind);
}

template <class T>
static inline cudaError_t
cudaMemcpyToSymbolAsync(const T &symbol, const void *src, size_t count,
                        size_t offset = 0,
                        enum cudaMemcpyKind kind = cudaMemcpyHostToDevice,
                        cudaStream_t stream = 0) {
  return ::cudaMemcpyToSymbolAsync((const void *)&symbol, src, count, offset,
                                   kind, stream);
}

template <class T>
static inline cudaError_t
cudaMemcpyFromSymbol(void *dst, const T &symbol, size_t count,
                     size_t offset = 0,
                     enum cudaMemcpyKind kind = cudaMemcpyDeviceToHost) {
  return ::cudaMemcpyFromSymbol(dst, (const void *)&symbol, count, offset,
                                kind);
}

template <class T>
static inline cudaError_t
cudaMemcpyFromSymbolAsync(void *dst, const T &symbol, size_t count,
                          size_t offset = 0,
                          enum cudaMemcpyKind kind = cudaMemcpyDeviceToHost,
                          cudaStream_t stream = 0) {
  return ::cudaMemcpyFromSymbolAsync(dst, (const void *)&symbol, count, offset,
                                     kind, stream);
}

template <class T>
static inline cudaError_t cudaFuncSetAttribute(T *func,
                                               enum cudaFuncAttribute attr,
                                               int value) {
  return ::cudaFuncSetAttribute((const void *)func, attr, value);
}

/* The configuration of the next kernel-stub call; 0 on success, so that
 * `push(...) ? (void)0 : k(args)` calls the stub. */
static inline unsigned cleavePushCallConfiguration(dim3 grid, dim3 block,
                                                   size_t shared_bytes = 0,
                                                   cudaStream_t stream = 0) {
  const uint32_t g[3] = {grid.x, grid.y, grid.z};
  const uint32_t b[3] = {block.x, block.y, block.z};
  return cleave_push_call_configuration(g, b, shared_bytes, (void *)stream);
}

/* Takes the configuration the last push stored (cudaErrorInvalidValue, with
 * everything zeroed, when there is none). */
static inline cudaError_t cleavePopCallConfiguration(dim3 *grid, dim3 *block,
                                                     size_t *shared_bytes,
                                                     cudaStream_t *stream) {
  uint32_t g[3], b[3];
  void *s = nullptr;
  int err = cleave_pop_call_configuration(g, b, shared_bytes, &s);
  *grid = dim3(g[0], g[1], g[2]);
  *block = dim3(b[0], b[1], b[2]);
  *stream = (cudaStream_t)s;
  return (cudaError_t)err;
}

/* The body of every kernel stub: the configuration the launch pushed, then
 * cudaLaunchKernel with the stub's own address, which identifies the kernel
 * (cleave_register_kernel). Errors reach the program the CUDA way, through
 * cudaGetLastError and the next synchronizing call. */
static inline void cleaveLaunchFromStub(const void *kernel, void **args) {
  dim3 grid, block;
  size_t shared_bytes = 0;
  cudaStream_t stream = 0;
  if (cleavePopCallConfiguration(&grid, &block, &shared_bytes, &stream) !=
      cudaSuccess)
    return;
  (void)cudaLaunchKernel(kernel, grid, block, args, shared_bytes, stream);
}

#endif /* CLEAVE_CUDA_HOST_H */
