//===- Build.cpp - `cleave compile ... -o app`: building a program --------===//
//
// Part of Cleave's driver. Per .cu file: the host rewrite (lib/Rewrite) to
// <out>.cleave.cpp, the device object (frontend, bundle, CPU variants,
// lib/CodeGen/DeviceObject) in a temporary directory, and the host
// compiler on the rewritten source; .cpp files go to the host compiler as
// they are; then one link with libcleave_rt and an rpath to it. -### prints
// these steps instead of running them.
//
//===----------------------------------------------------------------------===//
#include "Build.h"
#include "HostCompiler.h"
#include "TempDir.h"

#include "cleave/Bundle/BundleWriter.h"
#include "cleave/CodeGen/DeviceObject.h"
#include "cleave/CodeGen/PTXEmitter.h"
#include "cleave/Rewrite/HostRewriter.h"
#include "cleave/Support/Diagnosed.h"
#include "cleave/Support/KernelInfo.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Process.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/Regex.h"
#include "llvm/Support/Signals.h"
#include "llvm/Support/WithColor.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/Transforms/Utils/Cloning.h"

#include <map>
#include <set>

using namespace llvm;

#ifndef CLEAVE_DEFAULT_CUDA_PATH
#error "CLEAVE_DEFAULT_CUDA_PATH must be defined by the build"
#endif

