//===- CubinInfo.h - A kernel's resources read from a cubin -----*- C++ -*-===//
//
// Part of Cleave's runtime (no LLVM). What ptxas decided for a kernel --
// registers per thread, the stack frame -- read from the cubin a bundle
// carries (docs/bundle.md), so that cudaFuncGetAttributes and the
// occupancy calculator know them without a GPU. A cubin is an ELF64 file;
// ptxas records per-kernel facts in its `.nv.info` section as a list of
// (format, attribute, size, value) entries, the register count as
// attribute 0x2f and the frame size as 0x11, each keyed by the kernel's
// symbol index (what cuobjdump --dump-resource-usage reports).
//
//===----------------------------------------------------------------------===//
#ifndef CLEAVE_RT_CUBININFO_H
#define CLEAVE_RT_CUBININFO_H

#include <cstdint>
#include <string_view>

namespace cleave {
namespace rt {

struct CubinKernelResources {
  unsigned Registers = 0;  ///< per thread
  uint64_t FrameBytes = 0; ///< local memory (stack frame) per thread
};

/// The resources of the kernel whose symbol is \p Entry in \p Cubin; false
/// when the image is not a cubin this reader understands or does not
/// record the kernel's registers.
bool readCubinKernelResources(std::string_view Cubin, std::string_view Entry,
                              CubinKernelResources &Out);

} // namespace rt
} // namespace cleave

#endif
