//===- cleave.cpp - The Cleave driver ---------------------------------------===//
//
// Thin: parses options, calls the libraries. Subcommands:
//   cleave compile app.cu [more.cu x.cpp] -o app   a program (Build.cpp,
//                                                  docs/driver.md)
//   cleave compile --emit=host-source FILE  the rewritten host code
//   cleave compile --emit=device-obj FILE   bundle + CPU variants, as an object
//   cleave compile --emit=ir|ptx FILE       device code, with Cleave's variants
//   cleave compile --emit=cpu-ir|cpu-obj    the kernels' CPU variants
//   cleave compile --emit=bundle -o F.clvb  the kernel bundle (docs/bundle.md)
//   cleave analyze app.cu [-- args]         predicted kernel times (Analyze.cpp,
//                                           docs/analyze.md)
//   cleave tile app.cpp -o app.cu           marked loop nests as tiled CUDA
//                                           (Tile.cpp, docs/tile.md)
//
//===----------------------------------------------------------------------===//
#include "Analyze.h"
#include "Build.h"
#include "HostCompiler.h"
#include "Tile.h"

#include "cleave/Bundle/BundleWriter.h"
#include "cleave/CodeGen/HostObjectEmitter.h"
#include "cleave/CodeGen/PTXEmitter.h"
#include "cleave/Frontend/DeviceCompiler.h"
#include "cleave/Plugin/Pipelines.h"
#include "cleave/Rewrite/HostRewriter.h"
#include "cleave/Support/Diagnosed.h"

#include "llvm/IR/DiagnosticInfo.h"
#include "llvm/IR/DiagnosticPrinter.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Regex.h"
#include "llvm/Support/WithColor.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/Support/raw_ostream.h"

using namespace llvm;

