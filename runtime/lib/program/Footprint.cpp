//===- Footprint.cpp - Evaluate serialized kernel footprints --------------===//
//
// Part of Cleave's runtime. The text format and the evaluation algorithm are
// specified in docs/footprints.md. This file is the evaluator's interface
// (cleave/rt/Footprint.h): a launch's footprint, per parameter and direction,
// from the accesses that FootprintParser.cpp reads and FootprintSolver.cpp
// solves over the boxes of the block range, coalesced by
// FootprintRegions.cpp; and the extra parameters of a rebased variant.
//
//===----------------------------------------------------------------------===//
#include "FootprintProgram.h"

#include <algorithm>
#include <cstdlib>

namespace cleave {
namespace rt {

using namespace footprint;

const ParamFootprint *FootprintResult::find(unsigned ArgNo) const {
  for (const ParamFootprint &P : Params)
    if (P.ArgNo == ArgNo)
      return &P;
  return nullptr;
}

FootprintProgram::FootprintProgram() : P(new Impl) {}
FootprintProgram::FootprintProgram(FootprintProgram &&O) noexcept : P(O.P) {
  O.P = new Impl;
}
FootprintProgram &FootprintProgram::operator=(FootprintProgram &&O) noexcept {
  std::swap(P, O.P);
  return *this;
}
FootprintProgram::~FootprintProgram() { delete P; }

const std::string &FootprintProgram::kernelName() const { return P->Kernel; }
unsigned FootprintProgram::numArgs() const {
  return static_cast<unsigned>(P->Args.size());
}
bool FootprintProgram::isPointerArg(unsigned ArgNo) const {
  return ArgNo < P->Args.size() && P->Args[ArgNo] == ArgKind::Ptr;
}

const std::vector<RebasedVariant> &FootprintProgram::rebasedVariants() const {
  return P->RebaseList;
}

const RebasedVariant *FootprintProgram::rebasedVariant(unsigned Dim) const {
  for (const RebasedVariant &V : P->RebaseList)
    if (V.Dim == Dim)
      return &V;
  return nullptr;
}

bool FootprintProgram::rebase(const LaunchConfig &L, unsigned Dim,
                              int64_t First, std::vector<RebaseValue> &Out,
                              std::string &Why) const {
  Out.clear();
  const RebaseRec *R = nullptr;
  for (const RebaseRec &X : P->Rebases)
    if (X.V.Dim == Dim)
      R = &X;
  if (!R) {
    Why = "no rebased variant along " + std::string(1, char('x' + Dim));
    return false;
  }
  if (L.Args.size() < P->Args.size()) {
    Why = "missing arguments";
    return false;
  }
  for (int D = 0; D < 3; ++D)
    if (L.Grid[D] < 1 || L.Block[D] < 1) {
      Why = "non-positive launch dimensions";
      return false;
    }
  if (First < 0 || First >= L.Grid[Dim]) {
    Why = "slab outside the grid";
    return false;
  }
  LaunchConfig At = L;
  At.First = First;
  At.Count = 0;
  Env E{*P, At};
  // Every check over the whole original grid.
  Box Grid;
  Grid.Lo.assign(NumBuiltinVars, 0);
  Grid.Hi.assign(NumBuiltinVars, 0);
  for (int D = 0; D < 3; ++D) {
    Grid.Hi[D] = L.Block[D] - 1;
    Grid.Hi[3 + D] = L.Grid[D] - 1;
  }
  for (const RebaseCheck &C : R->Checks) {
    std::optional<IntForm> F = evalForm(E, C.F, NumBuiltinVars);
    auto Lo = E.eval(C.Lo), Hi = E.eval(C.Hi);
    std::optional<std::pair<i64, i64>> Range;
    if (F)
      Range = formRange(*F, Grid);
    if (!Range || !Lo || !Hi || Range->first < *Lo || Range->second > *Hi) {
      Why = "an index may leave its integer type over this grid";
      return false;
    }
  }
  for (const RebaseParamRec &Q : R->Params) {
    std::optional<i64> V = E.eval(Q.Value);
    if (!V) {
      Why = "a rebased value overflows";
      return false;
    }
    RebaseValue Val;
    Val.IsPointer = Q.IsPtr;
    Val.ArgNo = Q.Arg;
    Val.Bits = Q.IsPtr ? 64 : Q.Bits;
    Val.Value = *V;
    if (!Q.IsPtr) {
      i64 Min = Q.Bits == 64 ? INT64_MIN : -(i64(1) << (Q.Bits - 1));
      i64 Max = Q.Bits == 64 ? INT64_MAX : (i64(1) << (Q.Bits - 1)) - 1;
      if (Q.Mode == RebaseMode::Unsigned) {
        Min = 0;
        Max = Q.Bits == 64 ? INT64_MAX : (i64(1) << Q.Bits) - 1;
      }
      if (Q.Mode != RebaseMode::Wrap && (*V < Min || *V > Max)) {
        Why = "a rebased bound does not fit its type";
        return false;
      }
      if (Q.Bits == 32) // the low 32 bits, as the kernel reads them
        Val.Value = i64(int32_t(uint32_t(uint64_t(*V))));
    }
    Out.push_back(Val);
  }
  return true;
}

Status FootprintProgram::parse(std::string_view Text, FootprintProgram &Out) {
  Impl Parsed;
  Status S = parseProgram(Text, Parsed);
  if (!S)
    return S;
  *Out.P = std::move(Parsed);
  return S;
}

Status FootprintProgram::evaluate(const LaunchConfig &L,
                                  FootprintResult &Out) const {
  Out.Params.clear();
  for (unsigned D = 0; D < 3; ++D)
    if (L.Grid[D] < 1 || L.Block[D] < 1 || L.Grid[D] > (i64(1) << 31) ||
        L.Block[D] > (i64(1) << 31))
      return Status::error("grid and block dimensions must be in [1, 2^31]");
  i64 Total = L.Grid[0] * L.Grid[1];
  if (!mul(Total, L.Grid[2]))
    return Status::error("grid too large");
  Total *= L.Grid[2];
  if (L.First < 0 || L.Count < 0 || L.First > Total ||
      L.Count > Total - L.First)
    return Status::error("block range [" + std::to_string(L.First) + ", +" +
                         std::to_string(L.Count) + ") outside the grid of " +
                         std::to_string(Total) + " blocks");
  if (L.Args.size() < P->Args.size())
    return Status::error("kernel has " + std::to_string(P->Args.size()) +
                         " arguments, launch gives " +
                         std::to_string(L.Args.size()));

  // The memo's key: what evaluation reads of the launch.
  std::vector<i64> Key;
  Key.reserve(8 + P->Args.size());
  Key.insert(Key.end(), {L.Grid[0], L.Grid[1], L.Grid[2], L.Block[0],
                         L.Block[1], L.Block[2], L.First, L.Count});
  for (size_t I = 0; I < P->Args.size(); ++I)
    if (P->Args[I] == ArgKind::Int)
      Key.push_back(L.Args[I]);
  if (P->Memo->find(Key, Out))
    return Status::success();

  Env E{*P, L};
  std::vector<PieceBox> Pieces = decompose(L);
  // Per argument, per direction (0 read, 1 write).
  std::vector<FootprintClass> Class[2];
  std::vector<std::vector<ByteRegion>> Regions[2];
  for (unsigned Dir = 0; Dir < 2; ++Dir) {
    Class[Dir].assign(P->Args.size(), FootprintClass::Exact);
    Regions[Dir].resize(P->Args.size());
  }
  auto Worsen = [](FootprintClass &C, FootprintClass By) {
    if (static_cast<int>(By) > static_cast<int>(C))
      C = By;
  };
  for (const Access &A : P->Accesses) {
    FootprintClass &C = Class[A.Write][A.Arg];
    if (C == FootprintClass::Unknown)
      continue;
    for (const PieceBox &Piece : Pieces) {
      AccessResult R = evalAccess(E, A, Piece);
      if (R.K == AccessResult::Unknown) {
        C = FootprintClass::Unknown;
        break;
      }
      if (R.K == AccessResult::Nothing)
        continue;
      if (!R.Exact)
        Worsen(C, FootprintClass::Bounded);
      auto &Dst = Regions[A.Write][A.Arg];
      Dst.insert(Dst.end(), R.Regions.begin(), R.Regions.end());
    }
  }
  for (const UnknownRec &U : P->Unknowns)
    Class[U.Write][U.Arg] = FootprintClass::Unknown;
  for (unsigned Dir = 0; Dir < 2; ++Dir)
    if (P->Untracked[Dir])
      for (FootprintClass &C : Class[Dir])
        C = FootprintClass::Unknown;

  for (unsigned I = 0; I < P->Args.size(); ++I) {
    if (P->Args[I] != ArgKind::Ptr)
      continue;
    ParamFootprint PF;
    PF.ArgNo = I;
    PF.ReadClass = Class[0][I];
    PF.WriteClass = Class[1][I];
    if (PF.ReadClass != FootprintClass::Unknown) {
      PF.Reads = std::move(Regions[0][I]);
      coalesceRegions(PF.Reads);
    }
    if (PF.WriteClass != FootprintClass::Unknown) {
      PF.Writes = std::move(Regions[1][I]);
      coalesceRegions(PF.Writes);
    }
    Out.Params.push_back(std::move(PF));
  }
  P->Memo->insert(std::move(Key), Out);
  return Status::success();
}

} // namespace rt
} // namespace cleave
