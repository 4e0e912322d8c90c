/*===- Instrument.h - Recording instrumented CPU variants (cleave analyze) -===*
 *
 * Part of Cleave's runtime (no LLVM). The entry points that the CPU objects
 * of `cleave analyze`'s instrumented build call (lib/Transforms/Instrument.cpp
 * makes the calls; docs/analyze.md describes the record). Nothing here runs
 * in a program built by `cleave compile`: only instrumented objects
 * reference these functions, and they record only when the runtime was
 * given a record file to write at exit (configureInstrumentation).
 *
 * Options (Options.h, set by `cleave analyze`):
 *   CLEAVE_INSTRUMENT_OUT=FILE     the record (written when the program exits)
 *   CLEAVE_INSTRUMENT_BLOCKS=N     blocks sampled per distinct launch
 *                                  configuration (default 3: the first, the
 *                                  middle and the last block)
 *===----------------------------------------------------------------------===*/
#ifndef CLEAVE_RT_CPU_INSTRUMENT_H
#define CLEAVE_RT_CPU_INSTRUMENT_H

#include "cleave/rt/CpuKernelABI.h"

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The instrumented object's descriptor entry point: runs the blocks
 * [first, first + count) of the launch, each once: the sampled blocks (the
 * first launch of each (kernel, grid, block, dynamic shared) that runs them)
 * with the instrumented variant `instr->fn` on scratch of its own, every
 * other block with the ordinary variant `plain` on `scratch`. */
void __cleave_rt_instr_run(const cleave_cpu_kernel_desc *instr,
                           cleave_cpu_kernel_fn plain, void **args,
                           const cleave_cpu_launch *launch,
                           uint64_t first_block, uint64_t block_count,
                           void *scratch);

/* A thread entered a basic block: (site << 32) | linear thread id. */
void __cleave_rt_instr_block(uint64_t site_thread);

/* A thread accesses global memory: meta = (site << 32) | (bytes << 16) |
 * linear thread id, at address `addr`. */
void __cleave_rt_instr_mem(uint64_t meta, uint64_t addr);

#ifdef __cplusplus
}

#include <string>

namespace cleave::rt {
/// The record's file ("": nothing is recorded) and the blocks sampled per
/// launch configuration (Options::InstrumentOut, InstrumentBlocks); the
/// runtime calls it when it starts, before any kernel runs.
void configureInstrumentation(const std::string &Path, unsigned Blocks);
} // namespace cleave::rt
#endif

#endif /* CLEAVE_RT_CPU_INSTRUMENT_H */
