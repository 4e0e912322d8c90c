//===- Diagnosed.h - Errors whose diagnostics are already printed -*- C++ -*-===//
//
// Part of Cleave. The frontend and the host rewriter print Clang's
// diagnostics (with their source locations) as they arise; the error they
// then return only says that they failed. Its type, not its text, tells the
// tools not to print it a second time.
//
//===----------------------------------------------------------------------===//
#ifndef CLEAVE_SUPPORT_DIAGNOSED_H
#define CLEAVE_SUPPORT_DIAGNOSED_H

#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/Twine.h"
#include "llvm/Support/Error.h"

#include <string>

namespace cleave {

/// A failure whose diagnostics have been printed already. Its message is a
/// short summary ("device compilation failed") for logs and tests.
class DiagnosedError : public llvm::ErrorInfo<DiagnosedError> {
public:
  inline static char ID = 0;

  explicit DiagnosedError(std::string Summary) : Summary(std::move(Summary)) {}
  void log(llvm::raw_ostream &OS) const override { OS << Summary; }
  std::error_code convertToErrorCode() const override {
    return llvm::inconvertibleErrorCode();
  }

private:
  std::string Summary;
};

/// A DiagnosedError with \p Summary.
inline llvm::Error diagnosedError(const llvm::Twine &Summary) {
  return llvm::make_error<DiagnosedError>(Summary.str());
}

/// Consumes \p E: a DiagnosedError silently (its diagnostics are out), any
/// other error by passing its message to \p Report.
inline void reportUnlessDiagnosed(
    llvm::Error E, llvm::function_ref<void(const std::string &)> Report) {
  llvm::handleAllErrors(
      std::move(E), [](const DiagnosedError &) {},
      [&](const llvm::ErrorInfoBase &EI) { Report(EI.message()); });
}

} // namespace cleave

#endif
