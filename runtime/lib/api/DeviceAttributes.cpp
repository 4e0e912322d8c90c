//===- DeviceAttributes.cpp - The virtual device's properties -------------===//
//
// Part of Cleave's runtime (no LLVM). cudaGetDeviceProperties and
// cudaDeviceGetAttribute of the one device programs see (docs/runtime-api.md,
// "The one virtual device"). Two kinds of values:
//
//  - what the virtual device is: the limits the runtime enforces at a
//    launch, the SMs programs size grids by, the features it provides or
//    not (managed memory without concurrent access: yes; cooperative
//    launches, textures: none);
//  - what the hardware is (clocks, bus width, L2, PCI ids, ECC, ...): the
//    GPUs' values through the driver (cuDeviceGetAttribute), the smallest
//    over several GPUs (the first GPU's for identities: PCI ids, NUMA
//    nodes), and the host's, or a documented constant, without a GPU.
//
// The attribute numbers of cudaDeviceAttr are the driver's
// CUdevice_attribute numbers, so a GPU is asked with the same value.
//
//===----------------------------------------------------------------------===//
#include "CudaApi.h"

#include <climits>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <unistd.h>

using namespace cleave::rt;
using namespace cleave::rt::api;

namespace {

/// The host CPU's clock in kHz: cpufreq's maximum, else /proc/cpuinfo's
/// "cpu MHz", else 1 GHz (a clock rate of 0 divides programs by zero).
int hostClockKHz() {
  std::ifstream Max("/sys/devices/system/cpu/cpu0/cpufreq/cpuinfo_max_freq");
  long KHz = 0;
  if (Max >> KHz && KHz > 0 && KHz < INT_MAX)
    return int(KHz);
  std::ifstream Info("/proc/cpuinfo");
  std::string Line;
  while (std::getline(Info, Line))
    if (Line.rfind("cpu MHz", 0) == 0) {
      size_t Colon = Line.find(':');
      double MHz = Colon == std::string::npos
                       ? 0
                       : std::strtod(Line.c_str() + Colon + 1, nullptr);
      if (MHz > 0 && MHz < 1e6)
        return int(MHz * 1000);
      break;
    }
  return 1000000;
}

/// The value of a hardware attribute without a GPU: the host's where it
/// has one, else what a GPU without the feature reports.
int hostValue(cudaDeviceAttr A) {
  switch (A) {
  case cudaDevAttrClockRate:
    return hostClockKHz();
  case cudaDevAttrL2CacheSize: {
    long L2 = sysconf(_SC_LEVEL2_CACHE_SIZE);
    return L2 > 0 && L2 < INT_MAX ? int(L2) : 0;
  }
  case cudaDevAttrSingleToDoublePrecisionPerfRatio:
    return 2; // vector units do half as many doubles as floats
  case cudaDevAttrMemSyncDomainCount:
    return 1;
  case cudaDevAttrNumaId:
  case cudaDevAttrHostNumaId:
    return -1; // CUDA's "no NUMA node"
  default:
    return 0; // memory clock, bus width, PCI ids, ECC, TCC, MPS, ...
  }
}

/// How the GPUs' values of a hardware attribute make the virtual device's.
enum class Merge { None, Min, First };

Merge hardwareMerge(cudaDeviceAttr A) {
  switch (A) {
  case cudaDevAttrClockRate:
  case cudaDevAttrMemoryClockRate:
  case cudaDevAttrGlobalMemoryBusWidth:
  case cudaDevAttrL2CacheSize:
  case cudaDevAttrEccEnabled:
  case cudaDevAttrKernelExecTimeout:
  case cudaDevAttrTccDriver:
  case cudaDevAttrIntegrated:
  case cudaDevAttrSingleToDoublePrecisionPerfRatio:
  case cudaDevAttrMemSyncDomainCount:
  case cudaDevAttrMpsEnabled:
    return Merge::Min;
  case cudaDevAttrPciBusId:
  case cudaDevAttrPciDeviceId:
  case cudaDevAttrPciDomainId:
  case cudaDevAttrGpuPciDeviceId:
  case cudaDevAttrGpuPciSubsystemId:
  case cudaDevAttrNumaConfig:
  case cudaDevAttrNumaId:
  case cudaDevAttrHostNumaId:
    return Merge::First;
  default:
    return Merge::None;
  }
}

int hardware(Runtime &RT, cudaDeviceAttr A) {
  return hardwareAttribute(RT.registry().devices(), A);
}

/// The virtual device's limits (threads, grid, shared memory, registers,
/// alignments), as fillProperties() reports them.
bool virtualLimit(const cudaDeviceProp &P, cudaDeviceAttr A, int &V) {
  switch (A) {
  case cudaDevAttrMaxThreadsPerBlock:
    V = P.maxThreadsPerBlock;
    return true;
  case cudaDevAttrMaxBlockDimX:
    V = P.maxThreadsDim[0];
    return true;
  case cudaDevAttrMaxBlockDimY:
    V = P.maxThreadsDim[1];
    return true;
  case cudaDevAttrMaxBlockDimZ:
    V = P.maxThreadsDim[2];
    return true;
  case cudaDevAttrMaxGridDimX:
    V = P.maxGridSize[0];
    return true;
  case cudaDevAttrMaxGridDimY:
    V = P.maxGridSize[1];
    return true;
  case cudaDevAttrMaxGridDimZ:
    V = P.maxGridSize[2];
    return true;
  case cudaDevAttrMaxSharedMemoryPerBlock:
    V = static_cast<int>(P.sharedMemPerBlock);
    return true;
  case cudaDevAttrMaxSharedMemoryPerBlockOptin:
    V = static_cast<int>(P.sharedMemPerBlockOptin);
    return true;
  case cudaDevAttrMaxSharedMemoryPerMultiprocessor:
    V = static_cast<int>(P.sharedMemPerMultiprocessor);
    return true;
  case cudaDevAttrReservedSharedMemoryPerBlock:
    V = static_cast<int>(P.reservedSharedMemPerBlock);
    return true;
  case cudaDevAttrTotalConstantMemory:
    V = static_cast<int>(P.totalConstMem);
    return true;
  case cudaDevAttrWarpSize:
    V = P.warpSize;
    return true;
  case cudaDevAttrMaxPitch:
    V = static_cast<int>(P.memPitch);
    return true;
  case cudaDevAttrMaxRegistersPerBlock:
    V = P.regsPerBlock;
    return true;
  case cudaDevAttrMaxRegistersPerMultiprocessor:
    V = P.regsPerMultiprocessor;
    return true;
  case cudaDevAttrMultiProcessorCount:
    V = P.multiProcessorCount;
    return true;
  case cudaDevAttrComputeCapabilityMajor:
    V = P.major;
    return true;
  case cudaDevAttrComputeCapabilityMinor:
    V = P.minor;
    return true;
  case cudaDevAttrMaxThreadsPerMultiProcessor:
    V = P.maxThreadsPerMultiProcessor;
    return true;
  case cudaDevAttrMaxBlocksPerMultiprocessor:
    V = P.maxBlocksPerMultiProcessor;
    return true;
  case cudaDevAttrTextureAlignment:
    V = static_cast<int>(P.textureAlignment);
    return true;
  case cudaDevAttrTexturePitchAlignment:
    V = static_cast<int>(P.texturePitchAlignment);
    return true;
  default:
    return false;
  }
}

/// The features the virtual device provides, as fillProperties() reports
/// them.
bool virtualFeature(const cudaDeviceProp &P, cudaDeviceAttr A, int &V) {
  switch (A) {
  case cudaDevAttrConcurrentKernels:
    V = P.concurrentKernels;
    return true;
  case cudaDevAttrAsyncEngineCount:
    V = P.asyncEngineCount;
    return true;
  case cudaDevAttrUnifiedAddressing:
    V = P.unifiedAddressing;
    return true;
  case cudaDevAttrGlobalL1CacheSupported:
    V = P.globalL1CacheSupported;
    return true;
  case cudaDevAttrLocalL1CacheSupported:
    V = P.localL1CacheSupported;
    return true;
  case cudaDevAttrComputePreemptionSupported:
    V = P.computePreemptionSupported;
    return true;
  case cudaDevAttrComputeMode:
    V = cudaComputeModeDefault;
    return true;
  case cudaDevAttrGpuOverlap:
    V = P.asyncEngineCount > 0;
    return true;
  case cudaDevAttrHostRegisterSupported:
    V = P.hostRegisterSupported;
    return true;
  // Managed memory, with the host's access between synchronizations only
  // (docs/runtime.md, "Managed memory").
  case cudaDevAttrManagedMemory:
    V = P.managedMemory;
    return true;
  case cudaDevAttrConcurrentManagedAccess:
    V = P.concurrentManagedAccess;
    return true;
  default:
    return false;
  }
}

/// True for the features the virtual device does not provide: it reports 0
/// for them.
bool unprovidedFeature(cudaDeviceAttr A) {
  switch (A) {
  // Mapped and pageable memory in kernels, concurrent access to managed
  // memory, cooperative and
  // cluster launches, stream priorities, memory pools, IPC, interop, L2
  // persistence and access policies, textures, surfaces and arrays (a
  // program that asks is told there are none; the compiler refuses their
  // use).
  case cudaDevAttrCanMapHostMemory:
  case cudaDevAttrPageableMemoryAccess:
  case cudaDevAttrPageableMemoryAccessUsesHostPageTables:
  case cudaDevAttrDirectManagedMemAccessFromHost:
  case cudaDevAttrCanUseHostPointerForRegisteredMem:
  case cudaDevAttrHostRegisterReadOnlySupported:
  case cudaDevAttrCanFlushRemoteWrites:
  case cudaDevAttrCooperativeLaunch:
  case cudaDevAttrClusterLaunch:
  case cudaDevAttrStreamPrioritiesSupported:
  case cudaDevAttrMemoryPoolsSupported:
  case cudaDevAttrMemoryPoolSupportedHandleTypes:
  case cudaDevAttrHostNumaMemoryPoolsSupported:
  case cudaDevAttrHostMemoryPoolsSupported:
  case cudaDevAttrHostNumaMultinodeIpcSupported:
  case cudaDevAttrIpcEventSupport:
  case cudaDevAttrHostNativeAtomicSupported:
  case cudaDevAttrOnlyPartialHostNativeAtomicSupported:
  case cudaDevAttrIsMultiGpuBoard:
  case cudaDevAttrMultiGpuBoardGroupID:
  case cudaDevAttrMaxPersistingL2CacheSize:
  case cudaDevAttrMaxAccessPolicyWindowSize:
  case cudaDevAttrGPUDirectRDMASupported:
  case cudaDevAttrGPUDirectRDMAFlushWritesOptions:
  case cudaDevAttrGPUDirectRDMAWritesOrdering:
  case cudaDevAttrTimelineSemaphoreInteropSupported:
  case cudaDevAttrD3D12CigSupported:
  case cudaDevAttrVulkanCigSupported:
  case cudaDevAttrSparseCudaArraySupported:
  case cudaDevAttrDeferredMappingCudaArraySupported:
  case cudaDevAttrSurfaceAlignment:
  case cudaDevAttrMaxTexture1DWidth:
  case cudaDevAttrMaxTexture2DWidth:
  case cudaDevAttrMaxTexture2DHeight:
  case cudaDevAttrMaxTexture3DWidth:
  case cudaDevAttrMaxTexture3DHeight:
  case cudaDevAttrMaxTexture3DDepth:
  case cudaDevAttrMaxTexture2DLayeredWidth:
  case cudaDevAttrMaxTexture2DLayeredHeight:
  case cudaDevAttrMaxTexture2DLayeredLayers:
  case cudaDevAttrMaxTexture1DLayeredWidth:
  case cudaDevAttrMaxTexture1DLayeredLayers:
  case cudaDevAttrMaxTexture2DGatherWidth:
  case cudaDevAttrMaxTexture2DGatherHeight:
  case cudaDevAttrMaxTexture3DWidthAlt:
  case cudaDevAttrMaxTexture3DHeightAlt:
  case cudaDevAttrMaxTexture3DDepthAlt:
  case cudaDevAttrMaxTextureCubemapWidth:
  case cudaDevAttrMaxTextureCubemapLayeredWidth:
  case cudaDevAttrMaxTextureCubemapLayeredLayers:
  case cudaDevAttrMaxSurface1DWidth:
  case cudaDevAttrMaxSurface2DWidth:
  case cudaDevAttrMaxSurface2DHeight:
  case cudaDevAttrMaxSurface3DWidth:
  case cudaDevAttrMaxSurface3DHeight:
  case cudaDevAttrMaxSurface3DDepth:
  case cudaDevAttrMaxSurface1DLayeredWidth:
  case cudaDevAttrMaxSurface1DLayeredLayers:
  case cudaDevAttrMaxSurface2DLayeredWidth:
  case cudaDevAttrMaxSurface2DLayeredHeight:
  case cudaDevAttrMaxSurface2DLayeredLayers:
  case cudaDevAttrMaxSurfaceCubemapWidth:
  case cudaDevAttrMaxSurfaceCubemapLayeredWidth:
  case cudaDevAttrMaxSurfaceCubemapLayeredLayers:
  case cudaDevAttrMaxTexture1DLinearWidth:
  case cudaDevAttrMaxTexture2DLinearWidth:
  case cudaDevAttrMaxTexture2DLinearHeight:
  case cudaDevAttrMaxTexture2DLinearPitch:
  case cudaDevAttrMaxTexture2DMipmappedWidth:
  case cudaDevAttrMaxTexture2DMipmappedHeight:
  case cudaDevAttrMaxTexture1DMipmappedWidth:
    return true;
  default:
    return false;
  }
}

/// The attributes that say what Cleave's virtual device is: its limits and
/// features, as fillProperties() reports them.
bool virtualAttribute(const cudaDeviceProp &P, cudaDeviceAttr A, int &V) {
  if (virtualLimit(P, A, V) || virtualFeature(P, A, V))
    return true;
  if (!unprovidedFeature(A))
    return false;
  V = 0;
  return true;
}

} // namespace

