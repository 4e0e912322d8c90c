//===- GpuCalibrate.h - The GPUs' and host links' profile -------*- C++ -*-===//
//
// Part of cleave-calibrate (no LLVM). Drives libcuda through the runtime's
// dlopen'ed driver table (runtime/lib/devices/CudaDriver.h); the tool never
// links libcuda, so it runs, and profiles the CPU, on a machine without one.
//
//===----------------------------------------------------------------------===//
#ifndef CLEAVE_CALIBRATE_GPUCALIBRATE_H
#define CLEAVE_CALIBRATE_GPUCALIBRATE_H

#include "Profile.h"

#include <string>
#include <vector>

namespace cleave {
namespace calibrate {

struct GpuOptions {
  bool Quick = false;
  /// CUDA ordinals to profile; empty with AllGpus: every GPU.
  std::vector<int> Gpus;
  bool AllGpus = false;
  /// libcuda to dlopen ($CLEAVE_CUDA_LIBRARY or libcuda.so.1).
  std::string Library = "libcuda.so.1";
};

/// What the GPU side found and measured:
///   "cuda":       {"available", "library", "driver_version", ... or "error"}
///   "gpus":       one object per GPU (docs/calibrate.md)
///   "host_links": pinned/pageable bandwidth per GPU, the link states, peers
/// With no driver or no GPU, "cuda" says why and the rest is empty.
Json calibrateGpus(const GpuOptions &O);

/// Number of GPUs the driver reports, or -1 with \p Why when there is no
/// usable driver (used to validate --device before measuring).
int countGpus(const std::string &Library, std::string &Why);

} // namespace calibrate
} // namespace cleave

#endif
