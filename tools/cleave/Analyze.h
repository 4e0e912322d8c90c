//===- Analyze.h - `cleave analyze`: predicted kernel times -----*- C++ -*-===//
//
// Part of Cleave's driver (docs/analyze.md).
//
//===----------------------------------------------------------------------===//
#ifndef CLEAVE_TOOLS_ANALYZE_H
#define CLEAVE_TOOLS_ANALYZE_H

#include "llvm/ADT/ArrayRef.h"

#include <string>

namespace cleave {

/// Whether the command line named the `analyze` subcommand.
bool analyzeRequested();

/// Runs `cleave analyze` with its parsed options; \p ProgramArgs are the
/// arguments after `--`, passed to the program. Returns the exit code.
int runAnalyze(llvm::ArrayRef<std::string> ProgramArgs);

} // namespace cleave

#endif
