//===- StencilEmitter.cpp - CUDA for an iterated 2-D stencil --------------===//
//
// Part of Cleave (docs/tile.md). Why the time tiles are correct: inside a
// step the iterations are independent (isl finds no dependence), and step
// t + 1 reads step t's cells at offsets of at most H (the halo). A block
// that stages its tile with a halo of H x k cells at step t0 can therefore
// compute, at step t0 + s, every cell of the tile widened by H x (k - s):
// their inputs lie in the region it computed at step t0 + s - 1. After k
// steps the tile itself is exact. No block reads what another writes in
// the same launch (launches read one pair of buffers and write another),
// so no block ever waits for another: the schedule runs on every device.
// Cells outside the domain are never written; each buffer keeps the ones
// of its own array (in the swap form, step t reads the boundary of the
// array that holds step t), and the kernel stages both.
//
//===----------------------------------------------------------------------===//
#include "cleave/Tile/StencilEmitter.h"

#include "EmitSupport.h"
#include "StencilCostText.h"

#include "clang/AST/ASTContext.h"
#include "clang/AST/Decl.h"
#include "clang/Lex/Lexer.h"
#include "clang/Rewrite/Core/Rewriter.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/FormatVariadic.h"

#include <cmath>
#include <map>
#include <set>

using namespace clang;

namespace cleave::tile {
namespace {

// The model, compiled in: the same text the generated code evaluates.
#include "StencilCost.inc"

/// Threads of a time tile's block, and the per-step kernel's block shape.
constexpr unsigned TileThreads = 256;
constexpr unsigned StepBlockX = 32, StepBlockY = 8;

/// The largest |a| or |b| of the offsets the step reads: the halo a time
/// step adds (at least the radius of its dependences).
unsigned haloOf(const StencilNest &S) {
  int64_t H = S.Radius;
  for (auto [A, B] : S.Offsets)
    H = std::max({H, std::abs(A), std::abs(B)});
  return unsigned(H);
}

uint64_t elementBytes(const StencilNest &S, ASTContext &Ctx) {
  return Ctx.getTypeSizeInChars(S.Step.Arrays[S.In].Element).getQuantity();
}

__cleave_stencil_device deviceOf(const StencilDevice &D) {
  return {double(D.Sms),  D.ClockMHz * 1e6,  D.DramGBps * 1e9,
          D.L2GBps * 1e9, double(D.L2Bytes), D.LaunchUs * 1e-6};
}

/// Shared-memory loads per cell when a thread computes \p Strip cells along
/// i: the distinct cells the strip reads, over its cells (the compiler loads
/// a cell once for all of them: the windows are distinct __shared__ arrays,
/// so the strip's stores cannot change what it loads).
double stripLoads(const StencilNest &S, unsigned Strip) {
  std::set<std::pair<int64_t, int64_t>> Cells;
  for (auto [A, B] : S.Offsets)
    for (unsigned Q = 0; Q < Strip; ++Q)
      Cells.insert({A + Q, B});
  return double(Cells.size()) / Strip;
}

__cleave_stencil_shape shapeOf(const StencilNest &S, unsigned Strip,
                               ASTContext &Ctx) {
  return {double(S.Offsets.size()), double(haloOf(S)),
          double(elementBytes(S, Ctx)), stripLoads(S, Strip)};
}

/// The strips the model may choose: the strip's loads stay in registers
/// until its last cell uses them, so a strip reads at most this many
/// distinct input cells (a bound on register pressure; a box of radius 4
/// in strips of 8 reads 144, and ptxas fits it in 32 registers).
constexpr unsigned MaxStripPoints = 256;

/// The reference problem the compile-time choices are made for.
constexpr double RefCells = 8192, RefSteps = 512;

} // namespace

uint64_t timeTileSharedBytes(const StencilNest &S, TimeTileSizes T,
                             ASTContext &Ctx) {
  uint64_t Grow = 2ull * haloOf(S) * T.Steps;
  return 2 * (T.Rows + Grow) * (T.Cols + Grow) * elementBytes(S, Ctx);
}

std::optional<TimeTileSizes> chooseTimeTiles(const StencilNest &S,
                                             std::optional<TileSizes> Given,
                                             unsigned Steps,
                                             const StencilDevice &Dev,
                                             ASTContext &Ctx, Refusal &Why) {
  std::vector<std::pair<unsigned, unsigned>> Shapes;
  if (Given)
    Shapes.push_back({Given->Rows, Given->Cols});
  else
    for (unsigned R : {8u, 16u, 32u, 64u})
      for (unsigned C : {32u, 64u, 128u})
        Shapes.push_back({R, C});
  std::vector<unsigned> StepChoices =
      Steps ? std::vector<unsigned>{Steps}
            : std::vector<unsigned>{1, 2, 3, 4, 6, 8, 12, 16};
  std::optional<TimeTileSizes> Best;
  double BestCost = 0;
  __cleave_stencil_device D = deviceOf(Dev);
  for (auto [R, C] : Shapes)
    for (unsigned K : StepChoices)
      for (unsigned Strip : {1u, 2u, 4u, 8u}) {
        TimeTileSizes T{R, C, K, Strip};
        if (timeTileSharedBytes(S, T, Ctx) > MaxStaticSharedBytes ||
            Strip > R || stripLoads(S, Strip) * Strip > MaxStripPoints)
          continue;
        double Cost = __cleave_stencil_tiles_s(
            D, shapeOf(S, Strip, Ctx), RefCells, RefCells, RefSteps, R, C, K);
        if (!Best || Cost < BestCost) {
          Best = T;
          BestCost = Cost;
        }
      }
  if (!Best) {
    TimeTileSizes T{Shapes.front().first, Shapes.front().second,
                    StepChoices.front()};
    Why = {S.Time.For->getBeginLoc(),
           llvm::formatv("time tiles of {0} x {1} cells and {2} step(s) "
                         "need {3} bytes of shared memory, more than the "
                         "{4} a block may declare: choose a smaller "
                         "tile(...) or steps(...)",
                         T.Rows, T.Cols, T.Steps,
                         timeTileSharedBytes(S, T, Ctx), MaxStaticSharedBytes)
               .str()};
  }
  return Best;
}

std::string stencilPredictions(const StencilNest &S, TimeTileSizes T,
                               const StencilDevice &Dev, ASTContext &Ctx) {
  __cleave_stencil_device D = deviceOf(Dev);
  __cleave_stencil_shape Sh = shapeOf(S, T.Strip, Ctx);
  std::string Out;
  bool Any = false;
  for (double N : {2048.0, 4096.0, 8192.0, 16384.0}) {
    double Tiles = __cleave_stencil_tiles_s(D, Sh, N, N, RefSteps, T.Rows,
                                            T.Cols, T.Steps);
    double Steps = __cleave_stencil_steps_s(D, Sh, N, N, RefSteps);
    bool Pick = __cleave_stencil_prefer_tiles(D, Sh, N, N, RefSteps, T.Rows,
                                              T.Cols, T.Steps);
    Any |= Pick;
    Out += llvm::formatv("{0}{1}^2 {2:F2} ({3})", Out.empty() ? "" : ", ",
                         unsigned(N), Tiles / Steps,
                         Pick ? "time tiles" : "one launch per step")
               .str();
  }
  return llvm::formatv("the model (on {0}) predicts time tiles / one launch "
                       "per step at {1} steps: {2}{3}",
                       Dev.Source, unsigned(RefSteps), Out,
                       Any ? "" : "; it falls back to one launch per step")
      .str();
}

namespace {

class StencilWriter {
public:
  StencilWriter(const StencilNest &S, TimeTileSizes T, const StencilDevice &D,
                unsigned Id, ASTContext &Ctx)
      : S(S), N(S.Step), T(T), Dev(D), Ctx(Ctx), SM(Ctx.getSourceManager()),
        In(S.Step.Arrays[S.In]), Out(S.Step.Arrays[S.Out]),
        Name("__cleave_tile" + std::to_string(Id)) {}

