//===- DeviceReports.h - CUDA's device printf and assert --------*- C++ -*-===//
//
// Part of Cleave. Clang lowers a kernel's printf to vprintf(fmt, args) and
// assert to __assertfail(msg, file, line, func, char_size), declarations the
// CUDA driver implements. They only report: kernel legality lets them split
// and run on the CPU, footprints know they read nothing of the launch's
// buffers, and the CPU lowering calls the runtime's implementations
// (DeviceReportsLower.h, include/cleave/ABI/CpuReportABI.h).
//
//===----------------------------------------------------------------------===//
#ifndef CLEAVE_ANALYSIS_DEVICEREPORTS_H
#define CLEAVE_ANALYSIS_DEVICEREPORTS_H

namespace llvm {
class Function;
} // namespace llvm

namespace cleave {

/// Whether \p F is the declaration of vprintf or __assertfail with CUDA's
/// signature.
bool isDeviceReportFunction(const llvm::Function &F);

} // namespace cleave

#endif
