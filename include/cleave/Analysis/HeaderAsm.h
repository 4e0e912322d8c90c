//===- HeaderAsm.h - Inline PTX of CUDA's own headers -----------*- C++ -*-===//
//
// Part of Cleave. CUDA's headers (cooperative groups, cuda::ptx, cuda_fp16,
// cuda_bf16) and its libdevice implement some device functions in inline
// PTX. The sequences listed here are matched exactly (asm string and
// constraints), or, for the fp16/bf16 arithmetic blocks, parsed by a strict
// recogniser (HeaderAsmPtx.h); each has a known meaning that needs no GPU:
// kernel legality accepts them and the CPU lowering rewrites them into IR it
// already handles. Any other inline asm stays refused.
//
//===----------------------------------------------------------------------===//
#ifndef CLEAVE_ANALYSIS_HEADERASM_H
#define CLEAVE_ANALYSIS_HEADERASM_H

#include "cleave/Analysis/HeaderAsmPtx.h"
#include "cleave/Analysis/LibdeviceAsm.h"

#include "llvm/IR/InstrTypes.h"
#include "llvm/IR/Intrinsics.h"

#include <memory>
#include <optional>

namespace cleave {

enum class HeaderAsmKind {
  /// `mov.u32 $0, %laneid;` and `%lanemask_{eq,le,lt,ge,gt}`: the NVVM
  /// special-register intrinsic of the same name.
  SpecialRegister,
  /// cooperative_groups' details::reserved_shared_ptr() (sm_80+): the
  /// generic address of the block's reserved shared-memory scratch.
  ReservedShared,
  /// cooperative_groups' elect_one (sm_90): elect.sync over a member mask.
  Elect,
  /// cuda::ptx bfind.{u32,u64} and bfind.shiftamt.{u32,u64}.
  BitFind,
  /// __nanosleep (sm_70_rt.hpp): a hint that the thread may sleep; a CPU
  /// thread goes on at once.
  Sleep,
  /// One of libdevice's forms (LibdeviceAsm.h).
  Libdevice,
  /// A register-only arithmetic block of cuda_fp16.hpp/cuda_bf16.hpp
  /// (__hadd, __float2half_rz, __hlt, ...), parsed into Ptx.
  Arithmetic,
};

struct HeaderAsm {
  HeaderAsmKind Kind;
  /// SpecialRegister: the intrinsic to read.
  llvm::Intrinsic::ID SReg = llvm::Intrinsic::not_intrinsic;
  /// BitFind: the operand's width and whether the shift amount is asked.
  unsigned Bits = 0;
  bool ShiftAmount = false;
  /// Libdevice: which form.
  LibdeviceAsm Lib = {};
  /// Arithmetic: the parsed block.
  std::shared_ptr<const PtxBlock> Ptx;
};

/// Bytes of the reserved shared-memory scratch per block (CUDA reserves
/// 1 KiB of shared memory per block on sm_80 and later).
inline constexpr unsigned ReservedSharedBytes = 1024;

/// The idiom \p CB is, if it is inline asm of one of the recognized forms.
std::optional<HeaderAsm> matchHeaderAsm(const llvm::CallBase &CB);

/// Inline asm without side effects whose result is unused: dead code that a
/// header left behind (e.g. this_grid() reads the grid workspace register
/// even when the kernel never synchronizes the grid).
bool isDeadAsm(const llvm::CallBase &CB);

} // namespace cleave

#endif
