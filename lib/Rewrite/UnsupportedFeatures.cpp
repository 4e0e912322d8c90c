//===- UnsupportedFeatures.cpp - CUDA features Cleave refuses -------------===//
//
// Part of Cleave's host rewriter (UnsupportedFeatures.h).
//
//===----------------------------------------------------------------------===//
#include "UnsupportedFeatures.h"

#include "clang/AST/ASTContext.h"
#include "clang/AST/RecursiveASTVisitor.h"
#include "clang/Basic/SourceManager.h"
#include "clang/Lex/PPCallbacks.h"
#include "llvm/ADT/StringSwitch.h"

#include <set>

using namespace clang;
using llvm::StringRef;

namespace cleave {
namespace {

/// The feature a name of CUDA's headers belongs to, or null.
const char *featureOf(StringRef Name) {
  return llvm::StringSwitch<const char *>(Name)
      .Cases("cudaTextureObject_t", "cudaCreateTextureObject",
             "cudaDestroyTextureObject", "cudaGetTextureObjectResourceDesc",
             "cudaGetTextureObjectTextureDesc",
             "cudaGetTextureObjectResourceViewDesc", "texture objects")
      .Cases("cudaSurfaceObject_t", "cudaCreateSurfaceObject",
             "cudaDestroySurfaceObject", "cudaGetSurfaceObjectResourceDesc",
             "surface objects")
      .Default(nullptr);
}

void report(DiagnosticsEngine &DE, SourceLocation Loc, StringRef Feature,
            StringRef Name, DiagnosticsEngine::Level Level) {
  unsigned ID = DE.getCustomDiagID(
      Level, "%0 (%1) are not supported by Cleave: its runtime splits "
             "kernels over the CPU and GPUs through plain device memory "
             "(docs/driver.md, \"What is refused\")");
  DE.Report(Loc, ID) << Feature << Name;
}

class UnsupportedIncludes : public PPCallbacks {
public:
  UnsupportedIncludes(SourceManager &SM, DiagnosticsEngine &DE)
      : SM(SM), DE(DE) {}

  // A thrust header that is not installed is refused like one that is, at
  // the include, instead of "file not found".
  bool FileNotFound(StringRef FileName) override {
    return FileName.starts_with("thrust/");
  }

  void InclusionDirective(SourceLocation HashLoc, const Token &,
                          StringRef FileName, bool, CharSourceRange Range,
                          OptionalFileEntryRef, StringRef, StringRef,
                          const Module *, bool,
                          SrcMgr::CharacteristicKind) override {
    if (!FileName.starts_with("thrust/") ||
        SM.isInSystemHeader(SM.getExpansionLoc(HashLoc)))
      return;
    // Fatal: thrust's own headers would only add errors after this one.
    unsigned ID = DE.getCustomDiagID(
        DiagnosticsEngine::Fatal,
        "thrust is not supported by Cleave (<%0>): its algorithms launch "
        "kernels from CUDA's own headers, which Cleave does not rewrite; "
        "write the kernels in the program (docs/driver.md, \"What is "
        "refused\")");
    DE.Report(Range.getBegin(), ID) << FileName;
  }

private:
  SourceManager &SM;
  DiagnosticsEngine &DE;
};

class FeatureVisitor : public RecursiveASTVisitor<FeatureVisitor> {
public:
  explicit FeatureVisitor(ASTContext &Ctx)
      : SM(Ctx.getSourceManager()), DE(Ctx.getDiagnostics()) {}
  bool shouldVisitTemplateInstantiations() const { return false; }

  bool VisitDeclRefExpr(DeclRefExpr *E) {
    check(E->getDecl(), E->getLocation());
    return true;
  }
  bool VisitOverloadExpr(OverloadExpr *E) {
    for (NamedDecl *D : E->decls())
      check(D->getUnderlyingDecl(), E->getNameLoc());
    return true;
  }
  bool VisitTypedefTypeLoc(TypedefTypeLoc TL) {
    check(TL.getTypedefNameDecl(), TL.getNameLoc());
    return true;
  }

  bool Found = false;

private:
  SourceManager &SM;
  DiagnosticsEngine &DE;
  std::set<unsigned> Reported;

  void check(const NamedDecl *D, SourceLocation Loc) {
    if (!D || !D->getIdentifier() || Loc.isInvalid())
      return;
    const char *Feature = featureOf(D->getName());
    if (!Feature || !SM.isInSystemHeader(SM.getExpansionLoc(D->getLocation())))
      return;
    SourceLocation Exp = SM.getExpansionLoc(Loc);
    if (SM.isInSystemHeader(Exp) ||
        !Reported.insert(Exp.getRawEncoding()).second)
      return;
    report(DE, Loc, Feature, D->getName(), DiagnosticsEngine::Error);
    Found = true;
  }
};

} // namespace

std::unique_ptr<PPCallbacks>
createUnsupportedIncludeChecker(SourceManager &SM, DiagnosticsEngine &DE) {
  return std::make_unique<UnsupportedIncludes>(SM, DE);
}

bool reportUnsupportedFeatures(ASTContext &Ctx) {
  FeatureVisitor V(Ctx);
  V.TraverseDecl(Ctx.getTranslationUnitDecl());
  return V.Found;
}

} // namespace cleave
