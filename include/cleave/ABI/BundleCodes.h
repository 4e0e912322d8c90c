//===- BundleCodes.h - The enumerations a bundle stores ---------*- C++ -*-===//
//
// Part of Cleave. The numeric codes of the enumerations a kernel bundle
// stores (docs/bundle.md): the compiler's writer encodes them, the runtime's
// reader decodes them and its public types (cleave/rt/Bundle.h) are these.
// Separate from BundleFormat.h so that the runtime's public header gets the
// codes without the byte-level encoders. Plain C++17, no LLVM and no
// runtime headers. Changing a value needs a new bundle::FormatVersion.
//
//===----------------------------------------------------------------------===//
#ifndef CLEAVE_ABI_BUNDLECODES_H
#define CLEAVE_ABI_BUNDLECODES_H

#include <cstdint>

namespace cleave {
namespace bundle {

enum class SourceLanguage : uint8_t { CUDA = 0, OpenCL = 1 };
enum class ParamKind : uint8_t { Scalar = 0, Pointer = 1, ByValue = 2 };
enum class VariantKind : uint8_t {
  Original = 0,
  Partition = 1,
  Merge = 2,
  CPU = 3
};
inline constexpr unsigned NumVariantKinds = 4;
enum class ImageKind : uint8_t { PTX = 0, Cubin = 1 };
enum class VariableSpace : uint8_t { Global = 0, Constant = 1 };

/// "original", "partition", "merge", "cpu"; "?" out of range.
inline constexpr const char *getVariantKindName(VariantKind K) {
  constexpr const char *Names[NumVariantKinds] = {"original", "partition",
                                                  "merge", "cpu"};
  return unsigned(K) < NumVariantKinds ? Names[unsigned(K)] : "?";
}

} // namespace bundle
} // namespace cleave

#endif