  std::optional<EmittedNest> emit(Refusal &Why);

private:
  const StencilNest &S;
  const Nest &N;
  TimeTileSizes T;
  const StencilDevice &Dev;
  ASTContext &Ctx;
  const SourceManager &SM;
  const Array &In, &Out;
  std::string Name;

  bool isInOrOut(const VarDecl *V) const {
    return V == In.Decl || V == Out.Decl;
  }
  const Array *arrayOf(const VarDecl *V) const {
    for (const Array &A : N.Arrays)
      if (A.Decl == V)
        return &A;
    return nullptr;
  }
  std::string elem() const {
    return typeText(In.Element.getUnqualifiedType(), Ctx);
  }
  std::string pitch() const { return In.Pitch.str(); }
  std::string kernelParams() const;
  std::string kernelArgs() const;
  std::string hostParams() const;
  std::string hostArgs() const;
  std::string text(SourceRange R) const {
    return Lexer::getSourceText(CharSourceRange::getTokenRange(R), SM,
                                Ctx.getLangOpts())
        .str();
  }
  std::optional<std::string> body(bool Staged, Refusal &Why) const;
  std::string touched() const;
  std::string indexDecls() const;
  std::string cellFunction(const std::string &Body) const;
  std::string tilesKernel() const;
  std::string stepKernel(const std::string &Body) const;
  std::string copyKernel() const;
  std::string spans() const;
  std::string run() const;
  std::string host() const;
  std::vector<std::pair<StringRef, std::string>> common() const;
};

/// The kernels' parameters after their own: the captures other than the
/// two grids, arrays as device pointers, scalars by value.
std::string StencilWriter::kernelParams() const {
  std::string P;
  for (const VarDecl *V : N.Captures) {
    if (isInOrOut(V))
      continue;
    if (const Array *A = arrayOf(V))
      P += ", " + typeText(A->Element, Ctx) + " *" + V->getName().str();
    else
      P += ", " +
           typeText(V->getType().getNonReferenceType().getUnqualifiedType(),
                    Ctx) +
           " " + V->getName().str();
  }
  return P;
}

std::string StencilWriter::kernelArgs() const {
  std::string P;
  for (const VarDecl *V : N.Captures) {
    if (isInOrOut(V))
      continue;
    P += ", " + (arrayOf(V) ? "__cleave_" + V->getName().str() + "_dev.at"
                            : V->getName().str());
  }
  return P;
}

/// The host function takes the captures of the step and of the time
/// loop's bounds; in the swap form the two pointers by reference, since
/// the nest as written swaps the caller's variables.
std::string StencilWriter::hostParams() const {
  std::vector<const VarDecl *> Vars = N.Captures;
  for (const VarDecl *V : S.TimeCaptures)
    if (!llvm::is_contained(Vars, V))
      Vars.push_back(V);
  std::string P;
  for (const VarDecl *V : Vars) {
    P += P.empty() ? "" : ", ";
    if (const Array *A = arrayOf(V))
      P += typeText(A->Element, Ctx) +
           (isInOrOut(V) && S.Form == StencilForm::Swap ? " *&" : " *") +
           V->getName().str();
    else
      P += typeText(V->getType().getNonReferenceType().getUnqualifiedType(),
                    Ctx) +
           " " + V->getName().str();
  }
  return P;
}

std::string StencilWriter::hostArgs() const {
  std::vector<const VarDecl *> Vars = N.Captures;
  for (const VarDecl *V : S.TimeCaptures)
    if (!llvm::is_contained(Vars, V))
      Vars.push_back(V);
  std::string P;
  for (const VarDecl *V : Vars)
    P += (P.empty() ? "" : ", ") + V->getName().str();
  return P;
}

/// The step's body with its write turned into __cleave_v and its reads of
/// the input grid into the staged window's cells (the time tiles), or into
/// offsets from the strip's first cell in global memory (the per-step
/// kernel: cell q of the strip reads row q + a of the base, an address the
/// compiler sees is the same for every cell that reads it).
std::optional<std::string> StencilWriter::body(bool Staged,
                                               Refusal &Why) const {
  Rewriter RW(const_cast<SourceManager &>(SM), Ctx.getLangOpts());
  SourceLocation Begin = N.Body->getBeginLoc();
  SourceLocation End = statementEnd(N.Body, SM, Ctx.getLangOpts());
  if (Begin.isMacroID() || End.isMacroID()) {
    Why = {Begin, "the nest's body comes from a macro"};
    return std::nullopt;
  }
  for (const Access &Acc : N.Accesses) {
    if (Acc.Array != S.In && Acc.Array != S.Out)
      continue;
    SourceRange R = Acc.Expr->getSourceRange();
    if (R.getBegin().isMacroID() || R.getEnd().isMacroID()) {
      Why = {R.getBegin(), "an access of '" +
                               N.Arrays[Acc.Array].Decl->getName().str() +
                               "' comes from a macro"};
      return std::nullopt;
    }
    if (Acc.Array == S.Out)
      RW.ReplaceText(CharSourceRange::getTokenRange(R), "__cleave_v");
    else if (Staged)
      RW.ReplaceText(CharSourceRange::getTokenRange(R),
                     llvm::formatv("__cleave_in[(__cleave_y + ({0})) * {1} + "
                                   "(__cleave_x + ({2}))]",
                                   Acc.Row, T.Cols + 2 * haloOf(S) * T.Steps,
                                   Acc.Col)
                         .str());
    else
      RW.ReplaceText(CharSourceRange::getTokenRange(R),
                     llvm::formatv("__cleave_base[(long long)(__cleave_q + "
                                   "({0})) * ({1}) + ({2})]",
                                   Acc.Row, pitch(), Acc.Col)
                         .str());
  }
  return RW.getRewrittenText(CharSourceRange::getCharRange(Begin, End));
}

/// Whether the grid's cell (__cleave_gi, __cleave_gj), outside the domain,
/// is one the step reads: some offset (a, b) puts it at a domain cell's
/// (i + a, j + b). Offsets of one row with consecutive columns are one
/// range.
std::string StencilWriter::touched() const {
  std::map<int64_t, std::vector<int64_t>> Rows;
  for (auto [A, B] : S.Offsets)
    Rows[A].push_back(B);
  std::string C;
  for (auto &[A, Cols] : Rows) {
    llvm::sort(Cols);
    for (size_t K = 0; K < Cols.size();) {
      size_t L = K;
      while (L + 1 < Cols.size() && Cols[L + 1] == Cols[L] + 1)
        ++L;
      C += llvm::formatv(
               "{0}(__cleave_gi - ({1}) >= __cleave_ilo && __cleave_gi - "
               "({1}) < __cleave_ihi && __cleave_gj >= __cleave_jlo + ({2}) "
               "&& __cleave_gj < __cleave_jhi + ({3}))",
               C.empty() ? "" : " ||\n          ", A, Cols[K], Cols[L])
               .str();
      K = L + 1;
    }
  }
  return C.empty() ? "false" : C;
}

/// The loop indices as the body sees them.
std::string StencilWriter::indexDecls() const {
  return llvm::formatv(
             "  const {0} {1} = ({0})__cleave_gi;\n"
             "  const {2} {3} = ({2})__cleave_gj;\n"
             "  (void){1};\n  (void){3};\n",
             typeText(N.Outer.Index->getType(), Ctx), N.Outer.Index->getName(),
             typeText(N.Inner.Index->getType(), Ctx), N.Inner.Index->getName())
      .str();
}

std::vector<std::pair<StringRef, std::string>> StencilWriter::common() const {
  unsigned Grow = 2 * haloOf(S) * T.Steps;
  return {{"NAME", Name},
          {"T", elem()},
          {"PARAMS", kernelParams()},
          {"ARGS", kernelArgs()},
          {"BOUNDS", boundsText(N)},
          {"PITCH", pitch()},
          {"ROWS", std::to_string(T.Rows)},
          {"COLS", std::to_string(T.Cols)},
          {"STEPS", std::to_string(T.Steps)},
          {"STRIP", std::to_string(T.Strip)},
          {"HALO", std::to_string(haloOf(S))},
          {"SR", std::to_string(T.Rows + Grow)},
          {"SC", std::to_string(T.Cols + Grow)},
          {"THREADS", std::to_string(TileThreads)},
          {"BX", std::to_string(StepBlockX)},
          {"BY", std::to_string(StepBlockY)},
          {"IN", In.Decl->getName().str()},
          {"OUT", Out.Decl->getName().str()}};
}

std::string StencilWriter::cellFunction(const std::string &Body) const {
  auto V = common();
  V.push_back({"INDICES", indexDecls()});
  V.push_back({"BODY", Body});
  return fill(
      R"(// One cell of one step of @NAME@_tiles: the body reads the step's input
// window at the window's cell (y, x) and leaves its result in __cleave_v.
static __device__ __forceinline__ void
@NAME@_cell(const @T@ *__restrict__ __cleave_in, @T@ &__cleave_v,
    int __cleave_y, int __cleave_x, long long __cleave_gi, long long __cleave_gj@PARAMS@) {
@INDICES@  do @BODY@ while (0);
}

)",
      V);
}

std::string StencilWriter::tilesKernel() const {
  auto V = common();
  V.push_back({"TOUCHED", touched()});
  std::string CellArgs;
  for (const VarDecl *C : N.Captures)
    if (!isInOrOut(C))
      CellArgs += ", " + C->getName().str();
  V.push_back({"CELLARGS", CellArgs});
  std::string Calls;
  for (unsigned Q = 0; Q < T.Strip; ++Q)
    Calls += llvm::formatv("        {0}_cell(__cleave_in, __cleave_v[{1}], "
                           "__cleave_y + {1}, __cleave_x, __cleave_gi + {1}, "
                           "__cleave_gj{2});\n",
                           Name, Q, CellArgs)
                 .str();
  for (unsigned Q = 0; Q < T.Strip; ++Q)
    Calls += llvm::formatv("        __cleave_out[(__cleave_y + {0}) * {1} + "
                           "__cleave_x] = __cleave_v[{0}];\n",
                           Q, T.Cols + 2 * haloOf(S) * T.Steps)
                 .str();
  V.push_back({"STRIPCALLS", Calls});
  return fill(
      R"(// Time tiles of @ROWS@ x @COLS@ cells, __cleave_k <= @STEPS@ steps per launch.
// Block (bx, by) stages its tile and a halo of @HALO@ cells per step from the
// step-t0 grid (__cleave_cur, and __cleave_oth for the boundary that steps
// t0 + 1, t0 + 3, ... read), computes each step on the window less the
// halos the later steps no longer need, and writes step t0 + k of its tile
// to __cleave_fin (and step t0 + k - 1 to __cleave_pen, when given).
__global__ void @NAME@_tiles(int __cleave_k, const @T@ *__cleave_cur,
    const @T@ *__cleave_oth, @T@ *__cleave_fin, @T@ *__cleave_pen@PARAMS@) {
@BOUNDS@  __shared__ @T@ __cleave_s0[@SR@ * @SC@], __cleave_s1[@SR@ * @SC@];
  const int __cleave_h = @HALO@ * __cleave_k;
  const int __cleave_rows = @ROWS@ + 2 * __cleave_h, __cleave_cols = @COLS@ + 2 * __cleave_h;
  // Window cell (y, x) is the grid's cell (__cleave_y0 + y, __cleave_x0 + x).
  const long long __cleave_y0 = __cleave_ilo + (long long)blockIdx.y * @ROWS@ - __cleave_h;
  const long long __cleave_x0 = __cleave_jlo + (long long)blockIdx.x * @COLS@ - __cleave_h;
  for (int __cleave_e = threadIdx.x; __cleave_e < __cleave_rows * __cleave_cols; __cleave_e += blockDim.x) {
    const int __cleave_y = __cleave_e / __cleave_cols, __cleave_x = __cleave_e % __cleave_cols;
    const long long __cleave_gi = __cleave_y0 + __cleave_y, __cleave_gj = __cleave_x0 + __cleave_x;
    const bool __cleave_dom = __cleave_gi >= __cleave_ilo && __cleave_gi < __cleave_ihi &&
                              __cleave_gj >= __cleave_jlo && __cleave_gj < __cleave_jhi;
    if (__cleave_dom ||
        @TOUCHED@) {
      __cleave_s0[__cleave_y * @SC@ + __cleave_x] = __cleave_cur[__cleave_gi * (@PITCH@) + __cleave_gj];
      if (!__cleave_dom)
        __cleave_s1[__cleave_y * @SC@ + __cleave_x] = __cleave_oth[__cleave_gi * (@PITCH@) + __cleave_gj];
    }
  }
  __syncthreads();
  // Step s computes the window less s halos; a thread computes a strip of
  // @STRIP@ cells along i, straight-line when the whole strip is in the
  // region and the domain.
  for (int __cleave_s = 1; __cleave_s <= __cleave_k; ++__cleave_s) {
    const int __cleave_lo = @HALO@ * __cleave_s, __cleave_hi = __cleave_rows - __cleave_lo;
    const int __cleave_nc = __cleave_cols - 2 * __cleave_lo;
    const int __cleave_ns = (__cleave_hi - __cleave_lo + @STRIP@ - 1) / @STRIP@;
    const @T@ *__restrict__ __cleave_in = __cleave_s & 1 ? __cleave_s0 : __cleave_s1;
    @T@ *__restrict__ __cleave_out = __cleave_s & 1 ? __cleave_s1 : __cleave_s0;
    for (int __cleave_e = threadIdx.x; __cleave_e < __cleave_ns * __cleave_nc; __cleave_e += blockDim.x) {
      const int __cleave_y = __cleave_lo + __cleave_e / __cleave_nc * @STRIP@, __cleave_x = __cleave_lo + __cleave_e % __cleave_nc;
      const long long __cleave_gi = __cleave_y0 + __cleave_y, __cleave_gj = __cleave_x0 + __cleave_x;
      if (__cleave_gj < __cleave_jlo || __cleave_gj >= __cleave_jhi)
        continue;
      if (__cleave_y + @STRIP@ <= __cleave_hi && __cleave_gi >= __cleave_ilo && __cleave_gi + @STRIP@ <= __cleave_ihi) {
        // Every load before the first store: the compiler loads each
        // input cell of the strip once.
        @T@ __cleave_v[@STRIP@];
@STRIPCALLS@      } else {
        for (int __cleave_q = 0; __cleave_q < @STRIP@; ++__cleave_q)
          if (__cleave_y + __cleave_q < __cleave_hi && __cleave_gi + __cleave_q >= __cleave_ilo && __cleave_gi + __cleave_q < __cleave_ihi) {
            @T@ __cleave_v;
            @NAME@_cell(__cleave_in, __cleave_v, __cleave_y + __cleave_q, __cleave_x, __cleave_gi + __cleave_q, __cleave_gj@CELLARGS@);
            __cleave_out[(__cleave_y + __cleave_q) * @SC@ + __cleave_x] = __cleave_v;
          }
      }
    }
    __syncthreads();
  }
  const @T@ *__cleave_last = __cleave_k & 1 ? __cleave_s1 : __cleave_s0;
  const @T@ *__cleave_prev = __cleave_k & 1 ? __cleave_s0 : __cleave_s1;
  for (int __cleave_e = threadIdx.x; __cleave_e < @ROWS@ * @COLS@; __cleave_e += blockDim.x) {
    const int __cleave_y = __cleave_h + __cleave_e / @COLS@, __cleave_x = __cleave_h + __cleave_e % @COLS@;
    const long long __cleave_gi = __cleave_y0 + __cleave_y, __cleave_gj = __cleave_x0 + __cleave_x;
    if (__cleave_gi < __cleave_ihi && __cleave_gj < __cleave_jhi) {
      __cleave_fin[__cleave_gi * (@PITCH@) + __cleave_gj] = __cleave_last[__cleave_y * @SC@ + __cleave_x];
      if (__cleave_pen)
        __cleave_pen[__cleave_gi * (@PITCH@) + __cleave_gj] = __cleave_prev[__cleave_y * @SC@ + __cleave_x];
    }
  }
}

)",
      V);
}

