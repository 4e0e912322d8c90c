//===- UnsupportedFeatures.h - CUDA features Cleave refuses -----*- C++ -*-===//
//
// Part of Cleave's host rewriter. CUDA features that Cleave does not
// support are refused at the line that uses them, with a message that names
// the feature (docs/driver.md, "What is refused"), before any follow-on
// error could mislead:
//   - thrust (#include <thrust/...>): at the include, as a fatal error, so
//     that nothing of thrust's headers is parsed or reported;
//   - texture and surface objects (cudaTextureObject_t, cudaSurfaceObject_t,
//     cudaCreateTextureObject, ...): at each use in the program's code.
// The fetch functions (tex1Dfetch, tex2D, surf2Dwrite, ...) and the
// texture-reference API that CUDA 12 removed (cudaBindTexture, ...) are
// declared unavailable by the compatibility headers (compat/cuda), so that
// Clang refuses them at the call with the same message.
//
//===----------------------------------------------------------------------===//
#ifndef CLEAVE_LIB_REWRITE_UNSUPPORTEDFEATURES_H
#define CLEAVE_LIB_REWRITE_UNSUPPORTEDFEATURES_H

#include <memory>

namespace clang {
class ASTContext;
class DiagnosticsEngine;
class PPCallbacks;
class SourceManager;
} // namespace clang

namespace cleave {

/// Preprocessor callbacks that refuse the includes of unsupported libraries.
std::unique_ptr<clang::PPCallbacks>
createUnsupportedIncludeChecker(clang::SourceManager &SM,
                                clang::DiagnosticsEngine &DE);

/// Reports every use of an unsupported feature in the translation unit's
/// own code (not in system headers); true when there was one.
bool reportUnsupportedFeatures(clang::ASTContext &Ctx);

} // namespace cleave

#endif
