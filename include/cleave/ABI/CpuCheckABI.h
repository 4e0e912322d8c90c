/*===- CpuCheckABI.h - Checked CPU variants, for both sides ---------------===*
 *
 * Part of Cleave. The checked CPU variant of a kernel (CLEAVE_CHECK=memory,
 * docs/runtime.md) calls, before each access to global or generic memory,
 *
 *   void __cleave_rt_check(const void *addr, uint64_t bytes, uint32_t kind,
 *                          uint64_t block, uint64_t thread);
 *
 * with the access's kind below, the linear block id and the linear thread id
 * in the block (CLEAVE_CHECK_UNKNOWN when the access is outside the thread
 * loops). The runtime defines it (runtime/lib/cpu/MemCheck.cpp) and the
 * compiler emits the calls (lib/Transforms/MemCheck.cpp). Plain C, no LLVM
 * and no runtime headers, so that both layers include this one file.
 *===----------------------------------------------------------------------===*/
#ifndef CLEAVE_ABI_CPUCHECKABI_H
#define CLEAVE_ABI_CPUCHECKABI_H

#define CLEAVE_CHECK_FUNCTION "__cleave_rt_check"

#define CLEAVE_CHECK_LOAD 0u
#define CLEAVE_CHECK_STORE 1u
#define CLEAVE_CHECK_ATOMIC 2u

#define CLEAVE_CHECK_UNKNOWN (~(unsigned long long)0)

/* cleave_cpu_kernel_desc.flags: the descriptor's checked_fn is present. */
#define CLEAVE_CPU_HAS_CHECKED 2u

#endif /* CLEAVE_ABI_CPUCHECKABI_H */
