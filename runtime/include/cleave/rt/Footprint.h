//===- Footprint.h - Evaluate serialized kernel footprints ------*- C++ -*-===//
//
// Part of Cleave's runtime (no LLVM). The compiler's footprint analysis
// describes, for each pointer parameter of a kernel, which bytes a range of
// blocks reads and writes, as affine forms whose coefficients are expressions
// in the launch dimensions and the scalar arguments (docs/footprints.md). This
// evaluator parses that text once per kernel and, for a concrete launch and a
// linear block range [first, first+count), returns byte regions (intervals,
// pitched rectangles or pitched boxes) and a class for each parameter and
// direction:
//
//   Exact    the regions are exactly the bytes the blocks touch;
//   Bounded  the regions contain every byte the blocks touch (and maybe more);
//   Unknown  nothing is known: assume the whole buffer.
//
// Errors are values: parse and evaluate return a Status. Arithmetic overflow,
// division by zero or a failed launch-time check never fail the evaluation;
// they make the affected parameter Unknown, which is always safe.
//
//===----------------------------------------------------------------------===//
#ifndef CLEAVE_RT_FOOTPRINT_H
#define CLEAVE_RT_FOOTPRINT_H

#include "cleave/ABI/FootprintClass.h"
#include "cleave/rt/Status.h"

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace cleave {
namespace rt {

/// The compiler's classes (cleave/ABI/FootprintClass.h).
using cleave::FootprintClass;
using cleave::getFootprintClassName; ///< "exact", "bounded" or "unknown"

/// The bytes { Base + b + r*Pitch + p*PlanePitch : 0 <= b < Bytes,
/// 0 <= r < Rows, 0 <= p < Planes }, in bytes relative to the start of the
/// parameter's buffer. A plain interval has Rows == Planes == 1; a rectangle
/// (cudaMemcpy2D) has Planes == 1, a box (cudaMemcpy3D) Planes > 1. The rows
/// of a region never overlap (Bytes < Pitch when Rows > 1); planes and
/// distinct regions may, which is harmless for copies since overlapping bytes
/// carry the same data.
struct ByteRegion {
  int64_t Base = 0;
  int64_t Bytes = 0;
  int64_t Rows = 1;
  int64_t Pitch = 0;
  int64_t Planes = 1;
  int64_t PlanePitch = 0;

  bool operator==(const ByteRegion &O) const;
  /// Sum over rows and planes; counts overlapping bytes more than once.
  int64_t totalBytes() const { return Bytes * Rows * Planes; }
};

/// A half-open byte interval [Lo, Hi).
struct ByteInterval {
  int64_t Lo = 0;
  int64_t Hi = 0;
  bool operator==(const ByteInterval &O) const {
    return Lo == O.Lo && Hi == O.Hi;
  }
};

/// What the evaluator needs to know about one launch. Args holds the value of
/// every kernel argument in order; integer arguments are sign-extended to 64
/// bits and the entries of non-integer arguments (pointers, floats) are
/// ignored. The blocks evaluated are the linear ids [First, First+Count),
/// where the linear id of block (x, y, z) is x + y*Grid[0] + z*Grid[0]*Grid[1].
struct LaunchConfig {
  int64_t Grid[3] = {1, 1, 1};
  int64_t Block[3] = {1, 1, 1};
  int64_t First = 0;
  int64_t Count = 0;
  std::vector<int64_t> Args;
};

/// The footprint of one pointer parameter for one block range.
struct ParamFootprint {
  unsigned ArgNo = 0;
  FootprintClass ReadClass = FootprintClass::Exact;
  FootprintClass WriteClass = FootprintClass::Exact;
  /// Empty when the class is Unknown (the caller uses the whole buffer) or
  /// when nothing is read / written. Sorted by Base, coalesced.
  std::vector<ByteRegion> Reads;
  std::vector<ByteRegion> Writes;
};

struct FootprintResult {
  /// One entry per pointer parameter, in argument order.
  std::vector<ParamFootprint> Params;

  /// The entry for argument ArgNo, or null when it is not a pointer.
  const ParamFootprint *find(unsigned ArgNo) const;
};

/// How a rebased integer parameter must fit its type.
enum class RebaseMode : uint8_t {
  Wrap,     ///< modulo 2^bits (equality comparisons)
  Signed,   ///< the value must fit the signed range
  Unsigned, ///< the value must fit the unsigned range
};

/// A rebased variant of the kernel (cleave-rebase, docs/transforms.md): the
/// kernel's own code launched on a slab of the grid along Dim.
struct RebasedVariant {
  unsigned Dim = 0; ///< 0 = x, 1 = y, 2 = z
  std::string Entry;
};

/// One extra parameter of a rebased variant, in the variant's order (they
/// come before the kernel's own parameters).
struct RebaseValue {
  /// A pointer: the value of argument ArgNo plus Value bytes.
  bool IsPointer = false;
  unsigned ArgNo = 0;
  /// An integer of Bits (32 or 64) bits; 32-bit values are sign-extended.
  unsigned Bits = 64;
  int64_t Value = 0;
};

class FootprintProgram {
public:
  FootprintProgram();
  FootprintProgram(FootprintProgram &&) noexcept;
  FootprintProgram &operator=(FootprintProgram &&) noexcept;
  ~FootprintProgram();

  /// Parses the text form (docs/footprints.md). On failure the message names
  /// the line and what was expected; Out is left empty.
  static Status parse(std::string_view Text, FootprintProgram &Out);

  /// Evaluates the footprint of blocks [L.First, L.First + L.Count). Fails
  /// only when the launch itself is malformed (non-positive dimensions, a
  /// block range outside the grid, missing arguments).
  Status evaluate(const LaunchConfig &L, FootprintResult &Out) const;

  /// The rebased variants the text describes (its `rebase` records).
  const std::vector<RebasedVariant> &rebasedVariants() const;
  /// The rebased variant along \p Dim, or null.
  const RebasedVariant *rebasedVariant(unsigned Dim) const;
  /// The extra parameters of the rebased variant along \p Dim for the slab
  /// of blocks whose index along Dim starts at \p First, in launch \p L
  /// (its grid is the original one; First and Count are ignored). False,
  /// with the reason in \p Why, when the variant must not run this launch
  /// (a range check fails, a value does not fit): use the partition-ready
  /// variant then.
  bool rebase(const LaunchConfig &L, unsigned Dim, int64_t First,
              std::vector<RebaseValue> &Out, std::string &Why) const;

  /// The kernel's (mangled) name as written in the text.
  const std::string &kernelName() const;
  /// Number of kernel arguments declared in the text.
  unsigned numArgs() const;
  /// True when argument ArgNo is a pointer parameter.
  bool isPointerArg(unsigned ArgNo) const;

  struct Impl;

private:
  Impl *P;
};

/// Expands regions into sorted, disjoint, non-adjacent intervals. Fails (and
/// returns false) rather than produce more than MaxIntervals of them.
bool toIntervals(const std::vector<ByteRegion> &Regions,
                 std::vector<ByteInterval> &Out,
                 size_t MaxIntervals = size_t(1) << 24);

/// Rewrites Regions into an equivalent, usually shorter, list: exact
/// identities only (merging side-by-side columns, stacked rows, interleaved
/// rows and overlapping intervals), then sorts by Base.
void coalesceRegions(std::vector<ByteRegion> &Regions);

} // namespace rt
} // namespace cleave

#endif
