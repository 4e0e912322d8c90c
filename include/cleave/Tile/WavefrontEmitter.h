//===- WavefrontEmitter.h - CUDA for a tiled 2-D wavefront ------*- C++ -*-===//
//
// Part of Cleave (docs/tile.md). Technique A of digest 001 (section 2) in
// its portable schedule: rectangular tiles of the (i, j) domain, one kernel
// launch per anti-diagonal of tiles (the tiles of one launch run in
// parallel), each tile's cells staged in shared memory and computed along
// in-tile anti-diagonals with one barrier per step. Correct on every device
// Cleave runs kernels on: no block ever waits for another.
//
//===----------------------------------------------------------------------===//
#ifndef CLEAVE_TILE_WAVEFRONTEMITTER_H
#define CLEAVE_TILE_WAVEFRONTEMITTER_H

#include "cleave/Tile/Dependences.h"
#include "cleave/Tile/Nest.h"

#include <optional>
#include <string>

namespace clang {
class ASTContext;
}

namespace cleave::tile {

/// Iterations per tile: Rows of i (one thread each) by Cols of j.
struct TileSizes {
  unsigned Rows = 32, Cols = 64;
};

/// Static shared memory a block may use.
constexpr unsigned MaxStaticSharedBytes = 48 * 1024;

/// The code that replaces one nest.
struct EmittedNest {
  /// The kernel and the host function, placed before the function that
  /// holds the nest.
  std::string Definitions;
  /// The statement that replaces the pragma and the nest.
  std::string Call;
};

/// What every file with a tiled nest needs once, at its top.
std::string wavefrontPreamble();

/// Emits nest number \p Id, or says why not (a dependence with a negative
/// component, a tile too large for shared memory, an access inside a
/// macro).
std::optional<EmittedNest> emitWavefront(const Nest &N,
                                         const std::vector<Dependence> &Deps,
                                         TileSizes Tile, unsigned Id,
                                         clang::ASTContext &Ctx, Refusal &Why);

} // namespace cleave::tile

#endif
