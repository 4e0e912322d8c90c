//===- DeviceCompiler.cpp - CUDA / OpenCL device code to LLVM IR ----------===//
//
// Clang's driver turns a clang-style command line into the cc1 invocation
// (it knows where CUDA's headers and libdevice are and which wrapper headers
// to include); we run that invocation in-process and keep the module.
//
//===----------------------------------------------------------------------===//
#include "cleave/Frontend/DeviceCompiler.h"
#include "cleave/Frontend/ClangInvocation.h"
#include "cleave/Frontend/LaunchSyntax.h"

#include "cleave/Support/Diagnosed.h"
#include "cleave/Support/KernelInfo.h"

#include "clang/Basic/Diagnostic.h"
#include "clang/Basic/DiagnosticDriver.h"
#include "clang/Basic/DiagnosticOptions.h"
#include "clang/CodeGen/CodeGenAction.h"
#include "clang/Driver/Compilation.h"
#include "clang/Driver/Driver.h"
#include "clang/Driver/Job.h"
#include "clang/Frontend/CompilerInstance.h"
#include "clang/Frontend/CompilerInvocation.h"
#include "clang/Frontend/TextDiagnosticPrinter.h"
#include "clang/Lex/PreprocessorOptions.h"
#include "llvm/IR/Module.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/TargetParser/Host.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Support/raw_ostream.h"

#include <mutex>

using namespace llvm;

