//===- Tile.cpp - `cleave tile`: marked loop nests to tiled CUDA ----------===//
//
// Part of Cleave (docs/tile.md). Parses the file, pairs each pragma with the
// statement that follows it, asks Extract.cpp, Dependences.cpp and
// WavefrontEmitter.cpp for the nest, and rewrites the main file.
//
//===----------------------------------------------------------------------===//
#include "cleave/Tile/Tile.h"

#include "TilePragma.h"

#include "cleave/Frontend/ClangInvocation.h"
#include "cleave/Support/Diagnosed.h"
#include "cleave/Tile/Blocks.h"
#include "cleave/Tile/Dependences.h"
#include "cleave/Tile/Nest.h"
#include "cleave/Tile/StencilEmitter.h"
#include "cleave/Tile/WavefrontEmitter.h"
#include "cleave/Tile/WavefrontModel.h"

#include "EmitSupport.h"

#include "clang/AST/ASTConsumer.h"
#include "clang/AST/ASTContext.h"
#include "clang/AST/ParentMapContext.h"
#include "clang/AST/RecursiveASTVisitor.h"
#include "clang/Frontend/CompilerInstance.h"
#include "clang/Frontend/FrontendAction.h"
#include "clang/Frontend/TextDiagnosticPrinter.h"
#include "clang/Frontend/Utils.h"
#include "clang/Lex/Preprocessor.h"
#include "clang/Rewrite/Core/Rewriter.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/xxhash.h"

using namespace clang;

namespace cleave {
namespace {

using tile::PragmaSite;

/// Statements that are direct children of a block, by start offset in the
/// main file: a pragma marks the first one after it.
class StatementIndex : public RecursiveASTVisitor<StatementIndex> {
public:
  explicit StatementIndex(const SourceManager &SM) : SM(SM) {}
  bool VisitCompoundStmt(CompoundStmt *CS) {
    for (Stmt *S : CS->body()) {
      SourceLocation L = S->getBeginLoc();
      if (L.isValid() && L.isFileID() && SM.isInMainFile(L))
        ByOffset.emplace(SM.getFileOffset(L), S);
    }
    return true;
  }
  std::map<unsigned, const Stmt *> ByOffset;

private:
  const SourceManager &SM;
};

/// Whether Text holds only blanks and comments.
bool onlyComments(StringRef Text) {
  while (true) {
    Text = Text.ltrim();
    if (Text.consume_front("//"))
      Text = Text.drop_until([](char C) { return C == '\n'; });
    else if (Text.consume_front("/*")) {
      size_t End = Text.find("*/");
      if (End == StringRef::npos)
        return false;
      Text = Text.drop_front(End + 2);
    } else
      return Text.empty();
  }
}

/// What the remark of a tiled wavefront says of its launches.
std::string wavefrontScheduleText(tile::WavefrontSchedule S) {
  switch (S) {
  case tile::WavefrontSchedule::Launches:
    return "one launch per anti-diagonal of tiles";
  case tile::WavefrontSchedule::Persistent:
    return "one persistent launch (blocks take tiles in wavefront order from "
           "an atomic ticket and wait on per-tile flags)";
  case tile::WavefrontSchedule::Auto:
    break;
  }
  return "one persistent launch (blocks take tiles in wavefront order from "
         "an atomic ticket and wait on per-tile flags) from "
         "CLEAVE_TILE_PERSISTENT_MIN_DIAGONALS (8) anti-diagonals of tiles, "
         "else one launch per anti-diagonal, chosen at run time";
}

class TileConsumer : public ASTConsumer {
public:
  TileConsumer(CompilerInstance &CI, std::vector<PragmaSite> &Sites,
               const TileOptions &Opts, std::string &Output, bool &Ok)
      : CI(CI), Sites(Sites), Device(Opts.Device), Wavefront(Opts.Wavefront),
        Output(Output), Ok(Ok) {}

