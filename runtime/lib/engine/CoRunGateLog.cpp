//===- CoRunGateLog.cpp - The co-scheduler's decisions explained ----------===//
//
// Part of Cleave's runtime (no LLVM). See cleave/rt/CoRunGate.h and
// docs/coschedule.md ("Explain it"): CLEAVE_LOG=plan prints each
// co-schedule decision once, with the model's predictions (IPC, profit,
// the pair's time interleaved, on an SM split and one after the other),
// and, when both launches of a pair are done, the pair's predicted time
// against the measured one.
//
//===----------------------------------------------------------------------===//

#include "cleave/rt/CoRunGate.h"

#include <algorithm>
#include <cstdio>

namespace cleave {
namespace rt {

namespace {

std::string fmt(const char *Format, double A) {
  char Buf[64];
  std::snprintf(Buf, sizeof(Buf), Format, A);
  return Buf;
}

double sinceMs(std::chrono::steady_clock::time_point T) {
  return std::chrono::duration<double, std::milli>(
             std::chrono::steady_clock::now() - T)
      .count();
}

} // namespace

std::string CoRunGate::describeLocked(uint64_t Id) const {
  auto It = Launches.find(Id);
  if (It == Launches.end())
    return "launch " + std::to_string(Id);
  const Waiting &W = It->second;
  return W.Name + " (launch " + std::to_string(Id) + ", priority " +
         std::to_string(W.Priority) + ")";
}

double CoRunGate::cyclesMs(double Cycles) const {
  return ClockMHz > 0 ? Cycles / (ClockMHz * 1e3) : 0;
}

std::string CoRunGate::pairLineLocked(const CoSchedulePlan &P) const {
  const corun::PairPrediction &X = P.Pair;
  const Waiting &W0 = Launches.at(P.Launches[0]),
                &W1 = Launches.at(P.Launches[1]);
  std::string Line = "pair " + describeLocked(P.Launches[0]) + " + " +
                     describeLocked(P.Launches[1]) + ": ";
  if (P.Partitioned)
    Line += "SM split " + std::to_string(P.Split.Sms[0]) + " + " +
            std::to_string(P.Split.Sms[1]) +
            " SMs (green contexts), each unsliced, predicted IPC alone " +
            fmt("%.3f", X.SoloIpc[0]) + ", " + fmt("%.3f", X.SoloIpc[1]);
  else
    Line += std::to_string(X.Blocks[0]) + ":" + std::to_string(X.Blocks[1]) +
            " blocks per SM, predicted IPC " + fmt("%.3f", X.CoIpc[0]) +
            " + " + fmt("%.3f", X.CoIpc[1]) + " (alone " +
            fmt("%.3f", X.SoloIpc[0]) + ", " + fmt("%.3f", X.SoloIpc[1]) +
            "), profit " + fmt("%.3f", X.Profit) + ", imbalance " +
            fmt("%.3f", X.Imbalance);
  if (!P.Partitioned) {
    // Eq. 8: each kernel's slice takes I_K P_K / cIPC_K cycles a round.
    double Round = 0;
    for (const Waiting *W : {&W0, &W1}) {
      int I = W == &W0 ? 0 : 1;
      if (W->Model && X.CoIpc[I] > 0)
        Round = std::max(Round, W->Model->InstrPerBlock * X.Blocks[I] /
                                    X.CoIpc[I]);
    }
    Line += ", predicted " + fmt("%.0f", Round) + " cycles a round";
  }
  // The pair's remaining blocks each way.
  Line += "; the pair: interleaved " + fmt("%.0f", P.InterleaveCycles) +
          " cycles";
  if (P.Split.PairCycles > 0)
    Line += ", on a split of " + std::to_string(P.Split.Sms[0]) + " + " +
            std::to_string(P.Split.Sms[1]) + " SMs " +
            fmt("%.0f", P.Split.PairCycles);
  Line += ", one after the other " + fmt("%.0f", P.SerialCycles);
  double Cycles = P.Partitioned ? P.Split.PairCycles : P.InterleaveCycles;
  Line += ClockMHz > 0 ? "; predicted " + fmt("%.3f", cyclesMs(Cycles)) +
                             " ms at " + fmt("%.0f", ClockMHz) + " MHz"
                       : std::string("; no SM clock (CLEAVE_PROFILE) to "
                                     "turn cycles into time");
  Line += "; inputs " + W0.InputsFrom + " + " + W1.InputsFrom;
  return Line;
}

void CoRunGate::logDecisionLocked() {
  const CoSchedulePlan &P = Sched.plan();
  if (!Opts.LogPlan)
    return;
  auto Now = std::chrono::steady_clock::now();
  if (P.Launches == Logged) {
    ++LoggedRounds;
    return;
  }
  std::string Line;
  // The decision this one replaces: its co-schedules, on the host's clock
  // from its first issue to this one.
  if (!Logged.empty())
    Line = "cleave co-schedule: the last decision issued " +
           std::to_string(LoggedRounds) + " co-schedule(s), measured " +
           fmt("%.3f", sinceMs(LoggedAt)) + " ms\n";
  Logged = P.Launches;
  LoggedAt = Now;
  LoggedRounds = 1;
  if (!PartitionWhy.empty() && !PartitionWhySaid && P.Launches.size() == 2) {
    PartitionWhySaid = true;
    Line += "cleave co-schedule: no SM partitions (" + PartitionWhy +
            "): pairs run interleaved\n";
  }
  Line += "cleave co-schedule: ";
  uint64_t A = P.Launches[0];
  if (P.Launches.size() == 1) {
    Line += "alone: " + describeLocked(A);
  } else if (!P.Modeled) {
    Line += "side by side, no model inputs: " + describeLocked(A) + " + " +
            describeLocked(P.Launches[1]);
  } else {
    Line += pairLineLocked(P);
    // Its co-run is timed until both launches are done; a launch paired
    // anew leaves its earlier pair's time unmeasured.
    uint64_t B = P.Launches[1];
    bool Same = false;
    Checks.erase(std::remove_if(Checks.begin(), Checks.end(),
                                [&](const CoRunCheck &C) {
                                  bool Pair = (C.Launch[0] == A &&
                                               C.Launch[1] == B) ||
                                              (C.Launch[0] == B &&
                                               C.Launch[1] == A);
                                  Same |= Pair;
                                  return !Pair && (C.Launch[0] == A ||
                                                   C.Launch[1] == A ||
                                                   C.Launch[0] == B ||
                                                   C.Launch[1] == B);
                                }),
                 Checks.end());
    if (!Same) {
      CoRunCheck C;
      C.Launch[0] = A;
      C.Launch[1] = B;
      C.Names = Launches.at(A).Name + " + " + Launches.at(B).Name;
      C.Cycles = P.Partitioned ? P.Split.PairCycles : P.InterleaveCycles;
      C.PredictedMs = cyclesMs(C.Cycles);
      C.Start = Now;
      Checks.push_back(C);
    }
  }
  Line += "; " + std::to_string(P.Evaluated) + " pair(s) weighed, " +
          std::to_string(P.Pruned) + " pruned";
  Line += "; slices";
  for (const auto &[Id, W] : Launches)
    for (const Slice &S : W.Queue)
      Line += " " + std::to_string(Id) + ":[" + std::to_string(S.Begin) + ", " +
              std::to_string(S.End) + ")";
  std::fprintf(stderr, "%s\n", Line.c_str());
}

void CoRunGate::checkCoRunLocked(uint64_t Id) {
  for (auto It = Checks.begin(); It != Checks.end(); ++It) {
    if (It->Launch[0] != Id && It->Launch[1] != Id)
      continue;
    if (++It->Done < 2)
      return;
    double Ms = sinceMs(It->Start);
    std::string Line = "cleave co-schedule: co-run " + It->Names + ": ";
    if (It->PredictedMs > 0)
      Line += "predicted " + fmt("%.3f", It->PredictedMs) + " ms, measured " +
              fmt("%.3f", Ms) + " ms, error " +
              fmt("%+.1f", 100 * (It->PredictedMs - Ms) / Ms) + " %";
    else
      Line += "predicted " + fmt("%.0f", It->Cycles) +
              " cycles (no SM clock), measured " + fmt("%.3f", Ms) + " ms";
    std::fprintf(stderr, "%s\n", Line.c_str());
    Checks.erase(It);
    return;
  }
}

} // namespace rt
} // namespace cleave
