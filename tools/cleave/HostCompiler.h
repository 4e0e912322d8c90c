//===- HostCompiler.h - The host C++ compiler a build uses ------*- C++ -*-===//
//
// Part of Cleave's driver. Which host compiler `cleave compile` runs (--cxx,
// $CXX, g++, clang++) and what Cleave's own Clang parses must learn from it
// (its include search directories), so that a .cu file sees the same
// headers in Clang as in the host compiler (docs/driver.md).
//
//===----------------------------------------------------------------------===//
#ifndef CLEAVE_TOOLS_HOSTCOMPILER_H
#define CLEAVE_TOOLS_HOSTCOMPILER_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/Support/Error.h"

#include <string>
#include <vector>

namespace cleave {

struct BuildOptions;

/// The host C++ compiler's command prefix: \p Spec (--cxx), else $CXX (which
/// may carry arguments, as in "ccache g++"), else g++, else clang++-19, else
/// clang++; the program resolved to an absolute path.
llvm::Expected<std::vector<std::string>> findHostCompiler(llvm::StringRef Spec);

/// The host compiler's own `#include <...>` search directories, in its
/// order (what `-E -v` prints); empty when it cannot say. Clang's parses of
/// a .cu file search them after their own (-idirafter), so that headers
/// only the host compiler has (GCC's omp.h) are found there too.
std::vector<std::string> hostSearchDirs(llvm::ArrayRef<std::string> Cxx);

/// Whether \p Args (-Xcompiler arguments) turn on OpenMP in the host
/// compiler (-fopenmp, -fopenmp=<lib>).
bool enablesOpenMP(llvm::ArrayRef<std::string> Args);

/// Gives Clang's parses of B's .cu files the host compiler's view: its
/// include directories (when it is found) and -fopenmp when B's host
/// compiler options have it.
void useHostCompilerView(BuildOptions &B);

} // namespace cleave

#endif
