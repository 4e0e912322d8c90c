//===- BundleWriter.h - A device module to a kernel bundle -----*- C++ -*-===//
//
// Part of Cleave. The kernel bundle (docs/bundle.md) is what the compiler
// hands the runtime for one device module: the PTX of every kernel and
// variant (and a cubin when ptxas is there), the `__device__`/`__constant__`
// variables, and per kernel its parameters and roles, its legality verdict
// with reasons, the entry names of its partition-ready, merge and CPU
// variants or the reason each one is missing, its serialized footprints and
// its static shared memory. The runtime reads it with cleave/rt/Bundle.h.
//
//===----------------------------------------------------------------------===//
#ifndef CLEAVE_BUNDLE_BUNDLEWRITER_H
#define CLEAVE_BUNDLE_BUNDLEWRITER_H

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"
#include <memory>
#include <string>

namespace llvm {
class Module;
class raw_ostream;
class TargetMachine;
} // namespace llvm

namespace cleave {

struct BundleOptions {
  std::string GpuArch = "sm_90";
  /// ptxas to assemble the PTX with (a cubin for GpuArch goes into the
  /// bundle, and a PTX it rejects is an error); empty: PTX only.
  std::string Ptxas;
  /// Steps are logged here when set (the driver's -v).
  llvm::raw_ostream *Log = nullptr;
};

/// What writeBundle makes: the bundle and the CPU module whose variants
/// its CPU entries name (cleave-cpu-variants of the device module).
struct BuiltBundle {
  std::string Bytes;
  std::unique_ptr<llvm::Module> CPU;
};

/// Builds the bundle of \p Device, a device module straight from the
/// frontend: runs cleave-device-variants on it (Device gains the variants; a
/// module that already has them is left as it is) and cleave-cpu-variants on
/// a clone (cleave/Plugin/Pipelines.h), reads the analyses, emits PTX (and a
/// cubin), and returns the bundle with the CPU module. The reasons for
/// missing variants are the passes' remarks; remarks still reach the
/// context's own diagnostic handler as before.
llvm::Expected<BuiltBundle> writeBundle(llvm::Module &Device,
                                        const BundleOptions &Opts);

} // namespace cleave

#endif
