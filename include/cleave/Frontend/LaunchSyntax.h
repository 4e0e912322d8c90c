//===- LaunchSyntax.h - launch chevrons written with spaces ------*- C++
//-*-===//
//
// Part of Cleave. nvcc accepts `k << < grid, block >> > (args)`; Clang's
// lexer makes `<<<` and `>>>` one token only when they are written without
// spaces. Cleave respells such launches in the text Clang reads, for the
// device compile and the host parse alike, keeping every line and column
// where it was so that diagnostics still point at the user's text.
//
//===----------------------------------------------------------------------===//
#ifndef CLEAVE_FRONTEND_LAUNCHSYNTAX_H
#define CLEAVE_FRONTEND_LAUNCHSYNTAX_H

#include "llvm/ADT/IntrusiveRefCntPtr.h"
#include "llvm/ADT/StringRef.h"

#include <optional>
#include <string>

namespace llvm::vfs {
class FileSystem;
} // namespace llvm::vfs

namespace clang {
class CompilerInstance;
} // namespace clang

namespace cleave {

/// \p Text with every launch whose chevrons are split by whitespace
/// (`<< <`, `< <<`, `< < <` and their `>` counterparts, before the
/// argument list's `(`) respelled `<<<`/`>>>`, the whitespace moved after
/// them: the same length, the same lines, the same columns after each
/// chevron group. Nothing else changes: shifts, template argument lists
/// (`a<b<c>> > d`, `vector<vector<int> >`) and `operator<< <T>` are not
/// launches. std::nullopt when there is nothing to respell.
std::optional<std::string> respellLaunchChevrons(llvm::StringRef Text);

/// A file system that serves every file through respellLaunchChevrons.
llvm::IntrusiveRefCntPtr<llvm::vfs::FileSystem> createLaunchSyntaxFileSystem(
    llvm::IntrusiveRefCntPtr<llvm::vfs::FileSystem> Base);

/// Gives \p CI (its invocation and diagnostics set) a file manager that reads
/// through createLaunchSyntaxFileSystem; call before ExecuteAction.
void useLaunchSyntaxFileSystem(clang::CompilerInstance &CI);

} // namespace cleave

#endif
