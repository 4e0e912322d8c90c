/*===- CpuKernelABI.h - The C ABI of a kernel's CPU variant ---------------===*
 *
 * Part of Cleave. `cleave-cpu-lower` turns kernel K into
 *
 *   void __cleave_cpu_K(void **args, const cleave_cpu_launch *launch,
 *                       uint64_t first_block, uint64_t block_count,
 *                       void *scratch);
 *
 * plus a descriptor `const cleave_cpu_kernel_desc __cleave_cpu_K_desc`. The
 * function runs the blocks [first_block, first_block + block_count) of the
 * launch (linear block id, x fastest) one after the other on the calling
 * thread. `args` is laid out like cuLaunchKernel's kernelParams: args[i]
 * points to the value of parameter i (for a by-value struct, to the struct).
 * `scratch` is per-worker memory of at least cleave_cpu_scratch_bytes()
 * bytes, aligned to CLEAVE_CPU_SCRATCH_ALIGN; it holds the block's shared
 * memory (static, then dynamic) and the per-thread storage of values that
 * live across barriers, and is reused for every block the worker runs, so
 * running a block allocates nothing.
 *
 * Plain C so that generated objects, the runtime and user code agree on it
 * without C++ or LLVM.
 *===----------------------------------------------------------------------===*/
#ifndef CLEAVE_RT_CPUKERNELABI_H
#define CLEAVE_RT_CPUKERNELABI_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Field offsets are part of the ABI: the lowering reads them by offset. */
typedef struct cleave_cpu_launch {
  uint32_t grid[3];            /* gridDim.{x,y,z}, offsets 0, 4, 8 */
  uint32_t block[3];           /* blockDim.{x,y,z}, offsets 12, 16, 20 */
  uint64_t dynamic_shared_bytes; /* extern __shared__ bytes, offset 24 */
} cleave_cpu_launch;

typedef void (*cleave_cpu_kernel_fn)(void **args,
                                     const cleave_cpu_launch *launch,
                                     uint64_t first_block,
                                     uint64_t block_count, void *scratch);

/* Emitted next to each CPU variant as `__cleave_cpu_<kernel>_desc`. */
typedef struct cleave_cpu_kernel_desc {
  const char *name;                 /* the kernel's (mangled) name */
  cleave_cpu_kernel_fn fn;
  uint64_t static_shared_bytes;     /* all __shared__ variables, laid out */
  uint64_t private_bytes_per_thread; /* per-thread storage across barriers */
  uint32_t num_params;
  uint32_t flags;                   /* CLEAVE_CPU_* below */
  /* The same variant with every global memory access validated first
   * (CLEAVE_CHECK=memory); read only when flags has CLEAVE_CPU_HAS_CHECKED
   * (include/cleave/ABI/CpuCheckABI.h), so hand-written descriptors may omit
   * it. */
  cleave_cpu_kernel_fn checked_fn;
} cleave_cpu_kernel_desc;

/* The variant schedules threads per warp-synchronous point (warp operations
 * under block-divergent control flow); informative only. */
#define CLEAVE_CPU_GUARDED 1u

#define CLEAVE_CPU_SCRATCH_ALIGN 64u

static inline uint64_t cleave_cpu_align_up(uint64_t v, uint64_t a) {
  return (v + a - 1) / a * a;
}

/* The scratch layout, which the generated code computes the same way:
 * [static shared | pad to 16][dynamic shared | pad to 64][private:
 * private_bytes_per_thread * threads per block]. */
static inline uint64_t
cleave_cpu_scratch_bytes(const cleave_cpu_kernel_desc *desc,
                         const cleave_cpu_launch *launch) {
  uint64_t threads = (uint64_t)launch->block[0] * launch->block[1] *
                     launch->block[2];
  return cleave_cpu_align_up(desc->static_shared_bytes, 16) +
         cleave_cpu_align_up(launch->dynamic_shared_bytes, 64) +
         desc->private_bytes_per_thread * threads;
}

#ifdef __cplusplus
}
#endif

#endif /* CLEAVE_RT_CPUKERNELABI_H */