namespace cleave {

// The installation layout is fixed at configure time (CMake defines these).
#ifndef CLEAVE_CLANG_EXECUTABLE
#error "CLEAVE_CLANG_EXECUTABLE must be defined by the build"
#endif

Expected<SourceLanguage> languageOf(StringRef Path) {
  StringRef Ext = sys::path::extension(Path);
  if (Ext == ".cu")
    return SourceLanguage::CUDA;
  if (Ext == ".cl")
    return SourceLanguage::OpenCL;
  return createStringError(inconvertibleErrorCode(),
                           "%s: unknown device language: expected a .cu "
                           "(CUDA) or .cl (OpenCL C) file",
                           Path.str().c_str());
}

std::string compatHeaderDir() {
  // The executable lives in <prefix>/bin; the headers in
  // <prefix>/share/cleave/compat/cuda, in the build tree as once installed.
  std::string Exe = sys::fs::getMainExecutable(nullptr, (void *)&compatHeaderDir);
  SmallString<256> Dir(sys::path::parent_path(sys::path::parent_path(Exe)));
  sys::path::append(Dir, "share", "cleave", "compat", "cuda");
  if (sys::fs::is_directory(Dir))
    return std::string(Dir);
  return CLEAVE_COMPAT_DIR;
}

std::string hostCompatHeaderDir() {
  SmallString<256> Dir(sys::path::parent_path(compatHeaderDir()));
  sys::path::append(Dir, "host");
  return std::string(Dir);
}

std::string runtimeIncludeDir() {
  // <prefix>/include once installed (bin/cleave beside it), else the source
  // tree the build was configured from.
  std::string Exe =
      sys::fs::getMainExecutable(nullptr, (void *)&runtimeIncludeDir);
  SmallString<256> Dir(sys::path::parent_path(sys::path::parent_path(Exe)));
  sys::path::append(Dir, "include");
  SmallString<256> Probe(Dir);
  sys::path::append(Probe, "cleave", "nvcc_host.h");
  if (sys::fs::exists(Probe))
    return std::string(Dir);
  return CLEAVE_RUNTIME_INCLUDE_DIR;
}

// A file that is empty or has NUL bytes is not source: say so once, at its
// start, instead of letting the parser print a screen of errors.
Error checkSourceFile(StringRef Path, raw_ostream &DiagOS) {
  if (!sys::fs::exists(Path)) {
    DiagOS << "cleave: error: no such file: '" << Path << "'\n";
    return diagnosedError("no such file");
  }
  auto Buf = MemoryBuffer::getFile(Path, /*IsText=*/false,
                                   /*RequiresNullTerminator=*/false);
  if (!Buf) {
    DiagOS << "cleave: error: cannot read '" << Path
           << "': " << Buf.getError().message() << "\n";
    return diagnosedError("cannot read input");
  }
  StringRef Text = (*Buf)->getBuffer();
  const char *Why = nullptr;
  if (Text.trim().empty())
    Why = "file is empty: no kernels to compile";
  else if (Text.contains('\0'))
    Why = "file is binary, not CUDA or OpenCL source";
  if (!Why)
    return Error::success();
  DiagOS << Path << ":1:1: error: " << Why << "\n";
  return diagnosedError(Why);
}

static std::vector<std::string> buildDriverArgs(StringRef Path,
                                                SourceLanguage Lang,
                                                CudaSide Side,
                                                const DeviceCompileOptions &O) {
  std::vector<std::string> A = {CLEAVE_CLANG_EXECUTABLE};
  if (Lang == SourceLanguage::CUDA) {
    std::string Cuda = O.CudaPath.empty() ? CLEAVE_CUDA_PATH : O.CudaPath;
    A.insert(A.end(), {"-x", "cuda",
                       Side == CudaSide::Device ? "--cuda-device-only"
                                                : "--cuda-host-only",
                       "--cuda-gpu-arch=" + O.GpuArch, "--cuda-path=" + Cuda,
                       "-Wno-unknown-cuda-version", "-isystem",
                       compatHeaderDir(),
                       // CUDA 13 keeps CCCL (cooperative_groups' cuda/std
                       // dependencies among them) in include/cccl, which
                       // Clang 19 does not know about.
                       "-isystem", Cuda + "/include/cccl",
                       "-isystem", hostCompatHeaderDir(),
                       // What nvcc's cuda_runtime.h gives host code.
                       "-include", runtimeIncludeDir() + "/cleave/nvcc_host.h"});
    // Declarations of the calls CUDA 13 removed that the runtime still
    // provides (cleave/cuda_removed_api.h); after CUDA's own headers, which
    // Clang's CUDA wrapper includes first.
    SmallString<256> Removed(compatHeaderDir());
    sys::path::append(Removed, "cleave", "cuda_removed_api.h");
    if (sys::fs::exists(Removed))
      A.insert(A.end(), {"-include", std::string(Removed)});
    for (const std::string &D : O.HostSearchDirs)
      A.insert(A.end(), {"-idirafter", D});
    // (Clang's driver drops -fopenmp from a device-only compile itself.)
    if (O.OpenMP && Side == CudaSide::Host)
      A.push_back("-fopenmp");
    if (!O.Std.empty())
      A.push_back("-std=" + O.Std);
  } else {
    std::string Clc = O.LibclcPath.empty() ? CLEAVE_LIBCLC_BITCODE : O.LibclcPath;
    A.insert(A.end(), {"-x", "cl", "-target", "nvptx64--nvidiacl",
                       "-Xclang", "-finclude-default-header", "-Xclang",
                       "-mlink-builtin-bitcode", "-Xclang", Clc});
    A.push_back("-cl-std=" + (O.Std.empty() ? std::string("CL1.2") : O.Std));
  }
  A.push_back("-O" + std::to_string(O.OptLevel));
  if (O.DebugInfo)
    A.push_back("-g");
  if (O.ColorDiagnostics)
    A.push_back("-fcolor-diagnostics");
  for (const std::string &I : O.IncludeDirs)
    A.push_back("-I" + I);
  for (const std::string &D : O.Defines)
    A.push_back("-D" + D);
  if (Side == CudaSide::Device)
    A.insert(A.end(), {"-emit-llvm", "-c", Path.str(), "-o", "-"});
  else
    A.insert(A.end(), {"-fsyntax-only", Path.str()});
  return A;
}

/// Puts Cleave's fixes for Clang's own CUDA headers around the runtime
/// wrapper that the driver force-includes (compat/cuda/
/// __cleave_clang19_fixes_{begin,end}.h say what they fix), so that they
/// apply to the wrapper alone.
static void bracketCudaWrapper(std::vector<std::string> &Includes) {
  auto It = llvm::find(Includes, "__clang_cuda_runtime_wrapper.h");
  if (It == Includes.end())
    return;
  SmallString<256> Begin(compatHeaderDir()), End(compatHeaderDir());
  sys::path::append(Begin, "__cleave_clang19_fixes_begin.h");
  sys::path::append(End, "__cleave_clang19_fixes_end.h");
  It = Includes.insert(It, std::string(Begin));
  Includes.insert(It + 2, std::string(End));
}

ClangDiagnostics::ClangDiagnostics(raw_ostream &OS, bool Color)
    : Options(new clang::DiagnosticOptions()),
      IDs(new clang::DiagnosticIDs()) {
  Options->ShowColors = Color;
  // Driver diagnostics have no source location, so they name the tool, as
  // clang's do; the compiler's own carry file:line:col.
  auto *DriverPrinter = new clang::TextDiagnosticPrinter(OS, &*Options);
  DriverPrinter->setPrefix("cleave");
  Driver = std::make_unique<clang::DiagnosticsEngine>(IDs, &*Options,
                                                      DriverPrinter);
  // Clang 19 knows CUDA up to 12.5 and warns about 13; Cleave supports
  // CUDA 13 device headers through the compatibility directory.
  Driver->setSeverity(clang::diag::warn_drv_new_cuda_version,
                      clang::diag::Severity::Ignored, {});
  Printer = std::make_unique<clang::TextDiagnosticPrinter>(OS, &*Options);
}

std::shared_ptr<clang::CompilerInvocation>
createClangInvocation(StringRef Path, SourceLanguage Lang, CudaSide Side,
                      const DeviceCompileOptions &Opts, ClangDiagnostics &Diags,
                      raw_ostream &DiagOS) {
  std::vector<std::string> Args = buildDriverArgs(Path, Lang, Side, Opts);
  SmallVector<const char *, 32> Argv;
  for (const std::string &S : Args)
    Argv.push_back(S.c_str());

  clang::DiagnosticsEngine &DE = *Diags.Driver;
  clang::driver::Driver TheDriver(Argv[0], sys::getDefaultTargetTriple(), DE,
                                  "cleave CUDA frontend");
  TheDriver.setCheckInputsExist(true);
  std::unique_ptr<clang::driver::Compilation> C(
      TheDriver.BuildCompilation(Argv));
  if (!C || DE.hasErrorOccurred())
    return nullptr;

  // One input, one side, -c or -fsyntax-only: exactly one cc1 job.
  const clang::driver::JobList &Jobs = C->getJobs();
  if (Jobs.size() != 1 || !isa<clang::driver::Command>(*Jobs.begin())) {
    DiagOS << "cleave: error: unexpected " << (Side == CudaSide::Device ? "device" : "host")
           << " compilation plan (" << Jobs.size() << " jobs)\n";
    return nullptr;
  }
  const auto &Cmd = cast<clang::driver::Command>(*Jobs.begin());
  if (Opts.Verbose)
    Cmd.Print(DiagOS, "\n", /*Quote=*/true);

  auto Invocation = std::make_shared<clang::CompilerInvocation>();
  if (!clang::CompilerInvocation::CreateFromArgs(*Invocation, Cmd.getArguments(),
                                                 DE, Argv[0]))
    return nullptr;
  if (Lang == SourceLanguage::CUDA)
    bracketCudaWrapper(Invocation->getPreprocessorOpts().Includes);
  return Invocation;
}

Expected<std::unique_ptr<Module>>
compileDeviceCode(StringRef Path, const DeviceCompileOptions &Opts,
                  LLVMContext &Ctx, raw_ostream &DiagOS) {
  Expected<SourceLanguage> Lang = languageOf(Path);
  if (!Lang) {
    Error E = Lang.takeError();
    DiagOS << "cleave: error: " << toString(std::move(E)) << "\n";
    return diagnosedError("unknown language");
  }
  if (Error E = checkSourceFile(Path, DiagOS))
    return std::move(E);

  auto Fail = [] {
    return diagnosedError("device compilation failed");
  };
  // Clang's backend setup adds the target's own passes (NVVMReflect, which
  // resolves libdevice's __nvvm_reflect calls) only when it can create the
  // target machine, that is when the NVPTX target is registered: do it
  // before the first compilation, not only when PTX is emitted.
  static std::once_flag NVPTXOnce;
  std::call_once(NVPTXOnce, [] {
    LLVMInitializeNVPTXTargetInfo();
    LLVMInitializeNVPTXTarget();
    LLVMInitializeNVPTXTargetMC();
    LLVMInitializeNVPTXAsmPrinter();
  });
  ClangDiagnostics Diags(DiagOS, Opts.ColorDiagnostics);
  std::shared_ptr<clang::CompilerInvocation> Invocation =
      createClangInvocation(Path, *Lang, CudaSide::Device, Opts, Diags, DiagOS);
  if (!Invocation)
    return Fail();
  // Users read the IR Cleave prints and the remarks name values: keep the
  // source's names.
  Invocation->getCodeGenOpts().DiscardValueNames = false;

  clang::CompilerInstance Clang;
  Clang.setInvocation(std::move(Invocation));
  Clang.createDiagnostics(Diags.Printer.get(), /*ShouldOwnClient=*/false);
  if (!Clang.hasDiagnostics())
    return Fail();
  if (*Lang == SourceLanguage::CUDA)
    useLaunchSyntaxFileSystem(Clang);

  clang::EmitLLVMOnlyAction Action(&Ctx);
  if (!Clang.ExecuteAction(Action))
    return Fail();
  std::unique_ptr<Module> M = Action.takeModule();
  if (!M)
    return Fail();

  if (getKernels(*M).empty() &&
      !(Opts.AllowNoKernels && *Lang == SourceLanguage::CUDA)) {
    DiagOS << Path << ":1:1: error: no kernels found: a "
           << (*Lang == SourceLanguage::CUDA ? "CUDA file needs a __global__"
                                             : "OpenCL file needs a __kernel")
           << " function\n";
    return diagnosedError("no kernels");
  }
  return std::move(M);
}

} // namespace cleave