namespace cleave {
namespace {

int error(const Twine &Msg) {
  WithColor::error(errs(), "cleave") << Msg << "\n";
  return 1;
}

enum class InputKind { Cuda, Cxx, C, Object };

std::optional<InputKind> kindOf(StringRef Path) {
  StringRef Ext = sys::path::extension(Path);
  if (Ext == ".cu")
    return InputKind::Cuda;
  if (is_contained({".cpp", ".cc", ".cxx", ".C", ".c++"}, Ext))
    return InputKind::Cxx;
  if (Ext == ".c")
    return InputKind::C;
  if (is_contained({".o", ".a", ".so"}, Ext))
    return InputKind::Object;
  return std::nullopt;
}

/// The directory of the running driver's prefix (<prefix>/bin/cleave).
std::string prefixDir() {
  std::string Exe = sys::fs::getMainExecutable(nullptr, (void *)&prefixDir);
  return sys::path::parent_path(sys::path::parent_path(Exe)).str();
}

/// <prefix>/lib, where the build (and an installation) puts libcleave_rt.so.
std::string runtimeLibDir() {
  SmallString<256> Dir(prefixDir());
  sys::path::append(Dir, "lib");
  return std::string(Dir);
}

std::string cudaIncludeDir(const BuildOptions &Opts) {
  SmallString<256> Dir(Opts.Device.CudaPath.empty() ? CLEAVE_DEFAULT_CUDA_PATH
                                                    : Opts.Device.CudaPath);
  sys::path::append(Dir, "include");
  return std::string(Dir);
}

void printCommand(raw_ostream &OS, ArrayRef<std::string> Args) {
  for (const std::string &A : Args) {
    OS << " \"";
    OS.write_escaped(A);
    OS << "\"";
  }
  OS << "\n";
}

/// Runs Args (Args[0] is the program); stderr goes to ErrFile when given.
int runCommand(ArrayRef<std::string> Args, StringRef ErrFile = "") {
  SmallVector<StringRef, 32> Argv(Args.begin(), Args.end());
  std::optional<StringRef> Redirects[3] = {std::nullopt, std::nullopt,
                                           std::nullopt};
  if (!ErrFile.empty())
    Redirects[2] = ErrFile;
  std::string Msg;
  int RC = sys::ExecuteAndWait(Args[0], Argv, /*Env=*/std::nullopt,
                               ErrFile.empty() ? ArrayRef<std::optional<StringRef>>{}
                                               : Redirects,
                               0, 0, &Msg);
  if (RC < 0) {
    error("cannot run '" + Args[0] + "': " + Msg);
    return 1;
  }
  return RC;
}

/// Runs a host compiler or link step that must write Output: a step that
/// exits 0 without writing it (a --cxx that is not a compiler) fails too.
int runHostStep(ArrayRef<std::string> Args, StringRef Output,
                StringRef ErrFile = "") {
  if (int RC = runCommand(Args, ErrFile))
    return RC;
  uint64_t Size = 0;
  if (sys::fs::file_size(Output, Size) || Size == 0) {
    error("'" + Args[0] + "' exited successfully but did not write '" + Output +
          "'");
    return 1;
  }
  return 0;
}

/// Whether the user's -Xcompiler options set the host compiler's warnings.
bool hostWarningsRequested(ArrayRef<std::string> Args) {
  return any_of(Args, [](StringRef A) {
    return A.starts_with("-W") && !A.starts_with("-Wl,") &&
           !A.starts_with("-Wa,") && !A.starts_with("-Wp,");
  });
}

/// Writes Bytes to Path through a temporary file in the same directory and
/// a rename: the file is there whole or not at all.
int writeWhole(StringRef Path, StringRef Bytes) {
  Error E = writeToOutput(Path, [&](raw_ostream &OS) {
    OS << Bytes;
    return Error::success();
  });
  if (E)
    return error("cannot write '" + Path + "': " + toString(std::move(E)));
  return 0;
}

/// The device variables the program's .cu files define. For nvcc each .cu
/// file has its own copy of a variable defined in a header they share (its
/// host shadows are static); Cleave's runtime finds a variable by its device
/// name, so two files' copies under one name cannot be told apart: refuse,
/// rather than let a copy to one reach the other file's kernels.
class DeviceVariables {
public:
  bool add(StringRef Input, ArrayRef<Registration> Regs) {
    bool Ok = true;
    for (const Registration &R : Regs) {
      if (R.K != Registration::Variable)
        continue;
      auto [It, New] = Owner.try_emplace(R.DeviceName, Input.str(), R.Location);
      if (New || It->second.first == Input)
        continue;
      errs() << R.Location << ": error: device variable '" << R.Display
             << "' is defined by both " << It->second.first << " and "
             << Input
             << " (each .cu file would have its own copy, which Cleave's "
                "runtime cannot tell apart): define it in one .cu file\n"
             << It->second.second << ": note: the other definition\n";
      Ok = false;
    }
    return Ok;
  }

private:
  /// Device name -> (input, location).
  std::map<std::string, std::pair<std::string, std::string>> Owner;
};

/// The kernels and variables a link left undefined under cuda* names: the
/// program uses CUDA runtime API that libcleave_rt does not define.
std::vector<std::string> undefinedCudaSymbols(StringRef LinkerOutput) {
  Regex RE("undefined (reference to|symbol:) [`']?(cuda[A-Za-z0-9_]+)");
  std::set<std::string> Seen;
  std::vector<std::string> Out;
  SmallVector<StringRef, 16> Lines;
  LinkerOutput.split(Lines, '\n');
  for (StringRef L : Lines) {
    SmallVector<StringRef, 3> M;
    if (RE.match(L, &M) && Seen.insert(M[2].str()).second)
      Out.push_back(M[2].str());
  }
  return Out;
}

/// Whether A and B name the same file (which need not exist yet).
bool samePath(StringRef A, StringRef B) {
  if (sys::fs::equivalent(A, B))
    return true;
  SmallString<256> PA(A), PB(B);
  sys::fs::make_absolute(PA);
  sys::fs::make_absolute(PB);
  sys::path::remove_dots(PA, /*remove_dot_dot=*/true);
  sys::path::remove_dots(PB, /*remove_dot_dot=*/true);
  return PA == PB;
}

/// Refuses a build that would write over one of its inputs: the program
/// (-o) or a rewritten source (<out>.cleave.cpp) at an input's path; or the
/// program over a rewritten source.
int checkNoInputOverwritten(
    const BuildOptions &Opts,
    const std::map<std::string, std::string> &SourceOut) {
  for (const auto &[Cu, Out] : SourceOut)
    if (samePath(Opts.Output, Out))
      return error("-o '" + Opts.Output +
                   "' is where the rewritten host source of '" + Cu +
                   "' goes: choose another -o");
  for (const std::string &In : Opts.Inputs) {
    if (samePath(In, Opts.Output))
      return error("-o '" + Opts.Output + "' names the input '" + In +
                   "': the program would overwrite it");
    for (const auto &[Cu, Out] : SourceOut)
      if (samePath(In, Out))
        return error("the rewritten host source of '" + Cu +
                     "' is written to '" + Out + "', which is the input '" +
                     In + "': rename that file or choose another -o");
  }
  return 0;
}

} // namespace

int writeRewrittenCopies(StringRef CopyDir, ArrayRef<RewrittenCopy> Copies,
                         std::vector<std::string> &Dirs) {
  if (Copies.empty())
    return 0;
  if (std::error_code EC = sys::fs::create_directories(CopyDir))
    return error("cannot create '" + CopyDir + "': " + EC.message());
  StringSet<> Seen;
  for (const RewrittenCopy &C : Copies) {
    if (writeWhole(C.Path, C.Source))
      return 1;
    SmallString<256> Dir(sys::path::parent_path(C.Original));
    sys::fs::make_absolute(Dir);
    if (Seen.insert(Dir).second)
      Dirs.push_back(Dir.str().str());
  }
  return 0;
}

Expected<std::string> rewriteForHost(StringRef Input, const BuildOptions &Opts,
                                     StringRef OutputName) {
  HostRewriteOptions HO;
  HO.Parse = Opts.Device;
  HO.OutputName = OutputName.str();
  // A build writes the copies to its temporary directory; here they follow
  // the source they belong to.
  HO.CopyDir = "<temporary directory>";
  Expected<HostRewriteResult> R = rewriteHostSource(Input, HO, errs());
  if (!R)
    return R.takeError();
  std::string Out = std::move(R->Source);
  for (const RewrittenCopy &C : R->Copies) {
    if (!StringRef(Out).ends_with("\n"))
      Out += "\n";
    Out += "\n// ---- cleave: " + C.Path + ", the rewritten copy of " +
           C.Original + " ----\n" + C.Source;
  }
  return Out;
}

/// The device object of Input, checked against the host rewrite's
/// registrations when Check is given; an empty string when the file has no
/// kernels (a host-only translation unit of a program).
static Expected<std::string> deviceObjectOf(StringRef Input,
                                            const BuildOptions &Opts,
                                            LLVMContext &Ctx,
                                            const HostRewriteResult *Check) {
  DeviceCompileOptions DO = Opts.Device;
  DO.AllowNoKernels = Check != nullptr;
  auto M = compileDeviceCode(Input, DO, Ctx, errs());
  if (!M)
    return M.takeError();
  if (Check)
    if (Error E = checkRegistrations(*Check, **M, errs()))
      return std::move(E);
  if (getKernels(**M).empty())
    return std::string();

  BundleOptions BO;
  BO.GpuArch = Opts.Device.GpuArch;
  BO.Ptxas = Opts.Ptxas;
  if (Opts.Verbose)
    BO.Log = &errs();
  // The CPU variants are the ones the bundle names.
  Expected<BuiltBundle> Bundle = writeBundle(**M, BO);
  if (!Bundle)
    return Bundle.takeError();
  DeviceObjectOptions OO;
  OO.SingleDevice = Opts.SingleDevice;
  OO.CPU = Opts.HostCPU;
  return emitDeviceObject(*Bundle->CPU, Bundle->Bytes, OO);
}

Expected<std::string> buildDeviceObject(StringRef Input,
                                        const BuildOptions &Opts,
                                        LLVMContext &Ctx) {
  return deviceObjectOf(Input, Opts, Ctx, nullptr);
}

namespace {

/// One `cleave compile ... -o app`, step by step: the inputs and where their
/// rewritten sources go, the host compiler and the runtime, a temporary
/// directory, each input compiled to objects, then the link. Each step
/// returns non-zero (after reporting) when the build cannot go on.
class ProgramBuild {
public:
  ProgramBuild(const BuildOptions &Opts, LLVMContext &Ctx)
      : Opts(Opts), Ctx(Ctx), Log(errs()), Show(Opts.DryRun || Opts.Verbose) {}

