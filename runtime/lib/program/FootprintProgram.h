//===- FootprintProgram.h - The footprint evaluator's internals -*- C++ -*-===//
//
// Part of Cleave's runtime. The parsed form of a footprint text
// (docs/footprints.md) and the steps that evaluate it, shared by the files of
// the evaluator: FootprintParser.cpp (text to program), FootprintSolver.cpp
// (one access over one box of blocks to byte regions), FootprintRegions.cpp
// (coalescing regions) and Footprint.cpp (the public API: evaluate a launch,
// rebase a slab). Nothing here is part of the runtime's interface.
//
//===----------------------------------------------------------------------===//
#ifndef CLEAVE_RT_LIB_PROGRAM_FOOTPRINTPROGRAM_H
#define CLEAVE_RT_LIB_PROGRAM_FOOTPRINTPROGRAM_H

#include "cleave/rt/Footprint.h"

#include <cstdint>
#include <limits>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace cleave {
namespace rt {
namespace footprint {

using i64 = int64_t;

constexpr unsigned NumBuiltinVars = 6; // tid.x/y/z, ctaid.x/y/z
inline const char *const BuiltinVarNames[NumBuiltinVars] = {
    "tid.x", "tid.y", "tid.z", "ctaid.x", "ctaid.y", "ctaid.z"};

// Limits that keep evaluation cheap; exceeding one loses exactness, never
// soundness.
constexpr size_t MaxPartialValues = 64; // values enumerated by one split
constexpr size_t MaxBoxes = 256;        // boxes per access and piece
constexpr i64 MaxRegionsPerShape = 4096;

//===-- Checked arithmetic ----------------------------------------------===//

inline std::optional<i64> add(i64 A, i64 B) {
  i64 R;
  if (__builtin_add_overflow(A, B, &R))
    return std::nullopt;
  return R;
}
inline std::optional<i64> sub(i64 A, i64 B) {
  i64 R;
  if (__builtin_sub_overflow(A, B, &R))
    return std::nullopt;
  return R;
}
inline std::optional<i64> mul(i64 A, i64 B) {
  i64 R;
  if (__builtin_mul_overflow(A, B, &R))
    return std::nullopt;
  return R;
}
inline std::optional<i64> floorDiv(i64 A, i64 B) {
  if (B == 0 || (A == std::numeric_limits<i64>::min() && B == -1))
    return std::nullopt;
  i64 Q = A / B;
  if ((A % B != 0) && ((A < 0) != (B < 0)))
    --Q;
  return Q;
}
inline std::optional<i64> ceilDiv(i64 A, i64 B) {
  auto Q = floorDiv(A, B);
  if (!Q)
    return std::nullopt;
  if (A % B != 0)
    return add(*Q, 1);
  return Q;
}

//===-- Program representation ------------------------------------------===//

enum class SymKind : uint8_t {
  First,
  Count,
  GridX,
  GridY,
  GridZ,
  BlockX,
  BlockY,
  BlockZ,
  Arg
};

enum class Op : uint8_t { Const, Sym, Add, Sub, Mul, Div, Min, Max };

struct Node {
  Op K = Op::Const;
  SymKind S = SymKind::First;
  unsigned ArgNo = 0;
  i64 Value = 0;
  int L = -1, R = -1;
};

/// C0 + sum Coef * var, expressions by node index.
struct Form {
  int C0 = -1;
  std::vector<std::pair<unsigned, int>> Terms;
};

struct Line {
  enum Kind { VarRange, VarHull, Le, Check, At } K;
  unsigned Var = 0;
  int Lo = -1, Hi = -1;
  std::vector<Form> Forms;
};

struct Access {
  unsigned Arg = 0;
  bool Write = false;
  i64 Width = 1;
  bool Exact = true;
  unsigned NumVars = NumBuiltinVars;
  std::vector<Line> Lines;
};

struct UnknownRec {
  unsigned Arg;
  bool Write;
};

enum class ArgKind : uint8_t { Ptr, Int, Other };

/// One extra parameter of a rebased variant (docs/footprints.md, "rebase").
struct RebaseParamRec {
  bool IsPtr = false;
  unsigned Arg = 0;  // ptr: the pointer argument it rebases
  unsigned Bits = 0; // int: the width
  RebaseMode Mode = RebaseMode::Wrap;
  int Value = -1; // ptr: the byte delta; int: the value
};

struct RebaseCheck {
  Form F;
  int Lo = -1, Hi = -1;
};

struct RebaseRec {
  RebasedVariant V;
  std::vector<RebaseParamRec> Params;
  std::vector<RebaseCheck> Checks;
};

/// The last results of evaluate(). A result depends only on the grid, the
/// block, the range and the integer arguments, and a program launches the
/// same few of these again and again (each step of an iteration, each
/// device's range, a decision and then its run), so evaluating once per key
/// takes most of the engine's host time per launch off (bench/engine).
class EvalMemo {
public:
  /// Entries kept; replaced oldest first.
  static constexpr size_t Capacity = 32;
  /// Results of more regions than this are not kept (they would hold much
  /// memory, and evaluating them costs little beside what uses them).
  static constexpr size_t MaxRegions = 4096;

