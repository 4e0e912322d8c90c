//===- ClangInvocation.h - Clang's cc1 setup for either side of a .cu -*- C++ -*-===//
//
// Part of Cleave. The device compiler and the host rewriter parse the same
// .cu file with the same headers (CUDA's, the compatibility directory,
// CCCL) and the same user options; only the side differs. Clang's driver
// turns that clang-style command line into the cc1 invocation, which the
// caller runs in-process with its own frontend action.
//
//===----------------------------------------------------------------------===//
#ifndef CLEAVE_FRONTEND_CLANGINVOCATION_H
#define CLEAVE_FRONTEND_CLANGINVOCATION_H

#include "cleave/Frontend/DeviceCompiler.h"

#include "clang/Basic/Diagnostic.h"
#include "clang/Basic/DiagnosticOptions.h"
#include "clang/Frontend/CompilerInvocation.h"
#include "llvm/ADT/IntrusiveRefCntPtr.h"

#include <memory>

namespace cleave {

/// Which side of a CUDA file a parse is for.
enum class CudaSide {
  Device, ///< --cuda-device-only: nvptx64, emits LLVM IR
  Host,   ///< --cuda-host-only -fsyntax-only: the host AST (launches are
          ///< CUDAKernelCallExpr, kernels keep their CUDA attributes)
};

/// Diagnostics printed Clang-style to an output stream, with the options
/// that the driver and the compiler instance share.
struct ClangDiagnostics {
  llvm::IntrusiveRefCntPtr<clang::DiagnosticOptions> Options;
  llvm::IntrusiveRefCntPtr<clang::DiagnosticIDs> IDs;
  /// For driver diagnostics (no location): prefixed "cleave:".
  std::unique_ptr<clang::DiagnosticsEngine> Driver;
  /// For the compiler instance (file:line:col).
  std::unique_ptr<clang::DiagnosticConsumer> Printer;

  ClangDiagnostics(llvm::raw_ostream &OS, bool Color);
};

/// The cc1 invocation of Path (a .cu or .cl file; OpenCL has only the device
/// side) as Clang's driver builds it, or null after printing why through
/// Diags.Driver / DiagOS. Opts.Verbose prints the cc1 command line.
std::shared_ptr<clang::CompilerInvocation>
createClangInvocation(llvm::StringRef Path, SourceLanguage Lang, CudaSide Side,
                      const DeviceCompileOptions &Opts, ClangDiagnostics &Diags,
                      llvm::raw_ostream &DiagOS);

} // namespace cleave

#endif
