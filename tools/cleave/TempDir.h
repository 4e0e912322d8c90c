//===- TempDir.h - The build's temporary directory --------------*- C++ -*-===//
//
// Part of Cleave's driver. `cleave compile` keeps device and host objects in
// one temporary directory (cleave-XXXXXX under $TMPDIR). It is removed when
// the build ends, whether it succeeds or fails, and also when the build is
// interrupted (SIGINT, SIGTERM, SIGHUP, SIGQUIT) or crashes; --keep-temps
// keeps it and prints its name.
//
//===----------------------------------------------------------------------===//
#ifndef CLEAVE_TOOLS_TEMPDIR_H
#define CLEAVE_TOOLS_TEMPDIR_H

#include "llvm/ADT/StringRef.h"

#include <string>
#include <system_error>

namespace cleave {

class TempDir {
public:
  TempDir() = default;
  TempDir(const TempDir &) = delete;
  TempDir &operator=(const TempDir &) = delete;
  ~TempDir();

  /// Creates the directory (cleave-XXXXXX in the system's temporary
  /// directory) and takes charge of it; it holds files only.
  std::error_code create(bool Keep);
  const std::string &path() const { return Path; }

private:
  std::string Path;
  bool Keep = false;
};

} // namespace cleave

#endif
