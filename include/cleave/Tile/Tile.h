//===- Tile.h - `cleave tile`: marked loop nests to tiled CUDA --*- C++ -*-===//
//
// Part of Cleave (docs/tile.md). Parses a C++ or CUDA file with Clang,
// finds every loop nest marked `#pragma cleave tile [clauses]`, and returns
// the file with each nest it can tile replaced by a call to generated CUDA
// (kernels and host code placed before the function that held the nest).
// A nest it cannot tile stays as written, with a remark at its pragma that
// says why; the rest of the file is copied unchanged.
//
//===----------------------------------------------------------------------===//
#ifndef CLEAVE_TILE_TILE_H
#define CLEAVE_TILE_TILE_H

#include "cleave/Tile/StencilDevice.h"
#include "cleave/Tile/WavefrontEmitter.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/raw_ostream.h"

#include <string>
#include <vector>

namespace cleave {

struct TileOptions {
  std::vector<std::string> IncludeDirs; ///< -I
  std::vector<std::string> Defines;     ///< -D (NAME or NAME=VALUE)
  std::string Std;                      ///< -std=
  bool Verbose = false;
  bool ColorDiagnostics = false;
  /// The GPU the stencil cost model predicts for (--profile).
  tile::StencilDevice Device;
  /// How wavefront tiles are launched (--wavefront).
  tile::WavefrontSchedule Wavefront = tile::WavefrontSchedule::Auto;
};

/// The tiled source of the C++ (.cpp, .cc, .cxx) or CUDA (.cu) file \p Path.
/// Diagnostics and remarks go to \p DiagOS as Clang prints them; the error
/// is a DiagnosedError after an error diagnostic (a syntax error in the file
/// or a malformed pragma).
llvm::Expected<std::string> tileSource(llvm::StringRef Path,
                                       const TileOptions &Opts,
                                       llvm::raw_ostream &DiagOS);

} // namespace cleave

#endif
