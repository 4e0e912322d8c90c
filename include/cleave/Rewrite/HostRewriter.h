//===- HostRewriter.h - CUDA host code to plain C++ -------------*- C++ -*-===//
//
// Part of Cleave. Parses the host side of a .cu file with Clang (the same
// headers and options as the device side) and rewrites it with Clang's
// Rewriter into plain C++ that g++ or clang++ compiles against CUDA's
// headers and Cleave's runtime (docs/driver.md):
//   - a kernel's body becomes a host stub that launches it through
//     cudaLaunchKernel (the stub's address identifies the kernel);
//   - `k<<<g, b, s, st>>>(args)` becomes
//     `(cleavePushCallConfiguration(g, b, s, st) ? (void)0 : k(args))`;
//   - `__device__`-only functions are removed;
//   - every kernel, kernel instantiation and device variable is registered
//     with the runtime under its device symbol at the end of the file.
// The same edits apply in every user file the .cu file includes; those
// files come back as rewritten copies (docs/driver.md). What it cannot
// rewrite (launches in macro bodies, API outside the runtime's subset, ...)
// is an error with its location.
//
//===----------------------------------------------------------------------===//
#ifndef CLEAVE_REWRITE_HOSTREWRITER_H
#define CLEAVE_REWRITE_HOSTREWRITER_H

#include "cleave/Frontend/DeviceCompiler.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <string>
#include <vector>

namespace llvm {
class Module;
class raw_ostream;
} // namespace llvm

namespace cleave {

struct HostRewriteOptions {
  /// The parse: the same options as the device compilation (-I, -D, -std,
  /// --cuda-path, ...).
  DeviceCompileOptions Parse;
  /// The name the rewritten source will have (for the #line markers of the
  /// code Cleave generates, so that errors there point into it).
  std::string OutputName;
  /// #line markers that map the user's code back to the .cu file.
  bool LineMarkers = true;
  /// Where the copies of the rewritten user files will be written: the
  /// rewritten source includes them from there.
  std::string CopyDir = "<copies>";
};

/// A symbol the rewritten source registers with the runtime.
struct Registration {
  enum Kind { Kernel, Variable } K;
  std::string DeviceName; ///< the device symbol (mangled)
  std::string Display;    ///< `vecadd`, `scale<float, 4>`, `coeffs`
  std::string Location;   ///< file:line:col of its declaration
};

/// A user file the .cu file includes, rewritten.
struct RewrittenCopy {
  std::string Original; ///< the file, as the parse named it
  std::string Path;     ///< in HostRewriteOptions::CopyDir
  std::string Source;
};

struct HostRewriteResult {
  std::string Source; ///< the rewritten file (app.cleave.cpp)
  /// The included user files it rewrote, in the order they were included.
  std::vector<RewrittenCopy> Copies;
  std::vector<Registration> Registrations;
  unsigned NumLaunches = 0;
};

/// Rewrites the host side of the CUDA file \p Path. Diagnostics (Clang's
/// and the rewriter's) are printed to DiagOS with file:line:col; the
/// returned error only says that rewriting failed.
llvm::Expected<HostRewriteResult>
rewriteHostSource(llvm::StringRef Path, const HostRewriteOptions &Opts,
                  llvm::raw_ostream &DiagOS);

/// Checks that every kernel and variable the rewritten source registers is
/// in \p Device (the device compilation of the same file), so that the
/// runtime will find it in the bundle. Prints an error per missing symbol.
llvm::Error checkRegistrations(const HostRewriteResult &R,
                               const llvm::Module &Device,
                               llvm::raw_ostream &DiagOS);

/// The CUDA runtime functions that Cleave's runtime (libcleave_rt) defines,
/// sorted; the one table the rewriter checks calls against
/// (docs/runtime-api.md).
llvm::ArrayRef<llvm::StringRef> supportedCudaRuntimeFunctions();
bool isSupportedCudaRuntimeFunction(llvm::StringRef Name);

} // namespace cleave

#endif
