//===- Demangle.h - Kernel names as people write them -----------*- C++ -*-===//
//
// Part of Cleave's runtime (no LLVM); internal. The runtime does not link
// LLVM's demangler: the C++ ABI's (libstdc++ or libc++) does the same for
// the Itanium names that CUDA kernels get.
//
//===----------------------------------------------------------------------===//
#ifndef CLEAVE_RT_SUPPORT_DEMANGLE_H
#define CLEAVE_RT_SUPPORT_DEMANGLE_H

#include <string>
#include <string_view>

namespace cleave {
namespace rt {

/// \p Name demangled (`matmulNaive(float const*, float const*, float*,
/// int)`), or \p Name itself when it is not a mangled C++ name (an
/// `extern "C"` kernel) or does not demangle.
std::string demangle(std::string_view Name);

/// How logs name a kernel: the demangled name followed by the mangled one
/// in brackets (`vecadd(float const*, int) [_Z6vecaddPKfi]`), which is what
/// tools such as nsys, cuobjdump and the bundle show; just the name when it
/// is not mangled.
std::string displayName(std::string_view Name);

} // namespace rt
} // namespace cleave

#endif
