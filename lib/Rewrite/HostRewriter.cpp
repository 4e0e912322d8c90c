//===- HostRewriter.cpp - CUDA host code to plain C++ ---------------------===//
//
// Part of Cleave. Clang parses the host side of the .cu file (so launches
// are CUDAKernelCallExpr and kernels carry CUDAGlobalAttr), then the
// Rewriter edits the text of the .cu file and of the user files it includes
// (never system headers) in two passes:
//   1. declarations: kernel bodies become stubs, unnamed kernel parameters
//      get names, `__device__`-only functions are removed, device variables
//      are collected for registration;
//   2. expressions outside the code replaced in 1: launches become
//      push-configuration-then-call, calls to CUDA API outside the runtime's
//      subset are errors.
// The included files that change are written as copies (IncludeCopies.h).
// Edits that change the number of lines are followed by a #line marker so
// that the host compiler's diagnostics point at the user's file; the
// code Cleave generates is marked with #line markers into the rewritten file
// itself (docs/driver.md).
//
//===----------------------------------------------------------------------===//
#include "cleave/Rewrite/HostRewriter.h"
#include "IncludeCopies.h"

#include "UnsupportedFeatures.h"
#include "cleave/Frontend/ClangInvocation.h"
#include "cleave/Frontend/LaunchSyntax.h"
#include "cleave/Support/Diagnosed.h"

#include "clang/AST/ASTConsumer.h"
#include "clang/AST/ASTContext.h"
#include "clang/AST/Attr.h"
#include "clang/AST/DeclTemplate.h"
#include "clang/AST/ExprCXX.h"
#include "clang/AST/Mangle.h"
#include "clang/AST/RecursiveASTVisitor.h"
#include "clang/AST/TemplateBase.h"
#include "clang/Basic/SourceManager.h"
#include "clang/Frontend/CompilerInstance.h"
#include "clang/Frontend/FrontendAction.h"
#include "clang/Lex/Lexer.h"
#include "clang/Lex/PPCallbacks.h"
#include "clang/Lex/Preprocessor.h"
#include "clang/Rewrite/Core/Rewriter.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/IR/Function.h"
#include "llvm/IR/GlobalVariable.h"
#include "llvm/IR/Module.h"
#include "llvm/Support/raw_ostream.h"

#include <map>
#include <optional>
#include <set>

using namespace clang;
using llvm::cast;
using llvm::dyn_cast;
using llvm::isa;
using llvm::SmallString;
using llvm::SmallVector;
using llvm::StringRef;
using llvm::Twine;

namespace cleave {
namespace {

/// Placeholder for a #line marker into the rewritten file itself; replaced
/// once the whole text, and so every line number, is known.
constexpr StringRef SelfLineMarker = "#line __CLEAVE_SELF_LINE__";

/// The rewriting of one translation unit.
class HostRewrite {
public:
  HostRewrite(ASTContext &Ctx, const HostRewriteOptions &Opts,
              StringRef InputName, const FileRecord &Files,
              HostRewriteResult &Result)
      : Ctx(Ctx), SM(Ctx.getSourceManager()), LO(Ctx.getLangOpts()),
        DE(Ctx.getDiagnostics()), Opts(Opts), InputName(InputName),
        Files(Files), Result(Result), Policy(LO) {
    R.setSourceMgr(SM, LO);
    MainFID = SM.getMainFileID();
    MC.reset(Ctx.createMangleContext());
    Policy.SuppressUnwrittenScope = true;
    Policy.FullyQualifiedName = true;
    Policy.PrintCanonicalTypes = true;
    Policy.SuppressTagKeyword = true;
    Policy.Bool = true;
  }

  /// Runs both passes; false after an error (already reported).
  bool run();

  // Pass 1.
  void visitFunction(FunctionDecl *FD);
  void visitVariable(VarDecl *VD);
  void visitLambda(LambdaExpr *E);
  // Pass 2.
  void visitLaunch(CUDAKernelCallExpr *E);
  void visitReference(NamedDecl *D, SourceLocation Loc);

  bool isReplaced(SourceLocation Loc) const;

private:
  ASTContext &Ctx;
  SourceManager &SM;
  const LangOptions &LO;
  DiagnosticsEngine &DE;
  const HostRewriteOptions &Opts;
  StringRef InputName;
  const FileRecord &Files;
  HostRewriteResult &Result;
  PrintingPolicy Policy;
  Rewriter R;
  FileID MainFID;
  std::unique_ptr<MangleContext> MC;

  /// Per file, offsets [begin, end) whose text was replaced.
  std::map<FileID, std::vector<std::pair<unsigned, unsigned>>> Replaced;
  /// Per file, original lines (1-based) that get a #line marker before them.
  std::map<FileID, std::set<unsigned>> Resync;
  /// Kernels and variables to register, in source order.
  std::vector<const FunctionDecl *> Kernels;
  std::vector<const VarDecl *> Variables;
  std::set<const Decl *> Seen;
  std::set<unsigned> ReportedAt;