  void HandleTranslationUnit(ASTContext &Ctx) override;

private:
  CompilerInstance &CI;
  std::vector<PragmaSite> &Sites;
  const tile::StencilDevice &Device;
  tile::WavefrontSchedule Wavefront;
  std::string &Output;
  bool &Ok;
  bool AnyStencil = false;
  bool AnyTuned = false;
  bool AnyBlocks = false;

  void remark(SourceLocation Loc, const std::string &Msg) {
    DiagnosticsEngine &DE = CI.getDiagnostics();
    DE.Report(Loc,
              DE.getCustomDiagID(DiagnosticsEngine::Remark, "cleave tile: %0"))
        << Msg;
  }
  void refuse(const PragmaSite &Site, const tile::Refusal &Why) {
    remark(Site.Hash, "nest left as written: " + Why.Why);
    if (Why.Loc.isValid() && Why.Loc != Site.Hash) {
      DiagnosticsEngine &DE = CI.getDiagnostics();
      DE.Report(Why.Loc, DE.getCustomDiagID(DiagnosticsEngine::Note, "here"));
    }
  }
  const ForStmt *markedLoop(const PragmaSite &Site, const StatementIndex &Index,
                            ASTContext &Ctx);
  const Decl *topLevelDecl(const Stmt *S, ASTContext &Ctx);
  bool inTemplate(const Stmt *S, ASTContext &Ctx);
  bool tileOne(const PragmaSite &Site, unsigned Id, const StatementIndex &Index,
               ASTContext &Ctx, Rewriter &RW);
  tile::WavefrontTiles wavefrontTiles(const PragmaSite &Site,
                                      const tile::Nest &N, unsigned Id,
                                      ASTContext &Ctx, std::string &Text);
  bool blocks(const PragmaSite &Site, const ForStmt *Loop, unsigned Id,
              ASTContext &Ctx, Rewriter &RW);
  std::optional<tile::EmittedNest> timeTile(const PragmaSite &Site,
                                            const ForStmt *Loop, unsigned Id,
                                            ASTContext &Ctx);
  void replaceNest(const PragmaSite &Site, const ForStmt *Loop,
                   const Stmt *Body, const tile::EmittedNest &E,
                   ASTContext &Ctx, Rewriter &RW);
};

/// The for loop right after the pragma (only comments between), or null
/// after a remark.
const ForStmt *TileConsumer::markedLoop(const PragmaSite &Site,
                                        const StatementIndex &Index,
                                        ASTContext &Ctx) {
  const SourceManager &SM = Ctx.getSourceManager();
  // A _Pragma from a macro has no place in the file to rewrite.
  if (Site.Hash.isMacroID() || Site.End.isMacroID()) {
    refuse(Site, {Site.Hash, "the pragma comes from a macro"});
    return nullptr;
  }
  unsigned After = SM.getFileOffset(Site.End);
  auto It = Index.ByOffset.lower_bound(After);
  const Stmt *S = It == Index.ByOffset.end() ? nullptr : It->second;
  StringRef File = SM.getBufferData(SM.getMainFileID());
  if (!S || !onlyComments(File.slice(After, It->first)) || !isa<ForStmt>(S)) {
    refuse(Site, {Site.Hash, "the pragma must be followed by a for loop "
                             "inside a function"});
    return nullptr;
  }
  return cast<ForStmt>(S);
}

/// The declaration at namespace scope that holds S: the generated code goes
/// right before it, where the names the nest's function sees are declared.
const Decl *TileConsumer::topLevelDecl(const Stmt *S, ASTContext &Ctx) {
  DynTypedNodeList Parents = Ctx.getParents(*S);
  const Decl *Top = nullptr;
  while (!Parents.empty()) {
    if (const auto *D = Parents[0].get<Decl>()) {
      if (isa<TranslationUnitDecl, NamespaceDecl, LinkageSpecDecl>(
              D->getDeclContext()))
        Top = D;
      if (isa<TranslationUnitDecl>(D->getDeclContext()))
        break;
    }
    Parents = Ctx.getParents(Parents[0]);
  }
  return Top;
}

bool TileConsumer::inTemplate(const Stmt *S, ASTContext &Ctx) {
  for (DynTypedNodeList P = Ctx.getParents(*S); !P.empty();
       P = Ctx.getParents(P[0]))
    if (const auto *D = P[0].get<Decl>())
      if (const auto *DC = dyn_cast<DeclContext>(D);
          DC && DC->isDependentContext())
        return true;
  return false;
}

std::string sizeText(tile::TileSizes T) {
  return std::to_string(T.Rows) + " x " + std::to_string(T.Cols);
}

/// The tile sizes of a wavefront nest (docs/tile.md, "Tile sizes"), and in
/// \p Text what the remark says of them: tile(...)'s, the model's choice
/// under autotune(off), else the model's candidates for the generated code
/// to sweep, under a key that changes with the nest's text and the sizes.
tile::WavefrontTiles TileConsumer::wavefrontTiles(const PragmaSite &Site,
                                                  const tile::Nest &N,
                                                  unsigned Id, ASTContext &Ctx,
                                                  std::string &Text) {
  tile::WavefrontTiles W;
  if (Site.TileGiven) {
    W.Candidates = {Site.Tile};
    Text = "wavefront of " + sizeText(Site.Tile) + " tiles";
    return W;
  }
  std::vector<tile::StagedArray> Arrays = tile::stagedArrays(N, Ctx);
  std::vector<tile::TileCandidate> Cands = tile::tileCandidates(Device, Arrays);
  std::vector<std::string> Sizes, Costs;
  for (const tile::TileCandidate &C : Cands) {
    Sizes.push_back(sizeText(C.Tile));
    Costs.push_back(llvm::formatv("{0:F2}", C.Cost / Cands[0].Cost).str());
  }
  std::string Model = llvm::formatv(
      "the model on {0} (Eq. 6.2: {1}; Eq. 6.1 at {2}^2, relative to the "
      "best: {3})",
      Device.Source, sizeText(tile::eq62Tile(Device, Arrays)),
      tile::ReferenceCells, llvm::join(Costs, ", "));
  if (!Site.Autotune) {
    W.Candidates = {Cands[0].Tile};
    Text = "wavefront of " + Sizes[0] + " tiles, " + Model;
    return W;
  }
  std::string Key = tile::sourceText(N.Outer.For, Ctx);
  for (const tile::TileCandidate &C : Cands) {
    W.Candidates.push_back(C.Tile);
    Key += " " + sizeText(C.Tile);
  }
  W.Key = llvm::formatv("tile{0}-{1:x-16}", Id, llvm::xxh3_64bits(Key));
  // "A (the model's choice), B, C or D".
  std::string Choices = Sizes[0] + " (the model's choice)";
  for (size_t I = 1; I < Sizes.size(); ++I)
    Choices += (I + 1 == Sizes.size() ? " or " : ", ") + Sizes[I];
  Text = "wavefront of tiles of " + Choices +
         ", swept on the first run of each problem shape and device and "
         "cached, " +
         Model;
  AnyTuned |= W.Candidates.size() > 1;
  return W;
}

/// A technique(blocks) nest (docs/tile.md, "Higher-dimensional tables"):
/// modelled, its dependences proved componentwise >= 0 by isl, emitted;
/// or left as written with a remark.
bool TileConsumer::blocks(const PragmaSite &Site, const ForStmt *Loop,
                          unsigned Id, ASTContext &Ctx, Rewriter &RW) {
  tile::Refusal Why;
  if (Site.TileGiven || Site.Steps) {
    refuse(Site, {Site.Hash, "technique(blocks) takes no tile(...) or "
                             "steps(...): its blocks are 16 x 16 x 16 cells"});
    return false;
  }
  std::optional<tile::BlockNest> N = tile::extractBlockNest(Loop, Ctx, Why);
  if (!N) {
    refuse(Site, Why);
    return false;
  }
  bool NonNegative = true;
  llvm::Expected<std::vector<std::string>> Deps =
      tile::blockDependences(*N, NonNegative);
  if (!Deps) {
    refuse(Site, {Loop->getBeginLoc(), toString(Deps.takeError())});
    return false;
  }
  std::string Table = N->Arrays[N->Table].Decl->getName().str();
  std::string DepText =
      Deps->empty() ? std::string("none")
                    : llvm::join(*Deps, "; ") + " through '" + Table + "'";
  if (!NonNegative) {
    refuse(Site, {Loop->getBeginLoc(),
                  "a dependence through '" + Table +
                      "' may have a negative component (" + DepText +
                      "): blocks need every distance componentwise >= 0"});
    return false;
  }
  std::optional<tile::EmittedNest> E = tile::emitBlocks(*N, Id, Ctx, Why);
  if (!E) {
    refuse(Site, Why);
    return false;
  }
  replaceNest(Site, Loop, N->Body, *E, Ctx, RW);
  AnyBlocks = true;
  remark(Site.Hash,
         llvm::formatv("nest tiled: blocks of {0} x {1} x {2} cells of '{3}', "
                       "one launch per block level, in-block levels "
                       "separated by barriers; dependences (distances): {4}",
                       tile::BlockCells[0], tile::BlockCells[1],
                       tile::BlockCells[2], Table, DepText)
             .str());
  return true;
}

/// The iterated stencil of a technique(timeskew) pragma as time tiles and
/// one launch per step, with its remark; or nothing, after a refusal.
std::optional<tile::EmittedNest> TileConsumer::timeTile(const PragmaSite &Site,
                                                        const ForStmt *Loop,
                                                        unsigned Id,
                                                        ASTContext &Ctx) {
  tile::Refusal Why;
  std::optional<tile::StencilNest> S = tile::extractStencil(Loop, Ctx, Why);
  std::optional<tile::TimeTileSizes> T;
  if (S)
    T = tile::chooseTimeTiles(
        *S, Site.TileGiven ? std::optional(Site.Tile) : std::nullopt,
        Site.Steps, Device, Ctx, Why);
  std::optional<tile::EmittedNest> E;
  if (T)
    E = tile::emitStencil(*S, *T, Device, Id, Ctx, Why);
  if (!E) {
    refuse(Site, Why);
    return std::nullopt;
  }
  std::vector<std::string> Dist;
  for (const auto &D : S->Distances)
    Dist.push_back("(" + std::to_string(D[0]) + ", " + std::to_string(D[1]) +
                   ", " + std::to_string(D[2]) + ")");
  const tile::Array &In = S->Step.Arrays[S->In];
  remark(Site.Hash,
         llvm::formatv(
             "nest tiled: {0} stencil of radius {1} ({2} points, {3}), as "
             "time tiles of {4} x {5} cells, {6} step(s) and strips of {10} "
             "cell(s) per thread, or one launch per "
             "step, chosen at run time; {7}; dependences: flow {8} through "
             "'{9}'",
             S->shapeName(), S->Radius, S->Offsets.size(),
             S->Form == tile::StencilForm::Swap ? "pointer swap" : "copy back",
             T->Rows, T->Cols, T->Steps,
             tile::stencilPredictions(*S, *T, Device, Ctx),
             Dist.empty() ? std::string("none") : llvm::join(Dist, ", "),
             In.Decl->getName(), T->Strip)
             .str());
  return E;
}

/// The generated definitions go before the function that holds the nest;
/// the call takes the loop's place and indentation, and the pragma goes.
void TileConsumer::replaceNest(const PragmaSite &Site, const ForStmt *Loop,
                               const Stmt *Body, const tile::EmittedNest &E,
                               ASTContext &Ctx, Rewriter &RW) {
  const SourceManager &SM = Ctx.getSourceManager();
  const Decl *Top = topLevelDecl(Loop, Ctx);
  RW.InsertText(SM.getExpansionLoc(Top->getBeginLoc()), E.Definitions,
                /*InsertAfter=*/true);
  SourceLocation LoopEnd = Lexer::getLocForEndOfToken(
      SM.getExpansionLoc(Loop->getEndLoc()), 0, SM, Ctx.getLangOpts());
  if (!isa<CompoundStmt>(Body)) {
    SourceLocation Semi = Lexer::findLocationAfterToken(
        Loop->getEndLoc(), tok::semi, SM, Ctx.getLangOpts(), false);
    if (Semi.isValid())
      LoopEnd = Semi;
  }
  unsigned Column = SM.getExpansionColumnNumber(Loop->getBeginLoc());
  RW.ReplaceText(CharSourceRange::getCharRange(Site.Hash, LoopEnd),
                 std::string(Column > 0 ? Column - 1 : 0, ' ') + E.Call);
}

bool TileConsumer::tileOne(const PragmaSite &Site, unsigned Id,
                           const StatementIndex &Index, ASTContext &Ctx,
                           Rewriter &RW) {
  const ForStmt *Loop = markedLoop(Site, Index, Ctx);
  if (!Loop)
    return false;
  if (inTemplate(Loop, Ctx)) {
    refuse(Site, {Loop->getBeginLoc(), "the nest is inside a template"});
    return false;
  }
  if (Site.Tech == tile::Technique::Blocks)
    return blocks(Site, Loop, Id, Ctx, RW);
  if (Site.Tech == tile::Technique::TimeSkew) {
    std::optional<tile::EmittedNest> E = timeTile(Site, Loop, Id, Ctx);
    if (!E)
      return false;
    // The time loop's body is a compound statement (extractStencil).
    replaceNest(Site, Loop, Loop->getBody(), *E, Ctx, RW);
    AnyStencil = true;
    return true;
  }
  tile::Refusal Why;
  std::optional<tile::Nest> N = tile::extractNest(Loop, Ctx, Why);
  if (!N) {
    refuse(Site, Why);
    return false;
  }
  llvm::Expected<std::vector<tile::Dependence>> Deps =
      tile::computeDependences(*N);
  if (!Deps) {
    refuse(Site, {Loop->getBeginLoc(), toString(Deps.takeError())});
    return false;
  }
  std::string TilesText;
  tile::WavefrontTiles Tiles = wavefrontTiles(Site, *N, Id, Ctx, TilesText);
  std::optional<tile::EmittedNest> E =
      tile::emitWavefront(*N, *Deps, Tiles, Wavefront, Id, Ctx, Why);
  if (!E) {
    refuse(Site, Why);
    return false;
  }
  replaceNest(Site, Loop, N->Body, *E, Ctx, RW);

  std::vector<std::string> Parts;
  for (const tile::Dependence &D : *Deps)
    Parts.push_back(std::string(tile::kindName(D.Kind)) + " " +
                    tile::distancesText(D) + " through '" +
                    N->Arrays[D.Array].Decl->getName().str() + "'");
  remark(Site.Hash,
         "nest tiled: " + TilesText + ", " + wavefrontScheduleText(Wavefront) +
             "; dependences: " +
             (Parts.empty() ? std::string("none") : llvm::join(Parts, "; ")));
  return true;
}

void TileConsumer::HandleTranslationUnit(ASTContext &Ctx) {
  if (CI.getDiagnostics().hasErrorOccurred())
    return;
  const SourceManager &SM = Ctx.getSourceManager();
  StatementIndex Index(SM);
  Index.TraverseDecl(Ctx.getTranslationUnitDecl());
  Rewriter RW(CI.getSourceManager(), Ctx.getLangOpts());
  unsigned Tiled = 0;
  for (const PragmaSite &Site : Sites) {
    if (!Site.Valid || !SM.isInMainFile(SM.getExpansionLoc(Site.Hash)))
      continue;
    if (tileOne(Site, Tiled, Index, Ctx, RW))
      ++Tiled;
  }
  if (Tiled)
    RW.InsertText(SM.getLocForStartOfFile(SM.getMainFileID()),
                  tile::wavefrontPreamble() +
                      (AnyTuned ? tile::wavefrontTunerPreamble() : "") +
                      (AnyBlocks ? tile::blocksPreamble() : "") +
                      (AnyStencil ? tile::stencilPreamble() : ""),
                  /*InsertAfter=*/false);
  const RewriteBuffer *Buf = RW.getRewriteBufferFor(SM.getMainFileID());
  Output = Buf ? std::string(Buf->begin(), Buf->end())
               : SM.getBufferData(SM.getMainFileID()).str();
  Ok = !CI.getDiagnostics().hasErrorOccurred();
}

class TileAction : public ASTFrontendAction {
public:
  TileAction(const TileOptions &Opts, std::string &Output, bool &Ok)
      : Opts(Opts), Output(Output), Ok(Ok) {}
  bool BeginSourceFileAction(CompilerInstance &CI) override {
    CI.getPreprocessor().AddPragmaHandler("cleave",
                                          new tile::TilePragmaHandler(Sites));
    return true;
  }
  std::unique_ptr<ASTConsumer> CreateASTConsumer(CompilerInstance &CI,
                                                 StringRef) override {
    return std::make_unique<TileConsumer>(CI, Sites, Opts, Output, Ok);
  }

private:
  std::vector<PragmaSite> Sites;
  const TileOptions &Opts;
  std::string &Output;
  bool &Ok;
};

/// The cc1 invocation of a C++ file (a CUDA file goes through the
/// frontend's host-side setup, with CUDA's headers).
std::shared_ptr<CompilerInvocation> invocationFor(StringRef Path,
                                                  const TileOptions &Opts,
                                                  ClangDiagnostics &Diags,
                                                  raw_ostream &DiagOS) {
  DeviceCompileOptions DO;
  DO.IncludeDirs = Opts.IncludeDirs;
  DO.Defines = Opts.Defines;
  DO.Std = Opts.Std;
  DO.Verbose = Opts.Verbose;
  DO.ColorDiagnostics = Opts.ColorDiagnostics;
  if (llvm::sys::path::extension(Path) == ".cu")
    return createClangInvocation(Path, SourceLanguage::CUDA, CudaSide::Host, DO,
                                 Diags, DiagOS);
  std::vector<std::string> Args = {CLEAVE_CLANG_EXECUTABLE, "-x", "c++",
                                   "-fsyntax-only"};
  if (!Opts.Std.empty())
    Args.push_back("-std=" + Opts.Std);
  for (const std::string &I : Opts.IncludeDirs)
    Args.push_back("-I" + I);
  for (const std::string &D : Opts.Defines)
    Args.push_back("-D" + D);
  Args.push_back(Path.str());
  std::vector<const char *> Argv;
  for (const std::string &A : Args)
    Argv.push_back(A.c_str());
  CreateInvocationOptions CIO;
  CIO.Diags =
      new DiagnosticsEngine(Diags.IDs, &*Diags.Options,
                            new TextDiagnosticPrinter(DiagOS, &*Diags.Options));
  return createInvocation(Argv, std::move(CIO));
}

} // namespace

llvm::Expected<std::string> tileSource(StringRef Path, const TileOptions &Opts,
                                       raw_ostream &DiagOS) {
  StringRef Ext = llvm::sys::path::extension(Path);
  if (!llvm::is_contained({".cpp", ".cc", ".cxx", ".C", ".cu"}, Ext)) {
    DiagOS << "cleave: error: " << Path
           << ": cleave tile takes C++ (.cpp, .cc, .cxx) or CUDA (.cu) "
              "files\n";
    return diagnosedError("unsupported input");
  }
  if (llvm::Error E = checkSourceFile(Path, DiagOS))
    return std::move(E);
  ClangDiagnostics Diags(DiagOS, Opts.ColorDiagnostics);
  std::shared_ptr<CompilerInvocation> Invocation =
      invocationFor(Path, Opts, Diags, DiagOS);
  if (!Invocation)
    return diagnosedError("cannot parse the input");
  CompilerInstance Clang;
  Clang.setInvocation(std::move(Invocation));
  Clang.createDiagnostics(Diags.Printer.get(), /*ShouldOwnClient=*/false);
  if (!Clang.hasDiagnostics())
    return diagnosedError("cannot parse the input");
  std::string Output;
  bool Ok = false;
  TileAction Action(Opts, Output, Ok);
  if (!Clang.ExecuteAction(Action) || !Ok)
    return diagnosedError("cleave tile failed");
  return Output;
}

} // namespace cleave
