//===- Balancer.cpp - Min-makespan split of independent items -------------===//
//
// Part of Cleave's runtime (no LLVM). See Balancer.h.
//
//===----------------------------------------------------------------------===//
#include "Balancer.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

namespace cleave {
namespace rt {

double BalanceDevice::time(double X) const {
  if (X <= 0)
    return 0;
  double Compute = Curve ? Curve(X) : PerItem * X;
  return Fixed + TransferFixed + Compute + TransferPerItem * X;
}

namespace {

/// Fixed and per-item cost of a linear device: t(x) = A + B x for x > 0.
double fixedCost(const BalanceDevice &D) { return D.Fixed + D.TransferFixed; }
double itemCost(const BalanceDevice &D) {
  return D.PerItem + D.TransferPerItem;
}

bool finiteNonNegative(double V) { return std::isfinite(V) && V >= 0; }

Result validate(const std::vector<BalanceDevice> &Devices, uint64_t N) {
  if (Devices.empty())
    return Result::error(ErrorCode::InvalidValue,
                         "balance: no devices to split the items over");
  for (const BalanceDevice &D : Devices) {
    if (!finiteNonNegative(D.Fixed) || !finiteNonNegative(D.PerItem) ||
        !finiteNonNegative(D.TransferFixed) ||
        !finiteNonNegative(D.TransferPerItem))
      return Result::error(ErrorCode::InvalidValue,
                           "balance: device '" + D.Name +
                               "' has a negative or non-finite cost");
    if (!D.Curve)
      continue;
    // A monotone model is what makes the finish time bisectable; check it
    // where it matters, on a grid over [0, N].
    double Prev = 0;
    for (unsigned I = 0; I <= 16; ++I) {
      double X = static_cast<double>(N) * I / 16;
      double T = D.Curve(X);
      if (!finiteNonNegative(T) || T < Prev)
        return Result::error(ErrorCode::InvalidValue,
                             "balance: the time model of device '" + D.Name +
                                 "' is not a nondecreasing, non-negative "
                                 "function of the item count");
      Prev = T;
    }
  }
  return Result::success();
}

/// The most items (at most N) device D finishes by time T.
uint64_t capacity(const BalanceDevice &D, double T, uint64_t N) {
  if (D.isLinear()) {
    double A = fixedCost(D), B = itemCost(D);
    if (T < A)
      return 0;
    if (B <= 0)
      return N;
    double X = std::floor((T - A) / B);
    uint64_t C = X >= static_cast<double>(N) ? N : static_cast<uint64_t>(X);
    // Rounding may leave the floor one off either way; settle it exactly.
    while (C < N && D.time(static_cast<double>(C + 1)) <= T)
      ++C;
    while (C > 0 && D.time(static_cast<double>(C)) > T)
      --C;
    return C;
  }
  if (D.time(static_cast<double>(N)) <= T)
    return N;
  uint64_t Lo = 0, Hi = N; // time(Lo) <= T < time(Hi)
  while (Hi - Lo > 1) {
    uint64_t Mid = Lo + (Hi - Lo) / 2;
    if (D.time(static_cast<double>(Mid)) <= T)
      Lo = Mid;
    else
      Hi = Mid;
  }
  return Lo;
}

uint64_t totalCapacity(const std::vector<BalanceDevice> &Ds,
                       const std::vector<bool> &Use, double T, uint64_t N) {
  uint64_t Sum = 0;
  for (size_t I = 0; I < Ds.size(); ++I)
    if (Use[I])
      Sum = std::min<uint64_t>(N, Sum + capacity(Ds[I], T, N));
  return Sum;
}

/// The continuous optimum of linear models: g(T) = sum over devices with
/// A_i < T of (T - A_i) / B_i is continuous and increasing, so walking the
/// devices in order of A_i, the first prefix whose level T_k stays below
/// the next device's fixed cost is the answer.
double waterLevel(const std::vector<BalanceDevice> &Ds,
                  const std::vector<bool> &Use, uint64_t N) {
  std::vector<size_t> Order;
  for (size_t I = 0; I < Ds.size(); ++I)
    if (Use[I])
      Order.push_back(I);
  std::sort(Order.begin(), Order.end(), [&](size_t L, size_t R) {
    return fixedCost(Ds[L]) < fixedCost(Ds[R]);
  });
  double SumInv = 0, SumAOverB = 0, Level = 0;
  for (size_t K = 0; K < Order.size(); ++K) {
    const BalanceDevice &D = Ds[Order[K]];
    double A = fixedCost(D), B = itemCost(D);
    // Takes any number of items at time A; the previous prefix did not
    // reach N below A, so A is the level.
    if (B <= 0)
      return A;
    SumInv += 1 / B;
    SumAOverB += A / B;
    Level = (static_cast<double>(N) + SumAOverB) / SumInv;
    if (K + 1 == Order.size() || Level <= fixedCost(Ds[Order[K + 1]]))
      return Level;
  }
  return Level;
}

/// Integer shares finishing by T, cut down or topped up to exactly N: items
/// removed from the device that finishes last, added to the device whose
/// next item finishes first.
std::vector<uint64_t> sharesAt(const std::vector<BalanceDevice> &Ds,
                               const std::vector<bool> &Use, double T,
                               uint64_t N) {
  std::vector<uint64_t> X(Ds.size(), 0);
  uint64_t Sum = 0;
  for (size_t I = 0; I < Ds.size(); ++I)
    if (Use[I]) {
      X[I] = capacity(Ds[I], T, N);
      Sum += X[I];
    }
  while (Sum > N) {
    size_t Last = Ds.size();
    for (size_t I = 0; I < Ds.size(); ++I)
      if (X[I] &&
          (Last == Ds.size() || Ds[I].time(X[I]) > Ds[Last].time(X[Last])))
        Last = I;
    uint64_t Cut = std::min(Sum - N, X[Last]);
    // Cutting a whole share is always safe; otherwise one item at a time
    // would be slow for large excesses, and any cut keeps time <= T.
    X[Last] -= Cut;
    Sum -= Cut;
  }
  while (Sum < N) {
    size_t Best = Ds.size();
    double BestT = std::numeric_limits<double>::infinity();
    for (size_t I = 0; I < Ds.size(); ++I) {
      if (!Use[I])
        continue;
      double Next = Ds[I].time(static_cast<double>(X[I] + 1));
      if (Next < BestT) {
        BestT = Next;
        Best = I;
      }
    }
    ++X[Best];
    ++Sum;
  }
  return X;
}

/// The integer split of N over the devices in Use that minimises the
/// makespan.
BalanceResult solve(const std::vector<BalanceDevice> &Ds,
                    const std::vector<bool> &Use, uint64_t N,
                    const BalanceOptions &Opt) {
  BalanceResult R;
  bool AllLinear = true;
  for (size_t I = 0; I < Ds.size(); ++I)
    if (Use[I] && !Ds[I].isLinear())
      AllLinear = false;
  double T;
  if (AllLinear) {
    T = waterLevel(Ds, Use, N);
    R.ClosedForm = true;
  } else {
    // One device running everything is a feasible finish time.
    double Hi = std::numeric_limits<double>::infinity();
    for (size_t I = 0; I < Ds.size(); ++I)
      if (Use[I])
        Hi = std::min(Hi, Ds[I].time(static_cast<double>(N)));
    double Lo = 0;
    while (Hi - Lo > Opt.RelTolerance * Hi &&
           R.Iterations < Opt.MaxIterations) {
      double Mid = Lo + (Hi - Lo) / 2;
      if (totalCapacity(Ds, Use, Mid, N) >= N)
        Hi = Mid;
      else
        Lo = Mid;
      ++R.Iterations;
    }
    T = Hi;
  }
  R.Items = sharesAt(Ds, Use, T, N);
  R.Times.resize(Ds.size());
  for (size_t I = 0; I < Ds.size(); ++I) {
    R.Times[I] = Ds[I].time(static_cast<double>(R.Items[I]));
    R.Makespan = std::max(R.Makespan, R.Times[I]);
  }
  double Fastest = R.Makespan;
  for (size_t I = 0; I < Ds.size(); ++I)
    if (R.Items[I])
      Fastest = std::min(Fastest, R.Times[I]);
  R.BalanceRatio = R.Makespan > 0 ? Fastest / R.Makespan : 1;
  return R;
}

} // namespace

Result balance(const std::vector<BalanceDevice> &Devices, uint64_t N,
               const BalanceOptions &Options, BalanceResult &Out) {
  if (Result E = validate(Devices, N); !E.ok())
    return E;
  std::vector<bool> All(Devices.size(), true);
  std::vector<bool> NoHelpers(Devices.size());
  bool AnyHelper = false, AnyMain = false;
  for (size_t I = 0; I < Devices.size(); ++I) {
    NoHelpers[I] = !Devices[I].Helper;
    AnyHelper |= Devices[I].Helper;
    AnyMain |= !Devices[I].Helper;
  }
  Out = solve(Devices, All, N, Options);
  if (!AnyHelper || !AnyMain)
    return Result::success();
  bool HelpersUsed = false;
  for (size_t I = 0; I < Devices.size(); ++I)
    HelpersUsed |= Devices[I].Helper && Out.Items[I] > 0;
  if (!HelpersUsed)
    return Result::success();
  BalanceResult Without = solve(Devices, NoHelpers, N, Options);
  double Gain = Without.Makespan - Out.Makespan;
  if (Gain <=
      Options.MinHelperGain * Without.Makespan + Options.HelperOverhead) {
    Out = std::move(Without);
    Out.HelpersDropped = true;
  }
  return Result::success();
}

Result balancePartition(const PartitionProblem &P, BalancedPartition &Out) {
  size_t K = P.Devices.size();
  uint64_t N = P.TotalBlocks;
  if (!K || !N)
    return Result::error(ErrorCode::InvalidValue,
                         "balance: no devices or no blocks");
  // Each device alone, sampled: the envelope makes a table's noise (a
  // measured row slower than a larger one) monotone.
  std::vector<std::vector<double>> Env(K);
  std::vector<uint64_t> Q(K, 0);
  std::vector<double> Times;
  unsigned S = unsigned(std::min<uint64_t>(PartitionSamples, N));
  auto At = [&](unsigned I) { return N * I / S; };
  for (size_t D = 0; D < K; ++D) {
    Env[D].assign(S + 1, 0);
    for (unsigned I = 1; I <= S; ++I) {
      std::fill(Q.begin(), Q.end(), 0);
      Q[D] = At(I);
      double T = predictPartition(P, Q, Times);
      Env[D][I] = std::max(Env[D][I - 1], std::isfinite(T) ? T : 1e30);
    }
  }
  std::vector<BalanceDevice> Devs(K);
  for (size_t D = 0; D < K; ++D) {
    Devs[D].Name = P.Devices[D].Name;
    Devs[D].Helper = P.Devices[D].SharesHost;
    const std::vector<double> &E = Env[D];
    Devs[D].Curve = [&E, N, S, At](double X) {
      if (X <= 0)
        return 0.0;
      double Pos = X * S / double(N);
      unsigned I = unsigned(std::min<double>(S - 1, std::floor(Pos)));
      double F = (X - double(At(I))) / double(At(I + 1) - At(I));
      // Below the first sample, the first sample's time: a share's fixed
      // costs are paid whatever its size.
      if (I == 0)
        return E[1];
      return E[I] + (E[I + 1] - E[I]) * std::min(1.0, std::max(0.0, F));
    };
  }
  BalanceOptions O;
  O.MinHelperGain = P.MinDeviceGain;
  BalanceResult B;
  if (Result R = balance(Devs, N, O, B); !R.ok())
    return R;
  PartitionDecision &Dec = Out.Decision;
  Dec = PartitionDecision();
  Dec.Blocks = B.Items;
  Dec.PredictedMs = predictPartition(P, Dec.Blocks, Dec.DeviceMs);
  // The best single device, as partition() reports it.
  Dec.SingleDeviceMs = std::numeric_limits<double>::infinity();
  for (size_t D = 0; D < K; ++D) {
    std::fill(Q.begin(), Q.end(), 0);
    Q[D] = N;
    double T = predictPartition(P, Q, Times);
    if (T < Dec.SingleDeviceMs) {
      Dec.SingleDeviceMs = T;
      Dec.BaseDevice = D;
    }
  }
  Out.EstimatedRatio = B.BalanceRatio;
  return Result::success();
}

std::vector<double> sortedWorkPrefix(const int32_t *Counts, const int32_t *Perm,
                                     uint64_t Threads, uint32_t BlockX,
                                     unsigned Lanes) {
  uint64_t Blocks = BlockX ? (Threads + BlockX - 1) / BlockX : 0;
  std::vector<double> Prefix(Blocks + 1, 0);
  Lanes = std::max(1u, Lanes);
  for (uint64_t B = 0; B < Blocks; ++B) {
    uint64_t Lo = B * BlockX, Hi = std::min<uint64_t>(Threads, Lo + BlockX);
    double Work = 0;
    for (uint64_t G = Lo; G < Hi; G += Lanes) {
      int32_t Max = 0;
      for (uint64_t T = G; T < std::min<uint64_t>(Hi, G + Lanes); ++T)
        Max = std::max(Max, Counts[Perm ? Perm[T] : T]);
      Work += Max;
    }
    Prefix[B + 1] = Prefix[B] + Work;
  }
  return Prefix;
}

namespace {

double routeTime(const RouteDevice &D, uint64_t First, uint64_t Count) {
  if (!Count)
    return 0;
  const std::vector<double> &P = *D.Prefix;
  return D.Fixed + D.PerWork * (P[First + Count] - P[First]);
}

/// The most sorted blocks from \p First that \p D finishes by \p T.
uint64_t routeCapacity(const RouteDevice &D, uint64_t First, uint64_t Blocks,
                       double T) {
  if (First >= Blocks || routeTime(D, First, 1) > T)
    return 0;
  uint64_t Lo = 1, Hi = Blocks - First + 1; // time(Lo) <= T < time(Hi)
  while (Hi - Lo > 1) {
    uint64_t Mid = Lo + (Hi - Lo) / 2;
    if (routeTime(D, First, Mid) <= T)
      Lo = Mid;
    else
      Hi = Mid;
  }
  return Lo;
}

/// Greedy ranges in \p Order finishing by \p T; the blocks they cover.
uint64_t routeAt(const std::vector<RouteDevice> &Ds,
                 const std::vector<size_t> &Order, uint64_t Blocks, double T,
                 RouteResult *Out) {
  uint64_t At = 0;
  for (size_t I : Order) {
    uint64_t C = routeCapacity(Ds[I], At, Blocks, T);
    if (Out) {
      Out->First[I] = At;
      Out->Count[I] = C;
    }
    At += C;
  }
  return At;
}

/// The best routed split over the devices in \p Use.
RouteResult routeOver(const std::vector<RouteDevice> &Ds,
                      const std::vector<bool> &Use, uint64_t Blocks,
                      const BalanceOptions &Opt) {
  std::vector<size_t> Order;
  for (size_t I = 0; I < Ds.size(); ++I)
    if (Use[I])
      Order.push_back(I);
  bool AllOrders = Order.size() <= 5;
  RouteResult Best;
  Best.Makespan = std::numeric_limits<double>::infinity();
  do {
    // One device running everything is feasible.
    double Hi = std::numeric_limits<double>::infinity();
    for (size_t I : Order)
      Hi = std::min(Hi, routeTime(Ds[I], 0, Blocks));
    double Lo = 0;
    for (unsigned It = 0;
         It < Opt.MaxIterations && Hi - Lo > Opt.RelTolerance * Hi; ++It) {
      double Mid = Lo + (Hi - Lo) / 2;
      (routeAt(Ds, Order, Blocks, Mid, nullptr) >= Blocks ? Hi : Lo) = Mid;
    }
    RouteResult R;
    R.First.assign(Ds.size(), 0);
    R.Count.assign(Ds.size(), 0);
    routeAt(Ds, Order, Blocks, Hi, &R);
    R.Times.assign(Ds.size(), 0);
    double Fastest = std::numeric_limits<double>::infinity();
    for (size_t I = 0; I < Ds.size(); ++I) {
      R.Times[I] = routeTime(Ds[I], R.First[I], R.Count[I]);
      R.Makespan = std::max(R.Makespan, R.Times[I]);
      if (R.Count[I])
        Fastest = std::min(Fastest, R.Times[I]);
    }
    R.BalanceRatio = R.Makespan > 0 ? Fastest / R.Makespan : 1;
    if (R.Makespan < Best.Makespan)
      Best = std::move(R);
  } while (AllOrders && std::next_permutation(Order.begin(), Order.end()));
  return Best;
}

} // namespace

Result routeSorted(const std::vector<RouteDevice> &Devices, uint64_t Blocks,
                   const BalanceOptions &Options, RouteResult &Out) {
  if (Devices.empty() || !Blocks)
    return Result::error(ErrorCode::InvalidValue,
                         "route: no devices or no blocks");
  for (const RouteDevice &D : Devices)
    if (!D.Prefix || D.Prefix->size() != Blocks + 1 ||
        !finiteNonNegative(D.Fixed) || !finiteNonNegative(D.PerWork))
      return Result::error(ErrorCode::InvalidValue,
                           "route: device '" + D.Name +
                               "' has no work prefix over the blocks or a "
                               "negative or non-finite cost");
  std::vector<bool> All(Devices.size(), true), NoHelpers(Devices.size());
  bool AnyMain = false;
  for (size_t I = 0; I < Devices.size(); ++I) {
    NoHelpers[I] = !Devices[I].Helper;
    AnyMain |= NoHelpers[I];
  }
  Out = routeOver(Devices, All, Blocks, Options);
  bool HelpersUsed = false;
  for (size_t I = 0; I < Devices.size(); ++I)
    HelpersUsed |= Devices[I].Helper && Out.Count[I] > 0;
  if (!AnyMain || !HelpersUsed)
    return Result::success();
  RouteResult Without = routeOver(Devices, NoHelpers, Blocks, Options);
  if (Without.Makespan - Out.Makespan <=
      Options.MinHelperGain * Without.Makespan + Options.HelperOverhead) {
    Out = std::move(Without);
    Out.HelpersDropped = true;
  }
  return Result::success();
}

} // namespace rt
} // namespace cleave
