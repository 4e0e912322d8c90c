//===- Dependences.h - Dependences of a marked nest, with isl ---*- C++ -*-===//
//
// Part of Cleave (docs/tile.md). Exact flow, anti and output dependences
// between the iterations of a Nest through the arrays it writes, as isl
// computes them on the nest's domain and its accesses' 2-D cells.
//
//===----------------------------------------------------------------------===//
#ifndef CLEAVE_TILE_DEPENDENCES_H
#define CLEAVE_TILE_DEPENDENCES_H

#include "cleave/Tile/Nest.h"

#include "llvm/Support/Error.h"

#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace cleave::tile {

enum class DependenceKind { Flow, Anti, Output };

/// The distance vectors (di, dj) of one kind of dependence through one
/// array, for some value of the parameters.
struct Dependence {
  DependenceKind Kind;
  unsigned Array; ///< index into Nest::Arrays
  std::vector<std::pair<int64_t, int64_t>> Distances;
  /// Whether every distance is componentwise >= 0 for every value of the
  /// parameters (isl's answer, which a non-uniform set also gets).
  bool NonNegative = true;
};

/// Every dependence between distinct iterations of \p N; an error when isl
/// cannot represent the nest (it is then refused).
llvm::Expected<std::vector<Dependence>> computeDependences(const Nest &N);

/// The flow dependences between the time steps of an iterated stencil
/// (Stencil.h): iteration (t, i, j) of \p Step writes array \p Out's cell
/// (i, j), which step t + 1 reads as array \p In (after the copy back or
/// the swap) at the offsets of Step's reads. Their distance vectors
/// (dt, di, dj) on the step's domain, as isl computes them; an error when
/// the set is not finite (not a uniform stencil).
llvm::Expected<std::vector<std::array<int64_t, 3>>>
stepDistances(const Nest &Step, unsigned In, unsigned Out);

/// "flow", "anti" or "output".
const char *kindName(DependenceKind K);

/// "(1, 0), (0, 1)".
std::string distancesText(const Dependence &D);

} // namespace cleave::tile

#endif
