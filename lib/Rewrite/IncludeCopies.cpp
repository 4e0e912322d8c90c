//===- IncludeCopies.cpp - rewritten copies of the user's files -----------===//
//
// Part of Cleave's host rewriter (docs/driver.md, "Included files"). A copy
// is needed by every user file the rewrite edited and, so that the host
// compiler reaches it, by every user file that includes a copied one; the
// .cu file itself is the rewritten source and is never a copy. Directives
// are respelled with absolute paths: a copy lives in the temporary
// directory, where the includer-relative lookup of `#include "x.h"` would
// not find the user's files.
//
//===----------------------------------------------------------------------===//
#include "IncludeCopies.h"

#include "clang/Basic/SourceManager.h"
#include "clang/Lex/Token.h"
#include "clang/Rewrite/Core/Rewriter.h"
#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"

#include <set>

using namespace clang;
using llvm::SmallString;
using llvm::StringRef;

namespace cleave {
namespace {

class FileRecorder : public PPCallbacks {
public:
  FileRecorder(SourceManager &SM, FileRecord &Out) : SM(SM), Out(Out) {}

  void InclusionDirective(SourceLocation Hash, const Token &, StringRef, bool,
                          CharSourceRange FilenameRange,
                          OptionalFileEntryRef File, StringRef, StringRef,
                          const Module *, bool,
                          SrcMgr::CharacteristicKind Kind) override {
    SourceLocation End = FilenameRange.getEnd();
    if (!End.isFileID() || SM.getFileID(End) != SM.getFileID(Hash))
      End = SourceLocation();
    Out.Inclusions.push_back({Hash, End, File, isSystem(Kind), FileID()});
  }

  void FileChanged(SourceLocation Loc, FileChangeReason Reason,
                   SrcMgr::CharacteristicKind Kind, FileID) override {
    if (Reason != EnterFile || isSystem(Kind) || !Loc.isFileID())
      return;
    FileID FID = SM.getFileID(Loc);
    OptionalFileEntryRef FE = SM.getFileEntryRefForID(FID);
    if (FID == SM.getMainFileID() || !FE)
      return;
    Out.Entered.push_back(FID);
    // The preprocessor enters a file right after the directive that names it.
    if (!Out.Inclusions.empty()) {
      Inclusion &Last = Out.Inclusions.back();
      if (Last.Entered.isInvalid() && Last.File && *Last.File == *FE)
        Last.Entered = FID;
    }
  }

private:
  SourceManager &SM;
  FileRecord &Out;
};

using UniqueID = llvm::sys::fs::UniqueID;

/// The unique file of a FileID, if it is a file.
std::optional<UniqueID> fileOf(const SourceManager &SM, FileID FID) {
  if (OptionalFileEntryRef FE = SM.getFileEntryRefForID(FID))
    return FE->getUniqueID();
  return std::nullopt;
}

std::string absolutePath(const SourceManager &SM, FileEntryRef FE) {
  SmallString<256> P(FE.getName());
  SM.getFileManager().makeAbsolutePath(P);
  llvm::sys::path::remove_dots(P, /*remove_dot_dot=*/true);
  return std::string(P);
}

/// The end of the directive that starts at Hash, when its file name is not
/// written there (`#include MACRO`): its line's end, unless it continues.
SourceLocation directiveEnd(const SourceManager &SM, SourceLocation Hash) {
  StringRef Buf = SM.getBufferData(SM.getFileID(Hash));
  unsigned Off = SM.getFileOffset(Hash);
  size_t NL = Buf.find('\n', Off);
  if (NL == StringRef::npos)
    NL = Buf.size();
  StringRef Line = Buf.slice(Off, NL).rtrim("\r");
  if (Line.ends_with("\\"))
    return SourceLocation();
  return Hash.getLocWithOffset(Line.size());
}

} // namespace

std::string quoted(StringRef S) {
  std::string Out = "\"";
  for (char C : S) {
    if (C == '\\' || C == '"')
      Out += '\\';
    Out += C;
  }
  return Out + "\"";
}

std::unique_ptr<PPCallbacks> recordFiles(SourceManager &SM, FileRecord &Out) {
  return std::make_unique<FileRecorder>(SM, Out);
}

CopyPlan planCopies(const Rewriter &R, const FileRecord &Files,
                    StringRef CopyDir) {
  const SourceManager &SM = R.getSourceMgr();
  FileID Main = SM.getMainFileID();
  CopyPlan Plan;

  // The files the rewrite edited, then their includers, up to the .cu file.
  std::set<UniqueID> Needs;
  for (auto It = R.buffer_begin(); It != R.buffer_end(); ++It)
    if (It->first != Main)
      if (std::optional<UniqueID> U = fileOf(SM, It->first))
        Needs.insert(*U);
  for (bool Grew = true; Grew;) {
    Grew = false;
    for (const Inclusion &I : Files.Inclusions) {
      if (!I.File || !Needs.count(I.File->getUniqueID()))
        continue;
      FileID From = SM.getFileID(I.Hash);
      if (From == Main)
        continue;
      if (SM.isInSystemHeader(I.Hash)) {
        Plan.Errors.push_back(
            {I.Hash, "system header includes '" + I.File->getName().str() +
                         "', which Cleave rewrites; it cannot rewrite the "
                         "system header: include the file from the program"});
        continue;
      }
      if (std::optional<UniqueID> U = fileOf(SM, From))
        Grew |= Needs.insert(*U).second;
    }
  }

  // One copy per inclusion the parse entered, named after the file, in the
  // order the files were entered; PathOf keeps a file's first copy.
  std::map<UniqueID, std::string> PathOf;
  llvm::StringSet<> Taken;
  for (FileID FID : Files.Entered) {
    std::optional<UniqueID> U = fileOf(SM, FID);
    if (!U || !Needs.count(*U))
      continue;
    StringRef Name =
        llvm::sys::path::filename(SM.getFileEntryRefForID(FID)->getName());
    SmallString<256> P;
    for (unsigned K = 0; P.empty() || !Taken.insert(P).second; ++K) {
      P = CopyDir;
      llvm::sys::path::append(P, K ? llvm::Twine(K) + "-" + Name
                                   : llvm::Twine(Name));
    }
    Plan.CopyOf[FID] = std::string(P);
    PathOf.try_emplace(*U, std::string(P));
  }

  // Directives of the .cu file that include a copied file, and every
  // directive of a copy that includes a user file.
  for (const Inclusion &I : Files.Inclusions) {
    FileID From = SM.getFileID(I.Hash);
    bool FromCopy = Plan.CopyOf.count(From);
    if (!I.File || (From != Main && !FromCopy))
      continue;
    // The copy this directive entered; a skipped one (guarded) names the
    // file's first copy, which the host compiler skips the same way.
    auto Own = Plan.CopyOf.find(I.Entered);
    auto First = PathOf.find(I.File->getUniqueID());
    std::string Target;
    if (I.Entered.isValid() && Own != Plan.CopyOf.end())
      Target = Own->second;
    else if (First != PathOf.end())
      Target = First->second;
    else if (FromCopy && !I.System)
      Target = absolutePath(SM, *I.File);
    else
      continue;
    SourceLocation End = I.End.isValid() ? I.End : directiveEnd(SM, I.Hash);
    if (End.isInvalid()) {
      Plan.Errors.push_back(
          {I.Hash, "Cleave cannot respell this #include directive, which "
                   "continues on the next line: write it on one line"});
      continue;
    }
    Plan.Redirects.push_back({I.Hash, End, "#include " + quoted(Target)});
  }
  return Plan;
}

} // namespace cleave
