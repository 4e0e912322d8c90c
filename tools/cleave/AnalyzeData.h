//===- AnalyzeData.h - `cleave analyze`: what the run gathers --*- C++ -*-===//
//
// Part of Cleave's driver (docs/analyze.md). The data of one analysis: the
// kernels' sites, resources and code (the build), the recorder's output
// (the run), the saved records that hold both, and the model inputs and
// reports made from them. Analyze.cpp holds the options and the steps.
//
//===----------------------------------------------------------------------===//
#ifndef CLEAVE_TOOLS_ANALYZEDATA_H
#define CLEAVE_TOOLS_ANALYZEDATA_H

#include "cleave/CodeGen/PTXEmitter.h"
#include "cleave/Transforms/Instrument.h"
#include "cleave/rt/HopperModel.h"
#include "cleave/rt/InstrumentRecord.h"
#include "cleave/rt/Tpsm.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/ADT/Twine.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/JSON.h"

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace llvm {
class raw_ostream;
} // namespace llvm

namespace cleave {
namespace analyze {

namespace model = cleave::rt::model;

enum class ModelKind { Paper, Hopper };

inline llvm::Error makeError(const llvm::Twine &Msg) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), Msg);
}

struct Resources : KernelResources {
  std::string From; ///< "ptxas" or "--registers"
};

/// An instruction of a block site's code: (site id << 32) | its index.
using EntryRef = uint64_t;

/// A block site's instructions as the GPU runs them (refineCode): their
/// classes in order and, per instruction, the instructions whose results it
/// uses (data dependences through registers).
struct SiteCode {
  std::vector<InstrClass> Sequence;
  std::vector<std::vector<EntryRef>> Deps;
};

struct Analysis {
  std::vector<InstrumentInfo> Sites;
  std::map<std::string, Resources> Res;      ///< by kernel symbol
  std::map<std::string, std::string> Display; ///< demangled names
  /// By block site id, for the hopper model; a site without one counts its
  /// Sequence and has no dependences (then the model assumes a chain).
  std::map<uint32_t, SiteCode> Code;
  /// Whether the models count the code as ptxas gets it (Code, for the
  /// hopper model) or as the instrumentation classified it (the paper
  /// model: digest 000 counts the kernel's own code).
  bool IssuedCode = true;
};

// The recorder's output has its reader beside its writer, in the runtime.
using rt::record::BlockRecord;
using rt::record::LaunchRecord;
using rt::record::WarpRecord;

/// What a saved record holds besides the analysis.
struct SavedRecord {
  std::vector<std::pair<std::string, std::string>> Inputs; ///< name, hash
  std::vector<std::string> Args;
  unsigned SampleBlocks = 0;
  /// The SM count the program was told (CLEAVE_ANALYZE_SM_COUNT).
  unsigned SmCount = 0;
  std::string Record; ///< the recorder's output
};

/// A memory instruction's totals over the sampled blocks (weighted).
struct MemTotals {
  double Requests = 0, Lanes = 0, Bytes = 0, Sectors = 0, Segments = 0;
};

/// The models' input for one launch configuration.
struct Summary {
  model::LaunchStats Stats;
  std::map<uint32_t, MemTotals> Mems; ///< per memory site, per block
  uint64_t Recorded = 0;
  bool Overflow = false, Truncated = false;
  std::vector<std::string> Problems;
};

/// The bytes of one direction between the host and the GPU for a launch
/// whose data is on the host (AnalyzeTpsm.cpp says how they are found).
struct TransferBytes {
  double Total = 0;
  /// What every block touches: moved once, not per block.
  double Fixed = 0;
  /// Disjoint address ranges (one copy each per chunk).
  unsigned Buffers = 0;
  double perBlock(uint64_t Blocks) const;
};

/// Luo's TPSM for one launch configuration with its data on the host.
struct TpsmReport {
  uint64_t Blocks = 0, WaveBlocks = 0;
  TransferBytes Send, Receive;
  /// Why nothing was planned at all (no block fits); empty otherwise.
  std::string Why;
  /// By host memory kind: "pinned", "pageable".
  std::vector<std::pair<std::string, rt::tpsm::Plan>> Plans;
};

/// One launch configuration's prediction.
struct Report {
  const LaunchRecord *L;
  Summary S;
  Resources Res;
  model::Prediction P;
  std::string Display;
  TpsmReport Tpsm;
};

// AnalyzeProfile.cpp
/// The GPU \p GpuIndex of the device profile at \p Path, for the models
/// (the returned parameters) and for TPSM (its host link, in \p Link).
llvm::Expected<model::GpuParams> loadProfile(llvm::StringRef Path,
                                             unsigned GpuIndex,
                                             rt::GpuProfile &Link);

// AnalyzeRecord.cpp
/// The recorder's output file, as text.
llvm::Expected<std::string> readRecordFile(llvm::StringRef Path);
/// The identity of an input: its file name and a hash of its bytes.
llvm::Expected<std::pair<std::string, std::string>>
inputIdentity(llvm::StringRef In);
llvm::Error writeSavedRecord(llvm::StringRef Path, const Analysis &A,
                             const SavedRecord &R);
llvm::Expected<SavedRecord> readSavedRecord(llvm::StringRef Path,
                                            Analysis &A);
/// A record made from other inputs or arguments than \p Inputs and \p Args
/// is refused.
llvm::Error checkSameProgram(llvm::StringRef Path, const SavedRecord &R,
                             llvm::ArrayRef<std::string> Inputs,
                             llvm::ArrayRef<std::string> Args);

// AnalyzeReport.cpp
const MemSite *findMem(const Analysis &A, uint32_t Id);
/// The models' input for one launch configuration.
Summary summarize(const Analysis &A, const LaunchRecord &L);
void printText(llvm::raw_ostream &OS, const Report &R,
               const model::GpuParams &G, ModelKind Model);
llvm::json::Value toJson(const Report &R, const Analysis &A);

// AnalyzeTpsm.cpp
/// TPSM's plans for the launch \p L (summarized in \p S, predicted in \p P
/// by \p Model) with its data on the host of GPU \p G, whose host link is
/// \p Link's.
TpsmReport planTransfers(const Analysis &A, const LaunchRecord &L,
                         const Summary &S, const model::Prediction &P,
                         const model::GpuParams &G, const rt::GpuProfile &Link,
                         const model::KernelResources &R, ModelKind Model);
void printTpsm(llvm::raw_ostream &OS, const TpsmReport &T);
llvm::json::Value tpsmJson(const TpsmReport &T);

} // namespace analyze
} // namespace cleave

#endif
