//===- WavefrontEmitter.cpp - CUDA for a tiled 2-D wavefront --------------===//
//
// Part of Cleave (docs/tile.md). Why the schedules are correct: every
// dependence distance (di, dj) is componentwise >= 0 (Dependences.cpp), so
// a dependence between two tiles (bi, bj) -> (bi', bj') has bi' >= bi and
// bj' >= bj: the later tile lies on a later anti-diagonal bi' + bj', and
// it dominates the earlier one. Inside a tile, di + dj >= 1 for every
// dependence, so the cells of one in-tile anti-diagonal are independent.
// A tile reads the cells of neighbouring tiles from global memory when it
// starts: the tiles it dominates have written theirs, and the tiles that
// dominate it, which alone may overwrite what its anti-dependences read,
// have not started.
//
// One launch per anti-diagonal orders all tiles of earlier diagonals
// before a tile. The persistent kernel orders the tiles a tile dominates
// before it: the tile waits for its upper and left neighbours, which waited
// for theirs (persistentKernel says why that cannot deadlock).
//
//===----------------------------------------------------------------------===//
#include "cleave/Tile/WavefrontEmitter.h"

#include "EmitSupport.h"

#include "cleave/Tile/WavefrontModel.h"

#include "clang/AST/ASTContext.h"
#include "clang/AST/Decl.h"
#include "clang/Lex/Lexer.h"
#include "clang/Rewrite/Core/Rewriter.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/FormatVariadic.h"

#include <set>

using namespace clang;

namespace cleave::tile {
namespace {

/// The names that the kernel and the host function share.
struct Names {
  std::string Kernel, Persistent, Host;
  static std::string shared(const Array &A) {
    return "__cleave_" + A.Decl->getName().str();
  }
};

/// The staged window of one written array: rows i0 + MinRow .., columns
/// j0 + MinCol .., WindowRows x Pitch elements.
struct Window {
  int64_t Rows, Cols, Pitch;
};

Window windowOf(const Array &A, TileSizes T) {
  Window W;
  W.Rows = T.Rows + (A.MaxRow - A.MinRow);
  W.Cols = T.Cols + (A.MaxCol - A.MinCol);
  W.Pitch = paddedPitch(W.Cols);
  return W;
}

class Emitter {
public:
  Emitter(const Nest &N, const WavefrontTiles &Tiles,
          WavefrontSchedule Schedule, unsigned Id, ASTContext &Ctx)
      : N(N), Tiles(Tiles), Schedule(Schedule), Id(Id), Ctx(Ctx),
        SM(Ctx.getSourceManager()) {
    Nm.Host = "__cleave_tile" + std::to_string(Id);
    select(0);
  }

  std::optional<EmittedNest> emit(Refusal &Why);

private:
  const Nest &N;
  const WavefrontTiles &Tiles;
  /// The candidate whose kernels and launches are being written.
  TileSizes T;
  WavefrontSchedule Schedule;
  unsigned Id;
  ASTContext &Ctx;
  const SourceManager &SM;
  Names Nm;

  const Array *arrayOf(const VarDecl *V) const {
    for (const Array &A : N.Arrays)
      if (A.Decl == V)
        return &A;
    return nullptr;
  }
  std::string parameters(bool Device) const;
  std::string arguments(bool Device) const;
  std::string bounds() const;
  std::optional<std::string> body(Refusal &Why) const;
  std::string stageIn(const Array &A, bool FromL2) const;
  std::string stageOut(const Array &A) const;
  std::string tileWork(const std::string &Body, bool FromL2) const;
  void reductions(std::string &Init, std::string &Finish) const;
  std::string tileCorner() const;
  std::string launchKernel(const std::string &Work) const;
  std::string persistentKernel(const std::string &Work) const;
  std::string hostChecks() const;
  std::string diagonalLaunches() const;
  std::string persistentLaunch() const;
  std::string launches() const;
  std::string candidateRun();
  std::string sweep();
  std::string hostDeviceRun();
  std::string host();

