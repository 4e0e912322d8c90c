//===- IncludeCopies.h - rewritten copies of the user's files ---*- C++ -*-===//
//
// Part of Cleave's host rewriter. Kernels, device functions, device
// variables and launches may live in any user file the .cu file includes
// (a `.cuh` header, an included `.cu`). The rewriter edits them where they
// are; each user file whose text changed is written as a copy, and every
// user file on the way from the .cu file to it is copied too, its #include
// directives naming the copies (docs/driver.md, "Included files").
//
//===----------------------------------------------------------------------===//
#ifndef CLEAVE_LIB_REWRITE_INCLUDECOPIES_H
#define CLEAVE_LIB_REWRITE_INCLUDECOPIES_H

#include "clang/Basic/FileEntry.h"
#include "clang/Basic/SourceLocation.h"
#include "clang/Lex/PPCallbacks.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"

#include <map>
#include <memory>
#include <string>
#include <vector>

namespace clang {
class Rewriter;
class SourceManager;
} // namespace clang

namespace cleave {

/// An #include directive the host parse handled.
struct Inclusion {
  clang::SourceLocation Hash; ///< the directive's '#'
  clang::SourceLocation End;  ///< past the file name, when written there
  clang::OptionalFileEntryRef File;
  bool System; ///< the included file is a system header
  /// The file as this directive entered it; invalid when the parse skipped
  /// it (an include guard, #pragma once).
  clang::FileID Entered;
};

/// What the preprocessor did with the translation unit's files.
struct FileRecord {
  std::vector<Inclusion> Inclusions;
  /// Every user file entered (a file included twice is entered twice).
  std::vector<clang::FileID> Entered;
};

/// Fills \p Out while the preprocessor runs.
std::unique_ptr<clang::PPCallbacks> recordFiles(clang::SourceManager &SM,
                                                FileRecord &Out);

/// The copies a rewrite needs.
struct CopyPlan {
  /// The copy's path for each entered FileID that is copied: one copy per
  /// inclusion, since a file without an include guard may be rewritten
  /// differently each time it is included.
  std::map<clang::FileID, std::string> CopyOf;
  /// #include directives to respell: [Hash, End) becomes Text.
  struct Redirect {
    clang::SourceLocation Hash, End;
    std::string Text;
  };
  std::vector<Redirect> Redirects;
  /// Why a file that needs a copy cannot have one (with its location).
  std::vector<std::pair<clang::SourceLocation, std::string>> Errors;
};

/// Plans the copies of the user files that \p R edited, and of the user
/// files that include them, in \p CopyDir; the main file is not copied.
/// In a copy, every directive that included a user file names that file by
/// its absolute path (or its copy's), so that the copy can live anywhere.
CopyPlan planCopies(const clang::Rewriter &R, const FileRecord &Files,
                    llvm::StringRef CopyDir);

/// `"text"` as a C string literal.
std::string quoted(llvm::StringRef S);

} // namespace cleave

#endif
