//===- Partitioner.cpp - SKMD's greedy partitioner, corrected -------------===//
//
// Part of Cleave's runtime (no LLVM). See cleave/rt/Partitioner.h.
//
//===----------------------------------------------------------------------===//

#include "cleave/rt/Partitioner.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>

namespace cleave {
namespace rt {

namespace {

constexpr double Infinity = std::numeric_limits<double>::infinity();

/// Milliseconds to move \p Bytes at \p GBps (1e9 bytes/s).
double transferMs(double Bytes, double GBps) {
  if (Bytes <= 0)
    return 0;
  if (GBps <= 0)
    return Infinity;
  return Bytes / (GBps * 1e6);
}

/// min(own, aggregate / sharers), or own when there is no aggregate limit.
double sharedBandwidth(double Own, double Aggregate, unsigned Sharers) {
  if (Aggregate <= 0 || Sharers == 0)
    return Own;
  return std::min(Own, Aggregate / Sharers);
}

} // namespace

void PerfTable::set(uint64_t Blocks, double BlocksPerMs) {
  if (Blocks == 0 || !(BlocksPerMs > 0))
    return;
  auto It = std::lower_bound(
      Rows.begin(), Rows.end(), Blocks,
      [](const std::pair<uint64_t, double> &R, uint64_t B) {
        return R.first < B;
      });
  if (It != Rows.end() && It->first == Blocks)
    It->second = BlocksPerMs;
  else
    Rows.insert(It, {Blocks, BlocksPerMs});
}

double PerfTable::throughput(uint64_t Blocks) const {
  if (Rows.empty())
    return 0;
  auto It = std::lower_bound(
      Rows.begin(), Rows.end(), Blocks,
      [](const std::pair<uint64_t, double> &R, uint64_t B) {
        return R.first < B;
      });
  if (It == Rows.end())
    --It;
  return It->second;
}

double PerfTable::timeMs(uint64_t Blocks) const {
  if (Blocks == 0)
    return 0;
  double T = throughput(Blocks);
  return T > 0 ? double(Blocks) / T : Infinity;
}

double hostCopyMs(const PartitionProblem &P,
                  const std::vector<uint64_t> &Blocks) {
  double Total = 0;
  for (bool In : {true, false}) {
    double Host = 0, Devices = 0;
    for (size_t D = 0; D < P.Devices.size() && D < Blocks.size(); ++D) {
      if (!Blocks[D])
        continue;
      const DeviceCost &C = P.Devices[D];
      if (!In && C.pipelines(Blocks[D])) // received during the launch
        continue;
      double T = transferMs((In ? C.HostIn : C.HostOut).at(Blocks[D]),
                            In ? C.HostInGBps : C.HostOutGBps);
      if (C.CopiesOnHost)
        Host += T;
      else
        Devices = std::max(Devices, T);
    }
    Total += Host + Devices;
  }
  return Total;
}

double predictPartition(const PartitionProblem &P,
                        const std::vector<uint64_t> &Blocks,
                        std::vector<double> &DeviceMs) {
  size_t K = P.Devices.size();
  DeviceMs.assign(K, 0.0);
  if (Blocks.size() != K)
    return Infinity;

  // Bytes each device moves, and how many GPUs share each direction. The
  // searches call this thousands of times per decision: no allocation.
  thread_local std::vector<double> InB, OutB, Exec;
  thread_local std::vector<std::pair<int, double>> GroupSum;
  InB.assign(K, 0);
  OutB.assign(K, 0);
  Exec.assign(K, 0);
  GroupSum.clear();
  unsigned SendersIn = 0, SendersOut = 0, Working = 0;
  for (size_t D = 0; D < K; ++D) {
    if (!Blocks[D])
      continue;
    ++Working;
    const DeviceCost &C = P.Devices[D];
    Exec[D] = C.Perf.timeMs(Blocks[D]);
    if (C.SharesHost)
      continue;
    InB[D] = C.In.at(Blocks[D]);
    OutB[D] = C.Out.at(Blocks[D]);
    SendersIn += InB[D] > 0;
    SendersOut += OutB[D] > 0;
  }
  // A serial group's members compute one after the other.
  for (size_t D = 0; D < K; ++D) {
    int G = P.Devices[D].SerialGroup;
    if (!Blocks[D] || G < 0)
      continue;
    auto It = std::find_if(GroupSum.begin(), GroupSum.end(),
                           [G](const std::pair<int, double> &X) {
                             return X.first == G;
                           });
    if (It == GroupSum.end())
      GroupSum.push_back({G, Exec[D]});
    else
      It->second += Exec[D];
  }
  for (size_t D = 0; D < K; ++D)
    for (const auto &[G, Sum] : GroupSum)
      if (Blocks[D] && P.Devices[D].SerialGroup == G)
        Exec[D] = Sum;

  if (P.Links == LinkMode::Concurrent) {
    for (size_t D = 0; D < K; ++D) {
      if (!Blocks[D])
        continue;
      const DeviceCost &C = P.Devices[D];
      double T = C.FixedMs + Exec[D];
      if (!C.SharesHost) {
        double In = (InB[D] > 0 ? C.InLatencyMs : 0) +
                    transferMs(InB[D], sharedBandwidth(C.H2DGBps,
                                                       P.AggregateH2DGBps,
                                                       SendersIn));
        double Out = transferMs(OutB[D], sharedBandwidth(C.D2HGBps,
                                                         P.AggregateD2HGBps,
                                                         SendersOut));
        if (C.pipelines(Blocks[D]))
          T = C.FixedMs +
              C.PipelineFactor *
                  std::max({In, Exec[D],
                            Out + transferMs(C.HostOut.at(Blocks[D]),
                                             C.HostOutGBps)});
        else
          T += In + Out;
      }
      DeviceMs[D] = T;
    }
  } else {
    // One link: inputs go out one GPU after the other, largest share first;
    // outputs come back in the order the GPUs finish, one at a time.
    std::vector<size_t> Order;
    for (size_t D = 0; D < K; ++D) {
      if (!Blocks[D])
        continue;
      if (P.Devices[D].SharesHost)
        DeviceMs[D] = P.Devices[D].FixedMs + Exec[D];
      else
        Order.push_back(D);
    }
    std::stable_sort(Order.begin(), Order.end(), [&](size_t A, size_t B) {
      return Blocks[A] > Blocks[B];
    });
    double LinkFree = 0;
    std::vector<std::pair<double, size_t>> KernelEnd;
    for (size_t D : Order) {
      const DeviceCost &C = P.Devices[D];
      LinkFree += (InB[D] > 0 ? C.InLatencyMs : 0) +
                  transferMs(InB[D], C.H2DGBps);
      KernelEnd.push_back({LinkFree + C.FixedMs + Exec[D], D});
    }
    std::stable_sort(KernelEnd.begin(), KernelEnd.end());
    double OutFree = 0;
    for (auto [End, D] : KernelEnd) {
      OutFree =
          std::max(End, OutFree) + transferMs(OutB[D], P.Devices[D].D2HGBps);
      DeviceMs[D] = OutFree;
    }
  }

  double Max = 0;
  for (size_t D = 0; D < K; ++D)
    if (Blocks[D]) {
      if (std::isnan(DeviceMs[D]))
        DeviceMs[D] = Infinity;
      Max = std::max(Max, DeviceMs[D]);
    }
  if (P.NeedsMerge && Working >= 2)
    Max += P.MergeMs;
  if (Working >= 2)
    Max += P.SplitMs;
  return Max + hostCopyMs(P, Blocks);
}

namespace {
/// SKMD's search around one base device: the decision R being built and the
/// scratch vectors every trial prediction reuses (the search predicts
/// thousands of partitions per decision).
class GreedySearch {
public:
  GreedySearch(const PartitionProblem &P, PartitionDecision &R)
      : P(P), R(R), K(P.Devices.size()), N(P.TotalBlocks), Q(K, 0) {}