std::string StencilWriter::stepKernel(const std::string &Body) const {
  auto V = common();
  V.push_back({"INDICES", indexDecls()});
  V.push_back({"BODY", Body});
  std::string CellArgs, Calls;
  for (const VarDecl *C : N.Captures)
    if (!isInOrOut(C))
      CellArgs += ", " + C->getName().str();
  for (unsigned Q = 0; Q < T.Strip; ++Q)
    Calls += llvm::formatv("    {0}_stepcell(__cleave_base, {1}, "
                           "__cleave_v[{1}], __cleave_gi + {1}, "
                           "__cleave_gj{2});\n",
                           Name, Q, CellArgs)
                 .str();
  for (unsigned Q = 0; Q < T.Strip; ++Q)
    Calls += llvm::formatv("    {0}[(__cleave_gi + {1}) * ({2}) + "
                           "__cleave_gj] = __cleave_v[{1}];\n",
                           Out.Decl->getName(), Q, pitch())
                 .str();
  V.push_back({"CELLARGS", CellArgs});
  V.push_back({"STEPCALLS", Calls});
  return fill(
      R"(// Cell q of a strip of @NAME@_step: the step's body reading the input
// grid from the strip's first cell __cleave_base, its result in __cleave_v.
static __device__ __forceinline__ void
@NAME@_stepcell(const @T@ *__cleave_base, int __cleave_q, @T@ &__cleave_v,
    long long __cleave_gi, long long __cleave_gj@PARAMS@) {
@INDICES@  do @BODY@ while (0);
}

// One time step: each thread computes a strip of @STRIP@ cells along i, every
// load before the first store (the compiler loads each input cell of the
// strip once).
__global__ void @NAME@_step(const @T@ *@IN@, @T@ *@OUT@@PARAMS@) {
@BOUNDS@  const long long __cleave_gi = __cleave_ilo + ((long long)blockIdx.y * @BY@ + threadIdx.y) * @STRIP@;
  const long long __cleave_gj = __cleave_jlo + (long long)blockIdx.x * @BX@ + threadIdx.x;
  if (__cleave_gi >= __cleave_ihi || __cleave_gj >= __cleave_jhi)
    return;
  const @T@ *__cleave_base = @IN@ + (__cleave_gi * (@PITCH@) + __cleave_gj);
  if (__cleave_gi + @STRIP@ <= __cleave_ihi) {
    @T@ __cleave_v[@STRIP@];
@STEPCALLS@  } else {
    for (int __cleave_q = 0; __cleave_gi + __cleave_q < __cleave_ihi; ++__cleave_q) {
      @T@ __cleave_v;
      @NAME@_stepcell(__cleave_base, __cleave_q, __cleave_v, __cleave_gi + __cleave_q, __cleave_gj@CELLARGS@);
      @OUT@[(__cleave_gi + __cleave_q) * (@PITCH@) + __cleave_gj] = __cleave_v;
    }
  }
}

)",
      V);
}

