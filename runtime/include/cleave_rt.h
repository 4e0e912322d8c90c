/*===- cleave_rt.h - The C API of Cleave's runtime ------------------------===*
 *
 * Part of Cleave's runtime (no LLVM). Two audiences:
 *
 * 1. Code that `cleave compile` generates (docs/driver.md):
 *    - the device object's constructor registers the module it carries
 *      (cleave_register_module): the kernel bundle's bytes and the CPU
 *      symbols the bundle names (the `__cleave_cpu_<K>_desc` descriptors and
 *      the `__cleave_cpu_var_<name>` copies of `__device__`/`__constant__`
 *      variables);
 *    - the rewritten host source registers each kernel's host stub
 *      (cleave_register_kernel) and each device variable's host shadow
 *      (cleave_register_variable), so that the CUDA-runtime subset
 *      (cudaLaunchKernel, cudaMemcpyToSymbol, ...) can map the host addresses
 *      CUDA code passes to the device names in the bundle;
 *    - a launch `k<<<g, b, s, st>>>(args)` becomes
 *      `(cleavePushCallConfiguration(g, b, s, st) ? (void)0 : k(args))` and
 *      the stub that replaced k's body pops the configuration and calls
 *      cudaLaunchKernel (the same protocol as CUDA's own
 *      __cudaPushCallConfiguration).
 * 2. Programs that use the runtime directly, without the CUDA names: the
 *    cleave_* functions below.
 *
 * Every function returns a cudaError_t value as an int (0 = success) and
 * never aborts on bad input. The CUDA-runtime subset itself (cudaMalloc, ...)
 * is declared by CUDA's cuda_runtime_api.h and defined by libcleave_rt.
 *===----------------------------------------------------------------------===*/
#ifndef CLEAVE_RT_H
#define CLEAVE_RT_H

#include <stddef.h>
#include <stdint.h>

#include "cleave/rt/CpuKernelABI.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The version of the registration structures below. */
#define CLEAVE_RT_ABI_VERSION 1u

/* A symbol of a module's CPU object. */
typedef struct cleave_symbol {
  const char *name; /* e.g. "__cleave_cpu__Z6vecaddPKfS0_Pfi_desc" */
  void *address;
} cleave_symbol;

/* What one device object carries: one translation unit's device code. */
typedef struct cleave_module_desc {
  uint32_t abi_version; /* CLEAVE_RT_ABI_VERSION */
  uint32_t flags;       /* CLEAVE_MODULE_* below */
  uint32_t num_symbols;
  uint32_t reserved;
  const void *bundle; /* the kernel bundle's bytes (docs/bundle.md) */
  uint64_t bundle_size;
  const cleave_symbol *symbols; /* CPU descriptors and variable copies */
} cleave_module_desc;

/* `cleave compile --single-device`: this module's kernels run whole on the
 * best device (CLEAVE_PARTITION in the environment still wins). */
#define CLEAVE_MODULE_SINGLE_DEVICE 1u

/* Registers a module. Called from the device object's constructor, before
 * main; an invalid bundle is reported on stderr when the runtime starts and
 * its kernels fail to launch with cudaErrorInvalidKernelImage. */
int cleave_register_module(const cleave_module_desc *module);

/* Maps a kernel's host stub address to its device name (the mangled symbol
 * the bundle uses). */
int cleave_register_kernel(const void *host_stub, const char *device_name);

/* Maps a device variable's host shadow to its device name and size. */
int cleave_register_variable(const void *host_shadow, const char *device_name,
                             uint64_t size);

/* The call configuration of the next stub call (<<<grid, block, shared,
 * stream>>>). Returns 0. */
unsigned cleave_push_call_configuration(const uint32_t grid[3],
                                        const uint32_t block[3],
                                        size_t shared_bytes, void *stream);
/* Takes the configuration the last push stored (cudaErrorInvalidValue, with
 * everything zeroed, when there is none). */
int cleave_pop_call_configuration(uint32_t grid[3], uint32_t block[3],
                                  size_t *shared_bytes, void **stream);

/* Launches the kernel registered for host_stub (or named by device_name when
 * host_stub is null) like cudaLaunchKernel: args[i] points to argument i. */
int cleave_launch(const void *host_stub, const char *device_name,
                  const uint32_t grid[3], const uint32_t block[3],
                  void **args, size_t shared_bytes, void *stream);

/* How many devices the virtual device spans, and a one-line description of
 * device i ("gpu0: NVIDIA H200 (132 SMs)"). */
int cleave_device_count(int *count);
int cleave_device_describe(int i, char *buf, size_t size);

/* The plan of the last launch of the calling thread, as CLEAVE_LOG=plan prints
 * it (NUL-terminated, truncated to size). Waits until that launch has run;
 * cudaErrorInvalidValue when the thread has launched nothing. */
int cleave_last_plan(char *buf, size_t size);

/* The message that goes with the error cudaGetLastError would return now
 * on the calling thread (what was wrong, where), NUL-terminated, truncated
 * to size; empty when there is none. Does not reset the error. */
int cleave_last_error_message(char *buf, size_t size);

/* Resets the process's runtime: waits for all queued work, then frees every
 * buffer, stream, event and pinned allocation and forgets the modules'
 * device copies (not their registration). The next call starts the runtime
 * again, re-reading CLEAVE_DEVICES, CLEAVE_PARTITION and CLEAVE_LOG. No
 * other thread may use the runtime meanwhile. cudaDeviceReset does the
 * same. */
int cleave_reset(void);

/* Registers the program's CPU image: a shared object of its device objects
 * (their CPU variants, bundles and registrations), which a program run with
 * CLEAVE_SERVER passes to cleave-serve so that the server's CPU devices can
 * run its kernels (docs/serve.md). Called from a constructor that
 * `cleave compile` generates; the bytes stay valid for the process. */
int cleave_register_image(const void *image, uint64_t size);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* CLEAVE_RT_H */
