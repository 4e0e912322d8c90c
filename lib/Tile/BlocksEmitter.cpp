//===- BlocksEmitter.cpp - CUDA for technique(blocks) ---------------------===//
//
// Part of Cleave (docs/tile.md, "Higher-dimensional tables"). Why the
// schedule computes the nest: every dependence distance is componentwise
// >= 0 and nonzero (BlocksDependences.cpp), so a dependence goes from a
// cell to one whose block (b1, b2, b3) is componentwise >= its own: a block
// of a higher block level (one launch per level, the launches in order), or
// the same block, where it goes to a cell of a higher in-block level (t1 +
// t2 + t3; one __syncthreads() between levels, which also makes the
// block's global writes visible to its threads). The cells of one level,
// of a block or of the blocks of one launch, are independent. The body runs
// as written on the device copies of the arrays.
//
//===----------------------------------------------------------------------===//
#include "cleave/Tile/Blocks.h"

#include "EmitSupport.h"

#include "clang/AST/ASTContext.h"
#include "clang/AST/Decl.h"
#include "clang/Lex/Lexer.h"

#include "llvm/Support/FormatVariadic.h"

using namespace clang;

namespace cleave::tile {
namespace {

class BlocksEmitter {
public:
  BlocksEmitter(const BlockNest &N, unsigned Id, ASTContext &Ctx)
      : N(N), Ctx(Ctx), SM(Ctx.getSourceManager()),
        Host("__cleave_tile" + std::to_string(Id)),
        Kernel("__cleave_tile" + std::to_string(Id) + "_blocks") {}
  std::optional<EmittedNest> emit(Refusal &Why);

private:
  const BlockNest &N;
  ASTContext &Ctx;
  const SourceManager &SM;
  std::string Host, Kernel;

