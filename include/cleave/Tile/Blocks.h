//===- Blocks.h - Technique C: blocks of a 3-D dynamic program --*- C++ -*-===//
//
// Part of Cleave (docs/tile.md, "Higher-dimensional tables"). Digest 001
// section 4: a 3-D DP table whose cells depend on cells at distances that
// are not uniform (an inner loop ranges over them) but componentwise >= 0,
// partitioned into rectangular blocks run in waves of equal block level
// (b1 + b2 + b3), each block's cells in waves of equal in-block level. The
// nest's accesses are modelled statically (affine in the loop indices,
// inner loop indices and integer parameters); isl proves every dependence
// distance componentwise >= 0, whatever the parameters.
//
//===----------------------------------------------------------------------===//
#ifndef CLEAVE_TILE_BLOCKS_H
#define CLEAVE_TILE_BLOCKS_H

#include "cleave/Tile/Nest.h"
#include "cleave/Tile/WavefrontEmitter.h"

#include "llvm/Support/Error.h"

#include <array>
#include <string>
#include <vector>

namespace cleave::tile {

/// One access of a block nest.
struct BlockAccess {
  const clang::ArraySubscriptExpr *Expr = nullptr;
  unsigned Array = 0;
  bool Reads = false, Writes = false;
  /// The inner loops around it (indices into BlockNest::InnerLoops),
  /// outermost first.
  std::vector<unsigned> Inner;
  /// The subscript as a sum of (pitch, affine part) terms: pitches are
  /// polynomials in parameters, affine parts in the loop indices, inner
  /// loop indices and constants.
  std::vector<std::pair<Poly, Poly>> Terms;
  /// The table's accesses: cell (i + Off[0], j + Off[1], k + Off[2]),
  /// offsets affine in the inner loop indices.
  std::array<Poly, 3> Off;
};

struct BlockArray {
  const clang::VarDecl *Decl = nullptr;
  clang::QualType Element;
  bool Written = false, Restrict = false, IsDeclaredArray = false;
};

/// A three-deep perfect nest with a rectangular domain, whose body writes
/// one array (the table) at its own cell (i, j, k) of a 3-D view with
/// pitches (Pitch[0], Pitch[1], 1).
struct BlockNest {
  std::array<Loop, 3> Loops;
  std::vector<Loop> InnerLoops;
  const clang::Stmt *Body = nullptr;
  std::vector<BlockAccess> Accesses;
  std::vector<BlockArray> Arrays;
  unsigned Table = 0;
  std::array<Poly, 2> Pitch;
  std::vector<const clang::VarDecl *> Captures;
};

/// Models the nest that starts with \p Outer for technique(blocks), or says
/// why it cannot (at the construct that shows it).
std::optional<BlockNest> extractBlockNest(const clang::ForStmt *Outer,
                                          clang::ASTContext &Ctx, Refusal &Why);

/// The dependences through the table, as isl computes them: one line per
/// kind ("flow { ... }"), or a refusal when a distance may have a negative
/// component.
llvm::Expected<std::vector<std::string>> blockDependences(const BlockNest &N,
                                                          bool &NonNegative);

/// Cells per block along i, j and k.
constexpr std::array<unsigned, 3> BlockCells = {16, 16, 16};

/// What a file with a technique(blocks) nest needs once, at its top.
std::string blocksPreamble();

/// Emits block nest number \p Id.
std::optional<EmittedNest> emitBlocks(const BlockNest &N, unsigned Id,
                                      clang::ASTContext &Ctx, Refusal &Why);

} // namespace cleave::tile

#endif
