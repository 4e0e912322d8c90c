//===- DeviceFactories.h - How the registry makes devices -------*- C++ -*-===//
//
// Part of Cleave's runtime (no LLVM). Private to runtime/lib/devices: the
// constructors of each kind of device, which DeviceRegistry calls.
//
//===----------------------------------------------------------------------===//
#ifndef CLEAVE_RT_LIB_DEVICES_DEVICEFACTORIES_H
#define CLEAVE_RT_LIB_DEVICES_DEVICEFACTORIES_H

#include "cleave/rt/Device.h"

#include <memory>
#include <string>
#include <vector>

namespace cleave {
namespace rt {

/// CPU device number \p Index ("cpu<Index>"). With \p SharesHostMemory its
/// replicas are the buffers' host copies. \p Threads: the CPU executor's
/// worker threads, its compute units (0: the cores).
std::unique_ptr<Device> createCpuDevice(unsigned Index, bool SharesHostMemory,
                                        unsigned Threads);

/// Loads the CUDA driver \p Library (dlopen), runs cuInit and counts the
/// GPUs. Returns the count; \p Why says why it is 0, and \p LoadFailed
/// whether that is because the library itself did not load.
unsigned discoverCudaDevices(const std::string &Library, std::string &Why,
                             bool &LoadFailed);

/// The GPU of CUDA ordinal \p Ordinal, named "gpu<Ordinal>", with its
/// primary context, streams, events and pinned staging buffers. Only after
/// discoverCudaDevices found it. \p PeerCopyKernels: small copies from
/// peer GPUs go by a copy kernel over the link (RegistryOptions).
Result createCudaDevice(int Ordinal, bool PeerCopyKernels,
                        std::unique_ptr<Device> &Out);

/// Enables peer access in both directions between every pair of \p Gpus
/// that cuDeviceCanAccessPeer allows, and records the links.
void enableCudaPeerAccess(const std::vector<Device *> &Gpus);

} // namespace rt
} // namespace cleave

#endif
