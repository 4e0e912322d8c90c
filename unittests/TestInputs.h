//===- TestInputs.h - Test helper: files under unittests/Inputs -*- C++ -*-===//
//
// Part of Cleave's unit tests; no LLVM. The IR modules of unittests/Inputs
// (CLEAVE_TEST_INPUT_DIR), and the kernel bundles written from them at build
// time by cleave-make-test-bundle (CLEAVE_TEST_BUNDLE_DIR), which the
// runtime's tests load without linking the compiler.
//
//===----------------------------------------------------------------------===//
#ifndef CLEAVE_UNITTESTS_TESTINPUTS_H
#define CLEAVE_UNITTESTS_TESTINPUTS_H

#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>

namespace cleave {
namespace test {

/// The bytes of \p Path; empty, with a message on stderr, when unreadable.
inline std::string readTestFile(const std::string &Path) {
  std::ifstream F(Path, std::ios::binary);
  std::ostringstream S;
  S << F.rdbuf();
  if (!F || S.str().empty()) {
    std::fprintf(stderr, "cannot read %s\n", Path.c_str());
    return std::string();
  }
  return S.str();
}

#ifdef CLEAVE_TEST_BUNDLE_DIR
/// The bundle \p Name (e.g. "engine_test"), as unittests/CMakeLists.txt
/// writes it.
inline std::string testBundle(const char *Name) {
  return readTestFile(std::string(CLEAVE_TEST_BUNDLE_DIR) + "/" + Name +
                      ".bundle");
}
#endif

#ifdef CLEAVE_TEST_INPUT_DIR
/// The text of unittests/Inputs/\p Name.
inline std::string testInput(const char *Name) {
  return readTestFile(std::string(CLEAVE_TEST_INPUT_DIR) + "/" + Name);
}
#endif

} // namespace test
} // namespace cleave

#endif
