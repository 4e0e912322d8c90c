//===- DeviceReportsLower.h - printf and assert in CPU variants -*- C++ -*-===//
//
// Part of Cleave. A kernel's printf (vprintf) and assert (__assertfail)
// become calls to the runtime's implementations in its CPU variant
// (include/cleave/ABI/CpuReportABI.h, docs/cpu-backend.md).
//
//===----------------------------------------------------------------------===//
#ifndef CLEAVE_TRANSFORMS_DEVICEREPORTSLOWER_H
#define CLEAVE_TRANSFORMS_DEVICEREPORTSLOWER_H

namespace llvm {
class CallBase;
} // namespace llvm

namespace cleave {

/// Replaces \p CB, a call of vprintf or __assertfail (isDeviceReportFunction)
/// in a kernel being lowered for the CPU (NVPTX form), by the runtime call
/// that does the same on the host, and erases it. The assertion's call takes
/// the block and thread ids as special-register reads, which the lowering maps
/// to the CPU variant's ids like any other.
void lowerDeviceReport(llvm::CallBase &CB);

} // namespace cleave

#endif
