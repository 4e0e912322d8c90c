//===- CudaGreen.cpp - A GPU's SMs split by green contexts ----------------===//
//
// Part of Cleave's runtime (no LLVM). See CudaGreen.h.
//
//===----------------------------------------------------------------------===//
#include "DeviceFactories.h"

#ifdef CLEAVE_RT_HAVE_CUDA_H

#include "CudaGreen.h"

#include <vector>

namespace cleave {
namespace rt {

Result GreenPartitions::fail(CUresult R, const char *What) const {
  return Result::error(toErrorCode(R),
                       std::string(What) + ": " + Drv.errorString(R));
}

namespace {

/// An empty kernel, JIT-compiled by the driver for the device.
constexpr const char ProbePtx[] = R"(
.version 7.0
.target sm_60
.address_size 64

.visible .entry cleave_green_probe()
{
  ret;
}
)";

} // namespace

GreenPartitions::~GreenPartitions() {
  if (ProbeModule)
    Drv.cuModuleUnload(ProbeModule);
  for (auto &[Sms, S] : Splits)
    for (int I = 0; I < 2; ++I) {
      if (S.Stream[I])
        Drv.cuStreamDestroy(S.Stream[I]);
      if (S.Ctx[I])
        Drv.cuGreenCtxDestroy(S.Ctx[I]);
    }
}

unsigned GreenPartitions::granularity(std::string &WhyNot) {
  {
    std::lock_guard<std::mutex> Lock(Mutex);
    if (Asked) {
      WhyNot = Why;
      return Granularity;
    }
  }
  std::string W;
  unsigned G = supported(W);
  if (G) {
    CUstream Side[2] = {nullptr, nullptr};
    Result R = streams(G, Side[0], Side[1]);
    for (CUstream S : Side)
      if (R.ok())
        R = probe(S);
    if (!R.ok()) {
      G = 0;
      W = "a kernel does not run on a green context's stream: " + R.message();
    }
  }
  std::lock_guard<std::mutex> Lock(Mutex);
  Asked = true;
  Granularity = G;
  Why = W;
  WhyNot = W;
  return G;
}

Result GreenPartitions::probe(CUstream S) {
  CUfunction F = nullptr;
  {
    std::lock_guard<std::mutex> Lock(Mutex);
    if (!ProbeModule)
      if (CUresult E = Drv.cuModuleLoadData(&ProbeModule, ProbePtx))
        return fail(E, "cuModuleLoadData (green context probe)");
    if (CUresult E =
            Drv.cuModuleGetFunction(&F, ProbeModule, "cleave_green_probe"))
      return fail(E, "cuModuleGetFunction (green context probe)");
  }
  if (CUresult E =
          Drv.cuLaunchKernel(F, 1, 1, 1, 32, 1, 1, 0, S, nullptr, nullptr))
    return fail(E, "cuLaunchKernel");
  if (CUresult E = Drv.cuStreamSynchronize(S))
    return fail(E, "cuStreamSynchronize");
  return Result::success();
}

unsigned GreenPartitions::supported(std::string &Why) {
  if (!Drv.cuDeviceGetDevResource || !Drv.cuDevSmResourceSplitByCount ||
      !Drv.cuDevResourceGenerateDesc || !Drv.cuGreenCtxCreate ||
      !Drv.cuGreenCtxDestroy || !Drv.cuGreenCtxStreamCreate) {
    Why = Drv.Library + " has no green contexts (cuGreenCtxCreate: CUDA "
                        "12.4 or later)";
    return 0;
  }
  CUdevResource R = {};
  if (CUresult E = Drv.cuDeviceGetDevResource(Dev, &R, CU_DEV_RESOURCE_TYPE_SM)) {
    Why = "cuDeviceGetDevResource: " + Drv.errorString(E);
    return 0;
  }
  unsigned G = R.sm.minSmPartitionSize ? R.sm.minSmPartitionSize : 1;
  if (R.sm.smCount < 2 * G) {
    Why = std::to_string(R.sm.smCount) + " SMs cannot be split in groups of " +
          std::to_string(G);
    return 0;
  }
  return G;
}

Result GreenPartitions::make(unsigned Sms, Split &S) {
  CUdevResource In = {};
  if (CUresult E = Drv.cuDeviceGetDevResource(Dev, &In, CU_DEV_RESOURCE_TYPE_SM))
    return fail(E, "cuDeviceGetDevResource");
  unsigned G = In.sm.minSmPartitionSize ? In.sm.minSmPartitionSize : 1;
  unsigned Groups = In.sm.smCount / G;
  std::vector<CUdevResource> Res(Groups);
  CUdevResource Rest = {};
  if (CUresult E = Drv.cuDevSmResourceSplitByCount(Res.data(), &Groups, &In,
                                                   &Rest, 0, G))
    return fail(E, "cuDevSmResourceSplitByCount");
  unsigned First = Sms / G;
  if (Sms % G || !First || First >= Groups)
    return Result::error(ErrorCode::InvalidValue,
                         "no split of " + std::to_string(Sms) + " SMs in " +
                             std::to_string(Groups) + " groups of " +
                             std::to_string(G));
  // The first side: First groups; the other: the rest and the remainder.
  std::vector<CUdevResource> Side[2] = {
      std::vector<CUdevResource>(Res.begin(), Res.begin() + First),
      std::vector<CUdevResource>(Res.begin() + First, Res.begin() + Groups)};
  if (Rest.type == CU_DEV_RESOURCE_TYPE_SM && Rest.sm.smCount)
    Side[1].push_back(Rest);
  for (int I = 0; I < 2; ++I) {
    CUdevResourceDesc Desc = nullptr;
    if (CUresult E = Drv.cuDevResourceGenerateDesc(
            &Desc, Side[I].data(), unsigned(Side[I].size())))
      return fail(E, "cuDevResourceGenerateDesc");
    if (CUresult E = Drv.cuGreenCtxCreate(&S.Ctx[I], Desc, Dev,
                                          CU_GREEN_CTX_DEFAULT_STREAM))
      return fail(E, "cuGreenCtxCreate");
    if (CUresult E = Drv.cuGreenCtxStreamCreate(&S.Stream[I], S.Ctx[I],
                                                CU_STREAM_NON_BLOCKING, 0))
      return fail(E, "cuGreenCtxStreamCreate");
  }
  return Result::success();
}

Result GreenPartitions::streams(unsigned Sms, CUstream &First,
                                CUstream &Rest) {
  std::lock_guard<std::mutex> Lock(Mutex);
  auto It = Splits.find(Sms);
  if (It == Splits.end()) {
    Split S;
    Result R = make(Sms, S);
    if (!R.ok()) {
      for (int I = 0; I < 2; ++I) {
        if (S.Stream[I])
          Drv.cuStreamDestroy(S.Stream[I]);
        if (S.Ctx[I])
          Drv.cuGreenCtxDestroy(S.Ctx[I]);
      }
      return R;
    }
    It = Splits.emplace(Sms, S).first;
  }
  First = It->second.Stream[0];
  Rest = It->second.Stream[1];
  return Result::success();
}

} // namespace rt
} // namespace cleave

#endif
