//===- ReadFile.h - Reading the files a user names --------------*- C++ -*-===//
//
// Part of Cleave's runtime (no LLVM); internal. The runtime reads files that
// environment variables name (device profiles, performance caches): a FIFO
// there would block the program forever and /dev/zero would fill its
// memory, so only regular files are read, and only up to a size bound.
//
//===----------------------------------------------------------------------===//
#ifndef CLEAVE_RT_SUPPORT_READFILE_H
#define CLEAVE_RT_SUPPORT_READFILE_H

#include "cleave/rt/Error.h"

#include <cstdint>
#include <string>

namespace cleave {
namespace rt {

/// More than any profile or performance cache the runtime writes.
constexpr uint64_t MaxConfigFileBytes = uint64_t(64) << 20;

/// The bytes of the regular file \p Path, at most \p MaxBytes of them.
/// InvalidValue, with why, when it cannot be opened (\p Missing is then
/// set when it does not exist), is not a regular file or is larger.
Result readRegularFile(const std::string &Path, uint64_t MaxBytes,
                       std::string &Out, bool *Missing = nullptr);

} // namespace rt
} // namespace cleave

#endif
