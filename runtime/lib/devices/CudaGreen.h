//===- CudaGreen.h - A GPU's SMs split by green contexts --------*- C++ -*-===//
//
// Part of Cleave's runtime (no LLVM). Private to runtime/lib/devices. The
// co-scheduler may run a pair of kernels on a split of a GPU's SMs
// (docs/coschedule.md, "SM partitions") through green contexts of the CUDA
// 12.4+ driver API: the device's SM resource is split in groups of its
// minimum partition size (cuDevSmResourceSplitByCount), the first N / size
// groups make one green context, the other groups and the remainder the
// other (cuDevResourceGenerateDesc, cuGreenCtxCreate), each with a stream
// (cuGreenCtxStreamCreate). Kernels of the primary context's modules
// launched on those streams run on those SMs only.
//
//===----------------------------------------------------------------------===//
#ifndef CLEAVE_RT_LIB_DEVICES_CUDAGREEN_H
#define CLEAVE_RT_LIB_DEVICES_CUDAGREEN_H

#include "CudaDriver.h"

#include <map>
#include <mutex>
#include <string>

namespace cleave {
namespace rt {

class GreenPartitions {
public:
  GreenPartitions(const CudaDriver &D, CUdevice Dev) : Drv(D), Dev(Dev) {}
  /// Destroys the streams, then the green contexts (the caller makes the
  /// device's context current first).
  ~GreenPartitions();
  GreenPartitions(const GreenPartitions &) = delete;
  GreenPartitions &operator=(const GreenPartitions &) = delete;

  /// The SMs a partition is a multiple of (the device's minimum partition
  /// size); 0, with why, when the driver has no green contexts, the device
  /// cannot be split, or a kernel of a module of the current (primary)
  /// context fails on a split's streams (an empty kernel is launched on
  /// both sides of the smallest split once, to know before a program's
  /// launch would fail). Asked once; later calls give the first answer.
  unsigned granularity(std::string &Why);
  /// The streams of the split of \p Sms SMs and the rest, made once.
  Result streams(unsigned Sms, CUstream &First, CUstream &Rest);

private:
  struct Split {
    CUgreenCtx Ctx[2] = {nullptr, nullptr};
    CUstream Stream[2] = {nullptr, nullptr};
  };
  Result fail(CUresult R, const char *What) const;
  Result make(unsigned Sms, Split &S);
  unsigned supported(std::string &Why);
  /// Runs the empty kernel on \p S and waits for it.
  Result probe(CUstream S);

  const CudaDriver &Drv;
  CUdevice Dev;
  std::mutex Mutex;
  std::map<unsigned, Split> Splits;
  bool Asked = false;
  unsigned Granularity = 0;
  std::string Why;
  CUmodule ProbeModule = nullptr;
};

} // namespace rt
} // namespace cleave

#endif
