//===- LinkStates.h - Host-link states and time-optimal transfers -*- C++ -*-=//
//
// Part of Cleave's runtime (no LLVM). Luo's host-link state model (digest
// 000 §3.4-3.5): when several GPUs copy to and from the host at once they
// share its links, so each GPU's send and receive rates depend on what all
// of them do. A GPU's link is idle (N), sending to the GPU (S), receiving
// from it (R) or both (SR); a system state is one such state per GPU, and
// cleave-calibrate measures, in each state it visits, every GPU's rates
// (docs/calibrate.md, "Host-link states").
//
//   * StateTable holds the measured states of n GPUs and answers every one
//     of the 4^n: a state measured as such, else a measured member of its
//     permutation class (the calibrator measures one per class with 3 or
//     more GPUs), its rates carried over by link state;
//   * symmetric GPUs (§3.4): every state becomes its point of total send
//     and receive rates; the upper-right hull of the points gives G(X_s,
//     X_r), the least time to send X_s and receive X_r in all, by mixing
//     the two states at the ends of the hull edge the demand's ray crosses
//     ((4.68) with its sign corrected, (4.69); (4.70)'s coefficients are
//     sums, not differences);
//   * unequal demands (§3.5): the LP of (4.59) over every state, each GPU
//     its own send and receive rows, solved directly (SmallLp.h) instead of
//     Algorithm 2's facet walk.
//
// Units: GB (1e9 bytes), GB/s and seconds.
//
//===----------------------------------------------------------------------===//
#ifndef CLEAVE_RT_LINKSTATES_H
#define CLEAVE_RT_LINKSTATES_H

#include <cstdint>
#include <string>
#include <vector>

namespace cleave {
namespace rt {

struct DeviceProfile;

namespace links {

enum class Link : uint8_t { N, S, R, SR };
using SystemState = std::vector<Link>;

/// "N", "S", "R", "SR".
const char *linkName(Link L);
/// "SR/S/N": GPU 0 in SR, GPU 1 in S, GPU 2 idle.
std::string stateName(const SystemState &S);
/// stateName's inverse; false for anything else.
bool parseLink(const std::string &Name, Link &Out);

/// One GPU's rates in a state (GB/s); 0 for a direction it does not use.
struct Rates {
  double Send = 0, Receive = 0;
};

/// A state with every GPU's rates.
struct MeasuredState {
  SystemState State;
  std::vector<Rates> PerGpu;
  double totalSend() const;
  double totalReceive() const;
};

class StateTable {
public:
  explicit StateTable(unsigned Gpus = 0) : NumGpus(Gpus) {}
  unsigned gpus() const { return NumGpus; }

  /// Records a measured state (a later one for the same state replaces
  /// it). \p PerGpu has one entry per GPU.
  void add(const SystemState &S, const std::vector<Rates> &PerGpu);
  const std::vector<MeasuredState> &measured() const { return Measured; }

  /// Every GPU's rates in \p S: the state's own measurement, else the
  /// mean over the measured members of its permutation class, GPU for GPU
  /// by link state (the k-th GPU in SR takes the mean of the members' k-th
  /// GPUs in SR); false when its class was not measured.
  bool rates(const SystemState &S, std::vector<Rates> &Out) const;

  /// Every non-idle state rates() answers (4^n - 1 when each class was
  /// measured), in a stable order.
  std::vector<MeasuredState> allStates() const;

  /// The names of the permutation classes with no measured member, as
  /// their sorted representative ("SR/S/S/N"); empty when the table is
  /// complete.
  std::vector<std::string> missingClasses() const;

private:
  unsigned NumGpus;
  std::vector<MeasuredState> Measured;
};

/// The table of the GPUs \p Ordinals (CUDA ordinals, in that order) from
/// the profile's host-link states: each state in which every other GPU is
/// idle, restricted to them. Empty (0 GPUs) when an ordinal has no state.
StateTable tableFromProfile(const DeviceProfile &P,
                            const std::vector<int> &Ordinals);

// Symmetric GPUs (§3.4). ---------------------------------------------------

/// A state as the point of its total rates (GB/s).
struct Point {
  std::string Name;
  double Send = 0, Receive = 0;
};

/// (4.68) corrected: the seconds per GB sent and per GB received of the
/// mix of states \p P and \p Q that sends X_s and receives X_r exactly,
/// T_pq = X_s (B_qr - B_pr) / det + X_r (B_ps - B_qs) / det with det =
/// B_ps B_qr - B_qs B_pr. Both 0 when the points are collinear with 0.
struct Coefficients {
  double PerSend = 0, PerReceive = 0;
};
Coefficients twoStateCoefficients(const Point &P, const Point &Q);

/// G() of (4.69): the upper-right hull of a set of states and the least
/// time to move a demand through them.
class SymmetricLinks {
public:
  /// The hull's vertices from the most sending to the most receiving (the
  /// receive / send ratio grows along it).
  const std::vector<Point> &vertices() const { return Hull; }

  /// One linear piece of G: for demands with Lo <= X_r / X_s < Hi, G =
  /// PerSend X_s + PerReceive X_r. The first piece (Lo = 0) and the last
  /// (Hi infinite) are the hull's end vertices alone, one direction
  /// saturated (the other's surplus unused).
  struct Piece {
    double Lo = 0, Hi = 0;
    Coefficients C;
    size_t From = 0, To = 0; ///< vertices mixed (equal for one state)
  };
  const std::vector<Piece> &pieces() const { return Pieces; }

  /// Seconds to send \p Xs and receive \p Xr GB in all; infinite when a
  /// direction with demand has no state moving it.
  double seconds(double Xs, double Xr) const;
  /// The piece seconds() uses for a demand.
  const Piece &pieceFor(double Xs, double Xr) const;

  bool empty() const { return Hull.empty(); }

private:
  friend SymmetricLinks symmetricLinks(const std::vector<Point> &States);
  std::vector<Point> Hull;
  std::vector<Piece> Pieces;
};

/// The upper-right hull of \p States (points with no positive rate are
/// ignored) and its pieces.
SymmetricLinks symmetricLinks(const std::vector<Point> &States);
/// The points of every state of \p T (allStates()).
std::vector<Point> statePoints(const StateTable &T);

// Unequal demands (§3.5). --------------------------------------------------

/// The time-optimal transfer: how long to stay in which state.
struct Schedule {
  bool Feasible = false;
  double Seconds = 0;
  /// (state, seconds) with positive time, in the table's allStates() order.
  std::vector<std::pair<MeasuredState, double>> Used;
};

/// The LP of (4.59) for per-GPU demands (GB): minimize sum T_q with
/// sum_q T_q S_iq >= Xs[i] and sum_q T_q R_iq >= Xr[i] for every GPU i.
/// Infeasible when a GPU with demand has no state moving it.
Schedule optimalSchedule(const std::vector<MeasuredState> &States,
                         const std::vector<double> &Xs,
                         const std::vector<double> &Xr);

} // namespace links
} // namespace rt
} // namespace cleave

#endif