namespace {

cl::OptionCategory CompileCat("cleave compile options");
cl::SubCommand CompileCmd("compile",
                          "Compile CUDA (.cu) or OpenCL (.cl) device code "
                          "through Cleave's analyses and transforms");

enum class EmitKind {
  None,
  HostSource,
  DeviceObj,
  IR,
  PTX,
  CpuIR,
  CpuObj,
  Bundle
};
cl::opt<EmitKind> Emit(
    "emit", cl::desc("What to write instead of building a program"),
    cl::values(clEnumValN(EmitKind::HostSource, "host-source",
                          "the rewritten host code (plain C++)"),
               clEnumValN(EmitKind::DeviceObj, "device-obj",
                          "x86-64 object with the kernel bundle, the CPU "
                          "variants and their registration"),
               clEnumValN(EmitKind::IR, "ir",
                          "LLVM IR of the kernels and their variants"),
               clEnumValN(EmitKind::PTX, "ptx",
                          "PTX of the kernels and their variants"),
               clEnumValN(EmitKind::CpuIR, "cpu-ir",
                          "optimized x86-64 IR of the kernels' CPU variants"),
               clEnumValN(EmitKind::CpuObj, "cpu-obj",
                          "x86-64 object code of the kernels' CPU variants"),
               clEnumValN(EmitKind::Bundle, "bundle",
                          "the kernel bundle the runtime loads (binary; "
                          "inspect with cleave-bundle-info)")),
    cl::init(EmitKind::None), cl::sub(CompileCmd), cl::cat(CompileCat));
cl::list<std::string> Inputs(cl::Positional,
                             cl::desc("<input .cu/.cl/.cpp/.c/.o>"),
                             cl::OneOrMore, cl::sub(CompileCmd));
cl::opt<std::string> Output("o",
                            cl::desc("Output file (default: a.out for a "
                                     "program, stdout with --emit)"),
                            cl::value_desc("file"), cl::init(""),
                            cl::sub(CompileCmd), cl::cat(CompileCat));
cl::list<std::string> IncludeDirs("I", cl::desc("Add an include directory"),
                                  cl::value_desc("dir"), cl::Prefix,
                                  cl::sub(CompileCmd), cl::cat(CompileCat));
cl::list<std::string> Defines("D", cl::desc("Define a macro (NAME[=VALUE])"),
                              cl::value_desc("macro"), cl::Prefix,
                              cl::sub(CompileCmd), cl::cat(CompileCat));
cl::opt<unsigned> OptLevel("O", cl::desc("Optimization level (0-3, default 3, as nvcc)"),
                           cl::Prefix, cl::init(3), cl::sub(CompileCmd),
                           cl::cat(CompileCat));
cl::opt<bool> Debug("g", cl::desc("Emit debug information"),
                    cl::sub(CompileCmd), cl::cat(CompileCat));
cl::opt<std::string> Std("std", cl::desc("Language standard (-std=c++17, "
                                         "or CL1.2/CL2.0/CL3.0 for OpenCL)"),
                         cl::value_desc("std"), cl::sub(CompileCmd),
                         cl::cat(CompileCat));
cl::opt<std::string> GpuArch("cuda-gpu-arch",
                             cl::desc("GPU architecture (default sm_90)"),
                             cl::init("sm_90"), cl::sub(CompileCmd),
                             cl::cat(CompileCat));
cl::opt<std::string> CudaPath("cuda-path",
                              cl::desc("CUDA installation for device headers"),
                              cl::sub(CompileCmd), cl::cat(CompileCat));
cl::opt<bool> Verbose("v", cl::desc("Print the steps and the Clang command"),
                      cl::sub(CompileCmd), cl::cat(CompileCat));
cl::opt<std::string> Passes(
    "cleave-passes",
    cl::desc("Cleave pass pipeline run on the device module"),
    cl::init(cleave::DeviceVariantsPipeline), cl::sub(CompileCmd),
    cl::cat(CompileCat));
cl::opt<std::string>
    RemarksPassed("Rpass", cl::desc("Report transforms made by passes whose "
                                    "name matches the regex (e.g. cleave)"),
                  cl::Prefix, cl::value_desc("regex"), cl::sub(CompileCmd),
                  cl::cat(CompileCat));
cl::opt<std::string> RemarksMissed(
    "Rpass-missed",
    cl::desc("Report transforms refused by passes whose name matches the "
             "regex (e.g. cleave)"),
    cl::Prefix, cl::value_desc("regex"), cl::sub(CompileCmd),
    cl::cat(CompileCat));
cl::opt<std::string> HostCPU("mcpu",
                             cl::desc("x86-64 CPU for the CPU variants "
                                      "(default x86-64-v3; unknown names "
                                      "fall back to generic x86-64)"),
                             cl::init("x86-64-v3"), cl::sub(CompileCmd),
                             cl::cat(CompileCat));
cl::opt<bool> NoPtxas("no-ptxas",
                      cl::desc("Do not check emitted PTX with ptxas"),
                      cl::sub(CompileCmd), cl::cat(CompileCat));
cl::opt<bool> DryRun("###",
                     cl::desc("Print the steps of the build without running "
                              "them"),
                     cl::sub(CompileCmd), cl::cat(CompileCat));
cl::alias DryRunAlias("dry-run", cl::desc("Alias for -###"),
                      cl::aliasopt(DryRun), cl::cat(CompileCat));
cl::opt<bool> KeepTemps("keep-temps",
                        cl::desc("Keep the temporary files of the build "
                                 "(device objects, host objects); without "
                                 "it they are removed, also when the build "
                                 "fails or is interrupted"),
                        cl::sub(CompileCmd), cl::cat(CompileCat));
cl::opt<bool> SingleDevice("single-device",
                           cl::desc("Run every kernel whole on the best "
                                    "device (CLEAVE_PARTITION still wins)"),
                           cl::sub(CompileCmd), cl::cat(CompileCat));
cl::opt<std::string> Cxx("cxx",
                         cl::desc("Host C++ compiler (default: $CXX, else "
                                  "g++, else clang++-19); it compiles .c "
                                  "files as C"),
                         cl::value_desc("compiler"), cl::sub(CompileCmd),
                         cl::cat(CompileCat));
cl::list<std::string> XCompiler(
    "Xcompiler",
    cl::desc("Pass options (comma-separated) to the host compiler, for every "
             "host compile and the link, as nvcc's -Xcompiler"),
    cl::value_desc("opt,..."), cl::CommaSeparated, cl::sub(CompileCmd),
    cl::cat(CompileCat));
cl::alias XCompilerAlias("compiler-options", cl::desc("Alias for -Xcompiler"),
                         cl::aliasopt(XCompiler), cl::cat(CompileCat));
cl::opt<bool> OpenMP("fopenmp",
                     cl::desc("OpenMP in host code: -fopenmp for the host "
                              "compiler and the link (also "
                              "-Xcompiler -fopenmp); Cleave's host parse "
                              "defines _OPENMP"),
                     cl::sub(CompileCmd), cl::cat(CompileCat));
cl::list<std::string> LinkDirs("L", cl::desc("Add a library directory (link)"),
                               cl::value_desc("dir"), cl::Prefix,
                               cl::sub(CompileCmd), cl::cat(CompileCat));
cl::list<std::string> LinkLibs("l", cl::desc("Link a library"),
                               cl::value_desc("lib"), cl::Prefix,
                               cl::sub(CompileCmd), cl::cat(CompileCat));

cl::OptionCategory InfoCat("cleave options");
cl::opt<bool> PrintCudaApi(
    "print-cuda-api",
    cl::desc("Print the CUDA runtime functions that Cleave's runtime "
             "implements (what programs may call), one per line"),
    cl::cat(InfoCat));

/// Prints optimization remarks Clang-style: file:line:col: remark: ...
class RemarkPrinter : public DiagnosticHandler {
  std::optional<Regex> Passed, Missed;

public:
  RemarkPrinter(StringRef PassedRE, StringRef MissedRE) {
    if (!PassedRE.empty())
      Passed.emplace(PassedRE);
    if (!MissedRE.empty())
      Missed.emplace(MissedRE);
  }
  bool isPassedOptRemarkEnabled(StringRef Pass) const override {
    return Passed && Passed->match(Pass);
  }
  bool isMissedOptRemarkEnabled(StringRef Pass) const override {
    return Missed && Missed->match(Pass);
  }
  bool isAnalysisRemarkEnabled(StringRef) const override { return false; }
  // Passes build a remark only when some remark is enabled
  // (OptimizationRemarkEmitter::enabled asks this).
  bool isAnyRemarkEnabled() const override { return Passed || Missed; }
  bool handleDiagnostics(const DiagnosticInfo &DI) override {
    auto *R = dyn_cast<DiagnosticInfoOptimizationBase>(&DI);
    if (!R) {
      if (DI.getSeverity() == DS_Error) {
        DiagnosticPrinterRawOStream DP(errs());
        errs() << "cleave: error: ";
        DI.print(DP);
        errs() << "\n";
        return true;
      }
      return false;
    }
    if (!R->isEnabled())
      return true;
    errs() << (R->isLocationAvailable() ? R->getLocationStr() : "cleave")
           << ": remark: " << R->getMsg() << " [-R"
           << (R->getKind() == DK_OptimizationRemarkMissed ? "pass-missed="
                                                           : "pass=")
           << R->getPassName() << "]\n";
    return true;
  }
};

int error(const Twine &Msg) {
  WithColor::error(errs(), "cleave") << Msg << "\n";
  return 1;
}

/// Writes the output file whole through a temporary file and a rename (or
/// stdout for "-").
int writeOutput(StringRef Bytes, bool IsText) {
  (void)IsText; // the bytes are written as they are either way
  Error E = writeToOutput(Output, [&](raw_ostream &OS) {
    OS << Bytes;
    return Error::success();
  });
  if (E)
    return error("cannot write '" + Output + "': " + toString(std::move(E)));
  return 0;
}

/// The PTX check of --emit=ptx and the cubin of --emit=bundle use the same
/// ptxas: found unless --no-ptxas.
std::string ptxasToUse() {
  if (NoPtxas)
    return {};
  std::string Ptxas = cleave::findPtxas();
  if (Ptxas.empty() && Verbose)
    errs() << "cleave: ptxas not found; PTX not assembled\n";
  return Ptxas;
}

int emitBundle(Module &M) {
  if (Output == "-" && outs().is_displayed())
    return error("the bundle is binary: write it to a file with -o");
  cleave::BundleOptions BOpts;
  BOpts.GpuArch = GpuArch;
  BOpts.Ptxas = ptxasToUse();
  if (Verbose)
    BOpts.Log = &errs();
  Expected<cleave::BuiltBundle> Bundle = cleave::writeBundle(M, BOpts);
  if (!Bundle)
    return error(toString(Bundle.takeError()));
  return writeOutput(Bundle->Bytes, /*IsText=*/false);
}

cleave::BuildOptions buildOptions() {
  cleave::BuildOptions B;
  B.Inputs.assign(Inputs.begin(), Inputs.end());
  B.Output = Output.empty() ? "a.out" : Output.getValue();
  cleave::DeviceCompileOptions &Opts = B.Device;
  Opts.GpuArch = GpuArch;
  Opts.OptLevel = OptLevel;
  Opts.DebugInfo = Debug;
  Opts.Std = Std;
  Opts.IncludeDirs.assign(IncludeDirs.begin(), IncludeDirs.end());
  Opts.Defines.assign(Defines.begin(), Defines.end());
  Opts.CudaPath = CudaPath;
  Opts.Verbose = Verbose;
  Opts.ColorDiagnostics = errs().has_colors();
  B.HostCPU = HostCPU;
  B.Ptxas = ptxasToUse();
  B.Cxx = Cxx;
  B.LinkDirs.assign(LinkDirs.begin(), LinkDirs.end());
  B.LinkLibs.assign(LinkLibs.begin(), LinkLibs.end());
  B.HostCompilerArgs.assign(XCompiler.begin(), XCompiler.end());
  if (OpenMP && !cleave::enablesOpenMP(B.HostCompilerArgs))
    B.HostCompilerArgs.push_back("-fopenmp");
  if (llvm::any_of(Inputs, [](const std::string &In) {
        return sys::path::extension(In) == ".cu";
      }))
    cleave::useHostCompilerView(B);
  B.DryRun = DryRun;
  B.KeepTemps = KeepTemps;
  B.SingleDevice = SingleDevice;
  B.Verbose = Verbose;
  return B;
}

/// Installs the remark printer of -Rpass / -Rpass-missed on Ctx.
int setUpRemarks(LLVMContext &Ctx) {
  std::string RegexErr;
  for (const std::string &RE : {RemarksPassed.getValue(),
                                RemarksMissed.getValue()})
    if (!RE.empty() && !Regex(RE).isValid(RegexErr))
      return error("invalid -Rpass regex '" + RE + "': " + RegexErr);
  Ctx.setDiagnosticHandler(
      std::make_unique<RemarkPrinter>(RemarksPassed, RemarksMissed));
  return 0;
}

int runCompile() {
  if (OptLevel > 3)
    return error("invalid optimization level -O" + Twine(OptLevel));
  LLVMContext Ctx;
  // A program's kernels that cannot be split run whole on one device; say
  // why at compile time unless the user chose the remarks themselves.
  if (Emit == EmitKind::None && RemarksMissed.getNumOccurrences() == 0)
    RemarksMissed = "^cleave-partition$";
  if (int RC = setUpRemarks(Ctx))
    return RC;
  cleave::BuildOptions Build = buildOptions();
  if (Emit == EmitKind::None) {
    if (Inputs.size() == 1 && sys::path::extension(Inputs.front()) == ".cl")
      return error("an OpenCL file has no host code to build a program "
                   "from: use --emit=ir, ptx, cpu-ir, cpu-obj or bundle");
    return cleave::buildProgram(Build, Ctx);
  }
  if (DryRun)
    return error("-### prints the steps of building a program; it does not "
                 "apply to --emit");
  if (Inputs.size() != 1)
    return error("--emit takes one source file (got " +
                 Twine(Inputs.size()) + ")");
  if (Output.empty())
    Output = "-";
  const std::string &Input = Inputs.front();

  if (Emit == EmitKind::HostSource) {
    Expected<std::string> Src = cleave::rewriteForHost(
        Input, Build, Output == "-" ? "<stdout>" : Output.getValue());
    if (!Src) {
      cleave::reportUnlessDiagnosed(Src.takeError(),
                                    [](const std::string &M) { error(M); });
      return 1;
    }
    return writeOutput(*Src, /*IsText=*/true);
  }
  if (Emit == EmitKind::DeviceObj) {
    if (Output == "-" && outs().is_displayed())
      return error("the device object is binary: write it to a file with -o");
    Expected<std::string> Obj =
        cleave::buildDeviceObject(Input, Build, Ctx);
    if (!Obj) {
      cleave::reportUnlessDiagnosed(Obj.takeError(),
                                    [](const std::string &M) { error(M); });
      return 1;
    }
    return writeOutput(*Obj, /*IsText=*/false);
  }

  const cleave::DeviceCompileOptions &Opts = Build.Device;
  auto M = cleave::compileDeviceCode(Input, Opts, Ctx, errs());
  if (!M) {
    cleave::reportUnlessDiagnosed(M.takeError(),
                                  [](const std::string &M) { error(M); });
    return 1;
  }
  // The bundle runs its own fixed pipeline: its variants must follow the
  // conventions the runtime expects.
  if (Emit == EmitKind::Bundle)
    return emitBundle(**M);
  auto TM = cleave::createNVPTXTargetMachine(**M, GpuArch);
  if (!TM)
    return error(toString(TM.takeError()));
  // The CPU variants are a module of their own (x86-64):
  // cleave-cpu-variants replaces the device module with it.
  bool ForCPU = Emit == EmitKind::CpuIR || Emit == EmitKind::CpuObj;
  std::string Pipeline =
      ForCPU ? cleave::CPUVariantsPipeline : Passes.getValue();
  if (Verbose)
    errs() << "cleave: running passes '" << Pipeline << "'\n";
  if (Error E = cleave::runCleavePipeline(**M, Pipeline, TM->get()))
    return error(toString(std::move(E)));

  // Build the whole output in memory first: a file is written whole or not
  // at all.
  std::string Text;
  raw_string_ostream OS(Text);
  if (Emit == EmitKind::IR) {
    (*M)->print(OS, nullptr);
  } else if (Emit == EmitKind::CpuIR) {
    if (Error E = cleave::optimizeHostModule(**M, HostCPU))
      return error(toString(std::move(E)));
    (*M)->print(OS, nullptr);
  } else if (Emit == EmitKind::CpuObj) {
    Expected<std::string> Obj = cleave::emitHostObject(**M, HostCPU);
    if (!Obj)
      return error(toString(Obj.takeError()));
    OS << *Obj;
  } else {
    Expected<std::string> PTX = cleave::emitPTX(**M, GpuArch);
    if (!PTX)
      return error(toString(PTX.takeError()));
    if (std::string Ptxas = ptxasToUse(); !Ptxas.empty()) {
      if (Verbose)
        errs() << "cleave: checking PTX with " << Ptxas << "\n";
      if (auto Cubin = cleave::assemblePTX(*PTX, GpuArch, Ptxas); !Cubin)
        return error(toString(Cubin.takeError()));
    }
    OS << *PTX;
  }

  return writeOutput(Text, Emit != EmitKind::CpuObj);
}

} // namespace

