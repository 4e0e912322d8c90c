//===- LuoModel.h - Luo's analytical kernel model and link states -*- C++ -*-===//
//
// Part of Cleave's runtime (no LLVM). The equations of Luo's thesis (digest
// 000): the MPD/CPD kernel-time model of §1 and the host-link state model
// of §3.2-3.4. `cleave analyze --model=paper` evaluates them as printed;
// each correction the digest lists is a named option, so a test can show
// both the literal result and the fixed one.
//
// Units: costs and times in GPU clocks, bandwidths in bytes per clock for the
// kernel model; GB and GB/s (seconds out) for the link model.
//
//===----------------------------------------------------------------------===//
#ifndef CLEAVE_RT_LUOMODEL_H
#define CLEAVE_RT_LUOMODEL_H

#include <cstddef>
#include <string>
#include <vector>

namespace cleave {
namespace rt {
namespace luo {

/// The corrections of digest 000 §1, each off in the paper mode.
struct Corrections {
  /// (3.2) divides by N_act twice, so MPD falls to 0 as warps grow. Fixed:
  /// MPD = min{N_act, floor(GPU_bwt / (N_sm * Warp_bwt))}, clamped to
  /// [1, N_act].
  bool MpdSingleDivision = false;
  /// CPD from (3.4)-(3.6) can fall below 1 (even negative); clamp it to
  /// [1, N_act].
  bool ClampCpd = false;
  /// (3.14) prints max{...} without ", 0": T_c can go negative. Fixed: max
  /// with 0.
  bool ClampTc4 = false;
  /// §1.6 computes one block on one SM and never says how the grid's
  /// blocks add up. Fixed: multiply by the waves, ceil(blocks / (N_sm *
  /// blocks per SM)) (`cleave analyze --paper-fix=waves`).
  bool Waves = false;
  /// §1.8: N_act is the block's warp count and one block runs per SM.
  /// Fixed: N_act and the blocks per SM from the occupancy that registers,
  /// shared memory, threads and blocks per SM allow (`occupancy`).
  bool Occupancy = false;
  /// §1.8: no launch overhead. Fixed: add the profile's launch cost
  /// (`launch`).
  bool Launch = false;

  static Corrections paper() { return {}; }
  static Corrections fixed() {
    return {true, true, true, true, true, true};
  }
};

/// (3.1) Warp_bwt = N_thread * D_mem / (N_trans * t_mem), bytes per clock.
double warpBandwidth(double NThread, double DMem, double NTrans, double TMem);

/// (3.2) MPD = min{N_act, floor(GPU_bwt / (N_act * N_sm * Warp_bwt))}, or
/// the corrected form (see Corrections).
double memoryParallelDegree(double NAct, double NSm, double GpuBwt,
                            double WarpBwt, const Corrections &C);

/// The per-GPU fit of the CPD curve (a, b, c, d) and m, the most warps an
/// SM runs. GTX 260: a = 3, b = 11, c = 0.5, d = 80, m = 32.
struct CpdFit {
  double A = 3, B = 11, C = 0.5, D = 80, M = 32;
};

/// (3.3) P = T_cmp / (T_cmp + T_mem).
double computeFraction(double TCmp, double TMem);
/// (3.4) CPD1 = (c - P)(N_act - b) + a.
double cpd1(double NAct, double P, const CpdFit &F);
/// (3.5)-(3.6) CPD2 = (n / (m - 1)) sqrt((m - 1)^2 - (N_act - m)^2) + a,
/// n = d (P - c)^2.
double cpd2(double NAct, double P, const CpdFit &F);
/// CPD = min{CPD1, CPD2}, clamped to [1, N_act] when corrected.
double computeParallelDegree(double NAct, double P, const CpdFit &F,
                             const Corrections &C);

/// One calculate period of a warp's instruction stream (§1.3): the cost of
/// its computation task and of its memory task.
struct Period {
  double Compute = 0; ///< c_i
  double Memory = 0;  ///< m_i
};

/// The period types of (3.7)-(3.14): 1 (c >= m after c >= m), 2 (c < m
/// after c >= m), 3 (c >= m after c < m), 4 (c < m after c < m). The first
/// period follows an imaginary compute-bound one.
int periodType(const Period *Prev, const Period &Cur);

/// T_i of one period (the n of (3.9) read as N_act, the only reading that
/// agrees with (3.14)).
double periodCycles(const Period *Prev, const Period &Cur, double NAct,
                    double Cpd, double Mpd, const Corrections &C);

/// Sum of T_i over the periods: one block's cycles on one SM.
double kernelCycles(const std::vector<Period> &Periods, double NAct,
                    double Cpd, double Mpd, const Corrections &C);

/// (3.15) min{T_test, T_model} / max{T_test, T_model}.
double accuracy(double TTest, double TModel);

// Host links (§3.2-3.4). ---------------------------------------------------

/// (4.35) the time to send \p Xs and receive \p Xr on one GPU whose link
/// moves S_S / R_R alone and S_SR / R_SR when both directions are busy.
double bidirectionalTime(double Xs, double Xr, double SS, double RR,
                         double SSR, double RSR);

/// (4.53) the best number of equal chunks for a data-bound, general-heavy
/// job: sqrt(2 (D_s/S_S + D_r/R_R - H(D_s, D_r)) / t_str).
double optimalChunkCount(double Ds, double Dr, double SS, double RR,
                         double SSR, double RSR, double TStr);

/// A host-link state: the total send and receive bandwidth (GB/s) of the
/// GPUs while they are in that combination of idle / sending / receiving /
/// both (Table 4.2's cells, summed).
struct LinkState {
  std::string Name;
  double Send = 0;
  double Receive = 0;
};

/// The time-optimal transfer of §3.4: the least total time spent in states
/// such that at least \p Xs GB are sent and \p Xr received (the LP of
/// (4.59), solved exactly: an optimum uses at most two states). The states
/// used and their times are returned through \p Used.
double optimalTransferTime(const std::vector<LinkState> &States, double Xs,
                           double Xr,
                           std::vector<std::pair<size_t, double>> *Used =
                               nullptr);

} // namespace luo
} // namespace rt
} // namespace cleave

#endif
