//===- BundleFromIR.h - Test helper: a kernel bundle from inline IR -*- C++ -*-===//
//
// Part of Cleave's unit tests. The bundle tests and cleave-make-test-bundle
// (the runtime tests' bundles) write kernels as NVPTX IR text; this turns
// such a text into the bytes `cleave compile --emit=bundle` would write
// (PTX only, no ptxas), optionally renaming kernels first so that two
// modules can hold the same code under other names. Empty on failure, with the parser's or
// the writer's message on stderr.
//
//===----------------------------------------------------------------------===//
#ifndef CLEAVE_UNITTESTS_BUNDLEFROMIR_H
#define CLEAVE_UNITTESTS_BUNDLEFROMIR_H

#include "cleave/Bundle/BundleWriter.h"

#include "llvm/AsmParser/Parser.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

#include <map>
#include <string>

namespace cleave {
namespace test {

inline std::string
bundleFromIR(const char *IR, const char *SourceName,
             const std::map<std::string, std::string> &Rename = {}) {
  llvm::LLVMContext Ctx;
  llvm::SMDiagnostic Err;
  std::unique_ptr<llvm::Module> M = llvm::parseAssemblyString(IR, Err, Ctx);
  if (!M) {
    Err.print(SourceName, llvm::errs());
    return std::string();
  }
  for (const auto &[From, To] : Rename)
    if (llvm::Function *F = M->getFunction(From))
      F->setName(To);
  M->setSourceFileName(SourceName);
  llvm::Expected<std::string> B = cleave::writeBundle(*M, BundleOptions());
  if (!B) {
    llvm::errs() << llvm::toString(B.takeError()) << "\n";
    return std::string();
  }
  return *B;
}

} // namespace test
} // namespace cleave

#endif