int main(int argc, char **argv) {
  InitLLVM X(argc, argv);
  // `cleave analyze app.cu -- args`: what follows `--` is the program's,
  // not ours (cl would take it as more positional inputs).
  std::vector<std::string> ProgramArgs;
  if (argc > 1 && StringRef(argv[1]) == "analyze")
    for (int I = 2; I < argc; ++I)
      if (StringRef(argv[I]) == "--") {
        ProgramArgs.assign(argv + I + 1, argv + argc);
        argc = I;
        break;
      }
  cl::HideUnrelatedOptions({&CompileCat, &InfoCat});
  cl::ParseCommandLineOptions(
      argc, argv,
      "Cleave: run CUDA and OpenCL kernels across the CPU and every GPU\n\n"
      "  cleave compile app.cu [b.cu c.cpp] -o app  a program that runs on "
      "every device\n"
      "  cleave compile app.cu util.c -o app        .c files are compiled as "
      "C, as nvcc does\n"
      "  cleave compile -Xcompiler -fopenmp ...     options for the host "
      "compiler (and the link)\n"
      "  cleave compile -### app.cu -o app          the steps, without "
      "running them\n"
      "  cleave compile --emit=host-source FILE     the rewritten host code\n"
      "  cleave compile --emit=device-obj -o F FILE bundle + CPU variants as "
      "an object\n"
      "  cleave compile --emit=ir|ptx FILE          device code and its "
      "variants\n"
      "  cleave compile --emit=cpu-ir|cpu-obj FILE  the kernels' CPU "
      "variants (x86-64)\n"
      "  cleave compile --emit=bundle -o F FILE     the kernel bundle the "
      "runtime loads\n"
      "  cleave analyze app.cu [-- program args]    predicted time of each "
      "kernel launch on a GPU\n"
      "  cleave tile app.cpp -o app.cu              loop nests marked "
      "'#pragma cleave tile' as tiled CUDA\n");
  if (CompileCmd)
    return runCompile();
  if (cleave::analyzeRequested())
    return cleave::runAnalyze(ProgramArgs);
  if (cleave::tileRequested())
    return cleave::runTile();
  if (PrintCudaApi) {
    for (StringRef Name : cleave::supportedCudaRuntimeFunctions())
      outs() << Name << "\n";
    return 0;
  }
  errs() << "cleave: error: no subcommand given; see 'cleave --help'\n";
  return 1;
}
