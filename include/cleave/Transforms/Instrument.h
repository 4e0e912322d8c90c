//===- Instrument.h - Instrumented CPU variants for `cleave analyze` -*- C++ -*-===//
//
// Part of Cleave. `cleave analyze` (docs/analyze.md) runs a program whose CPU
// variants count, for a few sampled blocks, each warp's dynamic instructions
// by class and the sectors each of its global memory requests touches.
//
//  1. instrumentModule (the pass cleave-instrument) works on the device
//     module (NVPTX IR), before the CPU lowering. Each basic block of every
//     defined function is a *block site* whose static instruction classes
//     are recorded in an InstrumentInfo; a marker at its top reports
//     (site, linear thread id). Each global memory access (load, store,
//     atomic) is a *memory site*; a marker before it reports (site, width,
//     thread id, address). Markers are volatile stores to two internal
//     globals, which the CPU lowering keeps as they are (it refuses calls to
//     functions without a body).
//  2. After the CPU lowering of that module, finalizeInstrumentedCPU turns
//     the markers into calls to the runtime's recorder
//     (runtime/lib/cpu/Instrument.cpp: __cleave_rt_instr_block/_mem).
//  3. linkInstrumentedVariants links those variants, renamed
//     __cleave_instr_<K>, into the ordinary CPU module and points each
//     kernel's descriptor at a dispatcher that calls __cleave_rt_instr_run:
//     the runtime runs the sampled blocks with the instrumented variant and
//     every other block with the ordinary one, so each block runs once and
//     the program's results are unchanged.
//
//===----------------------------------------------------------------------===//
#ifndef CLEAVE_TRANSFORMS_INSTRUMENT_H
#define CLEAVE_TRANSFORMS_INSTRUMENT_H

#include "cleave/ABI/InstrClass.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/IR/PassManager.h"
#include "llvm/Support/Error.h"

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace llvm {
class Instruction;
class Module;
class raw_ostream;
} // namespace llvm

namespace cleave {

/// The class of one instruction of NVPTX IR; std::nullopt for what emits no
/// PTX instruction (phis, no-op casts, lifetime markers, debug intrinsics).
std::optional<InstrClass> classifyInstruction(const llvm::Instruction &I);

/// A basic block of a kernel or of a function it calls.
struct BlockSite {
  uint32_t Id = 0;
  std::string Function;               ///< the function's symbol
  std::string Name;                   ///< the block's name or its index
  std::vector<InstrClass> Sequence;   ///< its instructions' classes, in order
  std::array<uint32_t, NumInstrClasses> Counts{}; ///< Sequence, counted
};

/// A global memory access (or an atomic on global memory).
struct MemSite {
  uint32_t Id = 0;
  uint32_t Block = 0; ///< its BlockSite's id
  uint32_t Bytes = 0; ///< access width per thread
  InstrClass Class = InstrClass::GlobalLoad;
  std::string Location; ///< file:line:col when the module has debug info
};

/// The sites of one instrumented module. Ids are (ModuleIndex << 20) |
/// index, so the sites of several modules of one program never collide.
struct InstrumentInfo {
  uint32_t ModuleIndex = 0;
  std::vector<std::string> Kernels;
  std::vector<BlockSite> Blocks;
  std::vector<MemSite> Mems;
  const BlockSite *block(uint32_t Id) const;
  const MemSite *mem(uint32_t Id) const;
};

/// Names of what the instrumentation adds (markers, runtime entry points).
inline constexpr const char *InstrBlockMarker = "__cleave_instr.block";
inline constexpr const char *InstrMemMarker = "__cleave_instr.mem";
inline constexpr const char *InstrRunFunction = "__cleave_rt_instr_run";
inline constexpr const char *InstrBlockFunction = "__cleave_rt_instr_block";
inline constexpr const char *InstrMemFunction = "__cleave_rt_instr_mem";
/// The instrumented CPU variant of kernel K and its descriptor.
std::string instrumentedVariantName(llvm::StringRef Kernel);

/// Adds the markers to every defined function of the device module \p M and
/// returns its sites. A module with more than 2^20 sites, or a kernel with
/// more than 1024 threads' worth of id bits, is refused.
llvm::Expected<InstrumentInfo> instrumentModule(llvm::Module &M,
                                                uint32_t ModuleIndex);

/// In the CPU module made from an instrumented device module: replaces each
/// marker by the call to the runtime's recorder and removes the markers'
/// globals.
llvm::Error finalizeInstrumentedCPU(llvm::Module &Host);

/// Links the instrumented CPU module \p Instr (finalized) into the ordinary
/// CPU module \p Plain of the same device module: each kernel of \p Kernels
/// with a variant in both gets its descriptor's entry point replaced by a
/// dispatcher calling __cleave_rt_instr_run with the instrumented variant's
/// descriptor. Merge variants and `__device__` variable copies of \p Instr
/// are dropped (the instrumented code uses \p Plain's variables).
llvm::Error linkInstrumentedVariants(llvm::Module &Plain,
                                     std::unique_ptr<llvm::Module> Instr,
                                     llvm::ArrayRef<std::string> Kernels);

/// The site table as text (`cleave analyze --emit=sites` and the lit tests):
///   block <id> <function> <name>: <class> <class> ...
///   mem <id> block <id> <class> <bytes> B [<location>]
void printInstrumentInfo(const InstrumentInfo &Info, llvm::raw_ostream &OS);

/// cleave-instrument: instrumentModule as a module pass (module index 0),
/// for `opt`.
class InstrumentPass : public llvm::PassInfoMixin<InstrumentPass> {
public:
  llvm::PreservedAnalyses run(llvm::Module &M, llvm::ModuleAnalysisManager &);
  static bool isRequired() { return true; }
};

} // namespace cleave

#endif