  int run() {
    if (int RC = collectInputs())
      return RC;
    if (int RC = findHostTools())
      return RC;
    if (int RC = createTempDir())
      return RC;
    setHostFlags();
    bool Failed = false;
    for (auto [I, Input] : enumerate(Inputs)) {
      auto &[In, K] = Input;
      if (K == InputKind::Object) {
        Objects.push_back(In);
        continue;
      }
      std::string HostSrc = In;
      std::vector<std::string> Extra;
      if (K == InputKind::Cuda && !compileCuda(I, In, HostSrc, Extra)) {
        Failed = true;
        continue;
      }
      if (!compileHost(I, In, K, HostSrc, Extra))
        Failed = true;
    }
    if (Failed)
      return 1;
    if (int RC = serveImage())
      return RC;
    return link();
  }

private:
  /// Inputs, and where each rewritten source goes: <out>.cleave.cpp for one
  /// .cu file, <out dir>/<stem>.cleave.cpp for several.
  int collectInputs() {
    unsigned NumCuda = 0;
    for (const std::string &In : Opts.Inputs) {
      std::optional<InputKind> K = kindOf(In);
      if (!K)
        return error(In + ": unknown input: expected .cu (CUDA), "
                          ".cpp/.cc/.cxx (host C++), .c (host C) or "
                          ".o/.a/.so");
      if (*K != InputKind::Object && !sys::fs::exists(In))
        return error("no such file: '" + In + "'");
      NumCuda += *K == InputKind::Cuda;
      Inputs.push_back({In, *K});
    }
    StringSet<> Taken;
    for (auto &[In, K] : Inputs) {
      if (K != InputKind::Cuda)
        continue;
      SmallString<256> P;
      if (NumCuda == 1) {
        P = Opts.Output + ".cleave.cpp";
      } else {
        P = sys::path::parent_path(Opts.Output);
        sys::path::append(P, sys::path::stem(In) + ".cleave.cpp");
      }
      if (!Taken.insert(P).second)
        return error("two inputs would both be rewritten to '" + P +
                     "': give the .cu files different names");
      SourceOut[In] = std::string(P);
    }
    return checkNoInputOverwritten(Opts, SourceOut);
  }

