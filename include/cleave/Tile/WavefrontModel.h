//===- WavefrontModel.h - Tile sizes of wavefronts -------------*- C++ -*-===//
//
// Part of Cleave (docs/tile.md, "Tile sizes"). Digest 001 section 2: Eq.
// 6.2 sizes a tile from the device (T_h = 2^floor(log2 c) rows for c cores
// per SM, T_w = 2^floor(log2 T_s) / T_h columns for T_s elements of shared
// memory per block); Eq. 6.1 prices a schedule as E = sum over concurrency
// levels p of W_p / p. The model ranks the tiles around Eq. 6.2's by Eq.
// 6.1 at a reference size; the generated code sweeps the best few on its
// first run for a problem shape and device and caches the fastest.
//
//===----------------------------------------------------------------------===//
#ifndef CLEAVE_TILE_WAVEFRONTMODEL_H
#define CLEAVE_TILE_WAVEFRONTMODEL_H

#include "cleave/Tile/Nest.h"
#include "cleave/Tile/StencilDevice.h"
#include "cleave/Tile/WavefrontEmitter.h"

#include "llvm/ADT/ArrayRef.h"

#include <cstdint>
#include <vector>

namespace cleave::tile {

/// One array a wavefront tile stages in shared memory: its element size and
/// the rows and columns its halo adds to the tile (MaxRow - MinRow, MaxCol -
/// MinCol of its accesses).
struct StagedArray {
  unsigned ElemBytes = 4;
  int64_t HaloRows = 1, HaloCols = 1;
};

/// The row pitch of a staged window of \p Cols columns: thread t computes
/// cell (t, s - t) at step s, so consecutive threads are Pitch - 1 words
/// apart, an odd stride (no bank conflicts) when the pitch is even.
inline int64_t paddedPitch(int64_t Cols) { return Cols % 2 ? Cols + 1 : Cols; }

/// The arrays \p N stages (those it writes).
std::vector<StagedArray> stagedArrays(const Nest &N, clang::ASTContext &Ctx);

/// Bytes of shared memory the staged windows of a tile take (each window's
/// row pitch padded to an even number of elements, as WavefrontEmitter
/// lays it out).
uint64_t stagedBytes(llvm::ArrayRef<StagedArray> Arrays, TileSizes T);

/// Eq. 6.2 on \p D: T_h = 2^floor(log2 cores per SM) (at most 1024), T_w =
/// 2^floor(log2 T_s) / T_h for T_s the cells of all staged arrays that a
/// block's static shared memory holds; then halved, columns first, until
/// the windows with their halos fit.
TileSizes eq62Tile(const StencilDevice &D, llvm::ArrayRef<StagedArray> Arrays);

/// Tiles of \p T that the device runs at once: blocks per SM (limited by
/// threads, blocks and shared memory per SM) times the SMs.
uint64_t residentTiles(const StencilDevice &D, TileSizes T,
                       uint64_t SharedBytes);

/// Eq. 6.1 for NI x NJ iterations in tiles of \p T, in units of one in-tile
/// step (one cell per thread and a barrier): anti-diagonal d of tiles holds
/// n_d tiles, of which at most P run at once, in ceil(n_d / P) rounds of
/// one tile time each; a tile takes T.Rows + T.Cols - 1 steps, stretched
/// when its SM holds more threads than cores, plus its staging (each
/// thread loads and stores its row of the windows) and a fixed cost per
/// tile (ticket, flags, fences: TileOverheadSteps).
double wavefrontCost(const StencilDevice &D, llvm::ArrayRef<StagedArray> Arrays,
                     TileSizes T, int64_t NI, int64_t NJ);

/// A tile's fixed cost in steps (not calibrated: the sweep measures).
constexpr double TileOverheadSteps = 40;
/// The problem size the candidates are ranked at.
constexpr int64_t ReferenceCells = 8192;
/// Candidates the generated code sweeps.
constexpr unsigned MaxCandidates = 4;

struct TileCandidate {
  TileSizes Tile;
  double Cost = 0; ///< wavefrontCost at ReferenceCells^2
};

/// The tiles around Eq. 6.2's (rows x {1/2, 1, 2}, columns x {1/2, 1, 2};
/// rows from 32 to 1024, at least 8 columns, windows within static shared
/// memory), Eq. 6.2's own and the MaxCandidates - 1 others of least cost,
/// ordered by cost: the first is the model's choice.
std::vector<TileCandidate> tileCandidates(const StencilDevice &D,
                                          llvm::ArrayRef<StagedArray> Arrays);

} // namespace cleave::tile

#endif