  bool find(const std::vector<i64> &Key, FootprintResult &Out) {
    std::lock_guard<std::mutex> G(Lock);
    for (const Entry &E : Entries)
      if (E.Key == Key) {
        Out = E.Result;
        return true;
      }
    return false;
  }

  void insert(std::vector<i64> Key, const FootprintResult &R) {
    size_t Regions = 0;
    for (const ParamFootprint &P : R.Params)
      Regions += P.Reads.size() + P.Writes.size();
    if (Regions > MaxRegions)
      return;
    std::lock_guard<std::mutex> G(Lock);
    if (Entries.size() < Capacity) {
      Entries.push_back({std::move(Key), R});
      return;
    }
    Entries[Next] = {std::move(Key), R};
    Next = (Next + 1) % Capacity;
  }

private:
  struct Entry {
    std::vector<i64> Key;
    FootprintResult Result;
  };
  std::mutex Lock;
  std::vector<Entry> Entries;
  size_t Next = 0;
};

} // namespace footprint

struct FootprintProgram::Impl {
  std::string Kernel;
  std::vector<footprint::ArgKind> Args;
  std::vector<footprint::Node> Nodes;
  std::vector<footprint::Access> Accesses;
  std::vector<footprint::UnknownRec> Unknowns;
  bool Untracked[2] = {false, false}; // [read, write]
  std::vector<footprint::RebaseRec> Rebases;
  std::vector<RebasedVariant> RebaseList;
  std::shared_ptr<footprint::EvalMemo> Memo =
      std::make_shared<footprint::EvalMemo>();
};

namespace footprint {

/// Parses a footprint text into \p P (empty on entry). The message of a
/// failure names the line and what was expected.
Status parseProgram(std::string_view Text, FootprintProgram::Impl &P);

//===-- Evaluation ------------------------------------------------------===//

/// A program's expressions evaluated for one launch.
struct Env {
  const FootprintProgram::Impl &P;
  const LaunchConfig &L;

  /// The value of expression node \p N; none on overflow or division by 0.
  std::optional<i64> eval(int N) const;
};

/// An affine form with evaluated coefficients, one per variable.
struct IntForm {
  i64 C0 = 0;
  std::vector<i64> Coef;
};

struct Box {
  std::vector<i64> Lo, Hi;
  bool empty() const {
    for (size_t I = 0; I < Lo.size(); ++I)
      if (Lo[I] > Hi[I])
        return true;
    return false;
  }
};

std::optional<IntForm> evalForm(const Env &E, const Form &F, unsigned NumVars);

/// Min and max of F over the box, skipping variable Skip.
std::optional<std::pair<i64, i64>> formRange(const IntForm &F, const Box &B,
                                             int Skip = -1);

struct PieceBox {
  i64 Lo[3], Hi[3];
};

/// Splits the linear block range [First, First+Count) of the grid into boxes
/// of (x, y, z): a partial first row, the rest of its plane, whole planes,
/// the rows of the last plane and a partial last row (at most 5).
std::vector<PieceBox> decompose(const LaunchConfig &L);

struct AccessResult {
  enum Kind { Nothing, Touched, Unknown } K = Nothing;
  bool Exact = true;
  std::vector<ByteRegion> Regions;
};

/// The bytes access \p A touches when the blocks of \p Piece run.
AccessResult evalAccess(const Env &E, const Access &A, const PieceBox &Piece);

} // namespace footprint
} // namespace rt
} // namespace cleave

#endif // CLEAVE_RT_LIB_PROGRAM_FOOTPRINTPROGRAM_H