  /// The host compiler and Cleave's runtime library (-### goes on with g++
  /// when no host compiler is found).
  int findHostTools() {
    Expected<std::vector<std::string>> Found = findHostCompiler(Opts.Cxx);
    if (!Found) {
      if (!Opts.DryRun)
        return error(toString(Found.takeError()));
      consumeError(Found.takeError());
      Found = std::vector<std::string>{"g++"};
    }
    Cxx = std::move(*Found);
    RtInclude = runtimeIncludeDir();
    RtLib = runtimeLibDir();
    SmallString<256> RtSo(RtLib);
    sys::path::append(RtSo, "libcleave_rt.so");
    if (!Opts.DryRun && !sys::fs::exists(RtSo))
      return error("Cleave's runtime library is not at '" + RtSo +
                   "': build it first (ninja cleave-rt-shared), or use "
                   "--emit= to stop before linking");
    return 0;
  }

  /// Temporary files; -### only names the directory it would create.
  int createTempDir() {
    SmallString<256> P;
    if (Opts.DryRun) {
      SmallString<256> Model;
      sys::path::system_temp_directory(/*ErasedOnReboot=*/true, Model);
      sys::path::append(Model, "cleave-%%%%%%");
      sys::fs::createUniquePath(Model, P, /*MakeAbsolute=*/false);
    } else if (std::error_code EC = Tmp.create(Opts.KeepTemps)) {
      return error("cannot create a temporary directory: " + EC.message());
    } else {
      P = Tmp.path();
    }
    TmpPath = std::string(P);
    return 0;
  }

