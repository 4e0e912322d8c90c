//===- TilePragma.h - `#pragma cleave tile` and its clauses -----*- C++ -*-===//
//
// Part of Cleave (docs/tile.md).
//
//===----------------------------------------------------------------------===//
#ifndef CLEAVE_LIB_TILE_TILEPRAGMA_H
#define CLEAVE_LIB_TILE_TILEPRAGMA_H

#include "cleave/Tile/WavefrontEmitter.h"

#include "clang/Lex/Pragma.h"

#include <vector>

namespace cleave::tile {

enum class Technique { Wavefront, TimeSkew, Blocks };

/// One `#pragma cleave tile` of the main file.
struct PragmaSite {
  clang::SourceLocation Hash; ///< the '#' (or _Pragma)
  clang::SourceLocation End;  ///< the end of the pragma's line
  TileSizes Tile;
  bool TileGiven = false; ///< tile(...) was written (else the default)
  /// Time steps per time tile, from steps(N) (technique(timeskew)); 0: the
  /// model chooses.
  unsigned Steps = 0;
  Technique Tech = Technique::Wavefront;
  /// autotune(off): a wavefront without tile(...) takes the model's tile
  /// size and emits no sweep.
  bool Autotune = true;
  bool Valid = true; ///< false after an error in its clauses
};

/// Records every `#pragma cleave tile` with its clauses `tile(rows, cols)`,
/// `technique(wavefront|timeskew|blocks)`, `steps(n)` and `autotune(on|off)`; reports
/// malformed clauses as errors.
class TilePragmaHandler : public clang::PragmaHandler {
public:
  explicit TilePragmaHandler(std::vector<PragmaSite> &Sites)
      : PragmaHandler("tile"), Sites(Sites) {}
  void HandlePragma(clang::Preprocessor &PP, clang::PragmaIntroducer Intro,
                    clang::Token &Name) override;

private:
  std::vector<PragmaSite> &Sites;
};

} // namespace cleave::tile

#endif
