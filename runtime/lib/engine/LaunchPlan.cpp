//===- LaunchPlan.cpp - What a launch did, as text ------------------------===//
//
// Part of Cleave's runtime (no LLVM). See cleave/rt/Launch.h.
//
//===----------------------------------------------------------------------===//

#include "cleave/rt/Launch.h"

#include "LaunchSupport.h"
#include "../support/Demangle.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <map>
#include <memory>

namespace cleave {
namespace rt {

using namespace launch;

std::string LaunchPlan::pipelineOutcome() const {
  char Buf[256];
  double Kernel = PipelineKernelMeasuredMs > 0 ? PipelineKernelMeasuredMs
                                               : PipelineKernelMs;
  if (PipelineSendMs <= 0 && PipelineReceiveMs <= 0) {
    if (PipelineKernelMeasuredMs <= 0)
      return "";
    std::snprintf(Buf, sizeof(Buf),
                  "    measured %.3f ms, the chunks' kernels %.3f ms; no "
                  "bound without the link rates\n",
                  PipelineMs, PipelineKernelMeasuredMs);
    return Buf;
  }
  double Bound = std::max({PipelineSendMs, Kernel, PipelineReceiveMs});
  std::snprintf(Buf, sizeof(Buf),
                "    measured %.3f ms, predicted %.3f ms; bound max(send "
                "%.3f, kernel %.3f%s, receive %.3f) = %.3f ms; measured / "
                "bound %.3fx\n",
                PipelineMs, PipelinePredictedMs, PipelineSendMs, Kernel,
                PipelineKernelMeasuredMs > 0 ? " measured" : " predicted",
                PipelineReceiveMs, Bound, Bound > 0 ? PipelineMs / Bound : 0.0);
  return Buf;
}

std::string LaunchPlan::describe() const {
  std::string S = "launch " +
                  (KernelName.empty() ? "?" : displayName(KernelName)) +
                  (Swapped ? " [x<->y]" : "") + ": ";
  size_t NumRuns = 0;
  for (const Run &R : Runs)
    NumRuns += !R.IsMerge;
  if (Split)
    S += "split over " + std::to_string(NumRuns) + " range(s)";
  else
    S += "not split (" + Reason + "); whole grid on one device";
  if (Reconcile == "merge")
    S += ", merged on " + MergeDevice;
  else if (!Reconcile.empty())
    S += ", " + Reconcile + " writes";
  if (!Combined.empty())
    S += ", combined on the host: " + Combined;
  S += ", " + std::to_string(BytesMoved) + " bytes moved";
  if (MovedAtOnce)
    S += " (into " + std::to_string(MovedAtOnce) + " devices at once)";
  if (Replayed)
    S += ", replayed";
  else if (Repeated)
    S += ", repeated";
  if (Direct)
    S += ", direct";
  if (Deferred)
    S += ", completion deferred";
  S += "\n";
  for (const Run &R : Runs) {
    S += "  ";
    if (R.IsMerge)
      S += "merge on " + R.DeviceName + " of " + R.MergeFrom + " " +
           blocksText(R.First, R.Count) + ": " + std::to_string(R.BytesIn) +
           " bytes of partials";
    else
      S += R.DeviceName + " " + blocksText(R.First, R.Count) + ": " +
           std::to_string(R.BytesIn) + " bytes in";
    if (!R.Variant.empty())
      S += " [" + R.Variant + "]";
    for (const Run::Copy &C : R.Copies)
      S += "; buffer #" + std::to_string(C.BufferId) + " [" +
           std::to_string(C.T.Offset) + ", " +
           std::to_string(C.T.Offset + C.T.Bytes) + ") " + C.From + "->" +
           C.To;
    S += "\n";
  }
  if (!Chunks.empty()) {
    uint64_t Sent = 0, Back = 0;
    for (const Chunk &C : Chunks) {
      Sent += C.BytesSent;
      Back += C.BytesReceived;
    }
    char Ms[32];
    std::snprintf(Ms, sizeof(Ms), "%.3f", PipelineMs);
    S += "  pipelined on " + PipelineDevice + " in " +
         std::to_string(Chunks.size()) + " chunks (send, kernel, receive " +
         "streams): " + std::to_string(Sent) + " bytes sent, " +
         std::to_string(Back) + " received eagerly, " + Ms + " ms\n";
    if (!PipelinePlan.empty())
      S += "    " + PipelinePlan + "\n" + pipelineOutcome();
    for (size_t I = 0; I < Chunks.size(); ++I)
      S += "    chunk " + std::to_string(I) + " " +
           blocksText(Chunks[I].First, Chunks[I].Count) + ": " +
           std::to_string(Chunks[I].BytesSent) + " bytes sent, " +
           std::to_string(Chunks[I].BytesReceived) + " received\n";
  } else if (!PipelinePlan.empty()) {
    S += "  not pipelined on " + PipelineDevice + ": " + PipelinePlan + "\n";
  }
  for (const std::string &L : Reorganize)
    S += "  reorganize: " + L + "\n";
  if (MeasuredMs.size() >= 2) {
    auto [Lo, Hi] = std::minmax_element(MeasuredMs.begin(), MeasuredMs.end());
    char B[96];
    std::snprintf(B, sizeof(B), "  actual balance ratio %.3f (%.3f / %.3f ms)\n",
                  *Hi > 0 ? *Lo / *Hi : 1.0, *Lo, *Hi);
    S += B;
  }
  for (const Recovery &R : Recoveries) {
    S += "  recovery: " + R.Device + " failed (" + R.Error + "); blocks";
    for (auto [F, E] : R.Blocks)
      S += " [" + std::to_string(F) + ", " + std::to_string(E) + ")";
    S += " re-run on " + R.To + "\n";
  }
  return S;
}

} // namespace rt
} // namespace cleave
