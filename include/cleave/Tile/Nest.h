//===- Nest.h - The loop nest a `#pragma cleave tile` marks -----*- C++ -*-===//
//
// Part of Cleave (docs/tile.md). The model of a marked nest that the
// dependence analysis and the code generator share: two perfectly nested
// loops with bounds affine in integer parameters, and every array access's
// subscript as a polynomial in the loop indices and the parameters. A
// linearized subscript `(i + a) * P + j + b` of an array the nest writes is
// recovered as the cell (i + a, j + b) of a 2-D array of row pitch P.
//
//===----------------------------------------------------------------------===//
#ifndef CLEAVE_TILE_NEST_H
#define CLEAVE_TILE_NEST_H

#include "clang/AST/Expr.h"
#include "clang/AST/Stmt.h"
#include "clang/Basic/SourceLocation.h"

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace clang {
class ASTContext;
class VarDecl;
} // namespace clang

namespace cleave::tile {

/// A polynomial over variables (loop indices and integer parameters) with
/// integer coefficients. Subscripts such as `i * (m + 1) + j` are of degree
/// two: affine in the loop indices once the parameters are fixed.
class Poly {
public:
  /// Variables of one term, sorted by name (then address) so that printing
  /// is deterministic.
  using Monomial = std::vector<const clang::VarDecl *>;

  static Poly constant(int64_t C);
  static Poly variable(const clang::VarDecl *V);

  Poly operator+(const Poly &O) const;
  Poly operator-(const Poly &O) const;
  Poly operator*(const Poly &O) const;
  bool operator==(const Poly &O) const { return Terms == O.Terms; }

  unsigned degree() const;
  bool isConstant() const { return degree() == 0; }
  int64_t constantTerm() const;
  /// The polynomial Q with this = V * Q + (terms without V); V must occur at
  /// most once in each term for the result to be exact.
  Poly coefficientOf(const clang::VarDecl *V) const;
  /// This polynomial without the terms that contain V.
  Poly without(const clang::VarDecl *V) const;
  bool mentions(const clang::VarDecl *V) const;
  /// The variables that occur, each once, in name order.
  std::vector<const clang::VarDecl *> variables() const;
  /// C++ text evaluated in `long long` (`Prefix` before each variable's
  /// name, e.g. "p_" for isl).
  std::string str(const std::string &Prefix = "", bool Widen = true) const;

private:
  struct Less {
    bool operator()(const Monomial &A, const Monomial &B) const;
  };
  std::map<Monomial, int64_t, Less> Terms; // no zero coefficients
  void add(const Monomial &M, int64_t C);
};

/// One loop: `for (T Index = Lower; Index < Upper; ++Index)` after
/// normalization (`<= U` becomes `< U + 1`).
struct Loop {
  const clang::ForStmt *For = nullptr;
  const clang::VarDecl *Index = nullptr;
  Poly Lower, Upper;
};

/// An access A[subscript] in the body.
struct Access {
  const clang::ArraySubscriptExpr *Expr = nullptr;
  unsigned Array = 0; ///< index into Nest::Arrays
  bool Reads = false, Writes = false;
  Poly Subscript;
  /// The cell (i + Row, j + Col) of a 2-D view (set for written arrays).
  int64_t Row = 0, Col = 0;
};

/// An array the body subscripts: a pointer or a one-dimensional array.
struct Array {
  const clang::VarDecl *Decl = nullptr;
  clang::QualType Element;
  bool Written = false;
  /// A `restrict` pointer (or a declared array, a distinct object) needs no
  /// run-time overlap check against the others.
  bool Restrict = false;
  bool IsDeclaredArray = false;
  /// Row pitch of the 2-D view (written arrays).
  Poly Pitch;
  /// Smallest and largest row and column offsets over its accesses, and the
  /// offset of its writes (written arrays).
  int64_t MinRow = 0, MaxRow = 0, MinCol = 0, MaxCol = 0;
  int64_t WriteRow = 0, WriteCol = 0;
};

/// The index of \p V's entry in \p Arrays (a nest's arrays, Array or
/// BlockArray), added with its element type \p Element and whether its
/// declared type \p T makes it a distinct object (an array, a `restrict`
/// pointer) if it is new.
template <class ArrayT>
size_t arrayIndex(std::vector<ArrayT> &Arrays, const clang::VarDecl *V,
                  clang::QualType Element, clang::QualType T) {
  for (size_t I = 0; I < Arrays.size(); ++I)
    if (Arrays[I].Decl == V)
      return I;
  ArrayT A;
  A.Decl = V;
  A.Element = Element;
  A.IsDeclaredArray = T->isArrayType();
  A.Restrict = T->isPointerType() && T.isRestrictQualified();
  Arrays.push_back(A);
  return Arrays.size() - 1;
}

enum class ReductionOp { Add, Max, Min };

/// A scalar declared outside the nest that the body only updates as
/// `s += e`, `s = s + e`, `s = std::max(s, e)` or `s = std::min(s, e)`:
/// integer addition, maximum and minimum give the same result in any order.
struct Reduction {
  const clang::VarDecl *Var = nullptr;
  ReductionOp Op = ReductionOp::Add;
  /// Every reference to Var in the body (the generated kernel replaces
  /// them by a per-thread accumulator).
  std::vector<const clang::DeclRefExpr *> Uses;
};

/// A two-deep perfect nest i (outer), j (inner) with a rectangular domain.
struct Nest {
  Loop Outer, Inner;
  const clang::Stmt *Body = nullptr;
  std::vector<Access> Accesses;
  std::vector<Array> Arrays;
  /// Variables declared outside the nest that the nest reads or reduces:
  /// the parameters of the generated code, in order of first use.
  std::vector<const clang::VarDecl *> Captures;
  std::vector<Reduction> Reductions;

  const Reduction *reductionOf(const clang::VarDecl *V) const {
    for (const Reduction &R : Reductions)
      if (R.Var == V)
        return &R;
    return nullptr;
  }
};

/// Why a nest cannot be tiled, at the source location that shows it.
struct Refusal {
  clang::SourceLocation Loc;
  std::string Why;
};

/// Recovers the 2-D view of every access of array \p ArrayIdx (Access::Row
/// and Col; the array's Pitch and offset bounds), as the nest does for the
/// arrays it writes; false, with the reason in \p Why, when a subscript is
/// not `(i + a) * P + j + b` with one pitch P.
bool recoverView(Nest &N, unsigned ArrayIdx, Refusal &Why);

/// Models the nest that starts with \p Outer, or says why it cannot.
std::optional<Nest> extractNest(const clang::ForStmt *Outer,
                                clang::ASTContext &Ctx, Refusal &Why);

/// The header of the loop \p F (the same forms as a nest's loops: an
/// integer index stepped by one, bounds affine in integer variables), and
/// in \p Captures the variables its bounds read; or says why not.
std::optional<Loop> readLoop(const clang::ForStmt *F, clang::ASTContext &Ctx,
                             Refusal &Why,
                             std::vector<const clang::VarDecl *> &Captures);

} // namespace cleave::tile

#endif
