//===- WavefrontModel.cpp - Tile sizes of wavefronts (Li's Eqs. 6.1-6.2) --===//
//
// Part of Cleave (docs/tile.md, "Tile sizes").
//
//===----------------------------------------------------------------------===//
#include "cleave/Tile/WavefrontModel.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/MathExtras.h"

#include <algorithm>
#include <cmath>

namespace cleave::tile {

uint64_t stagedBytes(llvm::ArrayRef<StagedArray> Arrays, TileSizes T) {
  uint64_t Bytes = 0;
  for (const StagedArray &A : Arrays) {
    Bytes += uint64_t(T.Rows + A.HaloRows) *
             uint64_t(paddedPitch(T.Cols + A.HaloCols)) * A.ElemBytes;
  }
  return Bytes;
}

TileSizes eq62Tile(const StencilDevice &D, llvm::ArrayRef<StagedArray> Arrays) {
  unsigned CellBytes = 0;
  for (const StagedArray &A : Arrays)
    CellBytes += A.ElemBytes;
  CellBytes = std::max(CellBytes, 1u);
  TileSizes T;
  T.Rows =
      std::min(1024u, unsigned(llvm::bit_floor(std::max(D.CoresPerSm, 1u))));
  uint64_t Ts = std::max<uint64_t>(D.SharedPerBlock / CellBytes, 1);
  T.Cols = unsigned(std::max<uint64_t>(llvm::bit_floor(Ts) / T.Rows, 1));
  // The thesis' tile has no halo; ours must fit with it.
  while (stagedBytes(Arrays, T) > D.SharedPerBlock &&
         (T.Cols > 1 || T.Rows > 1)) {
    if (T.Cols >= T.Rows / 2 && T.Cols > 1)
      T.Cols /= 2;
    else
      T.Rows /= 2;
  }
  return T;
}

uint64_t residentTiles(const StencilDevice &D, TileSizes T,
                       uint64_t SharedBytes) {
  // Threads are allocated by warps.
  uint64_t Threads = llvm::alignTo(T.Rows, 32);
  uint64_t PerSm = std::min<uint64_t>(
      D.MaxBlocksPerSm, D.MaxThreadsPerSm / std::max<uint64_t>(Threads, 1));
  uint64_t Shared = SharedBytes + D.SharedReservedPerBlock;
  if (Shared)
    PerSm = std::min<uint64_t>(PerSm, D.SharedPerSm / Shared);
  return std::max<uint64_t>(PerSm, 1) * std::max(D.Sms, 1u);
}

double wavefrontCost(const StencilDevice &D, llvm::ArrayRef<StagedArray> Arrays,
                     TileSizes T, int64_t NI, int64_t NJ) {
  uint64_t Shared = stagedBytes(Arrays, T);
  double P = double(residentTiles(D, T, Shared));
  double Sms = std::max(D.Sms, 1u), Cores = std::max(D.CoresPerSm, 1u);
  // Staging: each thread loads and stores its share of every window.
  double Staging = 0;
  for (const StagedArray &A : Arrays)
    Staging += 2.0 * double(T.Rows + A.HaloRows) * double(T.Cols + A.HaloCols) /
               T.Rows;
  double TileSteps = double(T.Rows + T.Cols - 1) + Staging + TileOverheadSteps;
  int64_t TR = (NI + T.Rows - 1) / T.Rows, TC = (NJ + T.Cols - 1) / T.Cols;
  double E = 0;
  for (int64_t Dg = 0; Dg < TR + TC - 1; ++Dg) {
    int64_t First = Dg < TC ? 0 : Dg - TC + 1, Last = std::min(Dg, TR - 1);
    double N = double(Last - First + 1);
    double Running = std::min(N, P);
    // The blocks on one SM share its cores.
    double Stretch = std::max(1.0, std::ceil(Running / Sms) * T.Rows / Cores);
    E += std::ceil(N / P) * TileSteps * Stretch;
  }
  return E;
}

std::vector<TileCandidate> tileCandidates(const StencilDevice &D,
                                          llvm::ArrayRef<StagedArray> Arrays) {
  TileSizes Center = eq62Tile(D, Arrays);
  auto Cost = [&](TileSizes T) {
    return wavefrontCost(D, Arrays, T, ReferenceCells, ReferenceCells);
  };
  std::vector<TileCandidate> Others;
  for (unsigned RowScale : {1u, 2u, 4u})
    for (unsigned ColScale : {1u, 2u, 4u}) {
      // Half, the same, twice: scales of 1/2, 1, 2 in units of a half.
      TileSizes T{Center.Rows * RowScale / 2, Center.Cols * ColScale / 2};
      if ((RowScale == 2 && ColScale == 2) || T.Rows < 32 || T.Rows > 1024 ||
          T.Cols < 8 || T.Cols > 4096 ||
          stagedBytes(Arrays, T) > D.SharedPerBlock)
        continue;
      Others.push_back({T, Cost(T)});
    }
  llvm::stable_sort(Others, [](const TileCandidate &A, const TileCandidate &B) {
    return A.Cost < B.Cost;
  });
  if (Others.size() > MaxCandidates - 1)
    Others.resize(MaxCandidates - 1);
  Others.push_back({Center, Cost(Center)});
  llvm::stable_sort(Others, [](const TileCandidate &A, const TileCandidate &B) {
    return A.Cost < B.Cost;
  });
  return Others;
}

} // namespace cleave::tile
