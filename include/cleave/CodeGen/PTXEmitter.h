//===- PTXEmitter.h - LLVM IR to PTX, checked by ptxas ----------*- C++ -*-===//
#ifndef CLEAVE_CODEGEN_PTXEMITTER_H
#define CLEAVE_CODEGEN_PTXEMITTER_H

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <map>
#include <memory>
#include <string>

namespace llvm {
class Module;
class TargetMachine;
} // namespace llvm

namespace cleave {

/// Registers LLVM's NVPTX target (once per process). The frontend calls it
/// before Clang's optimizer runs: without a registered target, Clang
/// optimizes device code with generic cost models and skips NVPTX's early
/// passes (matmul 1.83x slower than nvcc's:
/// bench/results/nvcc-compare/nvcc-compare-2026-11-21-h100-7a7ae32.md).
void initializeNVPTXTarget();

/// The NVPTX target machine for M's kernels on GpuArch (PTX ISA version from
/// the functions' target features). Passes that ask the target for
/// divergence or cost information use it too.
llvm::Expected<std::unique_ptr<llvm::TargetMachine>>
createNVPTXTargetMachine(llvm::Module &M, llvm::StringRef GpuArch,
                         unsigned OptLevel = 3);

/// Emits PTX for M with LLVM's NVPTX backend for GpuArch (e.g. "sm_90").
/// M's triple and data layout are set to the NVPTX ones if missing. Code is
/// generated from a copy of M in a fresh context (see PTXEmitter.cpp).
llvm::Expected<std::string> emitPTX(llvm::Module &M, llvm::StringRef GpuArch,
                                    unsigned OptLevel = 3);

/// Path of CUDA's ptxas (PATH, then CUDA_PATH/bin, then /usr/local/cuda/bin),
/// or empty when none is installed.
std::string findPtxas();

/// Assembles PTX with ptxas for GpuArch into a cubin; returns the cubin bytes.
/// ptxas's own messages are part of the error on failure.
llvm::Expected<std::string> assemblePTX(llvm::StringRef PTX,
                                        llvm::StringRef GpuArch,
                                        llvm::StringRef Ptxas);

/// Registers per thread and static shared memory of one kernel, as
/// `ptxas -v` reports them.
struct KernelResources {
  unsigned Registers = 0;
  uint64_t StaticShared = 0;
};

/// The resources of every entry function in the messages of `ptxas -v`
/// ("Compiling entry function 'K'", then "Used N registers, ..., M bytes
/// smem"), by entry name.
std::map<std::string, KernelResources> parsePtxasResources(llvm::StringRef Log);

/// Assembles PTX with `ptxas -v` for GpuArch and returns each entry
/// function's resources (the cubin is not kept).
llvm::Expected<std::map<std::string, KernelResources>>
ptxasResources(llvm::StringRef PTX, llvm::StringRef GpuArch,
               llvm::StringRef Ptxas);

} // namespace cleave

#endif
