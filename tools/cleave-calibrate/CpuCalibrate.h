//===- CpuCalibrate.h - The host CPU's profile ------------------*- C++ -*-===//
//
// Part of cleave-calibrate (no LLVM).
//
//===----------------------------------------------------------------------===//
#ifndef CLEAVE_CALIBRATE_CPUCALIBRATE_H
#define CLEAVE_CALIBRATE_CPUCALIBRATE_H

#include "Profile.h"

namespace cleave {
namespace calibrate {

/// The "cpu" object: model, cores and threads, caches, memory, the triad
/// bandwidth and the fp32 FMA throughput at 1, half and all threads, and an
/// estimate of the core clock.
Json calibrateCpu(bool Quick);

} // namespace calibrate
} // namespace cleave

#endif
