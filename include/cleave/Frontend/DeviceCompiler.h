//===- DeviceCompiler.h - CUDA / OpenCL device code to LLVM IR --*- C++ -*-===//
//
// Part of Cleave. Compiles the device side of a .cu file, or an OpenCL C
// file, to an nvptx64 LLVM module in-process through Clang's C++ API.
// Diagnostics are printed Clang-style (file:line:col) as they happen; the
// returned error only says that compilation failed.
//
//===----------------------------------------------------------------------===//
#ifndef CLEAVE_FRONTEND_DEVICECOMPILER_H
#define CLEAVE_FRONTEND_DEVICECOMPILER_H

#include "llvm/Support/Error.h"
#include <memory>
#include <string>
#include <vector>

namespace llvm {
class LLVMContext;
class Module;
class raw_ostream;
} // namespace llvm

namespace cleave {

enum class SourceLanguage { CUDA, OpenCL };

struct DeviceCompileOptions {
  std::string GpuArch = "sm_90";
  unsigned OptLevel = 2;
  bool DebugInfo = false;
  std::string Std;                      ///< -std= (CUDA) or -cl-std= (OpenCL)
  std::vector<std::string> IncludeDirs; ///< -I
  std::vector<std::string> Defines;     ///< -D (NAME or NAME=VALUE)
  std::string CudaPath;                 ///< empty: the configured default
  std::string LibclcPath;               ///< empty: the configured default
  bool Verbose = false;                 ///< print the cc1 command line
  bool ColorDiagnostics = false;
  /// The host compiler's include search directories, searched after
  /// Clang's own (-idirafter), so that headers only it has (GCC's omp.h)
  /// are found by both parses of a .cu file.
  std::vector<std::string> HostSearchDirs;
  /// -fopenmp for the host parse (the host compiler gets -fopenmp): its
  /// _OPENMP and pragmas are the host compiler's view.
  bool OpenMP = false;
  /// A CUDA file without kernels is not an error (host-only translation
  /// units of a program, `cleave compile a.cu b.cu -o app`).
  bool AllowNoKernels = false;
};

/// The language of Path from its extension (.cu, .cl), or an error naming
/// the file.
llvm::Expected<SourceLanguage> languageOf(llvm::StringRef Path);

/// Compiles Path to an nvptx64 module. Diagnostics go to DiagOS. The module
/// has at least one kernel: a file with none is an error.
llvm::Expected<std::unique_ptr<llvm::Module>>
compileDeviceCode(llvm::StringRef Path, const DeviceCompileOptions &Opts,
                  llvm::LLVMContext &Ctx, llvm::raw_ostream &DiagOS);

/// Checks that Path exists and looks like source (not empty, not binary);
/// says why not on DiagOS (file:1:1 where there is a file).
llvm::Error checkSourceFile(llvm::StringRef Path, llvm::raw_ostream &DiagOS);

/// The directory of empty stand-ins for the headers CUDA 13 removed
/// (share/cleave/compat/cuda next to the executable).
std::string compatHeaderDir();

/// The directory of wrappers that let Clang parse headers of the host
/// compiler (share/cleave/compat/host: omp.h).
std::string hostCompatHeaderDir();

/// The directory of the runtime's headers that programs built by Cleave
/// include (cleave/cuda_host.h, cleave/nvcc_host.h, cleave_rt.h):
/// <prefix>/include once installed, else the source tree's runtime/include.
std::string runtimeIncludeDir();

} // namespace cleave

#endif