  std::string tmpFile(unsigned I, StringRef Stem, StringRef Suffix) const {
    SmallString<256> P(TmpPath);
    sys::path::append(P, Twine(I) + "-" + Stem + Suffix);
    return std::string(P);
  }

  /// The host compiler's options for every host source.
  void setHostFlags() {
    HostFlags = {"-O" + std::to_string(Opts.Device.OptLevel)};
    if (Opts.Device.DebugInfo)
      HostFlags.push_back("-g");
    if (!Opts.Device.Std.empty())
      HostFlags.push_back("-std=" + Opts.Device.Std);
    for (const std::string &D : Opts.Device.Defines)
      HostFlags.push_back("-D" + D);
    for (const std::string &I : Opts.Device.IncludeDirs)
      HostFlags.push_back("-I" + I);
    append_range(HostFlags, Opts.HostCompilerArgs);
    HostFlags.push_back("-I" + RtInclude);
    HostFlags.push_back("-I" + cudaIncludeDir(Opts));
    // CUDA 13 keeps CCCL (cuda/std/..., which cooperative_groups/reduce.h
    // includes) in include/cccl; nvcc passes it the same way.
    HostFlags.insert(HostFlags.end(),
                     {"-isystem", cudaIncludeDir(Opts) + "/cccl"});
  }

  /// The .cu input \p In (the \p I th): its host rewrite (\p HostSrc, and
  /// the host compiler's \p Extra options for it) and its device object.
  /// False when it failed (and was reported).
  bool compileCuda(unsigned I, const std::string &In, std::string &HostSrc,
                   std::vector<std::string> &Extra) {
    StringRef Stem = sys::path::stem(In);
    HostSrc = SourceOut[In];
    std::string DevObj = tmpFile(I, Stem, ".device.o");
    std::string CopyDir = tmpFile(I, Stem, ".include");
    if (Show) {
      Log << "cleave: rewrite host code: " << In << " -> " << HostSrc
          << " (and the included files it changes -> " << CopyDir << ")\n";
      Log << "cleave: device code: " << In << " -> " << DevObj
          << " (kernel bundle for " << Opts.Device.GpuArch
          << ", CPU variants, registration)\n";
    }
    if (!Opts.DryRun) {
      HostRewriteOptions HO;
      HO.Parse = Opts.Device;
      HO.OutputName = HostSrc;
      HO.CopyDir = CopyDir;
      Expected<HostRewriteResult> R = rewriteHostSource(In, HO, errs());
      if (!R) {
        reportUnlessDiagnosed(R.takeError(), [&](const std::string &M) {
          error(In + ": " + M);
        });
        return false;
      }
      if (!Variables.add(In, R->Registrations))
        return false;
      Expected<std::string> Obj = deviceObjectOf(In, Opts, Ctx, &*R);
      if (!Obj) {
        reportUnlessDiagnosed(Obj.takeError(), [&](const std::string &M) {
          error(In + ": " + M);
        });
        return false;
      }
      if (!Obj->empty()) {
        if (writeWhole(DevObj, *Obj))
          return false;
        Objects.push_back(DevObj);
        DeviceObjects.push_back(DevObj);
      } else if (Show) {
        Log << "cleave: " << In << " has no kernels: no device object\n";
      }
      std::vector<std::string> CopiedFrom;
      if (writeRewrittenCopies(CopyDir, R->Copies, CopiedFrom) ||
          writeWhole(HostSrc, R->Source))
        return false;
      for (const std::string &D : CopiedFrom)
        Extra.insert(Extra.end(), {"-iquote", D});
    } else {
      Objects.push_back(DevObj);
      DeviceObjects.push_back(DevObj);
    }
    // Quoted includes of the .cu file resolve from its directory.
    StringRef Dir = sys::path::parent_path(In);
    Extra.insert(Extra.begin(),
                 {"-iquote", Dir.empty() ? std::string(".") : Dir.str()});
    // Clang's device compile reported the warnings of the whole .cu file
    // (it parses the host code too); the host compiler would repeat them
    // on the rewritten source, unless the user asked for its own.
    if (!hostWarningsRequested(Opts.HostCompilerArgs))
      Extra.push_back("-w");
    return true;
  }