std::string StencilWriter::copyKernel() const {
  return fill(
      R"(// The copy back of the nest as written: the domain's cells of one grid.
__global__ void @NAME@_copy(const @T@ *__cleave_src, @T@ *__cleave_dst@PARAMS@) {
@BOUNDS@  const long long __cleave_gi = __cleave_ilo + (long long)blockIdx.y * @BY@ + threadIdx.y;
  const long long __cleave_gj = __cleave_jlo + (long long)blockIdx.x * @BX@ + threadIdx.x;
  if (__cleave_gi < __cleave_ihi && __cleave_gj < __cleave_jhi)
    __cleave_dst[__cleave_gi * (@PITCH@) + __cleave_gj] = __cleave_src[__cleave_gi * (@PITCH@) + __cleave_gj];
}

)",
      common());
}

/// Every array's span (the bytes its accesses cover, at the domain's
/// corners), then the run-time checks: the columns of the grids' accesses
/// inside the pitch (the 2-D view is exact), and no overlap between a grid
/// and any other array unless `restrict` or two declared arrays rule it
/// out. Each grid is read at the step's offsets and written at (i, j) over
/// the nest as written (the swap makes each grid the other in turn).
std::string StencilWriter::spans() const {
  int64_t MinCol = 0, MaxCol = 0;
  for (auto [A, B] : S.Offsets) {
    MinCol = std::min(MinCol, B);
    MaxCol = std::max(MaxCol, B);
  }
  std::string Decls, Adds;
  for (const Array &A : N.Arrays)
    Decls +=
        "  __cleave_tile_span __cleave_" + A.Decl->getName().str() + "_span;\n";
  auto Add = [&](const Array &A, const Access &Acc) {
    Adds += "      __cleave_" + A.Decl->getName().str() + "_span.add(&" +
            A.Decl->getName().str() + "[" +
            text(Acc.Expr->getIdx()->getSourceRange()) + "]);\n";
  };
  for (const Access &Acc : N.Accesses) {
    const Array &A = N.Arrays[Acc.Array];
    Add(A, Acc);
    if (Acc.Array == S.Out)
      Add(In, Acc);
    if (Acc.Array == S.In && S.Form == StencilForm::Swap)
      Add(Out, Acc);
  }
  std::string Checks;
  for (size_t X = 0; X < N.Arrays.size(); ++X)
    for (size_t Y = X + 1; Y < N.Arrays.size(); ++Y) {
      const Array &A = N.Arrays[X], &B = N.Arrays[Y];
      if ((!isInOrOut(A.Decl) && !isInOrOut(B.Decl)) || A.Restrict ||
          B.Restrict || (A.IsDeclaredArray && B.IsDeclaredArray))
        continue;
      Checks += llvm::formatv("  __cleave_ok = __cleave_ok && "
                              "!__cleave_{0}_span.overlaps(__cleave_{1}_span);"
                              "\n",
                              A.Decl->getName(), B.Decl->getName())
                    .str();
    }
  auto V = common();
  V.insert(V.end(), {{"DECLS", Decls},
                     {"ADDS", Adds},
                     {"CHECKS", Checks},
                     {"MINCOL", std::to_string(MinCol)},
                     {"MAXCOL", std::to_string(MaxCol)},
                     {"IT", typeText(N.Outer.Index->getType(), Ctx)},
                     {"I", N.Outer.Index->getName().str()},
                     {"JT", typeText(N.Inner.Index->getType(), Ctx)},
                     {"J", N.Inner.Index->getName().str()}});
  return fill(
      R"(  __cleave_ok = __cleave_ok && __cleave_jlo + (@MINCOL@) >= 0 &&
                __cleave_jhi - 1 + (@MAXCOL@) < @PITCH@;
@DECLS@  if (__cleave_ok) {
    for (int __cleave_k = 0; __cleave_k < 4; ++__cleave_k) {
      const @IT@ @I@ = (@IT@)(__cleave_k & 1 ? __cleave_ihi - 1 : __cleave_ilo);
      const @JT@ @J@ = (@JT@)(__cleave_k & 2 ? __cleave_jhi - 1 : __cleave_jlo);
      (void)@I@;
      (void)@J@;
@ADDS@    }
  }
@CHECKS@)",
      V);
}