  void error(SourceLocation Loc, const Twine &Msg) {
    unsigned ID = DE.getCustomDiagID(DiagnosticsEngine::Error, "%0");
    DE.Report(Loc, ID) << Msg.str();
  }

  /// Whether every location is in the text of one user file (not in a
  /// macro's body, not in a system header), where the Rewriter can edit it.
  bool inOneUserFile(std::initializer_list<SourceLocation> Locs) const {
    FileID FID;
    for (SourceLocation L : Locs) {
      if (L.isInvalid() || !L.isFileID() || SM.isInSystemHeader(L))
        return false;
      if (FID.isInvalid())
        FID = SM.getFileID(L);
      else if (SM.getFileID(L) != FID)
        return false;
    }
    return true;
  }
  /// The name #line markers give a file: the .cu file as the user named it,
  /// an included file as the parse found it.
  std::string markerName(FileID FID) const {
    if (FID == MainFID)
      return InputName.str();
    return SM.getFileEntryRefForID(FID)->getName().str();
  }
  std::string locationString(SourceLocation Loc) const {
    PresumedLoc P = SM.getPresumedLoc(SM.getExpansionLoc(Loc));
    if (P.isInvalid())
      return "";
    return (Twine(P.getFilename()) + ":" + Twine(P.getLine()) + ":" +
            Twine(P.getColumn()))
        .str();
  }

  /// Maps Loc to the main file through macro arguments (whose text the
  /// Rewriter can edit at its spelling); invalid when Loc comes from a macro
  /// body or another file. MacroName names the macro in that case.
  SourceLocation editableLoc(SourceLocation Loc, std::string *MacroName) const;
  /// Records [Begin, End) as replaced; false (with an error) when it
  /// overlaps text replaced before.
  bool markReplaced(SourceLocation Begin, SourceLocation End);
  /// A #line marker before the line after the one holding Loc.
  void resyncAfter(SourceLocation Loc);

  std::string qualifiedName(const FunctionDecl *FD) const;
  std::string qualifiedName(const VarDecl *VD) const;
  std::string deviceName(const NamedDecl *D) const;
  std::string displayName(const FunctionDecl *FD) const;
  /// `static_cast<void (*)(float *, int)>(&::k<float>)`, or empty (with an
  /// error) when the instantiation cannot be named in C++.
  std::string kernelAddress(const FunctionDecl *FD);

