//===- PtxKernels.h - The calibration kernels, as PTX text ------*- C++ -*-===//
//
// Part of cleave-calibrate (no LLVM). Every GPU measurement runs hand-written
// PTX, loaded through the driver's JIT, so the instruction under test is
// exactly the one written (no CUDA front end in between). The modules
// target sm_80 and PTX ISA 7.8, which every CUDA 12/13 driver JIT-compiles
// for Hopper and later GPUs.
//
// Instruction costs use Luo's paired kernels (digest 000 §1.2): a "base"
// kernel runs a loop whose body is a chain of U separator instructions, the
// "test" kernel the same loop with the instruction under test inserted
// before each separator, every instruction depending on the one before. The
// difference of the two times, over the instructions added, is the cost of
// one instruction in a dependent chain (its latency), in SM clocks read
// with %clock64 inside the kernel. The separator stops ptxas from folding a
// chain of the same operation (x + y + y ... into x + U*y, min(min(x, y), y)
// into min(x, y)): an operation that SASS cannot fuse with the one under
// test and that cannot itself be folded (a byte permute with a run-time
// selector for integers, an IEEE add or multiply for floats). Checked
// offline by assembling each pair with ptxas: the test kernel's code grows
// by about one SASS instruction per added PTX instruction (more for the
// sequences of division and square root), docs/calibrate.md.
//
//===----------------------------------------------------------------------===//
#ifndef CLEAVE_CALIBRATE_PTXKERNELS_H
#define CLEAVE_CALIBRATE_PTXKERNELS_H

#include <string>
#include <vector>

namespace cleave {
namespace calibrate {

/// One instruction class of the cost table.
struct InstrClass {
  const char *Name;  ///< table key, e.g. "add.s32"
  const char *Group; ///< "int32", "fp32", "fp64", "memory"
  /// PTX of the instruction(s) under test, one dependent step. Registers:
  /// %r20..%r23 (s32: x, y, z, w), %f20..%f23 (f32), %fd20..%fd23 (f64),
  /// %rd10 a per-lane global slot, %rd11 a global pointer chain, %r30 a
  /// per-lane shared slot, %r31 a shared pointer chain.
  const char *Op;
  /// The separator after each step, also the whole body of the base
  /// kernel; empty when a plain chain of the operation cannot be folded.
  const char *Sep;
  /// Set-up before the timed loop (may be empty).
  const char *Init;
  unsigned PerStep; ///< instructions under test in one Op
  unsigned Unroll;  ///< steps per loop iteration
  const char *Note; ///< what the number means, for the profile
};

/// The classes measured: int32, fp32 and fp64 arithmetic, logic, shifts,
/// conversions, moves, special functions, and the dependent global and
/// shared loads and the stores.
const std::vector<InstrClass> &instructionClasses();

/// A module with two entries, "base" and "test", for \p C. Both take
/// (.u64 out, .u32 iterations, .u32 i0..i3, .f32 f0..f3); thread 0 writes
/// the loop's clocks at out[0] and the chain's values after it. The kernel
/// needs out to have InstructionOutBytes bytes (per-lane slots; stores of
/// step k go 256 * k bytes further).
std::string instructionPairPtx(const InstrClass &C);

/// Bytes of the out buffer of an instruction kernel of one warp.
constexpr unsigned InstructionOutBytes = 256 + 32 * 256 + 32 * 8;

/// Parameter values that keep every chain finite and away from special
/// cases (int: x, y, z, w; float: x, y, z, w).
struct ChainInputs {
  unsigned Int[4];
  float Float[4];
};
ChainInputs chainInputs();

/// The utility module:
///   empty()                                   the launch-cost kernel
///   spin(.u64 cycles, .u64 out)               busy-waits; out[0] = clocks
///   chase_ca / chase_cg(.u64 start, .u32 steps, .u64 out)
///       one thread follows a pointer chain (ld.global.ca: L1 and L2;
///       .cg: L2 only); out[0] = clocks, out[1] = the last pointer
///   read_v4(.u64 buf, .u64 n16, .u32 reps, .u64 out)
///       every thread reads 16-byte vectors (ld.global.cg), grid-stride,
///       4 in flight; n16 a multiple of 4 * threads in the grid
///   copy_v4(.u64 dst, .u64 src, .u64 n16)     likewise, copies
std::string utilityPtx();

/// The CPD kernel "cpd": per iteration, \p ComputeSteps dependent fp32 FMAs
/// then \p MemorySteps dependent L1-resident global loads whose addresses
/// depend on the chain (and the next FMA on the loaded value). Parameters:
/// (.u64 out, .u64 cell, .u32 iterations, .f32 y, .f32 z, .u32 mask); mask
/// must be 0 and the float at cell must be y. Lane 0 of each warp writes
/// (%smid, start clock, end clock) at out + 24 * global warp index.
std::string cpdPtx(unsigned ComputeSteps, unsigned MemorySteps);

} // namespace calibrate
} // namespace cleave

#endif