/// Device copies; the model's choice (or CLEAVE_TILE_SCHEDULE's: 1 time
/// tiles, 0 one launch per step); the launches; the results copied back
/// as the nest as written leaves them. Buffer __cleave_r[p] holds the steps
/// of parity p with the boundary of the array that holds them.
std::string StencilWriter::run() const {
  std::string Others;
  for (const Array &A : N.Arrays)
    if (!isInOrOut(A.Decl))
      Others +=
          llvm::formatv("  __cleave_tile_buffer<{0}> __cleave_{1}_dev;\n"
                        "  __cleave_ok = __cleave_ok && "
                        "__cleave_{1}_dev.copy(__cleave_{1}_span, {1});\n",
                        typeText(A.Element, Ctx), A.Decl->getName())
              .str();
  bool Swap = S.Form == StencilForm::Swap;
  auto V = common();
  V.insert(
      V.end(),
      {{"OTHERS", Others},
       {"PARITY1", Swap ? "__cleave_d[1].copy(__cleave_" +
                              Out.Decl->getName().str() + "_span, " +
                              Out.Decl->getName().str() + ")"
                        : "__cleave_d[1].clone(__cleave_d[0])"},
       {"SWAP", Swap ? "true" : "false"},
       {"DEVICE", llvm::formatv("{0}, {1}e6, {2}e9, {3}e9, {4}.0, {5}e-6",
                                Dev.Sms, Dev.ClockMHz, Dev.DramGBps, Dev.L2GBps,
                                Dev.L2Bytes, Dev.LaunchUs)
                      .str()},
       {"SHAPE",
        llvm::formatv("{0}, {1}, {2}, {3}", S.Offsets.size(), haloOf(S),
                      elementBytes(S, Ctx), stripLoads(S, T.Strip))
            .str()},
       {"FINISH",
        Swap
            ? fill(R"(if (__cleave_ok) {
  __cleave_r[0].back(__cleave_@IN@_span, @IN@);
  __cleave_r[1].back(__cleave_@OUT@_span, @OUT@);
  if (__cleave_steps & 1)
    std::swap(@IN@, @OUT@);
}
)",
                   common())
            : fill(
                  R"(// The nest as written copies each step back: both arrays end with it.
__cleave_tile_buffer<@T@> __cleave_b;
__cleave_ok = __cleave_ok && __cleave_b.copy(__cleave_@OUT@_span, @OUT@);
if (__cleave_ok) {
  @NAME@_copy<<<__cleave_grid, dim3(@BX@, @BY@)>>>(__cleave_r[__cleave_steps & 1].at, __cleave_b.at@ARGS@);
  __cleave_ok = cudaGetLastError() == cudaSuccess && cudaDeviceSynchronize() == cudaSuccess;
}
if (__cleave_ok) {
  __cleave_r[__cleave_steps & 1].back(__cleave_@IN@_span, @IN@);
  __cleave_b.back(__cleave_@OUT@_span, @OUT@);
}
)",
                  common())}});
  return fill(R"(const long long __cleave_steps = __cleave_thi - __cleave_tlo;
const long long __cleave_ni = __cleave_ihi - __cleave_ilo, __cleave_nj = __cleave_jhi - __cleave_jlo;
@OTHERS@__cleave_tile_buffer<@T@> __cleave_d[2], __cleave_e[2];
__cleave_ok = __cleave_ok && __cleave_d[0].copy(__cleave_@IN@_span, @IN@) && @PARITY1@;
#ifdef CLEAVE_TILE_SCHEDULE
const bool __cleave_tiles = CLEAVE_TILE_SCHEDULE;
#else
const bool __cleave_tiles = __cleave_stencil_prefer_tiles(
    __cleave_stencil_device{@DEVICE@}, __cleave_stencil_shape{@SHAPE@},
    (double)__cleave_ni, (double)__cleave_nj, (double)__cleave_steps, @ROWS@, @COLS@, @STEPS@);
#endif
__cleave_tile_buffer<@T@> *__cleave_r = __cleave_d, *__cleave_w = __cleave_e;
const dim3 __cleave_grid((unsigned)((__cleave_nj + @BX@ - 1) / @BX@), (unsigned)((__cleave_ni + @BY@ - 1) / @BY@));
const dim3 __cleave_sgrid((unsigned)((__cleave_nj + @BX@ - 1) / @BX@), (unsigned)((__cleave_ni + @BY@ * @STRIP@ - 1) / (@BY@ * @STRIP@)));
if (__cleave_tiles) {
  __cleave_ok = __cleave_ok && __cleave_e[0].clone(__cleave_d[0]) && __cleave_e[1].clone(__cleave_d[1]);
  const dim3 __cleave_tgrid((unsigned)((__cleave_nj + @COLS@ - 1) / @COLS@), (unsigned)((__cleave_ni + @ROWS@ - 1) / @ROWS@));
  for (long long __cleave_t = 0; __cleave_ok && __cleave_t < __cleave_steps; __cleave_t += @STEPS@) {
    const int __cleave_k = __cleave_steps - __cleave_t < @STEPS@ ? (int)(__cleave_steps - __cleave_t) : @STEPS@;
    // In the swap form the other array ends with step T - 1: the last launch writes it too.
    const bool __cleave_pen = @SWAP@ && __cleave_t + __cleave_k == __cleave_steps;
    @NAME@_tiles<<<__cleave_tgrid, @THREADS@>>>(__cleave_k, __cleave_r[__cleave_t & 1].at,
        __cleave_r[(__cleave_t + 1) & 1].at, __cleave_w[(__cleave_t + __cleave_k) & 1].at,
        __cleave_pen ? __cleave_w[(__cleave_t + __cleave_k - 1) & 1].at : nullptr@ARGS@);
    __cleave_ok = cudaGetLastError() == cudaSuccess;
    std::swap(__cleave_r, __cleave_w);
  }
} else {
  for (long long __cleave_t = 0; __cleave_ok && __cleave_t < __cleave_steps; ++__cleave_t) {
    @NAME@_step<<<__cleave_sgrid, dim3(@BX@, @BY@)>>>(__cleave_d[__cleave_t & 1].at, __cleave_d[(__cleave_t + 1) & 1].at@ARGS@);
    __cleave_ok = cudaGetLastError() == cudaSuccess;
  }
}
__cleave_ok = __cleave_ok && cudaDeviceSynchronize() == cudaSuccess;
@FINISH@)",
              V);
}