  const BlockArray *arrayOf(const VarDecl *V) const {
    for (const BlockArray &A : N.Arrays)
      if (A.Decl == V)
        return &A;
    return nullptr;
  }
  std::string parameters() const;
  std::string arguments(bool Device) const;
  std::string bounds() const;
  std::string kernel(const std::string &Body) const;
  std::string vertices() const;
  std::string hostRun() const;
  std::string host() const;
};

std::string BlocksEmitter::parameters() const {
  std::string S;
  for (const VarDecl *V : N.Captures) {
    S += S.empty() ? "" : ", ";
    if (const BlockArray *A = arrayOf(V))
      S += typeText(A->Element, Ctx) + " *" + V->getName().str();
    else
      S += typeText(V->getType().getNonReferenceType().getUnqualifiedType(),
                    Ctx) +
           " " + V->getName().str();
  }
  return S;
}

std::string BlocksEmitter::arguments(bool Device) const {
  std::string S;
  for (const VarDecl *V : N.Captures) {
    S += S.empty() ? "" : ", ";
    std::string Name = V->getName().str();
    if (const BlockArray *A = arrayOf(V); A && Device)
      S += llvm::formatv("({0} *)(__cleave_{1}_dev + ((uintptr_t){1} - "
                         "__cleave_{1}_span.from({1})))",
                         typeText(A->Element, Ctx), Name)
               .str();
    else
      S += Name;
  }
  return S;
}

/// __cleave_lo0 .. __cleave_hi2: the box of (i, j, k), in long long.
std::string BlocksEmitter::bounds() const {
  std::string S;
  for (int D = 0; D < 3; ++D)
    S += llvm::formatv("  const long long __cleave_lo{0} = {1}, __cleave_hi{0} "
                       "= {2};\n",
                       D, N.Loops[D].Lower.str(), N.Loops[D].Upper.str())
             .str();
  return S;
}

std::string BlocksEmitter::kernel(const std::string &Body) const {
  std::string Idx;
  const char *T[3] = {"__cleave_t1", "__cleave_t2", "__cleave_t3"};
  for (int D = 0; D < 3; ++D)
    Idx +=
        llvm::formatv("        const {0} {1} = ({0})(__cleave_o{2} + {3});\n",
                      typeText(N.Loops[D].Index->getType(), Ctx),
                      N.Loops[D].Index->getName(), D, T[D])
            .str();
  return llvm::formatv(
             "// One block level of {0} x {1} x {2} blocks: block (b0, b1, "
             "b2) with b0 + b1 + b2 =\n// __cleave_level; its cells level "
             "by level (t1 + t2 + t3), one barrier per level.\n"
             "__global__ void {3}(long long __cleave_level, {4}) {{\n"
             "{5}"
             "  const long long __cleave_nb1 = (__cleave_hi1 - __cleave_lo1 + "
             "{1} - 1) / {1};\n"
             "  const long long __cleave_nb2 = (__cleave_hi2 - __cleave_lo2 + "
             "{2} - 1) / {2};\n"
             "  const long long __cleave_b0 = blockIdx.x / __cleave_nb1, "
             "__cleave_b1 = blockIdx.x % __cleave_nb1;\n"
             "  const long long __cleave_b2 = __cleave_level - __cleave_b0 - "
             "__cleave_b1;\n"
             "  if (__cleave_b2 < 0 || __cleave_b2 >= __cleave_nb2)\n"
             "    return;\n"
             "  const long long __cleave_o0 = __cleave_lo0 + __cleave_b0 * "
             "{0}, __cleave_o1 = __cleave_lo1 + __cleave_b1 * {1}, "
             "__cleave_o2 = __cleave_lo2 + __cleave_b2 * {2};\n"
             "  const int __cleave_n0 = __cleave_hi0 - __cleave_o0 < {0} ? "
             "(int)(__cleave_hi0 - __cleave_o0) : {0};\n"
             "  const int __cleave_n1 = __cleave_hi1 - __cleave_o1 < {1} ? "
             "(int)(__cleave_hi1 - __cleave_o1) : {1};\n"
             "  const int __cleave_n2 = __cleave_hi2 - __cleave_o2 < {2} ? "
             "(int)(__cleave_hi2 - __cleave_o2) : {2};\n"
             "  for (int __cleave_l = 0; __cleave_l < __cleave_n0 + "
             "__cleave_n1 + __cleave_n2 - 2; ++__cleave_l) {{\n"
             "    for (int __cleave_e = threadIdx.x; __cleave_e < __cleave_n0 "
             "* __cleave_n1; __cleave_e += blockDim.x) {{\n"
             "      const int __cleave_t1 = __cleave_e / __cleave_n1, "
             "__cleave_t2 = __cleave_e % __cleave_n1;\n"
             "      const int __cleave_t3 = __cleave_l - __cleave_t1 - "
             "__cleave_t2;\n"
             "      if (__cleave_t3 >= 0 && __cleave_t3 < __cleave_n2) {{\n"
             "{6}"
             "        do {7} while (0);\n"
             "      }\n"
             "    }\n"
             "    __syncthreads();\n"
             "  }\n"
             "}\n\n",
             BlockCells[0], BlockCells[1], BlockCells[2], Kernel, parameters(),
             bounds(), Idx, Body)
      .str();
}

/// The run-time conditions: each access evaluated at the vertices of its
/// iteration domain (the box's corners, then each inner loop's first and
/// last index), where an affine subscript takes its extremes, as long as
/// every inner loop runs at least once there (then it does everywhere, its
/// trip count being affine); the table's cells stay inside their pitches
/// (the 3-D view is exact); the spans of the arrays for the copies and the
/// overlap checks.
std::string BlocksEmitter::vertices() const {
  const BlockArray &Tab = N.Arrays[N.Table];
  std::string TName = Tab.Decl->getName().str();
  std::string Adds;
  for (const BlockAccess &Acc : N.Accesses) {
    std::string Inner, Close;
    std::string Pad = "    ";
    for (size_t L = 0; L < Acc.Inner.size(); ++L) {
      const Loop &IL = N.InnerLoops[Acc.Inner[L]];
      std::string Lo = IL.Lower.str(), Hi = IL.Upper.str();
      Inner += llvm::formatv(
                   "{0}for (int __cleave_v{1} = 0; __cleave_v{1} < 2; "
                   "++__cleave_v{1}) {{\n"
                   "{0}  __cleave_ok = __cleave_ok && ({2}) < ({3});\n"
                   "{0}  const {4} {5} = ({4})(__cleave_v{1} ? ({3}) - 1 : "
                   "({2}));\n"
                   "{0}  (void){5};\n",
                   Pad, L, Lo, Hi, typeText(IL.Index->getType(), Ctx),
                   IL.Index->getName())
                   .str();
      Close = Pad + "}\n" + Close;
      Pad += "  ";
    }
    std::string Text = Lexer::getSourceText(CharSourceRange::getTokenRange(
                                                Acc.Expr->getSourceRange()),
                                            SM, Ctx.getLangOpts())
                           .str();
    std::string Name = N.Arrays[Acc.Array].Decl->getName().str();
    std::string Body = Pad + "__cleave_" + Name + "_span.add(&" + Text + ");\n";
    if (Acc.Array == N.Table)
      for (int D = 1; D < 3; ++D)
        Body +=
            llvm::formatv("{0}__cleave_view({1}, (long long)({2}) + ({3}));\n",
                          Pad, D, N.Loops[D].Index->getName(), Acc.Off[D].str())
                .str();
    Adds += "    {\n" + Inner + Body + Close + "    }\n";
  }
  std::string Corner;
  for (int D = 0; D < 3; ++D)
    Corner += llvm::formatv("    const {0} {1} = ({0})(__cleave_c & {2} ? "
                            "__cleave_hi{3} - 1 : __cleave_lo{3});\n"
                            "    (void){1};\n",
                            typeText(N.Loops[D].Index->getType(), Ctx),
                            N.Loops[D].Index->getName(), 1 << D, D)
                  .str();
  std::string S = llvm::formatv("  bool __cleave_ok = !__cleave_nb_overflow("
                                "__cleave_hi0 - __cleave_lo0, __cleave_hi1 - "
                                "__cleave_lo1, {0}, {1});\n",
                                BlockCells[0], BlockCells[1])
                      .str() +
                  "  long long __cleave_min[3] = {0, LLONG_MAX, LLONG_MAX}, "
                  "__cleave_max[3] = {0, LLONG_MIN, LLONG_MIN};\n"
                  "  auto __cleave_view = [&](int d, long long x) {\n"
                  "    __cleave_min[d] = x < __cleave_min[d] ? x : "
                  "__cleave_min[d];\n"
                  "    __cleave_max[d] = x > __cleave_max[d] ? x : "
                  "__cleave_max[d];\n"
                  "  };\n";
  for (const BlockArray &A : N.Arrays)
    S +=
        "  __cleave_tile_span __cleave_" + A.Decl->getName().str() + "_span;\n";
  S += "  for (int __cleave_c = 0; __cleave_c < 8; ++__cleave_c) {\n" + Corner +
       Adds + "  }\n";
  // Cells (x0, x1, x2) at x0 * P0 + x1 * P1 + x2 are one per address when
  // 0 <= x2 < P1 and 0 <= x1, (x1 + 1) * P1 <= P0.
  S += llvm::formatv("  const long long __cleave_p0 = {0}, __cleave_p1 = "
                     "{1};\n"
                     "  __cleave_ok = __cleave_ok && __cleave_p1 > 0 && "
                     "__cleave_min[2] >= 0 && __cleave_max[2] < __cleave_p1 "
                     "&&\n"
                     "                __cleave_min[1] >= 0 && "
                     "(__cleave_max[1] + 1) * __cleave_p1 <= __cleave_p0;\n",
                     N.Pitch[0].str(), N.Pitch[1].str())
           .str();
  for (const BlockArray &A : N.Arrays)
    if (&A != &Tab && !Tab.Restrict && !A.Restrict &&
        !(Tab.IsDeclaredArray && A.IsDeclaredArray))
      S += llvm::formatv("  __cleave_ok = __cleave_ok && "
                         "!__cleave_{0}_span.overlaps(__cleave_{1}_span);\n",
                         TName, A.Decl->getName())
               .str();
  return S;
}

std::string BlocksEmitter::hostRun() const {
  std::string Alloc, Free;
  for (const BlockArray &A : N.Arrays) {
    std::string Name = A.Decl->getName().str();
    Alloc += deviceCopyText(Name);
    Free += deviceFreeText(Name);
  }
  std::string TName = N.Arrays[N.Table].Decl->getName().str();
  return llvm::formatv(
             "{0}"
             "  const long long __cleave_nb0 = (__cleave_hi0 - __cleave_lo0 + "
             "{1} - 1) / {1};\n"
             "  const long long __cleave_nb1 = (__cleave_hi1 - __cleave_lo1 + "
             "{2} - 1) / {2};\n"
             "  const long long __cleave_nb2 = (__cleave_hi2 - __cleave_lo2 + "
             "{3} - 1) / {3};\n"
             "  for (long long __cleave_l = 0; __cleave_ok && __cleave_l < "
             "__cleave_nb0 + __cleave_nb1 + __cleave_nb2 - 2; ++__cleave_l) "
             "{{\n"
             "    {4}<<<(unsigned)(__cleave_nb0 * __cleave_nb1), {5}>>>("
             "__cleave_l, {6});\n"
             "    __cleave_ok = cudaGetLastError() == cudaSuccess;\n"
             "  }\n"
             "  __cleave_ok = __cleave_ok && cudaDeviceSynchronize() == "
             "cudaSuccess;\n"
             "  if (__cleave_ok)\n"
             "    __cleave_{7}_span.toHost({7}, __cleave_{7}_dev);\n"
             "{8}",
             Alloc, BlockCells[0], BlockCells[1], BlockCells[2], Kernel,
             BlockCells[0] * BlockCells[1], arguments(true), TName, Free)
      .str();
}

std::string BlocksEmitter::host() const {
  return llvm::formatv(
             "// The nest's host side: run-time checks, then the blocks, or "
             "the nest as written.\n"
             "static void {0}({1}) {{\n"
             "{2}"
             "  if (__cleave_lo0 >= __cleave_hi0 || __cleave_lo1 >= "
             "__cleave_hi1 || __cleave_lo2 >= __cleave_hi2)\n"
             "    return;\n"
             "{3}"
             "  if (__cleave_ok) {{\n{4}"
             "    if (__cleave_ok)\n      return;\n  }\n"
             "  {5}\n"
             "}\n\n",
             Host, parameters(), bounds(), vertices(), indented(hostRun()),
             sourceText(N.Loops[0].For, Ctx))
      .str();
}

std::optional<EmittedNest> BlocksEmitter::emit(Refusal &Why) {
  SourceLocation Begin = N.Body->getBeginLoc();
  SourceLocation End = statementEnd(N.Body, SM, Ctx.getLangOpts());
  if (Begin.isMacroID() || End.isMacroID()) {
    Why = {Begin, "the nest's body comes from a macro"};
    return std::nullopt;
  }
  for (const BlockAccess &Acc : N.Accesses)
    if (Acc.Expr->getBeginLoc().isMacroID() ||
        Acc.Expr->getEndLoc().isMacroID()) {
      Why = {Acc.Expr->getBeginLoc(),
             "an access of '" + N.Arrays[Acc.Array].Decl->getName().str() +
                 "' comes from a macro"};
      return std::nullopt;
    }
  std::string Body =
      Lexer::getSourceText(CharSourceRange::getCharRange(Begin, End), SM,
                           Ctx.getLangOpts())
          .str();
  if (!isa<CompoundStmt>(N.Body))
    Body = "{ " + Body + " }";
  EmittedNest E;
  E.Definitions = kernel(Body) + host();
  E.Call = Host + "(" + arguments(false) + ");";
  return E;
}

} // namespace

std::string blocksPreamble() {
  return R"(#include <climits>

// cleave tile's blocks (technique(blocks), docs/tile.md): whether the
// grid of one block level (n0 / b0 x n1 / b1 blocks, rounded up) exceeds
// what one launch can hold.
inline bool __cleave_nb_overflow(long long n0, long long n1, long long b0,
                                 long long b1) {
  return (n0 + b0 - 1) / b0 > (1ll << 20) || (n1 + b1 - 1) / b1 > (1ll << 20) ||
         ((n0 + b0 - 1) / b0) * ((n1 + b1 - 1) / b1) > 0x7fffffffll;
}

)";
}

std::optional<EmittedNest> emitBlocks(const BlockNest &N, unsigned Id,
                                      ASTContext &Ctx, Refusal &Why) {
  return BlocksEmitter(N, Id, Ctx).emit(Why);
}

} // namespace cleave::tile
