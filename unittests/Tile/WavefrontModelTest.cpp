//===- WavefrontModelTest.cpp - Tile sizes of wavefronts ------------------===//
//
// Li's Eq. 6.2 on device profiles (the thesis' own GPUs, the H200, a GPU of
// 64 cores per SM), the windows' shared memory, and the candidates that
// Eq. 6.1 ranks for the generated code to sweep (docs/tile.md, "Tile
// sizes").
//
//===----------------------------------------------------------------------===//
#include "cleave/Tile/WavefrontModel.h"

#include "gtest/gtest.h"

#include <string>

using namespace cleave::tile;

namespace {

std::string text(TileSizes T) {
  return std::to_string(T.Rows) + "x" + std::to_string(T.Cols);
}

const StagedArray IntCells{4, 1, 1};    // edit distance, SW: D[i-1][j-1]
const StagedArray DoubleCells{8, 2, 2}; // SOR: A[i-1..i+1][j-1..j+1]

StencilDevice k40() {
  StencilDevice D;
  D.Sms = 15;
  D.CoresPerSm = 192;
  D.MaxThreadsPerSm = 2048;
  D.MaxBlocksPerSm = 16;
  D.SharedPerSm = 49152;
  D.SharedPerBlock = 49152;
  D.SharedReservedPerBlock = 0;
  return D;
}

TEST(WavefrontModel, Eq62OnTheThesisGpusGives128By64) {
  // c = 192 (Kepler) or 128 (Pascal, Hopper) gives T_h = 128; 48 KiB of
  // 4-byte cells, 12288, rounds to 8192, so T_w = 64 (digest 001 s2).
  EXPECT_EQ(text(eq62Tile(k40(), {IntCells})), "128x64");
  EXPECT_EQ(text(eq62Tile(StencilDevice(), {IntCells})), "128x64");
}

TEST(WavefrontModel, Eq62ScalesWithCellBytesAndCores) {
  StencilDevice H200;
  // 8-byte cells: 6144 rounds to 4096, 32 columns.
  EXPECT_EQ(text(eq62Tile(H200, {DoubleCells})), "128x32");
  // Three staged int arrays (affine gaps): 128 x 32 would need 52,632
  // bytes with the halos, so the rows halve.
  EXPECT_EQ(text(eq62Tile(H200, {IntCells, IntCells, IntCells})), "64x32");
  EXPECT_EQ(stagedBytes({IntCells, IntCells, IntCells}, {128, 32}), 52632u);
  // 64 cores per SM: 64 rows, 8192 / 64 = 128 columns.
  StencilDevice A = H200;
  A.CoresPerSm = 64;
  EXPECT_EQ(text(eq62Tile(A, {IntCells})), "64x128");
  // 16 KiB per block: 4096 cells, 128 x 32 does not fit with its halo.
  StencilDevice Small = H200;
  Small.SharedPerBlock = 16384;
  EXPECT_EQ(text(eq62Tile(Small, {IntCells})), "64x32");
}

TEST(WavefrontModel, WindowsArePaddedToAnEvenPitch) {
  // (128 + 1) rows x (64 + 1 -> 66) columns x 4 bytes.
  EXPECT_EQ(stagedBytes({IntCells}, {128, 64}), 129u * 66 * 4);
  EXPECT_EQ(paddedPitch(65), 66);
  EXPECT_EQ(paddedPitch(66), 66);
}

TEST(WavefrontModel, ResidentTilesAreLimitedByThreadsBlocksAndShared) {
  StencilDevice H200;
  // 34,056 + 1,024 reserved bytes: 6 per SM of 233,472.
  EXPECT_EQ(residentTiles(H200, {128, 64}, 129 * 66 * 4), 6u * 132);
  // No shared memory: 2048 / 128 threads.
  EXPECT_EQ(residentTiles(H200, {128, 64}, 0), 16u * 132);
  // Tiny blocks: the 32-block limit (rows round up to a warp).
  EXPECT_EQ(residentTiles(H200, {8, 8}, 0), 32u * 132);
}

TEST(WavefrontModel, Eq61SumsRoundsOfEachAntiDiagonal) {
  StencilDevice One;
  One.Sms = 1;
  One.MaxBlocksPerSm = 1;
  One.CoresPerSm = 128;
  // 2 x 2 tiles of 32 x 32 with room for one at a time: diagonals of 1, 2
  // and 1 tiles take 4 tile times; a tile is 63 steps, 2 x 33 x 33 / 32 of
  // staging and the fixed cost.
  double Tile = 63 + 2.0 * 33 * 33 / 32 + TileOverheadSteps;
  EXPECT_DOUBLE_EQ(wavefrontCost(One, {IntCells}, {32, 32}, 64, 64), 4 * Tile);
  // With two resident, the middle diagonal takes one round: 3 tile times.
  One.MaxBlocksPerSm = 2;
  EXPECT_DOUBLE_EQ(wavefrontCost(One, {IntCells}, {32, 32}, 64, 64), 3 * Tile);
  // A ragged edge is a whole tile: 65 x 65 cells are 3 x 3 tiles, 5
  // diagonals of 1, 2, 3, 2, 1 tiles.
  EXPECT_DOUBLE_EQ(wavefrontCost(One, {IntCells}, {32, 32}, 65, 65),
                   (1 + 1 + 2 + 1 + 1) * Tile);
}

TEST(WavefrontModel, CandidatesAroundEq62RankedByEq61) {
  std::vector<TileCandidate> C = tileCandidates(StencilDevice(), {IntCells});
  ASSERT_EQ(C.size(), MaxCandidates);
  std::vector<std::string> Got;
  for (const TileCandidate &T : C)
    Got.push_back(text(T.Tile));
  // Li's Table 8 ranks 128 x 64 before 128 x 32 and 256 x 32 too.
  EXPECT_EQ(Got,
            (std::vector<std::string>{"128x64", "64x64", "64x32", "128x32"}));
  for (size_t I = 1; I < C.size(); ++I)
    EXPECT_LE(C[I - 1].Cost, C[I].Cost);
  // Every candidate fits in a block's static shared memory.
  for (const TileCandidate &T : C)
    EXPECT_LE(stagedBytes({IntCells}, T.Tile), 49152u);
  // Doubles: around 128 x 32, and Eq. 6.2's own is always among them.
  std::vector<TileCandidate> D = tileCandidates(StencilDevice(), {DoubleCells});
  bool HasCenter = false;
  for (const TileCandidate &T : D)
    HasCenter |= text(T.Tile) == "128x32";
  EXPECT_TRUE(HasCenter);
}

} // namespace