  void rewriteKernel(FunctionDecl *FD);
  void removeDeviceFunction(FunctionDecl *FD);
  void emitRegistrations();
  /// The rewritten text of one file; SelfName names it in the markers of
  /// the code Cleave generates.
  std::string finishFile(FileID FID, StringRef SelfName);
  /// The copies of the included user files that changed (Result.Copies).
  void collectCopies();
};

SourceLocation HostRewrite::editableLoc(SourceLocation Loc,
                                        std::string *MacroName) const {
  while (Loc.isMacroID()) {
    if (!SM.isMacroArgExpansion(Loc)) {
      if (MacroName)
        *MacroName = Lexer::getImmediateMacroName(Loc, SM, LO).str();
      return SourceLocation();
    }
    Loc = SM.getImmediateSpellingLoc(Loc);
  }
  return Loc;
}

bool HostRewrite::markReplaced(SourceLocation Begin, SourceLocation End) {
  unsigned B = SM.getFileOffset(Begin), E = SM.getFileOffset(End);
  auto &Ranges = Replaced[SM.getFileID(Begin)];
  for (auto [OB, OE] : Ranges)
    if (B < OE && OB < E) {
      // Two edits of the same text would garble it: refuse instead.
      error(Begin, "internal error: Cleave's host rewriter would edit this "
                   "code twice; please report it");
      return false;
    }
  Ranges.push_back({B, E});
  return true;
}

bool HostRewrite::isReplaced(SourceLocation Loc) const {
  SourceLocation E = SM.getExpansionLoc(Loc);
  auto It = Replaced.find(SM.getFileID(E));
  if (It == Replaced.end())
    return false;
  unsigned Off = SM.getFileOffset(E);
  return llvm::any_of(It->second, [&](const std::pair<unsigned, unsigned> &P) {
    return P.first <= Off && Off < P.second;
  });
}

void HostRewrite::resyncAfter(SourceLocation Loc) {
  SourceLocation E = SM.getExpansionLoc(Loc);
  if (Opts.LineMarkers)
    Resync[SM.getFileID(E)].insert(SM.getExpansionLineNumber(E) + 1);
}

std::string HostRewrite::qualifiedName(const FunctionDecl *FD) const {
  std::string Scope;
  for (const DeclContext *DC = FD->getDeclContext(); DC; DC = DC->getParent())
    if (const auto *NS = dyn_cast<NamespaceDecl>(DC))
      // Anonymous and inline namespaces are found through their parent.
      if (!NS->isAnonymousNamespace() && !NS->isInline())
        Scope = NS->getName().str() + "::" + Scope;
  return "::" + Scope + FD->getNameAsString();
}

std::string HostRewrite::qualifiedName(const VarDecl *VD) const {
  std::string Scope;
  for (const DeclContext *DC = VD->getDeclContext(); DC; DC = DC->getParent())
    if (const auto *NS = dyn_cast<NamespaceDecl>(DC))
      if (!NS->isAnonymousNamespace() && !NS->isInline())
        Scope = NS->getName().str() + "::" + Scope;
  return "::" + Scope + VD->getNameAsString();
}

std::string HostRewrite::deviceName(const NamedDecl *D) const {
  std::string Name;
  llvm::raw_string_ostream OS(Name);
  if (!MC->shouldMangleDeclName(D))
    return D->getName().str();
  if (const auto *FD = dyn_cast<FunctionDecl>(D))
    // The device symbol, not the host stub's (__device_stub__...).
    MC->mangleName(GlobalDecl(FD, KernelReferenceKind::Kernel), OS);
  else
    MC->mangleName(GlobalDecl(cast<VarDecl>(D)), OS);
  return Name;
}

std::string HostRewrite::displayName(const FunctionDecl *FD) const {
  std::string Name;
  llvm::raw_string_ostream OS(Name);
  FD->getNameForDiagnostic(OS, Policy, /*Qualified=*/true);
  return Name;
}

std::string HostRewrite::kernelAddress(const FunctionDecl *FD) {
  std::string Type = "void (*)(";
  for (auto [I, P] : llvm::enumerate(FD->parameters())) {
    if (I)
      Type += ", ";
    Type += P->getType().getAsString(Policy);
  }
  Type += ")";
  std::string Name = qualifiedName(FD);
  if (const TemplateArgumentList *Args = FD->getTemplateSpecializationArgs()) {
    llvm::raw_string_ostream OS(Name);
    printTemplateArgumentList(OS, Args->asArray(), Policy);
  }
  std::string Expr = "static_cast<" + Type + ">(&" + Name + ")";
  // Closure types and types without a name cannot be written here.
  for (StringRef Bad : {"(lambda", "(anonymous", "(unnamed"})
    if (StringRef(Expr).contains(Bad)) {
      error(FD->getPointOfInstantiation().isValid()
                ? FD->getPointOfInstantiation()
                : FD->getLocation(),
            "kernel '" + displayName(FD) +
                "' is instantiated with a type that has no name in C++; "
                "Cleave cannot register it with the runtime");
      return "";
    }
  return Expr;
}

void HostRewrite::visitFunction(FunctionDecl *FD) {
  // Implicit instantiations have no text of their own; the pattern is
  // rewritten once.
  if (FD->isTemplateInstantiation() || FD->isImplicit())
    return;
  auto Explicit = [](const Attr *A) { return A && !A->isImplicit(); };
  bool Global = FD->hasAttr<CUDAGlobalAttr>();
  bool Device = Explicit(FD->getAttr<CUDADeviceAttr>());
  bool Host = FD->hasAttr<CUDAHostAttr>();
  SourceLocation Loc = FD->getLocation();
  if (SM.isInSystemHeader(SM.getExpansionLoc(Loc)))
    return;

  if (Global) {
    if (FD->doesThisDeclarationHaveABody())
      rewriteKernel(FD);
    return;
  }
  if (Device && !Host)
    removeDeviceFunction(FD);
}

void HostRewrite::visitLambda(LambdaExpr *E) {
  const CXXMethodDecl *Op = E->getCallOperator();
  auto Explicit = [](const Attr *A) { return A && !A->isImplicit(); };
  if (isReplaced(E->getBeginLoc()) ||
      SM.isInSystemHeader(SM.getExpansionLoc(E->getBeginLoc())))
    return;
  if (Explicit(Op->getAttr<CUDADeviceAttr>()) &&
      !Explicit(Op->getAttr<CUDAHostAttr>()))
    error(E->getBeginLoc(),
          "__device__ lambdas are not supported by Cleave's host rewriter: "
          "write the code in a __device__ function or a functor type");
}

void HostRewrite::rewriteKernel(FunctionDecl *FD) {
  std::string Name = FD->getNameAsString();
  auto *Body = cast<CompoundStmt>(FD->getBody());
  SourceLocation LBrace = Body->getLBracLoc(), RBrace = Body->getRBracLoc();
  if (!inOneUserFile({LBrace, RBrace})) {
    std::string Macro;
    editableLoc(LBrace, &Macro);
    error(FD->getLocation(),
          "kernel '" + Name + "' is defined by " +
              (Macro.empty() ? std::string("a macro expansion")
                             : "the expansion of macro '" + Macro + "'") +
              ", which Cleave cannot rewrite: define it without the macro");
    return;
  }

  // Name unnamed parameters: the stub passes every argument on.
  // A parameter pack `Ts... ts` stands for its expansion: `ts...`.
  SmallVector<std::string, 8> Params;
  bool HasPack = false;
  for (auto [I, P] : llvm::enumerate(FD->parameters())) {
    if (P->isParameterPack() && P->getName().empty()) {
      error(P->getLocation(), "unnamed parameter pack of kernel '" + Name +
                                  "': name it, so that Cleave's host stub "
                                  "can pass it on");
      return;
    }
    if (!P->getName().empty()) {
      HasPack |= P->isParameterPack();
      Params.push_back(P->getNameAsString());
      continue;
    }
    std::string PName = "__cleave_arg" + std::to_string(I);
    SourceLocation PLoc = P->getLocation();
    if (!inOneUserFile({PLoc, LBrace})) {
      error(P->getBeginLoc(), "unnamed parameter " + Twine(I + 1) +
                                  " of kernel '" + Name +
                                  "' comes from a macro: name it");
      return;
    }
    R.InsertTextBefore(PLoc, " " + PName);
    Params.push_back(PName);
  }

  // The kernel's own address: unambiguous for overloads and templates.
  auto isPack = [&](size_t I) { return FD->getParamDecl(I)->isParameterPack(); };
  std::string Self = "static_cast<void (*)(";
  for (auto [I, P] : llvm::enumerate(Params))
    Self += (I ? ", decltype(" : "decltype(") + P + ")" +
            (isPack(I) ? "..." : "");
  Self += ")>(&" + qualifiedName(FD);
  if (FunctionTemplateDecl *FTD = FD->getDescribedFunctionTemplate()) {
    Self += "<";
    for (auto [I, TP] : llvm::enumerate(*FTD->getTemplateParameters())) {
      if (TP->getName().empty()) {
        error(TP->getLocation(),
              "unnamed template parameter of kernel '" + Name +
                  "': name it, so that Cleave's host stub can refer to the "
                  "kernel");
        return;
      }
      Self += (I ? ", " : "") + TP->getNameAsString() +
              (TP->isParameterPack() ? "..." : "");
    }
    Self += ">";
  } else if (const TemplateArgumentList *Args =
                 FD->getTemplateSpecializationArgs()) {
    llvm::raw_string_ostream OS(Self);
    printTemplateArgumentList(OS, Args->asArray(), Policy);
  }
  Self += ")";

  std::string Stub = "{\n";
  if (Opts.LineMarkers)
    Stub += SelfLineMarker.str() + "\n";
  Stub += "  // cleave: host stub; the kernel's code is in the device object\n";
  Stub += "  void *__cleave_args[] = {";
  for (auto [I, P] : llvm::enumerate(Params))
    Stub += (I ? ", (void *)&" : "(void *)&") + P + (isPack(I) ? "..." : "");
  // The array must not be empty (no parameters, or an empty pack).
  if (Params.empty())
    Stub += "nullptr";
  else if (HasPack)
    Stub += ", nullptr";
  Stub += "};\n  cleaveLaunchFromStub((const void *)" + Self +
          ", __cleave_args);\n}";
  if (!markReplaced(LBrace, RBrace.getLocWithOffset(1)))
    return;
  R.ReplaceText(SourceRange(LBrace, RBrace), Stub);
  resyncAfter(RBrace);
  if (Seen.insert(FD).second)
    Kernels.push_back(FD);
}

void HostRewrite::removeDeviceFunction(FunctionDecl *FD) {
  // The whole declaration, with `template <...>` and the attributes that
  // Clang leaves out of its range.
  const Decl *Whole = FD;
  if (FunctionTemplateDecl *FTD = FD->getDescribedFunctionTemplate())
    Whole = FTD;
  SourceLocation Begin = SM.getExpansionLoc(Whole->getBeginLoc());
  // (Attributes inherited from an earlier declaration are that one's.)
  for (const Attr *A : FD->attrs())
    if (!A->isImplicit() && !A->isInherited() && A->getLocation().isValid()) {
      SourceLocation L = SM.getExpansionLoc(A->getLocation());
      if (SM.isBeforeInTranslationUnit(L, Begin))
        Begin = L;
    }
  SourceLocation End = Whole->getEndLoc();
  if (!inOneUserFile({Begin, End})) {
    std::string Macro;
    editableLoc(End, &Macro);
    error(FD->getLocation(),
          "__device__ function '" + FD->getNameAsString() +
              "' is declared by " +
              (Macro.empty() ? std::string("a macro expansion")
                             : "the expansion of macro '" + Macro + "'") +
              ", which Cleave cannot remove from the host code");
    return;
  }
  // A declaration without a body ends at its ';'.
  SourceLocation After = Lexer::getLocForEndOfToken(End, 0, SM, LO);
  if (!FD->doesThisDeclarationHaveABody())
    if (std::optional<Token> Next = Lexer::findNextToken(End, SM, LO))
      if (Next->is(tok::semi) && inOneUserFile({Next->getLocation(), End}))
        After = Next->getEndLoc();
  std::string What = FD->getDescribedFunctionTemplate()
                         ? "__device__ function template"
                         : "__device__ function";
  if (!markReplaced(Begin, After))
    return;
  R.ReplaceText(CharSourceRange::getCharRange(Begin, After),
                "/* cleave: " + What + " '" + FD->getNameAsString() +
                    "' removed (device code) */");
  if (SM.getExpansionLineNumber(Begin) != SM.getExpansionLineNumber(After))
    resyncAfter(After);
}

void HostRewrite::visitVariable(VarDecl *VD) {
  SourceLocation Loc = VD->getLocation();
  if (SM.isInSystemHeader(SM.getExpansionLoc(Loc)) || VD->isImplicit())
    return;
  // Namespace-scope variables only: those in kernels and __device__
  // functions (extern __shared__ arrays among them) vanish with the code.
  if (!VD->hasGlobalStorage() || !VD->getDeclContext()->isFileContext() ||
      VD->isLocalExternDecl() || isReplaced(Loc))
    return;
  auto Explicit = [](const Attr *A) { return A && !A->isImplicit(); };
  if (Explicit(VD->getAttr<CUDASharedAttr>())) {
    error(Loc, "__shared__ variable '" + VD->getNameAsString() +
                   "' at namespace scope: __shared__ memory belongs to a "
                   "block; declare it inside the kernel");
    return;
  }
  if (!Explicit(VD->getAttr<CUDADeviceAttr>()) &&
      !Explicit(VD->getAttr<CUDAConstantAttr>()))
    return;
  if (VD->isThisDeclarationADefinition() != VarDecl::Definition ||
      !VD->getDeclContext()->isFileContext() || VD->isTemplated())
    return;
  if (Seen.insert(VD).second)
    Variables.push_back(VD);
}

void HostRewrite::visitLaunch(CUDAKernelCallExpr *E) {
  CallExpr *Config = E->getConfig();
  SourceLocation Begin = E->getBeginLoc(), LLL = Config->getBeginLoc(),
                 GGG = Config->getRParenLoc(), End = E->getRParenLoc();
  if (isReplaced(Begin))
    return; // inside a kernel or a removed __device__ function
  SourceLocation Exp = SM.getExpansionLoc(Begin);
  if (SM.isInSystemHeader(Exp))
    return;
  std::string Macro;
  SourceLocation B = editableLoc(Begin, &Macro), L = editableLoc(LLL, &Macro),
                 G = editableLoc(GGG, &Macro), En = editableLoc(End, &Macro);
  bool Ok =
      inOneUserFile({B, L, G, En}) && SM.isBeforeInTranslationUnit(B, L) &&
      SM.isBeforeInTranslationUnit(L, G) && SM.isBeforeInTranslationUnit(G, En);
  if (!Ok) {
    error(Begin, "kernel launch produced by " +
                     (Macro.empty() ? std::string("a macro expansion")
                                    : "the expansion of macro '" + Macro + "'") +
                     " cannot be rewritten by Cleave: write the <<<...>>> "
                     "launch in the source, outside the macro");
    return;
  }
  ++Result.NumLaunches;

  // The configuration moves before the call, on one line, so that the lines
  // after it keep their numbers; the newlines it held stay where it was.
  CharSourceRange ConfigText =
      CharSourceRange::getCharRange(L.getLocWithOffset(3), G);
  StringRef Text = Lexer::getSourceText(ConfigText, SM, LO);
  std::string Flat;
  if (Text.contains('\n') || Text.contains("//") || Text.contains("/*")) {
    FileID FID = SM.getFileID(L);
    StringRef Buf = SM.getBufferData(FID);
    Lexer Lex(SM.getLocForStartOfFile(FID), LO, Buf.begin(), Text.begin(),
              Buf.end());
    Token Tok;
    while (true) {
      bool AtEnd = Lex.LexFromRawLexer(Tok);
      const char *At = SM.getCharacterData(Tok.getLocation());
      if (Tok.is(tok::eof) || At >= Text.end())
        break;
      if (!Flat.empty() && (Tok.hasLeadingSpace() || Tok.isAtStartOfLine()))
        Flat += ' ';
      Flat += StringRef(At, Tok.getLength());
      if (AtEnd)
        break;
    }
  } else {
    Flat = Text.trim().str();
  }
  CharSourceRange Chevrons =
      CharSourceRange::getCharRange(L, G.getLocWithOffset(3));
  StringRef Removed = Lexer::getSourceText(Chevrons, SM, LO);
  R.InsertTextBefore(B, "(cleavePushCallConfiguration(" + Flat +
                            ") ? (void)0 : ");
  R.ReplaceText(Chevrons, std::string(Removed.count('\n'), '\n'));
  R.InsertTextAfterToken(En, ")");
}

void HostRewrite::visitReference(NamedDecl *D, SourceLocation Loc) {
  auto *FD = dyn_cast_or_null<FunctionDecl>(D);
  if (!FD || !FD->getIdentifier() || isReplaced(Loc))
    return;
  SourceLocation Exp = SM.getExpansionLoc(Loc);
  if (SM.isInSystemHeader(Exp))
    return;
  if (!SM.isInSystemHeader(SM.getExpansionLoc(FD->getLocation())))
    return; // the program's own function
  StringRef Name = FD->getName();
  bool Runtime = Name.size() > 4 && Name.starts_with("cuda") &&
                 llvm::isUpper(Name[4]);
  bool Driver = Name.size() > 2 && Name.starts_with("cu") &&
                llvm::isUpper(Name[2]);
  if ((!Runtime && !Driver) || isSupportedCudaRuntimeFunction(Name))
    return;
  if (!ReportedAt.insert(Exp.getRawEncoding()).second)
    return;
  if (Runtime)
    error(Loc, Name + " is not supported by Cleave's runtime (it implements "
                      "a subset of the CUDA runtime API: see "
                      "docs/runtime-api.md)");
  else
    error(Loc, Name + " is part of the CUDA driver API, which Cleave's "
                      "runtime does not provide; use the CUDA runtime API");
}

void HostRewrite::emitRegistrations() {
  std::string Out;
  for (const FunctionDecl *FD : Kernels) {
    SmallVector<const FunctionDecl *, 4> Instances;
    if (FunctionTemplateDecl *FTD = FD->getDescribedFunctionTemplate()) {
      for (FunctionDecl *Spec : FTD->specializations()) {
        TemplateSpecializationKind K = Spec->getTemplateSpecializationKind();
        // Explicit specializations are written definitions of their own
        // (registered when their own definition is rewritten); declarations
        // of instantiations made elsewhere have no code here.
        if (K == TSK_ImplicitInstantiation ||
            K == TSK_ExplicitInstantiationDefinition)
          if (Spec->isDefined())
            Instances.push_back(Spec);
      }
    } else {
      Instances.push_back(FD);
    }
    for (const FunctionDecl *I : Instances) {
      std::string Addr = kernelAddress(I);
      if (Addr.empty())
        continue;
      std::string Name = deviceName(I);
      Out += "    cleave_register_kernel((const void *)" + Addr + ", " +
             quoted(Name) + ");\n";
      Result.Registrations.push_back({Registration::Kernel, Name,
                                      displayName(I),
                                      locationString(I->getLocation())});
    }
  }
  for (const VarDecl *VD : Variables) {
    std::string Q = qualifiedName(VD), Name = deviceName(VD);
    Out += "    cleave_register_variable((const void *)&" + Q + ", " +
           quoted(Name) + ", sizeof(" + Q + "));\n";
    Result.Registrations.push_back({Registration::Variable, Name,
                                    VD->getNameAsString(),
                                    locationString(VD->getLocation())});
  }

  std::string Tail = "\n";
  if (Opts.LineMarkers)
    Tail += SelfLineMarker.str() + "\n";
  Tail += "// cleave: registers this file's kernels and device variables with "
          "Cleave's\n// runtime before main runs (docs/driver.md).\n";
  if (Out.empty()) {
    Tail += "// (none)\n";
  } else {
    Tail += "namespace {\nstruct __cleave_registration {\n"
            "  __cleave_registration() {\n" +
            Out + "  }\n} __cleave_registration_instance;\n} // namespace\n";
  }
  // The main file may not end with a newline.
  StringRef Buf = SM.getBufferData(MainFID);
  if (!Buf.empty() && !Buf.ends_with("\n"))
    Tail = "\n" + Tail;
  R.InsertTextAfter(SM.getLocForEndOfFile(MainFID), Tail);
}

std::string HostRewrite::finishFile(FileID FID, StringRef SelfName) {
  // #line markers back into the user's file after edits that changed the
  // line count, at line starts outside the replaced text.
  std::string Name = markerName(FID);
  unsigned NumLines =
      SM.getLineNumber(FID, SM.getFileOffset(SM.getLocForEndOfFile(FID)));
  for (unsigned Line : Resync[FID]) {
    if (Line > NumLines)
      continue;
    SourceLocation At = SM.translateLineCol(FID, Line, 1);
    if (isReplaced(At.getLocWithOffset(-1)) && isReplaced(At))
      continue;
    R.InsertTextBefore(At, "#line " + std::to_string(Line) + " " +
                               quoted(Name) + "\n");
  }

  std::string Body;
  if (const RewriteBuffer *RB = R.getRewriteBufferFor(FID))
    Body.assign(RB->begin(), RB->end());
  else
    Body = SM.getBufferData(FID).str();
  // A UTF-8 byte-order mark may open a file, not follow Cleave's first lines
  // (the host compiler reads it there as stray bytes).
  if (StringRef(Body).starts_with("\xEF\xBB\xBF"))
    Body.erase(0, 3);

  std::string Head = "// Generated by cleave from " + Name +
                     ": the host code, as plain C++ for the host compiler.\n"
                     "// Kernel launches go through Cleave's runtime; see "
                     "docs/driver.md.\n";
  if (FID == MainFID)
    Head += "#include <cleave/cuda_host.h>\n";
  if (Opts.LineMarkers)
    Head += "#line 1 " + quoted(Name) + "\n";

  // Resolve the markers into this file, now that lines are known.
  std::string Out;
  Out.reserve(Head.size() + Body.size() + 256);
  unsigned LineNo = 0;
  std::string Self = quoted(SelfName);
  for (StringRef Text : {StringRef(Head), StringRef(Body)}) {
    while (!Text.empty()) {
      auto [Line, Rest] = Text.split('\n');
      ++LineNo;
      if (Line == SelfLineMarker)
        Out += "#line " + std::to_string(LineNo + 1) + " " + Self;
      else
        Out += Line;
      if (Text.size() > Line.size())
        Out += '\n';
      Text = Rest;
    }
  }
  return Out;
}

void HostRewrite::collectCopies() {
  CopyPlan Plan = planCopies(R, Files, Opts.CopyDir);
  for (auto &[Loc, Msg] : Plan.Errors)
    error(Loc, Msg);
  for (const CopyPlan::Redirect &D : Plan.Redirects) {
    // (A directive inside a kernel's or device function's body is gone.)
    if (isReplaced(D.Hash) || !markReplaced(D.Hash, D.End))
      continue;
    R.ReplaceText(CharSourceRange::getCharRange(D.Hash, D.End), D.Text);
  }
  if (DE.hasErrorOccurred())
    return;
  for (auto &[FID, Path] : Plan.CopyOf)
    Result.Copies.push_back({markerName(FID), Path, finishFile(FID, Path)});
}

/// Pass 1: declarations.
class DeclVisitor : public RecursiveASTVisitor<DeclVisitor> {
public:
  explicit DeclVisitor(HostRewrite &HR) : HR(HR) {}
  bool shouldVisitTemplateInstantiations() const { return false; }
  bool shouldVisitImplicitCode() const { return false; }
  bool VisitFunctionDecl(FunctionDecl *FD) {
    HR.visitFunction(FD);
    return true;
  }
  bool VisitVarDecl(VarDecl *VD) {
    HR.visitVariable(VD);
    return true;
  }
  // A lambda's call operator is implicit code, which the traversal skips.
  bool VisitLambdaExpr(LambdaExpr *E) {
    HR.visitLambda(E);
    return true;
  }

private:
  HostRewrite &HR;
};

/// Pass 2: expressions.
class ExprVisitor : public RecursiveASTVisitor<ExprVisitor> {
public:
  explicit ExprVisitor(HostRewrite &HR) : HR(HR) {}
  bool shouldVisitTemplateInstantiations() const { return false; }
  bool shouldVisitImplicitCode() const { return false; }
  bool VisitCUDAKernelCallExpr(CUDAKernelCallExpr *E) {
    HR.visitLaunch(E);
    return true;
  }
  bool VisitDeclRefExpr(DeclRefExpr *E) {
    HR.visitReference(E->getDecl(), E->getLocation());
    return true;
  }
  bool VisitOverloadExpr(OverloadExpr *E) {
    for (NamedDecl *D : E->decls())
      if (auto *FTD = dyn_cast<FunctionTemplateDecl>(D->getUnderlyingDecl()))
        HR.visitReference(FTD->getTemplatedDecl(), E->getNameLoc());
      else
        HR.visitReference(D->getUnderlyingDecl(), E->getNameLoc());
    return true;
  }

private:
  HostRewrite &HR;
};

bool HostRewrite::run() {
  TranslationUnitDecl *TU = Ctx.getTranslationUnitDecl();
  DeclVisitor(*this).TraverseDecl(TU);
  ExprVisitor(*this).TraverseDecl(TU);
  if (DE.hasErrorOccurred())
    return false;
  emitRegistrations();
  if (DE.hasErrorOccurred())
    return false;
  collectCopies();
  if (DE.hasErrorOccurred())
    return false;
  Result.Source = finishFile(
      MainFID, Opts.OutputName.empty() ? "<stdout>" : Opts.OutputName);
  return true;
}

class RewriteConsumer : public ASTConsumer {
public:
  RewriteConsumer(const HostRewriteOptions &Opts, StringRef InputName,
                  const FileRecord &Files, HostRewriteResult &Result, bool &Ok)
      : Opts(Opts), InputName(InputName), Files(Files), Result(Result),
        Ok(Ok) {}
  void HandleTranslationUnit(ASTContext &Ctx) override {
    if (Ctx.getDiagnostics().hasErrorOccurred() ||
        reportUnsupportedFeatures(Ctx))
      return;
    HostRewrite HR(Ctx, Opts, InputName, Files, Result);
    Ok = HR.run();
  }

private:
  const HostRewriteOptions &Opts;
  StringRef InputName;
  const FileRecord &Files;
  HostRewriteResult &Result;
  bool &Ok;
};

/// Clang 19 ignores `__managed__` in CUDA (the attribute is HIP's), so the
/// variable would silently become a host variable: refuse its macro. (The
/// runtime's managed memory is its buffers, whose host copies it protects
/// and tracks; a variable's host shadow lies in the program's own data,
/// among other variables, where it cannot.)
class ManagedVariables : public PPCallbacks {
public:
  ManagedVariables(SourceManager &SM, DiagnosticsEngine &DE)
      : SM(SM), DE(DE) {}
  void MacroExpands(const Token &Name, const MacroDefinition &, SourceRange,
                    const MacroArgs *) override {
    if (!Name.getIdentifierInfo() ||
        Name.getIdentifierInfo()->getName() != "__managed__")
      return;
    SourceLocation Loc = Name.getLocation();
    if (SM.isInSystemHeader(SM.getExpansionLoc(Loc)))
      return;
    unsigned ID = DE.getCustomDiagID(
        DiagnosticsEngine::Error,
        "__managed__ variables are not supported: allocate the memory "
        "with cudaMallocManaged, or use a __device__ variable with "
        "cudaMemcpyToSymbol");
    DE.Report(Loc, ID);
  }

private:
  SourceManager &SM;
  DiagnosticsEngine &DE;
};

class RewriteAction : public ASTFrontendAction {
public:
  RewriteAction(const HostRewriteOptions &Opts, StringRef InputName,
                HostRewriteResult &Result, bool &Ok)
      : Opts(Opts), InputName(InputName), Result(Result), Ok(Ok) {}
  bool BeginSourceFileAction(CompilerInstance &CI) override {
    CI.getPreprocessor().addPPCallbacks(std::make_unique<ManagedVariables>(
        CI.getSourceManager(), CI.getDiagnostics()));
    CI.getPreprocessor().addPPCallbacks(
        recordFiles(CI.getSourceManager(), Files));
    CI.getPreprocessor().addPPCallbacks(createUnsupportedIncludeChecker(
        CI.getSourceManager(), CI.getDiagnostics()));
    return true;
  }
  std::unique_ptr<ASTConsumer> CreateASTConsumer(CompilerInstance &,
                                                 StringRef) override {
    return std::make_unique<RewriteConsumer>(Opts, InputName, Files, Result,
                                             Ok);
  }

private:
  const HostRewriteOptions &Opts;
  StringRef InputName;
  FileRecord Files;
  HostRewriteResult &Result;
  bool &Ok;
};

} // namespace

llvm::Expected<HostRewriteResult>
rewriteHostSource(StringRef Path, const HostRewriteOptions &Opts,
                  llvm::raw_ostream &DiagOS) {
  auto Fail = [] {
    return diagnosedError("host rewriting failed");
  };
  llvm::Expected<SourceLanguage> Lang = languageOf(Path);
  if (!Lang || *Lang != SourceLanguage::CUDA) {
    if (!Lang)
      llvm::consumeError(Lang.takeError());
    DiagOS << "cleave: error: " << Path
           << ": the host rewriter takes CUDA (.cu) files\n";
    return Fail();
  }
  if (llvm::Error E = checkSourceFile(Path, DiagOS))
    return std::move(E);

  ClangDiagnostics Diags(DiagOS, Opts.Parse.ColorDiagnostics);
  std::shared_ptr<CompilerInvocation> Invocation = createClangInvocation(
      Path, SourceLanguage::CUDA, CudaSide::Host, Opts.Parse, Diags, DiagOS);
  if (!Invocation)
    return Fail();
  // The device compilation of the same file reports its warnings; the host
  // parse reports only errors, so nothing is said twice.
  Invocation->getDiagnosticOpts().IgnoreWarnings = true;

  CompilerInstance Clang;
  Clang.setInvocation(std::move(Invocation));
  Clang.createDiagnostics(Diags.Printer.get(), /*ShouldOwnClient=*/false);
  if (!Clang.hasDiagnostics())
    return Fail();
  useLaunchSyntaxFileSystem(Clang);
  HostRewriteResult Result;
  bool Ok = false;
  RewriteAction Action(Opts, Path, Result, Ok);
  if (!Clang.ExecuteAction(Action) || !Ok)
    return Fail();
  return std::move(Result);
}

llvm::Error checkRegistrations(const HostRewriteResult &R,
                               const llvm::Module &Device,
                               llvm::raw_ostream &DiagOS) {
  unsigned Missing = 0;
  for (const Registration &Reg : R.Registrations) {
    bool Found;
    if (Reg.K == Registration::Kernel) {
      const llvm::Function *F = Device.getFunction(Reg.DeviceName);
      Found = F && !F->isDeclaration();
    } else {
      const llvm::GlobalVariable *GV = Device.getNamedGlobal(Reg.DeviceName);
      // A variable no kernel uses may be gone from the device code; the
      // runtime then reports cudaErrorInvalidSymbol if the program copies
      // to it, so only a variable that exists must be externally visible.
      Found = !GV || !GV->hasLocalLinkage();
      if (!Found) {
        DiagOS << Reg.Location << ": error: static device variable '"
               << Reg.Display
               << "' is not visible to Cleave's runtime: remove 'static'\n";
        ++Missing;
        continue;
      }
    }
    if (!Found) {
      DiagOS << Reg.Location << ": error: "
             << (Reg.K == Registration::Kernel ? "kernel '" : "variable '")
             << Reg.Display << "' is registered as '" << Reg.DeviceName
             << "', which the device code does not define (host and device "
                "names disagree)\n";
      ++Missing;
    }
  }
  if (Missing)
    return diagnosedError("host and device symbols disagree");
  return llvm::Error::success();
}

} // namespace cleave
