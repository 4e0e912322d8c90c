//===- EmitSupport.cpp - Source text helpers of the tile emitters ---------===//
//
// Part of Cleave (docs/tile.md).
//
//===----------------------------------------------------------------------===//
#include "EmitSupport.h"

#include "clang/Lex/Lexer.h"
#include "llvm/Support/FormatVariadic.h"

using namespace clang;

namespace cleave::tile {

std::string typeText(QualType T, ASTContext &Ctx) {
  PrintingPolicy P(Ctx.getLangOpts());
  P.SuppressTagKeyword = true;
  return T.getCanonicalType().getAsString(P);
}

SourceLocation statementEnd(const Stmt *S, const SourceManager &SM,
                            const LangOptions &LO) {
  if (const auto *CS = dyn_cast<CompoundStmt>(S))
    return Lexer::getLocForEndOfToken(CS->getRBracLoc(), 0, SM, LO);
  SourceLocation Semi = Lexer::findLocationAfterToken(
      S->getEndLoc(), tok::semi, SM, LO, /*SkipTrailingWhitespace=*/false);
  return Semi.isValid() ? Semi
                        : Lexer::getLocForEndOfToken(S->getEndLoc(), 0, SM, LO);
}

std::string sourceText(const Stmt *S, ASTContext &Ctx) {
  const SourceManager &SM = Ctx.getSourceManager();
  return Lexer::getSourceText(
             CharSourceRange::getCharRange(
                 S->getBeginLoc(), statementEnd(S, SM, Ctx.getLangOpts())),
             SM, Ctx.getLangOpts())
      .str();
}

std::string indented(StringRef Text) {
  std::string Out;
  while (!Text.empty()) {
    auto [Line, Rest] = Text.split('\n');
    if (!Line.empty())
      Out += "  ";
    Out += Line.str();
    if (Text.size() > Line.size())
      Out += "\n";
    Text = Rest;
  }
  return Out;
}

std::string fill(StringRef Template,
                 ArrayRef<std::pair<StringRef, std::string>> Values) {
  std::string Out;
  while (!Template.empty()) {
    size_t At = Template.find('@');
    Out += Template.substr(0, At).str();
    if (At == StringRef::npos)
      break;
    Template = Template.drop_front(At + 1);
    size_t End = Template.find('@');
    const std::string *Value = nullptr;
    if (End != StringRef::npos)
      for (const auto &[Name, V] : Values)
        if (Template.substr(0, End) == Name)
          Value = &V;
    if (!Value) {
      Out += '@';
      continue;
    }
    Out += *Value;
    Template = Template.drop_front(End + 1);
  }
  return Out;
}

std::string boundsText(const Nest &N) {
  return "  const long long __cleave_ilo = " + N.Outer.Lower.str() +
         ", __cleave_ihi = " + N.Outer.Upper.str() +
         ";\n  const long long __cleave_jlo = " + N.Inner.Lower.str() +
         ", __cleave_jhi = " + N.Inner.Upper.str() + ";\n";
}

std::string deviceCopyText(llvm::StringRef Name) {
  return llvm::formatv("  char *__cleave_{0}_dev = nullptr;\n"
                       "  __cleave_ok = __cleave_ok && "
                       "__cleave_{0}_span.toDevice({0}, &__cleave_{0}_dev);\n",
                       Name)
      .str();
}

std::string deviceFreeText(llvm::StringRef Name) {
  return ("  cudaFree(__cleave_" + Name + "_dev);\n").str();
}

} // namespace cleave::tile