  /// The root: every block on the fastest single device, transfers
  /// included. False when no device can run the launch.
  bool placeOnFastestDevice() {
    double Best = Infinity;
    for (size_t D = 0; D < K; ++D) {
      std::fill(Q.begin(), Q.end(), 0);
      Q[D] = N;
      double T = predictPartition(P, Q, Scratch);
      if (T < Best) {
        Best = T;
        Base = D;
      }
    }
    R.BaseDevice = Base;
    R.SingleDeviceMs = Best;
    R.Blocks[Base] = N;
    Prev = Best;
    return Best != Infinity;
  }

  /// The first offload to a device must save more on the base device than
  /// the merge costs (SKMD's Cnt_OffsetsMergeCost); without a merge, G.
  uint64_t minimumOffload(uint64_t G) {
    uint64_t MinOffload = G;
    double SplitCost = (P.NeedsMerge ? P.MergeMs : 0) + P.SplitMs;
    if (SplitCost > 0) {
      auto BaseAlone = [&](uint64_t Blocks) {
        std::fill(Q.begin(), Q.end(), 0);
        Q[Base] = Blocks;
        return predictPartition(P, Q, Scratch);
      };
      double Full = BaseAlone(N);
      MinOffload = N; // Nothing saves enough: offloads never pass the check.
      for (uint64_t M = G; M < N; M += G)
        if (Full - BaseAlone(N - M) > SplitCost) {
          MinOffload = M;
          break;
        }
    }
    return MinOffload;
  }

