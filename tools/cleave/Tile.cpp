//===- Tile.cpp - `cleave tile`: options and output -----------------------===//
//
// Part of Cleave's driver (docs/tile.md). The work is in lib/Tile.
//
//===----------------------------------------------------------------------===//
#include "Tile.h"

#include "cleave/Support/Diagnosed.h"
#include "cleave/Tile/Tile.h"
#include "cleave/rt/DeviceProfile.h"

#include "llvm/Support/CommandLine.h"
#include "llvm/Support/Path.h"
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
cl::opt<std::string>
    Profile("profile",
            cl::desc("Device profile (cleave-calibrate) whose first GPU the "
                     "stencil cost model predicts for (default: built-in "
                     "H200 numbers)"),
            cl::value_desc("file"), cl::sub(TileCmd), cl::cat(TileCat));

cl::opt<tile::WavefrontSchedule> Wavefront(
    "wavefront",
    cl::desc("How wavefront tiles are launched (docs/tile.md)"),
    cl::values(
        clEnumValN(tile::WavefrontSchedule::Auto, "auto",
                   "both, chosen at run time by the number of "
                   "anti-diagonals of tiles (default)"),
        clEnumValN(tile::WavefrontSchedule::Persistent, "persistent",
                   "one persistent launch: tiles from an atomic ticket"),
        clEnumValN(tile::WavefrontSchedule::Launches, "launches",
                   "one launch per anti-diagonal of tiles")),
    cl::init(tile::WavefrontSchedule::Auto), cl::sub(TileCmd),
    cl::cat(TileCat));

/// The stencil model's numbers from the first GPU of the profile at Path.
Expected<tile::StencilDevice> loadStencilDevice(StringRef Path) {
  rt::DeviceProfile P;
  rt::Result R = rt::loadDeviceProfile(Path.str(), P);
  if (!R.ok())
    return createStringError(R.message());
  if (P.Gpus.empty())
    return createStringError("the profile '" + Path + "' has no GPU");
  const auto &G = P.Gpus.front().Model;
  if (!G.Sms || !(G.ClockMHz > 0) || !(G.DramGBps > 0) || !(G.L2GBps > 0) ||
      !G.L2Bytes || !(G.LaunchUs > 0))
    return createStringError(
        "the profile '" + Path + "' lacks what the stencil model needs of " +
        P.Gpus.front().Name +
        " (SM count, clock, DRAM and L2 bandwidth, L2 size, launch time)");
  tile::StencilDevice D;
  D.Sms = G.Sms;
  D.ClockMHz = G.ClockMHz;
  D.DramGBps = G.DramGBps;
  D.L2GBps = G.L2GBps;
  D.L2Bytes = G.L2Bytes;
  D.LaunchUs = G.LaunchUs;
  D.CoresPerSm = G.SubPartitions * 32;
  D.MaxThreadsPerSm = G.MaxThreadsPerSm;
  D.MaxBlocksPerSm = G.MaxBlocksPerSm;
  if (G.SharedPerSm)
    D.SharedPerSm = G.SharedPerSm;
  // Static shared memory: at most 48 KiB whatever the opt-in limit.
  if (G.SharedPerBlockMax)
    D.SharedPerBlock = std::min<uint64_t>(G.SharedPerBlockMax, 49152);
  D.SharedReservedPerBlock = G.SharedReservedPerBlock;
  D.Source =
      P.Gpus.front().Name + " of " + llvm::sys::path::filename(Path).str();
  return D;
}

} // namespace

bool tileRequested() { return bool(TileCmd); }

int runTile() {
  TileOptions Opts;
  Opts.IncludeDirs.assign(IncludeDirs.begin(), IncludeDirs.end());
  Opts.Defines.assign(Defines.begin(), Defines.end());
  Opts.Std = Std;
  Opts.Verbose = Verbose;
  Opts.Wavefront = Wavefront;
  Opts.ColorDiagnostics = errs().has_colors();
  if (!Profile.empty()) {
    Expected<tile::StencilDevice> D = loadStencilDevice(Profile);
    if (!D) {
      WithColor::error(errs(), "cleave")
          << "--profile: " << toString(D.takeError()) << "\n";
      return 1;
    }
    Opts.Device = std::move(*D);
  }
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