std::string StencilWriter::host() const {
  auto V = common();
  V.insert(V.end(), {{"HPARAMS", hostParams()},
                     {"TLO", S.Time.Lower.str()},
                     {"THI", S.Time.Upper.str()},
                     {"SPANS", spans()},
                     {"RUN", indented(indented(run()))},
                     {"ORIGINAL", sourceText(S.Time.For, Ctx)}});
  return fill(
      R"(// The nest's host side: run-time checks, then time tiles or one launch per
// step as the model chooses, or the nest as written.
static void @NAME@(@HPARAMS@) {
  const long long __cleave_tlo = @TLO@, __cleave_thi = @THI@;
@BOUNDS@  bool __cleave_ok = __cleave_tlo < __cleave_thi && __cleave_ilo < __cleave_ihi &&
                     __cleave_jlo < __cleave_jhi;
@SPANS@  if (__cleave_ok) {
@RUN@    if (__cleave_ok)
      return;
  }
  @ORIGINAL@
}

)",
      V);
}

std::optional<EmittedNest> StencilWriter::emit(Refusal &Why) {
  std::optional<std::string> Staged = body(true, Why);
  if (!Staged)
    return std::nullopt;
  std::optional<std::string> Plain = body(false, Why);
  EmittedNest E;
  E.Definitions = cellFunction(*Staged) + tilesKernel() + stepKernel(*Plain) +
                  (S.Form == StencilForm::CopyBack ? copyKernel() : "") +
                  host();
  E.Call = Name + "(" + hostArgs() + ");";
  return E;
}

} // namespace

