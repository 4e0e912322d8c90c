//===- WavefrontEmitter.h - CUDA for a tiled 2-D wavefront ------*- C++ -*-===//
//
// Part of Cleave (docs/tile.md). Technique A of digest 001 (section 2):
// rectangular tiles of the (i, j) domain, each tile's cells staged in
// shared memory and computed along in-tile anti-diagonals with one barrier
// per step, launched either once per anti-diagonal of tiles (the tiles of
// one launch run in parallel and no block waits for another) or as one
// persistent launch whose blocks take tiles in wavefront order from an
// atomic ticket and wait on their neighbours' flags (no co-residency
// assumed, so correct on every device Cleave runs kernels on, the CPU
// included).
//
//===----------------------------------------------------------------------===//
#ifndef CLEAVE_TILE_WAVEFRONTEMITTER_H
#define CLEAVE_TILE_WAVEFRONTEMITTER_H

#include "cleave/Tile/Dependences.h"
#include "cleave/Tile/Nest.h"

#include <optional>
#include <string>
#include <vector>

namespace clang {
class ASTContext;
}

namespace cleave::tile {

/// Iterations per tile: Rows of i (one thread each) by Cols of j.
struct TileSizes {
  unsigned Rows = 32, Cols = 64;
};

/// The tile sizes a nest is emitted with: one (tile(...) given, or
/// autotune(off)), or the model's candidates, best first, which the
/// generated code sweeps on its first run for a problem shape and device
/// and caches under Key (docs/tile.md, "Tile sizes").
struct WavefrontTiles {
  std::vector<TileSizes> Candidates;
  std::string Key;
};

/// How the tiles of a wavefront are launched (--wavefront, docs/tile.md):
/// one launch per anti-diagonal of tiles; one persistent launch whose
/// blocks take tiles in wavefront order from a ticket and wait on their
/// neighbours' flags; or both, chosen at run time by the number of
/// anti-diagonals.
enum class WavefrontSchedule { Auto, Persistent, Launches };

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

/// What a file with a nest of several candidate tile sizes needs once more:
/// the clock and the tile-size cache.
std::string wavefrontTunerPreamble();

/// Emits nest number \p Id, or says why not (a dependence with a negative
/// component, a tile too large for shared memory, an access inside a
/// macro).
std::optional<EmittedNest>
emitWavefront(const Nest &N, const std::vector<Dependence> &Deps,
              const WavefrontTiles &Tiles, WavefrontSchedule Schedule,
              unsigned Id, clang::ASTContext &Ctx, Refusal &Why);

} // namespace cleave::tile

#endif