  /// The host compiler on \p HostSrc (input \p In, the \p I th, of kind
  /// \p K). False when it failed (and was reported).
  bool compileHost(unsigned I, const std::string &In, InputKind K,
                   const std::string &HostSrc,
                   const std::vector<std::string> &Extra) {
    std::string HostObj = tmpFile(I, sys::path::stem(In), ".o");
    std::vector<std::string> Cmd = Cxx;
    // C sources are compiled as C, as nvcc does, without the C++ -std.
    for (const std::string &F : HostFlags)
      if (K != InputKind::C || !StringRef(F).starts_with("-std="))
        Cmd.push_back(F);
    append_range(Cmd, Extra);
    if (K == InputKind::C)
      Cmd.insert(Cmd.end(), {"-x", "c"});
    Cmd.insert(Cmd.end(), {"-c", HostSrc, "-o", HostObj});
    if (Show)
      printCommand(Log, Cmd);
    if (!Opts.DryRun && runHostStep(Cmd, HostObj) != 0) {
      Log << "cleave: error: the host compiler failed on " << HostSrc
          << (K == InputKind::Cuda ? " (rewritten from " + In + ")" : "")
          << "\n";
      return false;
    }
    Objects.push_back(HostObj);
    return true;
  }

  /// The program's CPU image for cleave-serve (docs/serve.md): its device
  /// objects linked into a shared object, which an object of its own
  /// embeds and registers (cleave_register_image) at start. A program run
  /// with CLEAVE_SERVER passes it to the server, whose CPU devices run the
  /// CPU variants from it; the __cleave_rt_* helpers and
  /// cleave_register_module it calls resolve against the server's runtime.
  int serveImage() {
    if (DeviceObjects.empty())
      return 0;
    std::string So = TmpPath + "/cleave-image.so";
    std::string Src = TmpPath + "/cleave-image.c";
    std::string Obj = TmpPath + "/cleave-image.o";
    std::vector<std::string> Link = Cxx;
    Link.insert(Link.end(), {"-shared", "-o", So});
    append_range(Link, DeviceObjects);
    std::vector<std::string> Cc = Cxx;
    Cc.insert(Cc.end(), {"-x", "c", "-c", Src, "-o", Obj});
    if (Show) {
      Log << "cleave: CPU image for cleave-serve: " << So << "\n";
      printCommand(Log, Link);
      printCommand(Log, Cc);
    }
    Objects.push_back(Obj);
    if (Opts.DryRun)
      return 0;
    if (runHostStep(Link, So) != 0)
      return error("linking the CPU image for cleave-serve failed");
    std::string Quoted;
    for (char C : So) {
      if (C == '"' || C == '\\')
        Quoted += '\\';
      Quoted += C;
    }
    std::string Text =
        "/* The program's CPU image for cleave-serve (docs/serve.md). */\n"
        "__asm__(\".section .rodata.cleave_image,\\\"a\\\",@progbits\\n\"\n"
        "        \".balign 16\\n\"\n"
        "        \".globl __cleave_image_begin\\n.hidden "
        "__cleave_image_begin\\n\"\n"
        "        \".globl __cleave_image_end\\n.hidden "
        "__cleave_image_end\\n\"\n"
        "        \"__cleave_image_begin:\\n\"\n"
        "        \".incbin \\\"" +
        Quoted +
        "\\\"\\n\"\n"
        "        \"__cleave_image_end:\\n\"\n"
        "        \".previous\\n\");\n"
        "extern const char __cleave_image_begin[], __cleave_image_end[];\n"
        "int cleave_register_image(const void *, unsigned long);\n"
        "__attribute__((constructor)) static void "
        "__cleave_image_register(void) {\n"
        "  cleave_register_image(__cleave_image_begin,\n"
        "                        (unsigned long)(__cleave_image_end -\n"
        "                                        __cleave_image_begin));\n"
        "}\n";
    if (writeWhole(Src, Text))
      return 1;
    if (runHostStep(Cc, Obj) != 0)
      return error("compiling the CPU image's registration failed");
    return 0;
  }