  /// The head start: offloads grow while the helper stays under Floor. A
  /// helper's step doubles with each offload it takes and halves when its
  /// trial does not pay or would pass Floor; the first offload to a device
  /// is MinOffload, as in SKMD.
  void headStart(uint64_t G, uint64_t MinOffload, double Floor) {
    std::vector<uint64_t> Run(K, 1);
    for (;;) {
      Offload O = pick(
          [&](size_t I) { return R.Blocks[I] ? G * Run[I] : MinOffload; },
          Floor,
          [&](size_t I) { Run[I] = std::max<uint64_t>(1, Run[I] / 2); });
      if (!O.Found) {
        bool Shrunk = false;
        for (uint64_t &X : Run)
          if (X > 1) {
            X = 1;
            Shrunk = true;
          }
        if (Shrunk)
          continue;
        break;
      }
      if (R.Blocks[O.Dev])
        Run[O.Dev] = std::min<uint64_t>(Run[O.Dev] * 2, uint64_t(1) << 20);
      take(O);
    }
  }

  /// SKMD's search: one granule per accepted offload (the first to a device
  /// MinOffload), trying larger steps when no single granule pays.
  void granuleSearch(uint64_t G, uint64_t MinOffload) {
    for (unsigned Tolerate = 0; Tolerate < 10;) {
      Offload O = pick(
          [&](size_t I) -> uint64_t {
            uint64_t Trial = R.Blocks[I] ? G : MinOffload;
            if (Tolerate >= 63 || Trial > (UINT64_MAX >> Tolerate))
              return 0;
            return Trial << Tolerate;
          },
          Infinity, [](size_t) {});
      if (!O.Found) {
        ++Tolerate;
        continue;
      }
      take(O);
      Tolerate = 0;
    }
  }

private:
  struct Offload {
    bool Found = false;
    size_t Dev = 0;
    uint64_t Trial = 0;
    double Time = Infinity;
  };

  /// One round of either search: among the helpers whose trial offload
  /// (TrialOf; 0: none) fits in the base's blocks, lowers the prediction and
  /// leaves the helper at most AtMost, the one the base stays the most ahead
  /// of after it (SKMD's balancing factor); Refused(I) for the others.
  template <typename TrialFn, typename RefusedFn>
  Offload pick(TrialFn TrialOf, double AtMost, RefusedFn Refused) {
    Offload Best;
    double BestDiff = -Infinity;
    for (size_t I = 0; I < K; ++I) {
      if (I == Base)
        continue;
      uint64_t Trial = TrialOf(I);
      bool Fits = Trial && Trial <= R.Blocks[Base];
      double T = Infinity;
      if (Fits) {
        Q = R.Blocks;
        Q[Base] -= Trial;
        Q[I] += Trial;
        T = predictPartition(P, Q, Scratch);
        Fits = T < Prev && Scratch[I] <= AtMost;
      }
      if (!Fits) {
        Refused(I);
        continue;
      }
      double Diff = Scratch[Base] - Scratch[I];
      if (!Best.Found || Diff > BestDiff) {
        Best = {true, I, Trial, T};
        BestDiff = Diff;
      }
    }
    return Best;
  }

