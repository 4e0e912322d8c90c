//===- Stencil.h - An iterated 2-D stencil a pragma marks -------*- C++ -*-===//
//
// Part of Cleave (docs/tile.md). The model of a nest marked
// `#pragma cleave tile technique(timeskew)`: a time loop whose body is one
// step, a two-deep nest that writes one array from another, followed by
// either a nest that copies the result back or a swap of the two pointers:
//
//   for (t ...) {                        for (t ...) {
//     for (i ...) for (j ...)              for (i ...) for (j ...)
//       B[i * P + j] = f(A[...]);            B[i * P + j] = f(A[...]);
//     for (i ...) for (j ...)              std::swap(A, B);
//       A[i * P + j] = B[i * P + j];     }
//   }
//
//===----------------------------------------------------------------------===//
#ifndef CLEAVE_TILE_STENCIL_H
#define CLEAVE_TILE_STENCIL_H

#include "cleave/Tile/Nest.h"

#include <array>
#include <optional>
#include <vector>

namespace cleave::tile {

enum class StencilForm {
  CopyBack, ///< the step's result is copied back into the array it read
  Swap      ///< the two pointers trade places after each step
};

struct StencilNest {
  /// The time loop; its body holds the step and the copy or the swap.
  Loop Time;
  /// Integer variables the time loop's bounds read.
  std::vector<const clang::VarDecl *> TimeCaptures;
  /// One time step: every iteration writes Out's cell (i, j) from In's
  /// cells (i + a, j + b), and nothing else.
  Nest Step;
  unsigned In = 0, Out = 0; ///< indices into Step.Arrays
  StencilForm Form = StencilForm::CopyBack;
  /// The distinct offsets (a, b) at which the step reads In.
  std::vector<std::pair<int64_t, int64_t>> Offsets;
  /// The largest |a| or |b| of a dependence between steps.
  unsigned Radius = 0;
  /// The dependences between time steps as isl computes them: (1, di, dj).
  std::vector<std::array<int64_t, 3>> Distances;

  /// "box", "star" or "general" (any other shape).
  const char *shapeName() const;
};

/// Models the iterated stencil whose time loop is \p Time, or says why not.
std::optional<StencilNest> extractStencil(const clang::ForStmt *Time,
                                          clang::ASTContext &Ctx, Refusal &Why);

} // namespace cleave::tile

#endif
