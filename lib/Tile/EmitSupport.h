//===- EmitSupport.h - Source text helpers of the tile emitters -*- C++ -*-===//
//
// Part of Cleave (docs/tile.md). What the wavefront and the stencil
// emitters both need to turn a nest's source into generated code.
//
//===----------------------------------------------------------------------===//
#ifndef CLEAVE_LIB_TILE_EMITSUPPORT_H
#define CLEAVE_LIB_TILE_EMITSUPPORT_H

#include "cleave/Tile/Nest.h"

#include "clang/AST/ASTContext.h"
#include "clang/AST/Stmt.h"

#include <string>

namespace cleave::tile {

/// The canonical spelling of \p T, without `struct`/`enum` keywords.
std::string typeText(clang::QualType T, clang::ASTContext &Ctx);

/// Just past the statement, its `;` included.
clang::SourceLocation statementEnd(const clang::Stmt *S,
                                   const clang::SourceManager &SM,
                                   const clang::LangOptions &LO);

/// The statement's source text, its `;` included.
std::string sourceText(const clang::Stmt *S, clang::ASTContext &Ctx);

/// Text with every non-empty line indented by two more spaces.
std::string indented(llvm::StringRef Text);

/// \p Template with every `@NAME@` replaced by its value in \p Values (a
/// name without a value is left as written).
std::string
fill(llvm::StringRef Template,
     llvm::ArrayRef<std::pair<llvm::StringRef, std::string>> Values);

/// The generated host code's copy of array \p Name's range to the device
/// (`__cleave_<Name>_dev`, set by its span's toDevice(); `__cleave_ok`
/// false when that fails), and the device memory's release.
std::string deviceCopyText(llvm::StringRef Name);
std::string deviceFreeText(llvm::StringRef Name);

/// The generated code's `__cleave_ilo`, `__cleave_ihi`, `__cleave_jlo` and
/// `__cleave_jhi`: the bounds of \p N's domain in `long long`.
std::string boundsText(const Nest &N);

} // namespace cleave::tile

#endif
