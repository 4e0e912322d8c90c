//===- Bundle.h - Kernel bundles: what the compiler hands the runtime -*- C++ -*-===//
//
// Part of Cleave's runtime (no LLVM). A bundle (docs/bundle.md) holds, for
// one device module: the GPU images (PTX, and cubins when ptxas was there),
// the `__device__`/`__constant__` variables, and per kernel its parameters
// and their roles, its legality verdict with reasons, the entry names of its
// variants (original, partition-ready, merge, CPU) or why a variant is
// absent, its serialized footprints (cleave/rt/Footprint.h evaluates them)
// and its static shared memory.
//
// Loading verifies the magic, the format version, the payload size and the
// checksum, and decodes every field within bounds: any input, corrupt or
// truncated or from another version, gives a status with a message, never a
// crash. No exceptions.
//
//===----------------------------------------------------------------------===//
#ifndef CLEAVE_RT_BUNDLE_H
#define CLEAVE_RT_BUNDLE_H

#include "cleave/ABI/BundleCodes.h"
#include "cleave/ABI/CombineOp.h"
#include "cleave/ABI/InstrClass.h"
#include "cleave/ABI/ParamRole.h"

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace cleave {
namespace rt {

/// Why a bundle was refused.
enum class BundleErrc : uint8_t {
  Ok,
  Io,        ///< the file cannot be read
  NotBundle, ///< too short for a header, or wrong magic
  Version,   ///< another format version (or header flags this one lacks)
  Truncated, ///< fewer bytes than the header announces
  Checksum,  ///< the bytes changed since the compiler wrote them
  Malformed, ///< the checksum holds but a field is out of range
};

/// "ok", "io", "not-a-bundle", "version", "truncated", "checksum",
/// "malformed".
const char *getBundleErrcName(BundleErrc E);

struct BundleStatus {
  BundleErrc Code = BundleErrc::Ok;
  std::string Message; ///< one line, says what and where; empty when Ok

  explicit operator bool() const { return Code == BundleErrc::Ok; }
};

/// The format version this runtime reads (and only that one).
uint32_t getBundleFormatVersion();

// The format's enumerations (cleave/ABI/BundleCodes.h).
using bundle::ImageKind;
using bundle::NumVariantKinds;
using bundle::ParamKind;
using bundle::SourceLanguage;
using bundle::VariableSpace;
using bundle::VariantKind;
/// "original", "partition", ...
using bundle::getVariantKindName;
/// The compiler's parameter roles (cleave/ABI/ParamRole.h).
using cleave::getParamRoleName; ///< as print<cleave-param-roles>
using cleave::ParamRole;
/// Instruction classes (cleave/ABI/InstrClass.h).
using cleave::InstrClass;
using cleave::instrClassName;
using cleave::NumInstrClasses;

struct BundleParam {
  ParamKind Kind = ParamKind::Scalar;
  ParamRole Role = ParamRole::NotPointer;
  bool RoleIsGuess = false; ///< the pointer escapes: role is conservative
  uint32_t Size = 0;        ///< bytes of the argument value (pointee for ByValue)
  uint32_t Align = 1;
  /// Whether the kernel may write through this parameter: its role says
  /// so, or the pointer escapes and the role is only a guess.
  bool mayWrite() const {
    return Role == ParamRole::Write || Role == ParamRole::ReadWrite ||
           RoleIsGuess;
  }
};

/// Something that forbids splitting the kernel or running it on the CPU.
struct BundleIssue {
  std::string Kind;     ///< "global-atomic", "inline-asm", ... (docs)
  std::string Detail;   ///< e.g. the instruction or callee
  std::string Location; ///< "file:line:col", empty without debug info
  bool ForbidsSplit = false;
  bool ForbidsCPU = false;
};

/// One variant: its entry point, or why there is none.
struct BundleVariant {
  bool Present = false;
  std::string Entry;    ///< PTX entry (GPU variants) or host symbol (CPU)
  std::string Reason;   ///< when absent: the compiler's remark
  std::string Location; ///< where the reason points, "file:line:col" or empty
  /// The `cleave_cpu_kernel_desc` of this variant's code in the program's
  /// CPU object (cleave/rt/CpuKernelABI.h): the CPU variant's own, and the
  /// merge variant's CPU build; empty when there is none. The runtime looks
  /// descriptors up by these names only.
  std::string CpuDescriptor;
};

/// The operation a combined parameter's atomics apply; each has a
/// byte-pattern identity (cleave/ABI/CombineOp.h).
using cleave::CombineOp;
using cleave::getCombineOpName; ///< "add", "and", ...

/// A parameter the kernel only updates with integer atomics of one
/// combinable operation whose results it never uses (docs/runtime.md,
/// "Combined outputs"): a split gives every device a replica filled with
/// the identity, and the partial results are combined into the original.
struct BundleCombined {
  uint32_t Arg = 0;
  CombineOp Op = CombineOp::Add;
  uint32_t Bytes = 4; ///< element width: 4 or 8
};

struct BundleVariableUse {
  uint32_t Variable = 0; ///< index into Bundle::Variables
  bool Read = false;
  bool Written = false;
};

/// What the co-run model (CoRun.h, docs/coschedule.md) needs of a kernel
/// that the compiler can tell without running it (bundle version 6): a
/// static estimate of one thread's dynamic instructions by class, and the
/// average global memory request's bytes per lane and 32-byte sectors per
/// warp-wide request.
struct BundleCoRun {
  std::array<double, NumInstrClasses> PerThread{};
  double BytesPerLane = 0;
  double SectorsPerRequest = 0;
};

struct BundleKernel {
  std::string Name;        ///< the symbol (mangled for C++)
  std::string DisplayName; ///< demangled
  SourceLanguage Language = SourceLanguage::CUDA;
  std::vector<BundleParam> Params;
  bool CanSplit = false;
  bool CanRunOnCPU = false;
  std::vector<BundleIssue> Issues;
  std::array<BundleVariant, NumVariantKinds> Variants;
  /// The kernel of this bundle that is this one with the block index x and
  /// y swapped (cleave-swap-grid), or empty.
  std::string SwappedTwin;
  /// The inspector (per-item trip counts) and the reorganized variant (items
  /// permuted by a perm array) of cleave-reorganize, both or neither
  /// (docs/reorganize.md); the runtime's reorganization step launches them.
  std::string Inspector;
  std::string Reorganized;
  /// The descriptors of their CPU builds in the program's CPU object, both
  /// or neither (only with the GPU variants).
  std::string InspectorCpu;
  std::string ReorganizedCpu;
  /// The output parameters the merge variant takes a partial buffer for, in
  /// the order of its partial parameters (docs/transforms.md).
  std::vector<uint32_t> MergeOutputs;
  /// In parameter order, each a pointer parameter.
  std::vector<BundleCombined> Combined;
  /// KernelFootprint::serialize() (docs/footprints.md); FootprintProgram
  /// parses it.
  std::string Footprints;
  uint64_t StaticSharedBytes = 0;
  std::vector<BundleVariableUse> Variables;
  /// None in a version-5 bundle, or when the compiler had no estimate.
  std::optional<BundleCoRun> CoRun;

  const BundleVariant &variant(VariantKind K) const {
    return Variants[static_cast<unsigned>(K)];
  }
};

/// A GPU module image holding every kernel and variant of the bundle (one
/// module, so `__device__` variables are shared by all its kernels).
struct BundleImage {
  ImageKind Kind = ImageKind::PTX;
  std::string Arch; ///< "sm_90": the target (PTX) or the cubin's SM
  std::string Data; ///< PTX text or cubin bytes; Data.c_str() is NUL-ended
};

struct BundleVariable {
  std::string Name; ///< the device symbol (cuModuleGetGlobal)
  VariableSpace Space = VariableSpace::Global;
  uint64_t Size = 0;
  std::string CpuSymbol; ///< the CPU object's copy; empty when none
};

class Bundle {
public:
  std::string Producer; ///< e.g. "cleave 0.1.0"
  std::string Source;   ///< the source file the compiler read
  uint32_t Version = 0; ///< the format version it was read from
  std::vector<BundleImage> Images;
  std::vector<BundleVariable> Variables;
  std::vector<BundleKernel> Kernels;

  /// Decodes a bundle from memory; Out is left empty on failure.
  static BundleStatus parse(const void *Data, size_t Size, Bundle &Out);
  /// Reads and decodes a bundle file.
  static BundleStatus load(const char *Path, Bundle &Out);

  /// The kernel named \p Name (its symbol), or null.
  const BundleKernel *findKernel(std::string_view Name) const;
  /// The image of that kind for \p Arch, or null.
  const BundleImage *findImage(ImageKind Kind, std::string_view Arch) const;

  /// A stable, line-based text form of everything except the image bytes
  /// (their kind, arch and size are printed), for tests and logs.
  std::string describe() const;
};

} // namespace rt
} // namespace cleave

#endif