namespace cleave {
namespace rt {
namespace api {

/// The properties of the one device programs see: the name lists the
/// devices; SMs are the GPUs' summed (the CPU's worker threads when there
/// is no GPU); memory is the smallest GPU's (a buffer may live on every
/// GPU), or the host's without GPUs; compute capability is the smallest
/// GPU's, 9.0 without GPUs; limits are CUDA's for that compute capability.
void fillProperties(Runtime &RT, cudaDeviceProp &P) {
  std::memset(&P, 0, sizeof(P));
  DeviceRegistry &Reg = RT.registry();
  std::string Name = "Cleave (";
  unsigned GpuSMs = 0, CpuUnits = 0, Gpus = 0;
  uint64_t GpuMem = 0, HostMem = 0;
  int Major = 0, Minor = 0;
  for (size_t I = 0; I < Reg.size(); ++I) {
    const DeviceProperties &D = Reg.device(I).properties();
    Name += (I ? " + " : "") + D.Name;
    if (D.Kind == DeviceKind::Cuda) {
      ++Gpus;
      GpuSMs += D.ComputeUnits;
      if (!GpuMem || D.TotalMemory < GpuMem)
        GpuMem = D.TotalMemory;
      if (!Major || D.ComputeCapabilityMajor < Major ||
          (D.ComputeCapabilityMajor == Major &&
           D.ComputeCapabilityMinor < Minor)) {
        Major = D.ComputeCapabilityMajor;
        Minor = D.ComputeCapabilityMinor;
      }
    } else {
      CpuUnits += D.ComputeUnits;
      if (D.TotalMemory > HostMem)
        HostMem = D.TotalMemory;
    }
  }
  Name += ")";
  std::strncpy(P.name, Name.c_str(), sizeof(P.name) - 1);
  if (!Gpus) {
    Major = 9;
    Minor = 0;
  }
  if (!HostMem) {
    long Pages = sysconf(_SC_PHYS_PAGES), PageSize = sysconf(_SC_PAGESIZE);
    if (Pages > 0 && PageSize > 0)
      HostMem = uint64_t(Pages) * uint64_t(PageSize);
  }
  P.totalGlobalMem = Gpus ? GpuMem : HostMem;
  P.sharedMemPerBlock = StaticSharedLimit;
  P.sharedMemPerBlockOptin = RT.sharedOptinLimit();
  P.sharedMemPerMultiprocessor = RT.sharedOptinLimit() + 1024;
  P.reservedSharedMemPerBlock = 1024;
  P.regsPerBlock = 65536;
  P.regsPerMultiprocessor = 65536;
  P.warpSize = 32;
  P.memPitch = INT_MAX;
  P.maxThreadsPerBlock = 1024;
  P.maxThreadsDim[0] = 1024;
  P.maxThreadsDim[1] = 1024;
  P.maxThreadsDim[2] = 64;
  P.maxGridSize[0] = INT_MAX;
  P.maxGridSize[1] = 65535;
  P.maxGridSize[2] = 65535;
  P.totalConstMem = 64 * 1024;
  P.major = Major;
  P.minor = Minor;
  P.textureAlignment = PitchAlignment;
  P.texturePitchAlignment = 32;
  P.multiProcessorCount = static_cast<int>(Gpus ? GpuSMs : CpuUnits);
  // `cleave analyze` runs the program on the CPU for a GPU profile and tells
  // it that GPU's SM count (docs/analyze.md): grids sized from it are the
  // GPU's.
  if (unsigned SMs = RT.options().AnalyzeSmCount)
    P.multiProcessorCount = static_cast<int>(SMs);
  P.maxThreadsPerMultiProcessor = Major >= 9 || (Major == 8 && Minor == 0)
                                      ? 2048
                                      : (Major == 8 ? 1536 : 2048);
  P.maxBlocksPerMultiProcessor =
      Major >= 9 || (Major == 8 && Minor == 0) ? 32 : (Major == 8 ? 16 : 32);
  P.concurrentKernels = 1;
  P.asyncEngineCount = 2;
  P.unifiedAddressing = 1;
  P.globalL1CacheSupported = 1;
  P.localL1CacheSupported = 1;
  P.computePreemptionSupported = 1;
  P.hostRegisterSupported = 1;
  // Managed memory the host may touch only while no work is outstanding,
  // CUDA's contract on devices without concurrent managed access.
  P.managedMemory = 1;
  P.concurrentManagedAccess = 0;
  // What the GPUs are (the host's values without one).
  P.memoryBusWidth = hardware(RT, cudaDevAttrGlobalMemoryBusWidth);
  P.l2CacheSize = hardware(RT, cudaDevAttrL2CacheSize);
  P.ECCEnabled = hardware(RT, cudaDevAttrEccEnabled);
  P.tccDriver = hardware(RT, cudaDevAttrTccDriver);
  P.integrated = hardware(RT, cudaDevAttrIntegrated);
  P.pciBusID = hardware(RT, cudaDevAttrPciBusId);
  P.pciDeviceID = hardware(RT, cudaDevAttrPciDeviceId);
  P.pciDomainID = hardware(RT, cudaDevAttrPciDomainId);
  P.gpuPciDeviceID = unsigned(hardware(RT, cudaDevAttrGpuPciDeviceId));
  P.gpuPciSubsystemID = unsigned(hardware(RT, cudaDevAttrGpuPciSubsystemId));
  P.deviceNumaConfig = hardware(RT, cudaDevAttrNumaConfig);
  P.deviceNumaId = hardware(RT, cudaDevAttrNumaId);
  P.hostNumaId = hardware(RT, cudaDevAttrHostNumaId);
  P.mpsEnabled = hardware(RT, cudaDevAttrMpsEnabled);
  // Not provided: mapped memory, cooperative launches, IPC, memory
  // pools, clusters, stream priorities, textures and surfaces (all 0).
}

int hardwareAttribute(const std::vector<Device *> &Devices, cudaDeviceAttr A) {
  Merge M = hardwareMerge(A);
  bool Any = false;
  int Out = 0;
  for (Device *D : Devices) {
    int V = 0;
    if (D->kind() != DeviceKind::Cuda || !D->attribute(int(A), V).ok())
      continue;
    if (!Any || V < Out)
      Out = V;
    Any = true;
    if (M == Merge::First)
      break;
  }
  return Any ? Out : hostValue(A);
}

Result deviceAttribute(Runtime &RT, cudaDeviceAttr A, int &Out) {
  if (hardwareMerge(A) != Merge::None) {
    Out = hardware(RT, A);
    return Result::success();
  }
  cudaDeviceProp P;
  fillProperties(RT, P);
  if (!virtualAttribute(P, A, Out))
    return invalid("attribute " + std::to_string(int(A)) +
                   " is not a cudaDeviceAttr");
  return Result::success();
}

} // namespace api
} // namespace rt
} // namespace cleave