std::string stencilPreamble() {
  return std::string(R"(#include <utility>

// cleave tile: a device copy of one array's span, addressed as the host
// array is (`at` is where the host's element 0 lies in the copy).
template <typename T> struct __cleave_tile_buffer {
  char *raw = nullptr;
  size_t bytes = 0;
  T *at = nullptr;
  __cleave_tile_buffer() = default;
  __cleave_tile_buffer(const __cleave_tile_buffer &) = delete;
  __cleave_tile_buffer &operator=(const __cleave_tile_buffer &) = delete;
  ~__cleave_tile_buffer() {
    if (raw)
      cudaFree(raw);
  }
  bool copy(const __cleave_tile_span &s, const T *host) {
    bytes = s.hi - s.from(host);
    if (cudaMalloc((void **)&raw, bytes) != cudaSuccess)
      return false;
    at = (T *)(raw + ((uintptr_t)host - s.from(host)));
    return cudaMemcpy(raw, (const void *)s.from(host), bytes,
                      cudaMemcpyHostToDevice) == cudaSuccess;
  }
  bool clone(const __cleave_tile_buffer &o) {
    bytes = o.bytes;
    if (cudaMalloc((void **)&raw, bytes) != cudaSuccess)
      return false;
    at = (T *)(raw + ((const char *)o.at - o.raw));
    return cudaMemcpy(raw, o.raw, bytes, cudaMemcpyDeviceToDevice) ==
           cudaSuccess;
  }
  void back(const __cleave_tile_span &s, T *host) const { s.toHost(host, raw); }
};

)") + StencilCostText +
         "\n";
}

std::optional<EmittedNest> emitStencil(const StencilNest &S, TimeTileSizes T,
                                       const StencilDevice &Dev, unsigned Id,
                                       ASTContext &Ctx, Refusal &Why) {
  return StencilWriter(S, T, Dev, Id, Ctx).emit(Why);
}

} // namespace cleave::tile
