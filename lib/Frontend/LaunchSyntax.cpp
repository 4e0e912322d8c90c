//===- LaunchSyntax.cpp - launch chevrons written with spaces -------------===//
//
// Part of Cleave. A launch's chevrons are found with Clang's raw lexer (so
// comments, strings and character literals are never touched) and respelled
// in place. A run of `<`/`<<` tokens adding up to three, with only
// whitespace between them, is never valid C++ except in `operator<< <T>`:
// it can only open a launch. Its closer is the first run of `>`/`>>` tokens
// adding up to three, outside parentheses, brackets and braces, that is
// followed by the argument list's `(`; without one, the text is left alone.
//
//===----------------------------------------------------------------------===//
#include "cleave/Frontend/LaunchSyntax.h"

#include "clang/Basic/LangOptions.h"
#include "clang/Frontend/CompilerInstance.h"
#include "clang/Frontend/CompilerInvocation.h"
#include "clang/Lex/Lexer.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/VirtualFileSystem.h"

#include <vector>

using namespace llvm;

namespace cleave {
namespace {

struct RawToken {
  clang::tok::TokenKind Kind;
  size_t Begin, End;
};

std::vector<RawToken> lexRaw(StringRef Text) {
  clang::LangOptions LO;
  LO.CPlusPlus = LO.CPlusPlus11 = LO.CPlusPlus14 = LO.CPlusPlus17 = true;
  LO.CUDA = true; // `<<<` and `>>>` are one token
  LO.Digraphs = true;
  clang::Lexer Lex(clang::SourceLocation(), LO, Text.begin(), Text.begin(),
                   Text.end());
  std::vector<RawToken> Toks;
  clang::Token Tok;
  while (true) {
    Lex.LexFromRawLexer(Tok);
    if (Tok.is(clang::tok::eof))
      break;
    size_t End = Lex.getBufferLocation() - Text.begin();
    Toks.push_back({Tok.getKind(), End - Tok.getLength(), End});
  }
  return Toks;
}

/// How many chevrons \p C a token spells: `<<` is two `<`.
unsigned chevrons(clang::tok::TokenKind K, char C) {
  using namespace clang::tok;
  if (C == '<')
    return K == less ? 1 : K == lessless ? 2 : K == lesslessless ? 3 : 0;
  return K == greater                 ? 1
         : K == greatergreater        ? 2
         : K == greatergreatergreater ? 3
                                      : 0;
}

/// The end (one past the last token) of the run of \p C chevron tokens that
/// starts at \p I and adds up to exactly three with only whitespace between
/// them and no chevron right after it; 0 when there is none.
size_t runOfThree(ArrayRef<RawToken> Toks, size_t I, char C, StringRef Text) {
  unsigned Sum = 0;
  size_t J = I;
  for (; J < Toks.size() && Sum < 3; ++J) {
    unsigned N = chevrons(Toks[J].Kind, C);
    if (!N || Sum + N > 3)
      return 0;
    if (J > I && !Text.slice(Toks[J - 1].End, Toks[J].Begin).trim().empty())
      return 0;
    Sum += N;
  }
  if (Sum != 3)
    return 0;
  if (J < Toks.size() && chevrons(Toks[J].Kind, C) &&
      Toks[J].Begin == Toks[J - 1].End)
    return 0;
  return J;
}

/// Respells the chevron run Toks[I, E) of Out as one `<<<`/`>>>` token; the
/// whitespace it held stays, so lines (and, where the run's first or last
/// line has room, columns) do not move.
void respell(std::string &Out, ArrayRef<RawToken> Toks, size_t I, size_t E,
             char C) {
  if (E - I < 2)
    return; // already one token
  size_t B = Toks[I].Begin, End = Toks[E - 1].End;
  std::string Region = Out.substr(B, End - B);
  std::string Blank = Region;
  for (char &Ch : Blank)
    if (Ch == C)
      Ch = ' ';
  std::string Three(3, C);
  size_t FirstNL = Region.find('\n'), LastNL = Region.rfind('\n');
  if (FirstNL == std::string::npos || FirstNL >= 3) {
    Blank.replace(0, 3, Three);
  } else if (Region.size() - LastNL - 1 >= 3) {
    Blank.replace(Blank.size() - 3, 3, Three);
  } else {
    // Neither line has room: the chevrons go first and the whitespace
    // after them; the columns on the run's last line move by the chevrons
    // that were there.
    std::string Rest;
    for (char Ch : Region)
      if (Ch != C)
        Rest += Ch;
    Blank = Three + Rest;
  }
  Out.replace(B, End - B, Blank);
}

/// Quickly rules out text with no spaced chevrons (almost every file).
bool maySpellSpacedChevrons(StringRef Text) {
  auto HasSpacedPair = [&](char C) {
    for (size_t I = Text.find(C); I != StringRef::npos;
         I = Text.find(C, I + 1)) {
      size_t J = I + 1;
      while (J < Text.size() && isSpace(Text[J]))
        ++J;
      if (J > I + 1 && J < Text.size() && Text[J] == C)
        return true;
    }
    return false;
  };
  return HasSpacedPair('<') || (Text.contains("<<<") && HasSpacedPair('>'));
}

class RespelledFile : public vfs::File {
public:
  explicit RespelledFile(std::unique_ptr<vfs::File> Inner)
      : Inner(std::move(Inner)) {}
  ErrorOr<vfs::Status> status() override { return Inner->status(); }
  ErrorOr<std::string> getName() override { return Inner->getName(); }
  ErrorOr<std::unique_ptr<MemoryBuffer>> getBuffer(const Twine &Name,
                                                   int64_t FileSize,
                                                   bool RequiresNullTerminator,
                                                   bool IsVolatile) override {
    auto Buf =
        Inner->getBuffer(Name, FileSize, RequiresNullTerminator, IsVolatile);
    if (!Buf)
      return Buf;
    std::optional<std::string> Text =
        respellLaunchChevrons((*Buf)->getBuffer());
    if (!Text)
      return Buf;
    return MemoryBuffer::getMemBufferCopy(*Text, (*Buf)->getBufferIdentifier());
  }
  std::error_code close() override { return Inner->close(); }

private:
  std::unique_ptr<vfs::File> Inner;
};

class LaunchSyntaxFileSystem : public vfs::ProxyFileSystem {
public:
  using ProxyFileSystem::ProxyFileSystem;
  ErrorOr<std::unique_ptr<vfs::File>>
  openFileForRead(const Twine &Path) override {
    auto F = ProxyFileSystem::openFileForRead(Path);
    if (!F)
      return F;
    return std::unique_ptr<vfs::File>(
        std::make_unique<RespelledFile>(std::move(*F)));
  }
};

} // namespace

std::optional<std::string> respellLaunchChevrons(StringRef Text) {
  if (!maySpellSpacedChevrons(Text))
    return std::nullopt;
  std::vector<RawToken> Toks = lexRaw(Text);
  std::string Out = Text.str();
  bool Changed = false;
  using namespace clang::tok;
  for (size_t I = 0; I < Toks.size(); ++I) {
    if (I > 0 && chevrons(Toks[I - 1].Kind, '<') &&
        Toks[I - 1].End == Toks[I].Begin)
      continue; // inside a longer run
    size_t OpenEnd = runOfThree(Toks, I, '<', Text);
    if (!OpenEnd)
      continue;
    // `operator<< <T>` names an operator template.
    if (I > 0 && Toks[I - 1].Kind == raw_identifier &&
        Text.slice(Toks[I - 1].Begin, Toks[I - 1].End) == "operator")
      continue;
    size_t CloseBegin = 0, CloseEnd = 0;
    int Depth = 0;
    for (size_t J = OpenEnd; J < Toks.size() && !CloseEnd; ++J) {
      TokenKind K = Toks[J].Kind;
      if (K == l_paren || K == l_square || K == l_brace) {
        ++Depth;
      } else if (K == r_paren || K == r_square || K == r_brace) {
        if (--Depth < 0)
          break;
      } else if (Depth == 0 && K == semi) {
        break;
      } else if (Depth == 0 && chevrons(K, '>')) {
        size_t E = runOfThree(Toks, J, '>', Text);
        if (E && E < Toks.size() && Toks[E].Kind == l_paren) {
          CloseBegin = J;
          CloseEnd = E;
        }
      }
    }
    if (!CloseEnd)
      continue;
    Changed |= OpenEnd - I > 1 || CloseEnd - CloseBegin > 1;
    respell(Out, Toks, I, OpenEnd, '<');
    respell(Out, Toks, CloseBegin, CloseEnd, '>');
    I = CloseEnd - 1;
  }
  if (!Changed)
    return std::nullopt;
  return Out;
}

IntrusiveRefCntPtr<vfs::FileSystem>
createLaunchSyntaxFileSystem(IntrusiveRefCntPtr<vfs::FileSystem> Base) {
  return makeIntrusiveRefCnt<LaunchSyntaxFileSystem>(std::move(Base));
}

void useLaunchSyntaxFileSystem(clang::CompilerInstance &CI) {
  CI.createFileManager(clang::createVFSFromCompilerInvocation(
      CI.getInvocation(), CI.getDiagnostics(),
      createLaunchSyntaxFileSystem(vfs::getRealFileSystem())));
}

} // namespace cleave
