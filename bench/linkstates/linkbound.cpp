//===- linkbound.cpp - The multi-GPU planner's numbers for one kernel -----===//
//
// bench/linkstates: for a host-mode launch over the GPUs --gpus of a device
// profile, the link bound from the measured host-link states, max(T_k / n,
// G(D_s, D_r)), and the symmetric TPSM plan's prediction
// (cleave/rt/MultiGpuTpsm.h), from what bench/pipeline's --bound line
// measured on one GPU: the blocks, one wave, the kernel's milliseconds for
// the whole grid (taken as proportional to the blocks) and the bytes each
// way. Prints one JSON object; exit status 1 on bad arguments or profile.
//
//   linkbound --profile P.json --gpus 0,1 --blocks N --wave W
//             --kernel-ms K --send-bytes S --receive-bytes R
//
//===----------------------------------------------------------------------===//

#include "cleave/rt/DeviceProfile.h"
#include "cleave/rt/MultiGpuTpsm.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <sstream>
#include <string>

using namespace cleave::rt;

namespace {

std::string quoted(const std::string &S) {
  std::string Out = "\"";
  for (char C : S)
    Out += C == '"' || C == '\\' ? std::string("\\") + C : std::string(1, C);
  return Out + "\"";
}

} // namespace

int main(int Argc, char **Argv) {
  std::string Profile, Gpus;
  double Blocks = 0, Wave = 1, KernelMs = 0, Send = 0, Receive = 0;
  for (int I = 1; I + 1 < Argc; I += 2) {
    std::string K = Argv[I], V = Argv[I + 1];
    if (K == "--profile")
      Profile = V;
    else if (K == "--gpus")
      Gpus = V;
    else if (K == "--blocks")
      Blocks = std::atof(V.c_str());
    else if (K == "--wave")
      Wave = std::atof(V.c_str());
    else if (K == "--kernel-ms")
      KernelMs = std::atof(V.c_str());
    else if (K == "--send-bytes")
      Send = std::atof(V.c_str());
    else if (K == "--receive-bytes")
      Receive = std::atof(V.c_str());
    else {
      std::fprintf(stderr, "linkbound: unknown option %s\n", K.c_str());
      return 1;
    }
  }
  DeviceProfile P;
  if (Result R = loadDeviceProfile(Profile, P); !R.ok()) {
    std::fprintf(stderr, "linkbound: %s\n", R.message().c_str());
    return 1;
  }
  std::vector<int> Ordinals;
  std::stringstream In(Gpus);
  for (std::string G; std::getline(In, G, ',');)
    Ordinals.push_back(std::atoi(G.c_str()));
  if (Ordinals.empty() || Blocks < 1) {
    std::fprintf(stderr, "linkbound: need --gpus and --blocks\n");
    return 1;
  }
  tpsm::Workload W;
  W.Blocks = uint64_t(Blocks);
  W.Send.PerBlock = Send / Blocks;
  W.Receive.PerBlock = Receive / Blocks;
  W.Kernel = tpsm::proportionalKernelTime(KernelMs * 1e-3 / Blocks);
  W.MinChunk = uint64_t(std::max(Wave, 1.0));
  tpsm::GpuGroup G = tpsm::symmetricGroup(P, Ordinals);
  tpsm::MultiPlan M = tpsm::planSymmetric(W, G);
  double Gs = G.G.seconds(Send / 1e9, Receive / 1e9);
  std::printf("{\"gpus\": %zu, \"missing\": %s, \"g_ms\": %.4f, "
              "\"link_bound_ms\": %.4f, \"pipelined\": %s, "
              "\"predicted_ms\": %.4f, \"predicted_unpipelined_ms\": %.4f, "
              "\"plan\": %s}\n",
              Ordinals.size(), quoted(G.PerGpu.Missing).c_str(), Gs * 1e3,
              M.LinkBoundSeconds * 1e3, M.PerGpu.Pipelined ? "true" : "false",
              M.seconds() * 1e3, M.PerGpu.UnpipelinedSeconds * 1e3,
              quoted(M.describe()).c_str());
  return G.PerGpu.Missing.empty() ? 0 : 1;
}