  /// The link, to a temporary name next to the output and renamed at the
  /// end, so that the program is there whole or not at all.
  int link() {
    std::string LinkOut = Opts.Output;
    if (!Opts.DryRun) {
      SmallString<256> P;
      if (std::error_code EC =
              sys::fs::createUniqueFile(Opts.Output + ".tmp-%%%%%%", P))
        return error("cannot create '" + Opts.Output + "': " + EC.message());
      LinkOut = std::string(P);
      sys::RemoveFileOnSignal(LinkOut);
    }
    std::vector<std::string> Link = Cxx;
    append_range(Link, Objects);
    for (const std::string &L : Opts.LinkDirs)
      Link.push_back("-L" + L);
    for (const std::string &L : Opts.LinkLibs)
      Link.push_back("-l" + L);
    append_range(Link, Opts.HostCompilerArgs);
    Link.insert(Link.end(), {"-L" + RtLib, "-lcleave_rt", "-Wl,-rpath," + RtLib,
                             "-o", LinkOut});
    if (Show)
      printCommand(Log, Link);
    if (Opts.DryRun)
      return 0;
    std::string ErrFile = TmpPath + "/link.stderr";
    int RC = runHostStep(Link, LinkOut, ErrFile);
    std::string LinkErr;
    if (auto Buf = MemoryBuffer::getFile(ErrFile))
      LinkErr = (*Buf)->getBuffer().str();
    std::vector<std::string> Missing = undefinedCudaSymbols(LinkErr);
    if (RC != 0) {
      sys::fs::remove(LinkOut);
      for (const std::string &S : Missing)
        error(S + " is not supported by Cleave's runtime (the program calls "
                  "it, but libcleave_rt implements only a subset of the CUDA "
                  "runtime API: see docs/runtime-api.md)");
      if (Missing.empty() || Opts.Verbose)
        Log << LinkErr;
      return error("linking '" + Opts.Output + "' failed");
    }
    Log << LinkErr; // the linker's warnings
    std::error_code RenameEC = sys::fs::rename(LinkOut, Opts.Output);
    sys::DontRemoveFileOnSignal(LinkOut);
    if (std::error_code EC = RenameEC) {
      sys::fs::remove(LinkOut);
      return error("cannot write '" + Opts.Output + "': " + EC.message());
    }
    return 0;
  }

  const BuildOptions &Opts;
  LLVMContext &Ctx;
  raw_ostream &Log;
  bool Show;
  std::vector<std::pair<std::string, InputKind>> Inputs;
  std::map<std::string, std::string> SourceOut;
  std::vector<std::string> Cxx;
  std::string RtInclude, RtLib;
  TempDir Tmp;
  std::string TmpPath;
  std::vector<std::string> HostFlags;
  std::vector<std::string> Objects;
  /// The device objects among Objects (serveImage()).
  std::vector<std::string> DeviceObjects;
  DeviceVariables Variables;
};

} // namespace

int buildProgram(const BuildOptions &Opts, LLVMContext &Ctx) {
  return ProgramBuild(Opts, Ctx).run();
}

} // namespace cleave