  void take(const Offload &O) {
    R.Blocks[Base] -= O.Trial;
    R.Blocks[O.Dev] += O.Trial;
    Prev = O.Time;
    ++R.Steps;
  }

  const PartitionProblem &P;
  PartitionDecision &R;
  size_t K;
  uint64_t N;
  size_t Base = 0;
  double Prev = Infinity; // the prediction of R as it stands
  std::vector<uint64_t> Q;
  std::vector<double> Scratch;
};

/// Where the head start stops: a little under a bound on the optimum. The
/// devices S that work each take at least FixedMs + n / (their best
/// throughput), so no partition beats (N + sum of best x FixedMs) / (sum of
/// best) over S; the least over every S (at most 2^K of them, K small)
/// bounds the optimum. 0 (no head start) without a bound.
double headStartFloor(const PartitionProblem &P, uint64_t N) {
  std::vector<std::pair<double, double>> Tops; // (best throughput, fixed)
  for (const DeviceCost &C : P.Devices) {
    double Most = 0;
    for (const auto &Row : C.Perf.rows())
      Most = std::max(Most, Row.second);
    if (C.FixedMs != Infinity && Most > 0)
      Tops.push_back({Most, C.FixedMs});
  }
  double Bound = Infinity;
  if (Tops.size() <= 12)
    for (uint32_t S = 1; S < (uint32_t(1) << Tops.size()); ++S) {
      double Rate = 0, Work = double(N);
      for (size_t D = 0; D < Tops.size(); ++D)
        if (S >> D & 1) {
          Rate += Tops[D].first;
          Work += Tops[D].first * Tops[D].second;
        }
      Bound = std::min(Bound, Work / Rate);
    }
  return Bound == Infinity ? 0 : 0.97 * Bound;
}

/// SKMD's search: the fastest single device, then greedy offloads.
PartitionDecision greedy(const PartitionProblem &P) {
  PartitionDecision R;
  size_t K = P.Devices.size();
  uint64_t N = P.TotalBlocks;
  R.Blocks.assign(K, 0);
  R.DeviceMs.assign(K, 0.0);
  if (K == 0)
    return R;
  if (N == 0)
    return R;

  GreedySearch Search(P, R);
  if (!Search.placeOnFastestDevice()) {
    R.PredictedMs = Infinity;
    predictPartition(P, R.Blocks, R.DeviceMs);
    return R;
  }
  uint64_t G = P.Granularity ? P.Granularity : (N + 2047) / 2048;
  uint64_t MinOffload = Search.minimumOffload(G);
  // A head start, then SKMD's search. SKMD moves one granule per accepted
  // offload: over a few thousand granules and five devices that is about a
  // millisecond of search at every decision. No partition beats every
  // device at its best throughput with only its fixed cost and no
  // transfers, so a helper whose predicted time stays under a little less
  // than that bound (the floor) is certainly still below the optimum, where
  // SKMD's search would bring it anyway. Up to there, offloads grow; then
  // SKMD's one-granule search finishes from below.
  if (P.HeadStart)
    Search.headStart(G, MinOffload, headStartFloor(P, N));
  Search.granuleSearch(G, MinOffload);
  R.PredictedMs = predictPartition(P, R.Blocks, R.DeviceMs);
  return R;
}
} // namespace

PartitionDecision partition(const PartitionProblem &P) {
  PartitionDecision R = greedy(P);
  // The other devices alone as a second root (see the header).
  bool Copies = false, Host = false, Other = false;
  for (const DeviceCost &C : P.Devices) {
    Copies |= C.HostIn.Fixed > 0 || C.HostIn.PerBlock > 0 ||
              C.HostOut.Fixed > 0 || C.HostOut.PerBlock > 0;
    (C.CopiesOnHost ? Host : Other) |= C.FixedMs != Infinity;
  }
  if (Copies && Host && Other) {
    PartitionProblem Q = P;
    for (DeviceCost &C : Q.Devices)
      if (C.CopiesOnHost)
        C.FixedMs = Infinity;
    PartitionDecision W = greedy(Q);
    if (W.PredictedMs < R.PredictedMs) {
      W.SingleDeviceMs = R.SingleDeviceMs;
      W.BaseDevice = R.BaseDevice;
      W.Steps += R.Steps;
      R = std::move(W);
    }
  }
  if (!(P.MinDeviceGain > 0) || R.PredictedMs == Infinity)
    return R;
  // Leave out, one at a time, the helper whose absence costs least, while
  // the search without it predicts at most MinDeviceGain more time. A
  // device left out keeps its table: only its fixed cost becomes infinite,
  // so the search never gives it work.
  PartitionProblem Q = P;
  for (;;) {
    size_t Drop = Q.Devices.size();
    PartitionDecision Best;
    for (size_t D = 0; D < Q.Devices.size(); ++D) {
      // Only a small share can gain little: a device running a fraction s
      // of the blocks in the predicted time saves about s of it, so shares
      // above twice the minimum are not searched without.
      if (!R.Blocks[D] || D == R.BaseDevice ||
          double(R.Blocks[D]) > 2 * P.MinDeviceGain * double(P.TotalBlocks))
        continue;
      PartitionProblem Without = Q;
      Without.Devices[D].FixedMs = Infinity;
      PartitionDecision W = greedy(Without);
      if (W.PredictedMs <= R.PredictedMs * (1 + P.MinDeviceGain) &&
          (Drop == Q.Devices.size() || W.PredictedMs < Best.PredictedMs)) {
        Drop = D;
        Best = std::move(W);
      }
    }
    if (Drop == Q.Devices.size())
      return R;
    Q.Devices[Drop].FixedMs = Infinity;
    unsigned Steps = R.Steps;
    double SingleMs = R.SingleDeviceMs;
    size_t Base = R.BaseDevice;
    R = std::move(Best);
    // Reported against the problem as given (the left-out device's time is
    // 0: it has no work).
    R.PredictedMs = predictPartition(P, R.Blocks, R.DeviceMs);
    R.Steps = Steps;
    R.SingleDeviceMs = SingleMs;
    R.BaseDevice = Base;
    ++R.LeftOut;
  }
}

std::string PartitionDecision::describe(const PartitionProblem &P) const {
  std::string S;
  char Buf[256];
  for (size_t D = 0; D < Blocks.size(); ++D) {
    if (!Blocks[D])
      continue;
    std::snprintf(Buf, sizeof(Buf), "  %s: %llu blocks, %.3f ms\n",
                  D < P.Devices.size() ? P.Devices[D].Name.c_str() : "?",
                  static_cast<unsigned long long>(Blocks[D]), DeviceMs[D]);
    S += Buf;
  }
  std::snprintf(Buf, sizeof(Buf),
                "  predicted %.3f ms (single device %s: %.3f ms, %u offload "
                "step(s))\n",
                PredictedMs,
                BaseDevice < P.Devices.size()
                    ? P.Devices[BaseDevice].Name.c_str()
                    : "?",
                SingleDeviceMs, Steps);
  S += Buf;
  if (double H = hostCopyMs(P, Blocks); H > 0) {
    std::snprintf(Buf, sizeof(Buf),
                  "  of which the program's own copies around the launch: "
                  "%.3f ms\n",
                  H);
    S += Buf;
  }
  if (LeftOut) {
    std::snprintf(Buf, sizeof(Buf),
                  "  %u device(s) left out: each gained less than %.0f %%\n",
                  LeftOut, P.MinDeviceGain * 100);
    S += Buf;
  }
  return S;
}

} // namespace rt
} // namespace cleave
