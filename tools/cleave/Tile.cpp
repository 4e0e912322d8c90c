//===- Tile.cpp - `cleave tile`: options and output -----------------------===//
//
// Part of Cleave's driver (docs/tile.md). The work is in lib/Tile.
//
//===----------------------------------------------------------------------===//
#include "Tile.h"

#include "cleave/Support/Diagnosed.h"
#include "cleave/Tile/Tile.h"

#include "llvm/Support/CommandLine.h"
#include "llvm/Support/WithColor.h"
#include "llvm/Support/raw_ostream.h"

using namespace llvm;

namespace cleave {
namespace {

cl::SubCommand TileCmd("tile",
                       "Tile the loop nests marked '#pragma cleave tile' "
                       "into CUDA kernels (docs/tile.md)");
cl::OptionCategory TileCat("cleave tile options");

cl::opt<std::string> Input(cl::Positional, cl::desc("<input .cpp/.cu>"),
                           cl::Required, cl::sub(TileCmd));
cl::opt<std::string> Output("o", cl::desc("Output file (.cu; default: stdout)"),
                            cl::value_desc("file"), cl::init("-"),
                            cl::sub(TileCmd), cl::cat(TileCat));
cl::list<std::string> IncludeDirs("I", cl::desc("Add an include directory"),
                                  cl::value_desc("dir"), cl::Prefix,
                                  cl::sub(TileCmd), cl::cat(TileCat));
cl::list<std::string> Defines("D", cl::desc("Define a macro (NAME[=VALUE])"),
                              cl::value_desc("macro"), cl::Prefix,
                              cl::sub(TileCmd), cl::cat(TileCat));
cl::opt<std::string> Std("std", cl::desc("Language standard (-std=c++17)"),
                         cl::value_desc("std"), cl::sub(TileCmd),
                         cl::cat(TileCat));
cl::opt<bool> Verbose("v", cl::desc("Print the Clang command"),
                      cl::sub(TileCmd), cl::cat(TileCat));

} // namespace

bool tileRequested() { return bool(TileCmd); }

int runTile() {
  TileOptions Opts;
  Opts.IncludeDirs.assign(IncludeDirs.begin(), IncludeDirs.end());
  Opts.Defines.assign(Defines.begin(), Defines.end());
  Opts.Std = Std;
  Opts.Verbose = Verbose;
  Opts.ColorDiagnostics = errs().has_colors();
  Expected<std::string> Src = tileSource(Input, Opts, errs());
  if (!Src) {
    reportUnlessDiagnosed(Src.takeError(), [](const std::string &M) {
      WithColor::error(errs(), "cleave") << M << "\n";
    });
    return 1;
  }
  if (Error E = writeToOutput(Output, [&](raw_ostream &OS) {
        OS << *Src;
        return Error::success();
      })) {
    WithColor::error(errs(), "cleave")
        << "cannot write '" << Output << "': " << toString(std::move(E))
        << "\n";
    return 1;
  }
  return 0;
}

} // namespace cleave
