/*===- cleave/cuda_removed_api.h - CUDA calls that CUDA 13 removed -------===*
 *
 * Part of Cleave's runtime (no LLVM). Calls that CUDA 13's headers no
 * longer declare but that many programs still make; libcleave_rt.so defines
 * them (docs/runtime-api.md): cudaThreadSynchronize runs as
 * cudaDeviceSynchronize and cudaThreadExit as cudaDeviceReset, each with a
 * one-time warning on stderr.
 *
 * Included after <cuda_runtime_api.h>: by cleave/cuda_host.h for the host
 * compiler, and force-included by the driver's parse of every CUDA file
 * (a copy in <prefix>/share/cleave/compat/cuda), so that both accept the
 * calls. With an older CUDA, whose headers declare them, it adds nothing.
 *===----------------------------------------------------------------------===*/
#ifndef CLEAVE_CUDA_REMOVED_API_H
#define CLEAVE_CUDA_REMOVED_API_H

#if defined(CUDART_VERSION) && CUDART_VERSION >= 13000
#ifdef __cplusplus
extern "C" {
#endif
extern __host__ cudaError_t cudaThreadSynchronize(void);
extern __host__ cudaError_t cudaThreadExit(void);
#ifdef __cplusplus
}
#endif
#endif

#endif /* CLEAVE_CUDA_REMOVED_API_H */
