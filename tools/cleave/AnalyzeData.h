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

/// One launch configuration's prediction.
struct Report {
  const LaunchRecord *L;
  Summary S;
  Resources Res;
  model::Prediction P;
  std::string Display;
};

// AnalyzeProfile.cpp
/// The GPU \p GpuIndex of the device profile at \p Path, for the models.
llvm::Expected<model::GpuParams> loadProfile(llvm::StringRef Path,
                                             unsigned GpuIndex);

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
/// The models' input for one launch configuration.
Summary summarize(const Analysis &A, const LaunchRecord &L);
void printText(llvm::raw_ostream &OS, const Report &R,
               const model::GpuParams &G, ModelKind Model);
llvm::json::Value toJson(const Report &R, const Analysis &A);

} // namespace analyze
} // namespace cleave

#endif
