//===- LinkStates.cpp - Host-link states and time-optimal transfers -------===//
//
// Part of Cleave's runtime (no LLVM). See cleave/rt/LinkStates.h.
//
//===----------------------------------------------------------------------===//

#include "cleave/rt/LinkStates.h"

#include "cleave/rt/DeviceProfile.h"
#include "cleave/rt/SmallLp.h"

#include <algorithm>
#include <cmath>
#include <map>

namespace cleave {
namespace rt {
namespace links {

const char *linkName(Link L) {
  switch (L) {
  case Link::N:
    return "N";
  case Link::S:
    return "S";
  case Link::R:
    return "R";
  case Link::SR:
    return "SR";
  }
  return "?";
}

std::string stateName(const SystemState &S) {
  std::string Name;
  for (size_t I = 0; I < S.size(); ++I)
    Name += (I ? "/" : "") + std::string(linkName(S[I]));
  return Name;
}

bool parseLink(const std::string &Name, Link &Out) {
  for (Link L : {Link::N, Link::S, Link::R, Link::SR})
    if (Name == linkName(L)) {
      Out = L;
      return true;
    }
  return false;
}

double MeasuredState::totalSend() const {
  double T = 0;
  for (const Rates &R : PerGpu)
    T += R.Send;
  return T;
}

double MeasuredState::totalReceive() const {
  double T = 0;
  for (const Rates &R : PerGpu)
    T += R.Receive;
  return T;
}

namespace {

/// The permutation class of a state: its links sorted.
SystemState classOf(SystemState S) {
  std::sort(S.begin(), S.end());
  return S;
}

bool allIdle(const SystemState &S) {
  return std::all_of(S.begin(), S.end(), [](Link L) { return L == Link::N; });
}

} // namespace

void StateTable::add(const SystemState &S, const std::vector<Rates> &PerGpu) {
  for (MeasuredState &M : Measured)
    if (M.State == S) {
      M.PerGpu = PerGpu;
      return;
    }
  Measured.push_back({S, PerGpu});
}

namespace {

/// The rates of \p S from the measured members of its class: the k-th GPU
/// of S in link L takes the mean of the members' k-th GPUs in L.
bool fromMembers(const SystemState &S,
                 const std::vector<const MeasuredState *> &Members,
                 std::vector<Rates> &Out) {
  if (Members.empty())
    return false;
  size_t N = S.size();
  Out.assign(N, Rates());
  for (const MeasuredState *M : Members) {
    std::vector<size_t> Of[4];
    for (size_t I = 0; I < N; ++I)
      Of[size_t(M->State[I])].push_back(I);
    size_t Next[4] = {0, 0, 0, 0};
    for (size_t I = 0; I < N; ++I) {
      size_t L = size_t(S[I]);
      const Rates &R = M->PerGpu[Of[L][Next[L]++]];
      Out[I].Send += R.Send / double(Members.size());
      Out[I].Receive += R.Receive / double(Members.size());
    }
  }
  return true;
}

} // namespace

bool StateTable::rates(const SystemState &S, std::vector<Rates> &Out) const {
  if (S.size() != NumGpus)
    return false;
  std::vector<const MeasuredState *> Members;
  SystemState Class = classOf(S);
  for (const MeasuredState &M : Measured) {
    if (M.State == S) {
      Out = M.PerGpu;
      return true;
    }
    if (classOf(M.State) == Class)
      Members.push_back(&M);
  }
  return fromMembers(S, Members, Out);
}

std::vector<MeasuredState> StateTable::allStates() const {
  std::vector<MeasuredState> Out;
  if (!NumGpus || NumGpus > 12)
    return Out;
  // Each class's members, found once (8 GPUs have 65,535 states).
  std::map<SystemState, std::vector<const MeasuredState *>> Members;
  std::map<SystemState, const MeasuredState *> Exact;
  for (const MeasuredState &M : Measured) {
    Members[classOf(M.State)].push_back(&M);
    Exact[M.State] = &M;
  }
  uint64_t Count = uint64_t(1) << (2 * NumGpus);
  for (uint64_t Code = 1; Code < Count; ++Code) {
    SystemState S(NumGpus);
    for (unsigned I = 0; I < NumGpus; ++I)
      S[I] = Link((Code >> (2 * I)) & 3);
    MeasuredState M{S, {}};
    if (auto It = Exact.find(S); It != Exact.end())
      M.PerGpu = It->second->PerGpu;
    else if (auto C = Members.find(classOf(S));
             C == Members.end() || !fromMembers(S, C->second, M.PerGpu))
      continue;
    Out.push_back(std::move(M));
  }
  return Out;
}

std::vector<std::string> StateTable::missingClasses() const {
  std::vector<std::string> Out;
  // Every multiset of links over the GPUs: counts of SR, S, R, the rest N.
  for (unsigned SR = 0; SR <= NumGpus; ++SR)
    for (unsigned S = 0; SR + S <= NumGpus; ++S)
      for (unsigned R = 0; SR + S + R <= NumGpus; ++R) {
        SystemState State;
        State.insert(State.end(), SR, Link::SR);
        State.insert(State.end(), S, Link::S);
        State.insert(State.end(), R, Link::R);
        State.resize(NumGpus, Link::N);
        if (allIdle(State))
          continue;
        SystemState Class = classOf(State);
        bool Found = std::any_of(
            Measured.begin(), Measured.end(),
            [&](const MeasuredState &M) { return classOf(M.State) == Class; });
        if (!Found)
          Out.push_back(stateName(State));
      }
  return Out;
}

StateTable tableFromProfile(const DeviceProfile &P,
                            const std::vector<int> &Ordinals) {
  StateTable T(unsigned(Ordinals.size()));
  for (const HostLinkState &H : P.LinkStates) {
    // Where each of Ordinals sits in the entry; every other GPU idle.
    std::vector<size_t> At(Ordinals.size(), H.Gpus.size());
    bool Usable = H.States.size() == H.Gpus.size();
    for (size_t E = 0; Usable && E < H.Gpus.size(); ++E) {
      auto It = std::find(Ordinals.begin(), Ordinals.end(), H.Gpus[E]);
      if (It != Ordinals.end())
        At[size_t(It - Ordinals.begin())] = E;
      else if (H.States[E] != "N")
        Usable = false;
    }
    SystemState S(Ordinals.size());
    std::vector<Rates> PerGpu(Ordinals.size());
    for (size_t I = 0; Usable && I < Ordinals.size(); ++I) {
      if (At[I] == H.Gpus.size() || !parseLink(H.States[At[I]], S[I])) {
        Usable = false;
        break;
      }
      PerGpu[I] = {H.SendGBps[At[I]], H.ReceiveGBps[At[I]]};
    }
    if (Usable && !allIdle(S))
      T.add(S, PerGpu);
  }
  if (T.measured().empty())
    return StateTable(0);
  return T;
}

Coefficients twoStateCoefficients(const Point &P, const Point &Q) {
  double Det = P.Send * Q.Receive - Q.Send * P.Receive;
  if (std::fabs(Det) < 1e-300)
    return {};
  return {(Q.Receive - P.Receive) / Det, (P.Send - Q.Send) / Det};
}

namespace {

/// > 0 when O -> A -> B turns left (counterclockwise).
double cross(const Point &O, const Point &A, const Point &B) {
  return (A.Send - O.Send) * (B.Receive - O.Receive) -
         (A.Receive - O.Receive) * (B.Send - O.Send);
}

double ratioOf(const Point &P) {
  return P.Send > 0 ? P.Receive / P.Send : HUGE_VAL;
}

} // namespace

SymmetricLinks symmetricLinks(const std::vector<Point> &States) {
  SymmetricLinks L;
  std::vector<Point> Pts;
  for (const Point &P : States)
    if (P.Send > 0 || P.Receive > 0)
      Pts.push_back(P);
  if (Pts.empty())
    return L;
  // From the most sending (the most receiving among them) to the most
  // receiving, x falling: Andrew's monotone chain keeping left turns is the
  // hull's upper-right part; a point no better than the start in receive,
  // or than the end in send, is dominated.
  std::sort(Pts.begin(), Pts.end(), [](const Point &A, const Point &B) {
    return A.Send != B.Send ? A.Send > B.Send : A.Receive > B.Receive;
  });
  const Point Start = Pts.front();
  const Point End = *std::max_element(
      Pts.begin(), Pts.end(), [](const Point &A, const Point &B) {
        return A.Receive != B.Receive ? A.Receive < B.Receive : A.Send < B.Send;
      });
  std::vector<Point> &H = L.Hull;
  H.push_back(Start);
  for (const Point &P : Pts) {
    if (P.Receive <= Start.Receive || P.Send < End.Send)
      continue;
    if (P.Send == H.back().Send)
      continue; // the same send, less receive (sorted): dominated
    while (H.size() >= 2 && cross(H[H.size() - 2], H.back(), P) <= 0)
      H.pop_back();
    H.push_back(P);
  }
  // The pieces: the start alone below its ratio, each edge's two-state
  // mix, the end alone above its ratio.
  using Piece = SymmetricLinks::Piece;
  auto Add = [&](double Lo, double Hi, Coefficients C, size_t A, size_t B) {
    if (Hi > Lo)
      L.Pieces.push_back({Lo, Hi, C, A, B});
  };
  if (H[0].Send > 0)
    Add(0, ratioOf(H[0]), {1 / H[0].Send, 0}, 0, 0);
  for (size_t I = 0; I + 1 < H.size(); ++I)
    Add(ratioOf(H[I]), ratioOf(H[I + 1]), twoStateCoefficients(H[I], H[I + 1]),
        I, I + 1);
  size_t Last = H.size() - 1;
  if (H[Last].Receive > 0 && H[Last].Send > 0)
    Add(ratioOf(H[Last]), HUGE_VAL, {0, 1 / H[Last].Receive}, Last, Last);
  if (L.Pieces.empty()) // one vertex on an axis moving one direction only
    L.Pieces.push_back(Piece{0,
                             HUGE_VAL,
                             {H[0].Send > 0 ? 1 / H[0].Send : 0,
                              H[0].Receive > 0 ? 1 / H[0].Receive : 0},
                             0,
                             0});
  return L;
}

const SymmetricLinks::Piece &SymmetricLinks::pieceFor(double Xs,
                                                      double Xr) const {
  double Ratio = Xs > 0 ? Xr / Xs : HUGE_VAL;
  for (const Piece &P : Pieces)
    if (Ratio < P.Hi)
      return P;
  return Pieces.back();
}

double SymmetricLinks::seconds(double Xs, double Xr) const {
  Xs = std::max(Xs, 0.0);
  Xr = std::max(Xr, 0.0);
  if (Xs == 0 && Xr == 0)
    return 0;
  if (Hull.empty())
    return HUGE_VAL;
  // A direction that no state moves cannot be served.
  bool Sends = Hull.front().Send > 0, Receives = Hull.back().Receive > 0;
  if ((Xs > 0 && !Sends) || (Xr > 0 && !Receives))
    return HUGE_VAL;
  const Piece &P = pieceFor(Xs, Xr);
  return P.C.PerSend * Xs + P.C.PerReceive * Xr;
}

std::vector<Point> statePoints(const StateTable &T) {
  std::vector<Point> Out;
  for (const MeasuredState &M : T.allStates())
    Out.push_back({stateName(M.State), M.totalSend(), M.totalReceive()});
  return Out;
}

Schedule optimalSchedule(const std::vector<MeasuredState> &States,
                         const std::vector<double> &Xs,
                         const std::vector<double> &Xr) {
  Schedule Out;
  lp::Problem P;
  P.Cost.assign(States.size(), 1.0);
  // One row per GPU and direction with demand: the state times move it.
  auto AddRows = [&](const std::vector<double> &X, bool Send) {
    for (size_t I = 0; I < X.size(); ++I) {
      if (X[I] <= 0)
        continue;
      lp::Row R;
      R.S = lp::Sense::GreaterEqual;
      R.B = X[I];
      for (const MeasuredState &M : States)
        R.A.push_back(I < M.PerGpu.size()
                          ? (Send ? M.PerGpu[I].Send : M.PerGpu[I].Receive)
                          : 0.0);
      P.Rows.push_back(std::move(R));
    }
  };
  AddRows(Xs, true);
  AddRows(Xr, false);
  if (P.Rows.empty()) {
    Out.Feasible = true;
    return Out;
  }
  lp::Solution S = lp::minimize(P);
  if (S.St != lp::Status::Optimal)
    return Out;
  Out.Feasible = true;
  Out.Seconds = S.Objective;
  for (size_t Q = 0; Q < States.size(); ++Q)
    if (S.X[Q] > 0)
      Out.Used.push_back({States[Q], S.X[Q]});
  return Out;
}

} // namespace links
} // namespace rt
} // namespace cleave
