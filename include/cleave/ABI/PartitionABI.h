//===- PartitionABI.h - A partition-ready clone's parameters ----*- C++ -*-===//
//
// Part of Cleave. cleave-partition and cleave-merge append these i32
// parameters to a kernel's clone (docs/transforms.md, "Calling convention");
// the runtime passes their values (cleave/rt/PartitionParams.h computes
// them, and says what each one is). Plain C++17, no LLVM and no runtime
// headers, so that both layers include this one definition.
//
//===----------------------------------------------------------------------===//
#ifndef CLEAVE_ABI_PARTITIONABI_H
#define CLEAVE_ABI_PARTITIONABI_H

namespace cleave {

/// Number of i32 parameters a partition-ready clone takes after its own
/// (and, for a merge clone, after its partial buffers).
inline constexpr unsigned NumPartitionParams = 12;

namespace pp {
/// Positions among the partition parameters, in the clone's order.
enum PartitionParam : unsigned {
  FirstX, ///< the first block's blockIdx.x
  FirstY, ///< the first block's blockIdx.y
  FirstZ, ///< the first block's blockIdx.z
  GridX,  ///< the original launch's gridDim.x
  GridY,
  GridZ,
  MagicX, ///< FastDivisor of gridDim.x
  ShiftX,
  IncX,
  MagicY, ///< FastDivisor of gridDim.y
  ShiftY,
  IncY,
};
} // namespace pp

static_assert(pp::IncY + 1 == NumPartitionParams,
              "one position per partition parameter");

/// The names the clone gives its partition parameters, in order.
inline constexpr const char *PartitionParamNames[NumPartitionParams] = {
    "cleave.first.x", "cleave.first.y", "cleave.first.z", "cleave.grid.x",
    "cleave.grid.y",  "cleave.grid.z",  "cleave.magic.x", "cleave.shift.x",
    "cleave.inc.x",   "cleave.magic.y", "cleave.shift.y", "cleave.inc.y"};

} // namespace cleave

#endif
