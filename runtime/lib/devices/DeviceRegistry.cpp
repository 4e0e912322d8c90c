//===- DeviceRegistry.cpp - Which devices the runtime uses ----------------===//
//
// Part of Cleave's runtime (no LLVM). Discovers the CPU and the GPUs and
// applies the CLEAVE_DEVICES selection (Device.h).
//
//===----------------------------------------------------------------------===//
#include "DeviceFactories.h"
#include "../support/Text.h"

#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <set>

namespace cleave {
namespace rt {

/// Parses "gpuN"; false when \p Tok is not of that form.
static bool parseGpuOrdinal(std::string_view Tok, unsigned &N) {
  if (Tok.size() < 4 || Tok.size() > 9 || Tok.substr(0, 3) != "gpu")
    return false;
  N = 0;
  for (char C : Tok.substr(3)) {
    if (!std::isdigit(static_cast<unsigned char>(C)))
      return false;
    N = N * 10 + static_cast<unsigned>(C - '0');
  }
  return true;
}

std::unique_ptr<DeviceRegistry>
DeviceRegistry::fromDevices(std::vector<std::unique_ptr<Device>> Devices) {
  std::unique_ptr<DeviceRegistry> R(new DeviceRegistry());
  R->Devices = std::move(Devices);
  return R;
}

Result DeviceRegistry::create(std::string_view Selection,
                              std::unique_ptr<DeviceRegistry> &Out,
                              const RegistryOptions &Opts) {
  std::string Sel(trim(Selection));
  std::vector<std::string> Tokens;
  for (size_t Pos = 0; Pos <= Sel.size();) {
    size_t End = Sel.find(',', Pos);
    if (End == std::string::npos)
      End = Sel.size();
    std::string_view Tok = trim(std::string_view(Sel).substr(Pos, End - Pos));
    if (!Tok.empty())
      Tokens.emplace_back(Tok);
    Pos = End + 1;
  }
  if (Tokens.empty())
    Tokens.push_back("all");

  std::unique_ptr<DeviceRegistry> Reg(new DeviceRegistry());
  auto Bad = [&](ErrorCode C, const std::string &Why) {
    return Result::error(C, "CLEAVE_DEVICES=" + Sel + ": " + Why);
  };

  // Validate every name before touching the driver.
  bool WantsGpus = false;
  for (const std::string &Tok : Tokens) {
    unsigned N;
    if (Tok == "all" || Tok == "gpu" || parseGpuOrdinal(Tok, N))
      WantsGpus = true;
    else if (Tok != "cpu")
      return Bad(ErrorCode::InvalidDevice,
                 "unknown device '" + Tok +
                     "' (expected a comma-separated list of cpu, gpu, "
                     "gpuN or all)");
  }

  if (WantsGpus) {
    const std::string &Lib = Opts.CudaLibrary;
    bool LoadFailed = false;
    if (Lib == "none")
      Reg->GpuStatus = "GPU discovery disabled";
    else
      Reg->GpusFound = discoverCudaDevices(Lib, Reg->GpuStatus, LoadFailed);
    if (Opts.LibraryMustLoad && LoadFailed)
      return Result::error(ErrorCode::InitializationError,
                           "CLEAVE_CUDA_LIBRARY=" + Lib +
                               ": cannot be loaded: " + Reg->GpuStatus);
  } else {
    Reg->GpuStatus = "no GPU selected";
  }

  auto NoSuchGpu = [&](const std::string &Tok) {
    if (Reg->GpusFound == 0)
      return Bad(ErrorCode::NoDevice,
                 Tok + " is selected but no GPU was found (" +
                     Reg->GpuStatus + ")");
    return Bad(ErrorCode::InvalidDevice,
               "there is no " + Tok + ": " + std::to_string(Reg->GpusFound) +
                   " GPU(s) found, gpu0.." + "gpu" +
                   std::to_string(Reg->GpusFound - 1));
  };

  unsigned NumCpus = 0;
  std::set<unsigned> Gpus;
  std::vector<std::pair<bool, unsigned>> Order; // (is GPU, CPU index / ordinal)
  std::set<unsigned> Explicit;
  auto AddCpu = [&] { Order.push_back({false, NumCpus++}); };
  auto AddAllGpus = [&] {
    for (unsigned G = 0; G < Reg->GpusFound; ++G)
      if (Gpus.insert(G).second)
        Order.push_back({true, G});
  };
  for (const std::string &Tok : Tokens) {
    unsigned N;
    if (Tok == "cpu") {
      AddCpu();
    } else if (Tok == "all") {
      if (NumCpus == 0)
        AddCpu();
      AddAllGpus();
    } else if (Tok == "gpu") {
      if (Reg->GpusFound == 0)
        return NoSuchGpu(Tok);
      AddAllGpus();
    } else if (parseGpuOrdinal(Tok, N)) {
      if (N >= Reg->GpusFound)
        return NoSuchGpu(Tok);
      if (!Gpus.insert(N).second)
        return Bad(ErrorCode::InvalidDevice, Tok + " is selected twice");
      Explicit.insert(N);
      Order.push_back({true, N});
    }
  }

  std::vector<Device *> GpuDevices;
  for (auto [IsGpu, Index] : Order) {
    if (!IsGpu) {
      // The first CPU device works on the host copies themselves; further
      // ones get replica memory of their own (the multi-device path on CI).
      Reg->Devices.push_back(
          createCpuDevice(Index, Index == 0, Opts.CpuThreads));
      continue;
    }
    std::unique_ptr<Device> G;
    Result R =
        createCudaDevice(static_cast<int>(Index), Opts.PeerCopyKernels, G);
    if (!R.ok()) {
      if (Explicit.count(Index))
        return Bad(R.code(), "gpu" + std::to_string(Index) +
                                 " cannot be used: " + R.message());
      // A GPU that only "all" or "gpu" selected is skipped, once, loudly.
      std::fprintf(stderr, "cleave: skipping gpu%u: %s\n", Index,
                   R.message().c_str());
      continue;
    }
    GpuDevices.push_back(G.get());
    Reg->Devices.push_back(std::move(G));
  }
  if (Reg->Devices.empty())
    return Bad(ErrorCode::NoDevice, "no usable device (" + Reg->GpuStatus +
                                        ")");
  enableCudaPeerAccess(GpuDevices);
  Out = std::move(Reg);
  return Result::success();
}

DeviceRegistry::~DeviceRegistry() = default;

std::vector<Device *> DeviceRegistry::devices() const {
  std::vector<Device *> Out;
  for (const auto &D : Devices)
    Out.push_back(D.get());
  return Out;
}

Device *DeviceRegistry::find(std::string_view Name) const {
  for (const auto &D : Devices)
    if (D->name() == Name)
      return D.get();
  return nullptr;
}

std::string DeviceRegistry::describe() const {
  std::string S;
  for (const auto &D : Devices) {
    const DeviceProperties &P = D->properties();
    S += P.Name + ": " + P.Description;
    if (P.Kind == DeviceKind::Cuda) {
      S += ", sm_" + std::to_string(P.ComputeCapabilityMajor) +
           std::to_string(P.ComputeCapabilityMinor) + ", " +
           std::to_string(P.ComputeUnits) + " SMs, " +
           std::to_string(P.TotalMemory >> 20) + " MiB";
      std::string Peers;
      for (const auto &O : Devices)
        if (O != D && D->hasPeerLink(*O))
          Peers += (Peers.empty() ? "" : " ") + O->name();
      if (!Peers.empty())
        S += ", peers: " + Peers;
    }
    S += '\n';
  }
  if (GpusFound == 0)
    S += "no GPU: " + GpuStatus + '\n';
  return S;
}

} // namespace rt
} // namespace cleave
