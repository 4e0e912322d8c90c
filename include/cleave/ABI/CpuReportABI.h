/*===- CpuReportABI.h - Device printf and assert in CPU variants ----------===*
 *
 * Part of Cleave. Clang lowers a kernel's printf to vprintf(fmt, args) and
 * assert to __assertfail(msg, file, line, func, char_size); on a GPU the
 * CUDA driver implements both. A CPU variant calls the runtime's
 * implementations instead (lib/Transforms/DeviceReports.cpp rewrites the
 * calls, runtime/lib/cpu/DevicePrintf.cpp and DeviceAssert.cpp define them):
 *
 *   int __cleave_rt_vprintf(const char *fmt, const void *args,
 *                           uint64_t arg_bytes);
 *
 * args is Clang's packed argument buffer (each argument promoted as for a
 * variadic call and stored at its natural alignment; null without
 * arguments), arg_bytes its size (CLEAVE_PRINTF_ARGS_UNKNOWN when the
 * compiler cannot tell). Returns what CUDA's printf returns: the number of
 * arguments read, -1 for a null format. The checked variant
 * (CpuCheckABI.h) calls instead
 *
 *   int __cleave_rt_vprintf_checked(const char *fmt, const void *args,
 *                                   uint64_t arg_bytes, uint64_t block,
 *                                   uint64_t thread);
 *
 * which under CLEAVE_CHECK=memory first validates the strings that `%s`
 * reads, as __cleave_rt_check validates the kernel's own accesses.
 *
 *   [[noreturn]] void __cleave_rt_assertfail(const char *msg,
 *       const char *file, uint32_t line, const char *func,
 *       uint64_t char_size, uint32_t block_x, uint32_t block_y,
 *       uint32_t block_z, uint32_t thread_x, uint32_t thread_y,
 *       uint32_t thread_z);
 *
 * prints CUDA's assertion message and abandons the range of blocks: the
 * launch fails with cudaErrorAssert. Plain C, no LLVM and no runtime
 * headers, so that both layers include this one file.
 *===----------------------------------------------------------------------===*/
#ifndef CLEAVE_ABI_CPUREPORTABI_H
#define CLEAVE_ABI_CPUREPORTABI_H

#define CLEAVE_PRINTF_FUNCTION "__cleave_rt_vprintf"
#define CLEAVE_PRINTF_CHECKED_FUNCTION "__cleave_rt_vprintf_checked"
#define CLEAVE_ASSERT_FUNCTION "__cleave_rt_assertfail"

#define CLEAVE_PRINTF_ARGS_UNKNOWN (~(unsigned long long)0)

#endif /* CLEAVE_ABI_CPUREPORTABI_H */
