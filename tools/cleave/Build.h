//===- Build.h - `cleave compile ... -o app`: building a program -*- C++ -*-===//
//
// Part of Cleave's driver. The steps that turn .cu and .cpp files into a
// program (docs/driver.md): per .cu file the host rewrite, the device object
// and the host compiler; then the link with libcleave_rt.
//
//===----------------------------------------------------------------------===//
#ifndef CLEAVE_TOOLS_BUILD_H
#define CLEAVE_TOOLS_BUILD_H

#include "cleave/Frontend/DeviceCompiler.h"
#include "cleave/Rewrite/HostRewriter.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <string>
#include <vector>

namespace llvm {
class LLVMContext;
class raw_ostream;
} // namespace llvm

namespace cleave {

struct BuildOptions {
  std::vector<std::string> Inputs;
  std::string Output = "a.out";
  DeviceCompileOptions Device; ///< -I -D -O -g -std --cuda-gpu-arch ...
  std::string HostCPU;         ///< -mcpu for the CPU variants
  std::string Ptxas;           ///< empty: PTX only in the bundles
  std::string Cxx;             ///< --cxx (empty: $CXX, g++, clang++-19)
  std::vector<std::string> LinkDirs, LinkLibs; ///< -L, -l
  bool DryRun = false;         ///< -### / --dry-run
  bool KeepTemps = false;
  bool SingleDevice = false;
  bool Verbose = false;
};

/// Builds the program; prints diagnostics to errs(). Returns the exit code.
int buildProgram(const BuildOptions &Opts, llvm::LLVMContext &Ctx);

/// The host source of one .cu file (`--emit=host-source`), or an error after
/// printing diagnostics. \p OutputName names the result in its #line markers.
llvm::Expected<std::string> rewriteForHost(llvm::StringRef Input,
                                           const BuildOptions &Opts,
                                           llvm::StringRef OutputName);

/// Writes the rewritten copies of a .cu file's included files to \p CopyDir
/// (HostRewriteOptions::CopyDir of its rewrite). The directives Clang's parse
/// saw name them by absolute path; \p Dirs receives the copies' original
/// directories, for the host compiler's quoted-include path (the directives
/// of #if branches the host compiler takes and Clang's parse did not).
/// Returns 0, or 1 after printing an error.
int writeRewrittenCopies(llvm::StringRef CopyDir,
                         llvm::ArrayRef<RewrittenCopy> Copies,
                         std::vector<std::string> &Dirs);

/// The device object of one .cu file (`--emit=device-obj`): its kernels' CPU
/// variants, its bundle and their registration. Also checks that the host
/// rewrite names the same kernels the device code defines.
llvm::Expected<std::string> buildDeviceObject(llvm::StringRef Input,
                                              const BuildOptions &Opts,
                                              llvm::LLVMContext &Ctx);

} // namespace cleave

#endif
