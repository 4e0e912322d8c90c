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

std::string LaunchPlan::Pipelined::outcome() const {
  char Buf[256];
  double Kernel = KernelMeasuredMs > 0 ? KernelMeasuredMs : KernelMs;
  if (SendMs <= 0 && ReceiveMs <= 0) {
    if (KernelMeasuredMs <= 0)
      return "";
    std::snprintf(Buf, sizeof(Buf),
                  "    measured %.3f ms, the chunks' kernels %.3f ms; no "
                  "bound without the link rates\n",
                  Ms, KernelMeasuredMs);
    return Buf;
  }
  double Bound = std::max({SendMs, Kernel, ReceiveMs});
  std::snprintf(Buf, sizeof(Buf),
                "    measured %.3f ms, predicted %.3f ms; bound max(send "
                "%.3f, kernel %.3f%s, receive %.3f) = %.3f ms; measured / "
                "bound %.3fx\n",
                Ms, PredictedMs, SendMs, Kernel,
                KernelMeasuredMs > 0 ? " measured" : " predicted", ReceiveMs,
                Bound, Bound > 0 ? Ms / Bound : 0.0);
  return Buf;
}

std::vector<LaunchPlan::Chunk> LaunchPlan::chunks() const {
  std::vector<Chunk> All;
  for (const Pipelined &P : Pipelines)
    All.insert(All.end(), P.Chunks.begin(), P.Chunks.end());
  return All;
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
    S += DirectWhy.empty() ? ", direct" : ", direct (" + DirectWhy + ")";
  if (Deferred)
    S += ", completion deferred";
  if (!CoSchedule.empty())
    S += ", co-scheduled: " + CoSchedule;
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
  for (const Pipelined &P : Pipelines) {
    if (P.Chunks.empty()) {
      if (!P.Plan.empty())
        S += "  not pipelined on " + P.Device + ": " + P.Plan + "\n";
      continue;
    }
    uint64_t Sent = 0, Back = 0;
    for (const Chunk &C : P.Chunks) {
      Sent += C.BytesSent;
      Back += C.BytesReceived;
    }
    char Ms[32];
    std::snprintf(Ms, sizeof(Ms), "%.3f", P.Ms);
    S += "  pipelined on " + P.Device + " in " +
         std::to_string(P.Chunks.size()) + " chunks (send, kernel, receive " +
         "streams): " + std::to_string(Sent) + " bytes sent, " +
         std::to_string(Back) + " received eagerly, " + Ms + " ms\n";
    if (!P.Plan.empty())
      S += "    " + P.Plan + "\n" + P.outcome();
    for (size_t I = 0; I < P.Chunks.size(); ++I)
      S += "    chunk " + std::to_string(I) + " " +
           blocksText(P.Chunks[I].First, P.Chunks[I].Count) + ": " +
           std::to_string(P.Chunks[I].BytesSent) + " bytes sent, " +
           std::to_string(P.Chunks[I].BytesReceived) + " received\n";
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
