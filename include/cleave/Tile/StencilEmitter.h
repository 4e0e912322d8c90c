//===- StencilEmitter.h - CUDA for an iterated 2-D stencil ------*- C++ -*-===//
//
// Part of Cleave (docs/tile.md). Technique B of digest 001 (section 3) in a
// schedule that runs on every device: time tiles whose blocks never wait
// for each other. Each block stages a tile plus a halo of radius x steps in
// shared memory, advances it several time steps (the region it computes
// shrinks by the radius each step) and writes its core back; one launch
// per group of steps. The plain version, one launch per time step, is
// emitted beside it, and the cost model (StencilCost.inc) chooses between
// them at run time from the grid's size and the number of steps.
//
//===----------------------------------------------------------------------===//
#ifndef CLEAVE_TILE_STENCILEMITTER_H
#define CLEAVE_TILE_STENCILEMITTER_H

#include "cleave/Tile/Stencil.h"
#include "cleave/Tile/StencilDevice.h"
#include "cleave/Tile/WavefrontEmitter.h"

#include <cstdint>
#include <optional>
#include <string>

namespace cleave::tile {

/// Cells per time tile (Rows x Cols), time steps per launch, and the cells
/// along i that one thread computes in a row (a strip: the step's loads of
/// one input cell are shared by the strip's cells).
struct TimeTileSizes {
  unsigned Rows = 32, Cols = 32, Steps = 4, Strip = 1;
};

/// Shared-memory bytes of the two staged windows of \p T for \p S.
uint64_t timeTileSharedBytes(const StencilNest &S, TimeTileSizes T,
                             clang::ASTContext &Ctx);

/// The tile sizes: \p Given rows and columns (or the model's choice), and
/// \p Steps steps (or the model's), within the static shared memory of a
/// block; nothing, with the reason, when the given ones do not fit.
std::optional<TimeTileSizes>
chooseTimeTiles(const StencilNest &S, std::optional<TileSizes> Given,
                unsigned Steps, const StencilDevice &Dev,
                clang::ASTContext &Ctx, Refusal &Why);

/// What the model predicts for \p T at a few square grids (the remark).
std::string stencilPredictions(const StencilNest &S, TimeTileSizes T,
                               const StencilDevice &Dev,
                               clang::ASTContext &Ctx);

/// What every file with a time-tiled nest needs once (after the
/// wavefront preamble): device buffers, and the cost model.
std::string stencilPreamble();

/// Emits stencil number \p Id with time tiles \p T, or says why not (its
/// body comes from a macro).
std::optional<EmittedNest> emitStencil(const StencilNest &S, TimeTileSizes T,
                                       const StencilDevice &Dev, unsigned Id,
                                       clang::ASTContext &Ctx, Refusal &Why);

} // namespace cleave::tile

#endif