  /// Makes candidate \p C the current one: its tile size, and its kernels'
  /// names (suffixed with the size when there are several).
  void select(unsigned C) {
    T = Tiles.Candidates[C];
    std::string Suffix =
        Tiles.Candidates.size() > 1
            ? "_" + std::to_string(T.Rows) + "x" + std::to_string(T.Cols)
            : "";
    Nm.Kernel = "__cleave_tile" + std::to_string(Id) + "_kernel" + Suffix;
    Nm.Persistent =
        "__cleave_tile" + std::to_string(Id) + "_persistent" + Suffix;
  }
};

/// The captures as the kernel (Device) or the host function declares them:
/// arrays as pointers, scalars by value, a reduced scalar as the host's
/// reference or the kernel's result cell and first value.
std::string Emitter::parameters(bool Device) const {
  std::string S;
  for (const VarDecl *V : N.Captures) {
    if (!S.empty())
      S += ", ";
    std::string Name = V->getName().str();
    std::string Type =
        typeText(V->getType().getNonReferenceType().getUnqualifiedType(), Ctx);
    if (const Array *A = arrayOf(V))
      S += typeText(A->Element, Ctx) + " *" + Name;
    else if (N.reductionOf(V) && Device)
      S += Type + " *__cleave_red_" + Name + ", " + Type + " __cleave_init_" +
           Name;
    else if (N.reductionOf(V))
      S += Type + " &" + Name;
    else
      S += Type + " " + Name;
  }
  return S;
}

/// The captures by name (host) or with arrays as device copies (device).
std::string Emitter::arguments(bool Device) const {
  std::string S;
  for (const VarDecl *V : N.Captures) {
    if (!S.empty())
      S += ", ";
    std::string Name = V->getName().str();
    if (const Array *A = arrayOf(V); A && Device)
      S += llvm::formatv("({0} *)(__cleave_{1}_dev + ((uintptr_t){1} - "
                         "__cleave_{1}_span.from({1})))",
                         typeText(A->Element, Ctx), Name)
               .str();
    else if (N.reductionOf(V) && Device)
      S += "__cleave_" + Name + "_red_dev, " + Name;
    else
      S += Name;
  }
  return S;
}

/// CUDA's atomic for one reduction (the operand type is the variable's size
/// and, for max and min, signedness; sums wrap alike either way).
std::string atomicUpdate(const Reduction &R, ASTContext &Ctx) {
  QualType T = R.Var->getType().getNonReferenceType();
  bool Wide = Ctx.getTypeSize(T) == 64;
  bool Signed = T->isSignedIntegerType() && R.Op != ReductionOp::Add;
  std::string AT =
      std::string(Signed ? "" : "unsigned ") + (Wide ? "long long" : "int");
  const char *Fn = R.Op == ReductionOp::Add   ? "atomicAdd"
                   : R.Op == ReductionOp::Max ? "atomicMax"
                                              : "atomicMin";
  std::string Name = R.Var->getName().str();
  return llvm::formatv(
             "  {0}(({1} *)__cleave_red_{2}, ({1})__cleave_acc_{2});\n", Fn, AT,
             Name)
      .str();
}

std::string Emitter::bounds() const { return boundsText(N); }

/// The body with every access of a written array turned into its staged
/// cell: (i + Row, j + Col) is window cell (t + Row - MinRow, u + Col -
/// MinCol).
std::optional<std::string> Emitter::body(Refusal &Why) const {
  Rewriter RW(const_cast<SourceManager &>(SM), Ctx.getLangOpts());
  SourceLocation Begin = N.Body->getBeginLoc();
  SourceLocation End = statementEnd(N.Body, SM, Ctx.getLangOpts());
  if (Begin.isMacroID() || End.isMacroID()) {
    Why = {Begin, "the nest's body comes from a macro"};
    return std::nullopt;
  }
  for (const Reduction &R : N.Reductions)
    for (const DeclRefExpr *Use : R.Uses) {
      if (Use->getLocation().isMacroID()) {
        Why = {Use->getLocation(), "an update of '" + R.Var->getName().str() +
                                       "' comes from a macro"};
        return std::nullopt;
      }
      RW.ReplaceText(CharSourceRange::getTokenRange(Use->getSourceRange()),
                     "__cleave_acc_" + R.Var->getName().str());
    }
  for (const Access &Acc : N.Accesses) {
    const Array &A = N.Arrays[Acc.Array];
    if (!A.Written)
      continue;
    SourceRange R = Acc.Expr->getSourceRange();
    if (R.getBegin().isMacroID() || R.getEnd().isMacroID()) {
      Why = {R.getBegin(), "an access of '" + A.Decl->getName().str() +
                               "', which the nest writes, comes from a "
                               "macro"};
      return std::nullopt;
    }
    Window W = windowOf(A, T);
    RW.ReplaceText(CharSourceRange::getTokenRange(R),
                   llvm::formatv("{0}[(__cleave_t + {1}) * {2} + "
                                 "(__cleave_u + {3})]",
                                 Names::shared(A), Acc.Row - A.MinRow, W.Pitch,
                                 Acc.Col - A.MinCol)
                       .str());
  }
  return RW.getRewrittenText(CharSourceRange::getCharRange(Begin, End));
}

/// The loads of \p A's window; with \p FromL2 through volatile loads, which
/// bypass the SM's L1 (see persistentKernel).
std::string Emitter::stageIn(const Array &A, bool FromL2) const {
  Window W = windowOf(A, T);
  std::string Name = A.Decl->getName().str();
  std::string Type = typeText(A.Element.getUnqualifiedType(), Ctx);
  // A window cell is loaded when some access of this tile touches it: the
  // window's corners may lie outside the array.
  std::set<std::pair<int64_t, int64_t>> Offsets;
  for (const Access &Acc : N.Accesses)
    if (N.Arrays[Acc.Array].Decl == A.Decl)
      Offsets.insert({Acc.Row - A.MinRow, Acc.Col - A.MinCol});
  std::string Touched;
  for (auto [R, C] : Offsets)
    Touched += llvm::formatv("{0}((unsigned)(__cleave_r - {1}) < "
                             "(unsigned)__cleave_ni && (unsigned)(__cleave_c "
                             "- {2}) < (unsigned)__cleave_nj)",
                             Touched.empty() ? "" : " ||\n          ", R, C)
                   .str();
  return llvm::formatv(
             "  // {0}'s cells (i + r, j + c) of this tile, r in [{1}, {2}], "
             "c in [{3}, {4}].\n"
             "  __shared__ {5} {6}[{7} * {8}];\n"
             "  for (int __cleave_e = threadIdx.x; __cleave_e < {7} * {8}; "
             "__cleave_e += blockDim.x) {{\n"
             "    const int __cleave_r = __cleave_e / {8}, __cleave_c = "
             "__cleave_e % {8};\n"
             "    if ({9})\n"
             "      {6}[__cleave_e] = {11}{0}[(__cleave_i0 + __cleave_r + "
             "({1})) * ({10}) + (__cleave_j0 + __cleave_c + ({3}))];\n"
             "  }\n",
             Name, A.MinRow, A.MaxRow, A.MinCol, A.MaxCol, Type,
             Names::shared(A), W.Rows, W.Pitch, Touched, A.Pitch.str(),
             FromL2 ? "*(const volatile " + Type + " *)&" : "")
      .str();
}

std::string Emitter::stageOut(const Array &A) const {
  Window W = windowOf(A, T);
  return llvm::formatv(
             "  for (int __cleave_e = threadIdx.x; __cleave_e < __cleave_ni * "
             "__cleave_nj; __cleave_e += blockDim.x) {{\n"
             "    const int __cleave_r = __cleave_e / __cleave_nj, "
             "__cleave_c = __cleave_e % __cleave_nj;\n"
             "    {0}[(__cleave_i0 + __cleave_r + ({1})) * ({2}) + "
             "(__cleave_j0 + __cleave_c + ({3}))] =\n"
             "        {4}[(__cleave_r + {5}) * {6} + (__cleave_c + {7})];\n"
             "  }\n",
             A.Decl->getName(), A.WriteRow, A.Pitch.str(), A.WriteCol,
             Names::shared(A), A.WriteRow - A.MinRow, W.Pitch,
             A.WriteCol - A.MinCol)
      .str();
}

/// One tile's work, given its first row __cleave_i0, first column
/// __cleave_j0 and extent __cleave_ni x __cleave_nj: stage the written arrays
/// in, compute the tile's anti-diagonals, write the tile's cells back.
std::string Emitter::tileWork(const std::string &Body, bool FromL2) const {
  std::string In, Out;
  for (const Array &A : N.Arrays)
    if (A.Written) {
      In += stageIn(A, FromL2);
      Out += stageOut(A);
    }
  std::string IType = typeText(N.Outer.Index->getType(), Ctx);
  std::string JType = typeText(N.Inner.Index->getType(), Ctx);
  return llvm::formatv(
             "{0}"
             "  __syncthreads();\n"
             "  // Step s computes the tile's anti-diagonal t + u = s.\n"
             "  const int __cleave_t = threadIdx.x;\n"
             "  for (int __cleave_s = 0; __cleave_s < __cleave_ni + "
             "__cleave_nj - 1; ++__cleave_s) {{\n"
             "    const int __cleave_u = __cleave_s - __cleave_t;\n"
             "    if (__cleave_t < __cleave_ni && __cleave_u >= 0 && "
             "__cleave_u < __cleave_nj) {{\n"
             "      const {1} {2} = ({1})(__cleave_i0 + __cleave_t);\n"
             "      const {3} {4} = ({3})(__cleave_j0 + __cleave_u);\n"
             "      do {5} while (0);\n"
             "    }\n"
             "    __syncthreads();\n"
             "  }\n"
             "{6}",
             In, IType, N.Outer.Index->getName(), JType,
             N.Inner.Index->getName(), Body, Out)
      .str();
}

/// Each thread reduces its cells into __cleave_acc_NAME (Init), and combines
/// its value with the result cell's by one atomic at the end (Finish).
/// Maximum and minimum may start from the first value (they are
/// idempotent), a sum from zero.
void Emitter::reductions(std::string &Init, std::string &Finish) const {
  for (const Reduction &R : N.Reductions) {
    std::string Name = R.Var->getName().str();
    Init += llvm::formatv(
                "  {0} __cleave_acc_{1} = {2};\n",
                typeText(
                    R.Var->getType().getNonReferenceType().getUnqualifiedType(),
                    Ctx),
                Name, R.Op == ReductionOp::Add ? "0" : "__cleave_init_" + Name)
                .str();
    Finish += atomicUpdate(R, Ctx);
  }
}

/// The first cell and the extent of tile (__cleave_bi, __cleave_diag -
/// __cleave_bi).
std::string Emitter::tileCorner() const {
  return llvm::formatv(
             "  const long long __cleave_i0 = __cleave_ilo + __cleave_bi * "
             "{0};\n"
             "  const long long __cleave_j0 = __cleave_jlo + (__cleave_diag - "
             "__cleave_bi) * {1};\n"
             "  const int __cleave_ni = __cleave_ihi - __cleave_i0 < {0} ? "
             "(int)(__cleave_ihi - __cleave_i0) : {0};\n"
             "  const int __cleave_nj = __cleave_jhi - __cleave_j0 < {1} ? "
             "(int)(__cleave_jhi - __cleave_j0) : {1};\n",
             T.Rows, T.Cols)
      .str();
}

std::string Emitter::launchKernel(const std::string &Work) const {
  std::string Init, Finish;
  reductions(Init, Finish);
  return llvm::formatv(
             "// One anti-diagonal of {0} x {1} tiles: block b runs tile "
             "(bi, bj) with\n// bi + bj = __cleave_diag, one thread per row "
             "of the tile.\n"
             "__global__ void {2}(long long __cleave_diag, {3}) {{\n"
             "{4}"
             "  const long long __cleave_tcols = (__cleave_jhi - __cleave_jlo "
             "+ {1} - 1) / {1};\n"
             "  const long long __cleave_bi = (__cleave_diag < __cleave_tcols "
             "? 0 : __cleave_diag - __cleave_tcols + 1) + blockIdx.x;\n"
             "{5}{6}{7}{8}"
             "}\n\n",
             T.Rows, T.Cols, Nm.Kernel, parameters(true), bounds(),
             tileCorner(), Init, Work, Finish)
      .str();
}

/// The whole wavefront in one launch. Why it cannot deadlock, on any
/// device and whatever the grid: a block takes the next ticket only after
/// finishing its tile, and tickets go out in wavefront order, so the tiles
/// a tile waits for (its upper and left neighbours, which by induction have
/// waited for every tile (bi' <= bi, bj' <= bj), the sources of all its
/// dependences) were taken earlier, by blocks that are running and wait
/// only for tiles taken earlier still. The flags and fences follow the
/// PTX memory model's fence pattern; the window is also loaded through
/// volatile loads, which the L2 serves, as CUDA's own fence example reads
/// other blocks' results through a volatile pointer: an SM's L1 may hold a
/// line of a neighbour's cells from before the neighbour wrote them.
std::string Emitter::persistentKernel(const std::string &Work) const {
  std::string Init, Finish;
  reductions(Init, Finish);
  return llvm::formatv(
             "// The whole wavefront of {0} x {1} tiles in one launch: each "
             "block takes\n// tiles in wavefront order from the ticket "
             "__cleave_sched[0], waits until\n// the tiles above and to the "
             "left are done (their flags in __cleave_sched[1 ..]\n// are "
             "set), runs the tile and sets its flag.\n"
             "__global__ void {2}(unsigned *__cleave_sched, {3}) {{\n"
             "{4}"
             "  const long long __cleave_trows = (__cleave_ihi - __cleave_ilo "
             "+ {0} - 1) / {0};\n"
             "  const long long __cleave_tcols = (__cleave_jhi - __cleave_jlo "
             "+ {1} - 1) / {1};\n"
             "  volatile unsigned *__cleave_done = __cleave_sched + 1;\n"
             "  __shared__ unsigned __cleave_ticket;\n"
             "{5}"
             "  for (;;) {{\n"
             "    if (threadIdx.x == 0)\n"
             "      __cleave_ticket = atomicAdd(__cleave_sched, 1u);\n"
             "    __syncthreads();\n"
             "    const long long __cleave_k = __cleave_ticket;\n"
             "    if (__cleave_k >= __cleave_trows * __cleave_tcols)\n"
             "      break;\n"
             "    long long __cleave_bi, __cleave_bj;\n"
             "    __cleave_tile_of(__cleave_k, __cleave_trows, __cleave_tcols, "
             "&__cleave_bi, &__cleave_bj);\n"
             "    const long long __cleave_diag = __cleave_bi + __cleave_bj;\n"
             "    // Acquire: spin on the neighbours' flags, then a fence "
             "before the barrier\n    // that lets the block read their "
             "cells.\n"
             "    if (threadIdx.x == 0) {{\n"
             "      unsigned __cleave_ns = 0;\n"
             "      if (__cleave_bi > 0)\n"
             "        while (__cleave_done[(__cleave_bi - 1) * __cleave_tcols "
             "+ __cleave_bj] == 0)\n"
             "          __cleave_tile_backoff(&__cleave_ns);\n"
             "      if (__cleave_bj > 0)\n"
             "        while (__cleave_done[__cleave_bi * __cleave_tcols + "
             "__cleave_bj - 1] == 0)\n"
             "          __cleave_tile_backoff(&__cleave_ns);\n"
             "      __threadfence();\n"
             "    }\n"
             "    __syncthreads();\n"
             "{6}"
             "    // Release: every thread's cells are written (barrier), "
             "then a fence before\n    // the flag.\n"
             "    __syncthreads();\n"
             "    if (threadIdx.x == 0) {{\n"
             "      __threadfence();\n"
             "      __cleave_done[__cleave_bi * __cleave_tcols + __cleave_bj] "
             "= 1;\n"
             "    }\n"
             "  }\n"
             "{7}"
             "}\n\n",
             T.Rows, T.Cols, Nm.Persistent, parameters(true), bounds(), Init,
             tileCorner() + Work, Finish)
      .str();
}

/// The run-time conditions of the tiled version: written arrays' columns
/// inside their pitch (the 2-D view is exact), and no overlap between an
/// array the nest writes and any other it touches, unless `restrict` or
/// two declared arrays rule it out.
std::string Emitter::hostChecks() const {
  std::string S = "  bool __cleave_ok = true;\n";
  for (const Array &A : N.Arrays)
    if (A.Written)
      S += llvm::formatv("  __cleave_ok = __cleave_ok && __cleave_jlo + ({0}) "
                         ">= 0 && __cleave_jhi - 1 + ({1}) < {2};\n",
                         A.MinCol, A.MaxCol, A.Pitch.str())
               .str();
  // Subscripts are affine in i and j for fixed parameters: the extreme
  // addresses of an access are at the domain's corners.
  std::string Spans, Adds;
  for (const Array &A : N.Arrays)
    Spans +=
        "  __cleave_tile_span __cleave_" + A.Decl->getName().str() + "_span;\n";
  for (const Access &Acc : N.Accesses)
    Adds += llvm::formatv("      __cleave_{0}_span.add(&{1});\n",
                          N.Arrays[Acc.Array].Decl->getName(),
                          Lexer::getSourceText(CharSourceRange::getTokenRange(
                                                   Acc.Expr->getSourceRange()),
                                               SM, Ctx.getLangOpts()))
                .str();
  S += Spans;
  S += llvm::formatv(
           "  for (int __cleave_k = 0; __cleave_k < 4; ++__cleave_k) {{\n"
           "    const {0} {1} = ({0})(__cleave_k & 1 ? __cleave_ihi - 1 : "
           "__cleave_ilo);\n"
           "    const {2} {3} = ({2})(__cleave_k & 2 ? __cleave_jhi - 1 : "
           "__cleave_jlo);\n"
           "    (void){1};\n    (void){3};\n"
           "    {{\n{4}    }\n  }\n",
           typeText(N.Outer.Index->getType(), Ctx), N.Outer.Index->getName(),
           typeText(N.Inner.Index->getType(), Ctx), N.Inner.Index->getName(),
           Adds)
           .str();
  for (size_t X = 0; X < N.Arrays.size(); ++X)
    for (size_t Y = X + 1; Y < N.Arrays.size(); ++Y) {
      const Array &A = N.Arrays[X], &B = N.Arrays[Y];
      if ((!A.Written && !B.Written) || A.Restrict || B.Restrict ||
          (A.IsDeclaredArray && B.IsDeclaredArray))
        continue;
      S += llvm::formatv("  __cleave_ok = __cleave_ok && "
                         "!__cleave_{0}_span.overlaps(__cleave_{1}_span);\n",
                         A.Decl->getName(), B.Decl->getName())
               .str();
    }
  return S;
}

/// Device copies of every array's range, one launch per anti-diagonal of
/// tiles, the written arrays copied back. A failure before the copy back
/// leaves the host's arrays as they were: the original nest then runs.
std::string Emitter::hostDeviceRun() {
  std::string Alloc, Back, Free;
  for (const Array &A : N.Arrays) {
    std::string Name = A.Decl->getName().str();
    Alloc += deviceCopyText(Name);
    if (A.Written)
      Back += llvm::formatv("    __cleave_{0}_span.toHost({0}, "
                            "__cleave_{0}_dev);\n",
                            Name)
                  .str();
    Free += deviceFreeText(Name);
  }
  // A reduction's cell starts at the identity of a sum, or at the
  // variable's value for maximum and minimum; it is read back before any
  // array, so that a failure still leaves the host's data as it was.
  std::string Read;
  for (const Reduction &R : N.Reductions) {
    std::string Name = R.Var->getName().str();
    std::string Type = typeText(
        R.Var->getType().getNonReferenceType().getUnqualifiedType(), Ctx);
    bool Add = R.Op == ReductionOp::Add;
    Alloc += llvm::formatv(
                 "  {0} *__cleave_{1}_red_dev = nullptr;\n"
                 "  {0} __cleave_{1}_red = {2};\n"
                 "  __cleave_ok = __cleave_ok && cudaMalloc((void "
                 "**)&__cleave_{1}_red_dev, sizeof({0})) == cudaSuccess &&\n"
                 "                cudaMemcpy(__cleave_{1}_red_dev, "
                 "&__cleave_{1}_red, sizeof({0}), cudaMemcpyHostToDevice) == "
                 "cudaSuccess;\n",
                 Type, Name, Add ? "0" : Name)
                 .str();
    Read += llvm::formatv("  __cleave_ok = __cleave_ok && "
                          "cudaMemcpy(&__cleave_{0}_red, "
                          "__cleave_{0}_red_dev, sizeof({1}), "
                          "cudaMemcpyDeviceToHost) == cudaSuccess;\n",
                          Name, Type)
                .str();
    Back += llvm::formatv("    {0} = {1}__cleave_{0}_red;\n", Name,
                          Add ? Name + " + " : "")
                .str();
    Free += "  cudaFree(__cleave_" + Name + "_red_dev);\n";
  }
  std::string Run;
  if (Tiles.Candidates.size() == 1) {
    select(0);
    Run = candidateRun() +
          "  __cleave_ok = __cleave_ok && cudaDeviceSynchronize() == "
          "cudaSuccess;\n";
  } else {
    Run = sweep();
  }
  return Alloc + Run + Read + "  if (__cleave_ok) {\n" + Back + "  }\n" + Free;
}

/// The current candidate's tiles and launches.
std::string Emitter::candidateRun() {
  return llvm::formatv(
             "  const long long __cleave_trows = (__cleave_ihi - __cleave_ilo "
             "+ {0} - 1) / {0};\n"
             "  const long long __cleave_tcols = (__cleave_jhi - __cleave_jlo "
             "+ {1} - 1) / {1};\n"
             "{2}",
             T.Rows, T.Cols, launches())
      .str();
}

/// Several candidate tile sizes (docs/tile.md, "Tile sizes"): the one the
/// cache names for this problem shape and device, else each in turn, timed,
/// from the same inputs (the host's arrays, untouched until the copy back,
/// are copied to the device again), the fastest then cached. Each
/// candidate computes the whole nest, so the last one run leaves the
/// result.
std::string Emitter::sweep() {
  std::string Reload;
  for (const Array &A : N.Arrays)
    if (A.Written)
      Reload += llvm::formatv("      __cleave_ok = __cleave_ok && "
                              "__cleave_{0}_span.reload({0}, "
                              "__cleave_{0}_dev);\n",
                              A.Decl->getName())
                    .str();
  for (const Reduction &R : N.Reductions)
    Reload += llvm::formatv("      __cleave_ok = __cleave_ok && "
                            "cudaMemcpy(__cleave_{0}_red_dev, "
                            "&__cleave_{0}_red, sizeof(__cleave_{0}_red), "
                            "cudaMemcpyHostToDevice) == cudaSuccess;\n",
                            R.Var->getName())
                  .str();
  std::string Sizes, Cases;
  for (unsigned C = 0; C < Tiles.Candidates.size(); ++C) {
    select(C);
    Sizes +=
        llvm::formatv("{0}{{{1}, {2}}", C ? ", " : "", T.Rows, T.Cols).str();
    Cases += llvm::formatv("    case {0}: {{\n{1}      break;\n    }\n", C,
                           indented(indented(candidateRun())))
                 .str();
  }
  return llvm::formatv(
             "  // Tile sizes: the model's candidates, best first; the "
             "cached choice for\n  // this shape and device, else a sweep "
             "over all of them.\n"
             "  static const int __cleave_sizes[{0}][2] = {{{1}};\n"
             "  const int __cleave_cached = __cleave_tile_tuned(\"{2}\", "
             "__cleave_ihi - __cleave_ilo, __cleave_jhi - __cleave_jlo, {0}, "
             "__cleave_sizes);\n"
             "  const int __cleave_from = __cleave_cached < 0 ? 0 : "
             "__cleave_cached;\n"
             "  const int __cleave_to = __cleave_cached < 0 ? {0} : "
             "__cleave_cached + 1;\n"
             "  int __cleave_best = -1;\n"
             "  double __cleave_best_ms = 0;\n"
             "  for (int __cleave_c = __cleave_from; __cleave_ok && "
             "__cleave_c < __cleave_to; ++__cleave_c) {{\n"
             "    if (__cleave_c != __cleave_from) {{\n"
             "      // The same inputs again: every candidate computes the "
             "whole nest.\n"
             "{3}"
             "    }\n"
             "    const double __cleave_t0 = __cleave_tile_now_ms();\n"
             "    switch (__cleave_c) {{\n"
             "{4}"
             "    }\n"
             "    __cleave_ok = __cleave_ok && cudaDeviceSynchronize() == "
             "cudaSuccess;\n"
             "    const double __cleave_ms = __cleave_tile_now_ms() - "
             "__cleave_t0;\n"
             "    if (__cleave_best < 0 || __cleave_ms < __cleave_best_ms) "
             "{{\n"
             "      __cleave_best = __cleave_c;\n"
             "      __cleave_best_ms = __cleave_ms;\n"
             "    }\n"
             "  }\n"
             "  if (__cleave_ok && __cleave_cached < 0)\n"
             "    __cleave_tile_remember(\"{2}\", __cleave_ihi - "
             "__cleave_ilo, __cleave_jhi - __cleave_jlo, {0}, __cleave_sizes, "
             "__cleave_best, __cleave_best_ms);\n",
             Tiles.Candidates.size(), Sizes, Tiles.Key, Reload, Cases)
      .str();
}

/// One launch per anti-diagonal of tiles.
std::string Emitter::diagonalLaunches() const {
  return llvm::formatv(
             "for (long long __cleave_d = 0; __cleave_ok && __cleave_d < "
             "__cleave_trows + __cleave_tcols - 1; ++__cleave_d) {{\n"
             "  const long long __cleave_first = __cleave_d < "
             "__cleave_tcols ? 0 : __cleave_d - __cleave_tcols + 1;\n"
             "  const long long __cleave_last = __cleave_d < __cleave_trows "
             "? __cleave_d : __cleave_trows - 1;\n"
             "  {0}<<<(unsigned)(__cleave_last - __cleave_first + 1), "
             "{1}>>>(__cleave_d, {2});\n"
             "  __cleave_ok = cudaGetLastError() == cudaSuccess;\n"
             "}\n",
             Nm.Kernel, T.Rows, arguments(true))
      .str();
}

/// The persistent kernel's one launch: the ticket and the tiles' flags in
/// a zeroed scratch allocation, as many blocks as the device holds at once
/// (the occupancy API; correctness does not depend on it, see
/// persistentKernel), at most twice the longest anti-diagonal.
std::string Emitter::persistentLaunch() const {
  return llvm::formatv(
             "unsigned *__cleave_sched = nullptr;\n"
             "const long long __cleave_ntiles = __cleave_trows * "
             "__cleave_tcols;\n"
             "__cleave_ok = __cleave_ok && __cleave_ntiles <= "
             "__CLEAVE_TILE_MAX_PERSISTENT_TILES &&\n"
             "              cudaMalloc((void **)&__cleave_sched, (size_t)(1 + "
             "__cleave_ntiles) * sizeof(unsigned)) == cudaSuccess &&\n"
             "              cudaMemset(__cleave_sched, 0, (size_t)(1 + "
             "__cleave_ntiles) * sizeof(unsigned)) == cudaSuccess;\n"
             "if (__cleave_ok) {{\n"
             "  const long long __cleave_grid = "
             "__cleave_tile_resident((const void *){0}, {1}, "
             "__cleave_trows, __cleave_tcols);\n"
             "  {0}<<<(unsigned)__cleave_grid, {1}>>>(__cleave_sched, {2});\n"
             "  __cleave_ok = cudaGetLastError() == cudaSuccess;\n"
             "}\n"
             "__cleave_ok = __cleave_ok && cudaDeviceSynchronize() == "
             "cudaSuccess;\n"
             "cudaFree(__cleave_sched);\n",
             Nm.Persistent, T.Rows, arguments(true))
      .str();
}

/// The launches of the schedule that --wavefront chose, or both with the
/// run-time rule (docs/tile.md): the persistent kernel from
/// CLEAVE_TILE_PERSISTENT_MIN_DIAGONALS anti-diagonals of tiles, unless
/// CLEAVE_TILE_WAVEFRONT forces one (1: persistent, 0: launches).
std::string Emitter::launches() const {
  if (Schedule == WavefrontSchedule::Launches)
    return indented(diagonalLaunches());
  if (Schedule == WavefrontSchedule::Persistent)
    return indented(persistentLaunch());
  return llvm::formatv(
             "#ifdef CLEAVE_TILE_WAVEFRONT\n"
             "  const bool __cleave_persistent = CLEAVE_TILE_WAVEFRONT;\n"
             "#else\n"
             "  const bool __cleave_persistent = __cleave_trows + "
             "__cleave_tcols - 1 >= CLEAVE_TILE_PERSISTENT_MIN_DIAGONALS &&\n"
             "                                   __cleave_trows * "
             "__cleave_tcols <= __CLEAVE_TILE_MAX_PERSISTENT_TILES;\n"
             "#endif\n"
             "  if (__cleave_persistent) {{\n{0}  } else {{\n{1}  }\n",
             indented(indented(persistentLaunch())),
             indented(indented(diagonalLaunches())))
      .str();
}

std::string Emitter::host() {
  return llvm::formatv(
             "// The nest's host side: run-time checks, then the tiles, or "
             "the nest as written.\n"
             "static void {0}({1}) {{\n"
             "{2}"
             "  if (__cleave_ilo >= __cleave_ihi || __cleave_jlo >= "
             "__cleave_jhi)\n    return;\n"
             "{3}"
             "  if (__cleave_ok) {{\n{4}"
             "    if (__cleave_ok)\n      return;\n  }\n"
             "  {5}\n"
             "}\n\n",
             Nm.Host, parameters(false), bounds(), hostChecks(),
             indented(hostDeviceRun()), sourceText(N.Outer.For, Ctx))
      .str();
}

std::optional<EmittedNest> Emitter::emit(Refusal &Why) {
  EmittedNest E;
  for (unsigned C = 0; C < Tiles.Candidates.size(); ++C) {
    select(C);
    uint64_t Shared = stagedBytes(stagedArrays(N, Ctx), T);
    if (Shared > MaxStaticSharedBytes) {
      Why = {N.Outer.For->getBeginLoc(),
             llvm::formatv("tiles of {0} x {1} need {2} bytes of shared "
                           "memory, more than the {3} a block may declare: "
                           "choose a smaller tile(...)",
                           T.Rows, T.Cols, Shared, MaxStaticSharedBytes)
                 .str()};
      return std::nullopt;
    }
    std::optional<std::string> Body = body(Why);
    if (!Body)
      return std::nullopt;
    if (Schedule != WavefrontSchedule::Persistent)
      E.Definitions += launchKernel(tileWork(*Body, false));
    if (Schedule != WavefrontSchedule::Launches)
      E.Definitions += persistentKernel(tileWork(*Body, true));
  }
  E.Definitions += host();
  E.Call = Nm.Host + "(" + arguments(false) + ");";
  return E;
}

} // namespace

std::vector<StagedArray> stagedArrays(const Nest &N, ASTContext &Ctx) {
  std::vector<StagedArray> S;
  for (const Array &A : N.Arrays)
    if (A.Written)
      S.push_back({unsigned(Ctx.getTypeSizeInChars(A.Element).getQuantity()),
                   A.MaxRow - A.MinRow, A.MaxCol - A.MinCol});
  return S;
}

std::optional<EmittedNest>
emitWavefront(const Nest &N, const std::vector<Dependence> &Deps,
              const WavefrontTiles &Tiles, WavefrontSchedule Schedule,
              unsigned Id, ASTContext &Ctx, Refusal &Why) {
  for (const Dependence &D : Deps)
    if (!D.NonNegative) {
      Why = {N.Outer.For->getBeginLoc(),
             std::string("the ") + kindName(D.Kind) + " dependence through '" +
                 N.Arrays[D.Array].Decl->getName().str() + "' has distance " +
                 (D.Distances.empty() ? "vectors that are not constant"
                                      : distancesText(D)) +
                 "; wavefront tiles need every distance componentwise >= "
                 "0"};
      return std::nullopt;
    }
  return Emitter(N, Tiles, Schedule, Id, Ctx).emit(Why);
}

} // namespace cleave::tile
