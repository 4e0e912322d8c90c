//===- FootprintSolver.cpp - Solve footprint accesses over boxes ---------===//
//
// Part of Cleave's runtime. Evaluates one access of a footprint program for
// one box of blocks (docs/footprints.md, "Evaluation"): the expressions for
// the launch, the fusion of index pairs, clamping and splitting of the
// variables' box by the guards, and the shape of the addresses as byte
// regions. Overflow makes the access Unknown; a limit exceeded makes it
// Bounded; neither is ever unsound.
//
//===----------------------------------------------------------------------===//
#include "FootprintProgram.h"

#include <algorithm>

namespace cleave {
namespace rt {
namespace footprint {

//===-- Expressions -----------------------------------------------------===//

std::optional<i64> Env::eval(int N) const {
  const Node &X = P.Nodes[N];
  switch (X.K) {
  case Op::Const:
    return X.Value;
  case Op::Sym:
    switch (X.S) {
    case SymKind::First:
      return L.First;
    case SymKind::Count:
      return L.Count;
    case SymKind::GridX:
    case SymKind::GridY:
    case SymKind::GridZ:
      return L.Grid[unsigned(X.S) - unsigned(SymKind::GridX)];
    case SymKind::BlockX:
    case SymKind::BlockY:
    case SymKind::BlockZ:
      return L.Block[unsigned(X.S) - unsigned(SymKind::BlockX)];
    case SymKind::Arg:
      return L.Args[X.ArgNo];
    }
    return std::nullopt;
  default:
    break;
  }
  auto A = eval(X.L);
  auto B = eval(X.R);
  if (!A || !B)
    return std::nullopt;
  switch (X.K) {
  case Op::Add:
    return add(*A, *B);
  case Op::Sub:
    return sub(*A, *B);
  case Op::Mul:
    return mul(*A, *B);
  case Op::Div:
    return floorDiv(*A, *B);
  case Op::Min:
    return std::min(*A, *B);
  case Op::Max:
    return std::max(*A, *B);
  default:
    return std::nullopt;
  }
}

std::optional<IntForm> evalForm(const Env &E, const Form &F, unsigned NumVars) {
  IntForm R;
  R.Coef.assign(NumVars, 0);
  auto C0 = E.eval(F.C0);
  if (!C0)
    return std::nullopt;
  R.C0 = *C0;
  for (const auto &T : F.Terms) {
    auto C = E.eval(T.second);
    if (!C)
      return std::nullopt;
    auto S = add(R.Coef[T.first], *C);
    if (!S)
      return std::nullopt;
    R.Coef[T.first] = *S;
  }
  return R;
}

namespace {

/// Min and max of the term C*v over v in [Lo, Hi].
std::optional<std::pair<i64, i64>> termRange(i64 C, i64 Lo, i64 Hi) {
  auto A = mul(C, Lo), B = mul(C, Hi);
  if (!A || !B)
    return std::nullopt;
  return std::make_pair(std::min(*A, *B), std::max(*A, *B));
}

} // namespace

std::optional<std::pair<i64, i64>> formRange(const IntForm &F, const Box &B,
                                             int Skip) {
  i64 Lo = F.C0, Hi = F.C0;
  for (size_t V = 0; V < F.Coef.size(); ++V) {
    if (F.Coef[V] == 0 || static_cast<int>(V) == Skip)
      continue;
    auto T = termRange(F.Coef[V], B.Lo[V], B.Hi[V]);
    if (!T)
      return std::nullopt;
    auto L = add(Lo, T->first), H = add(Hi, T->second);
    if (!L || !H)
      return std::nullopt;
    Lo = *L;
    Hi = *H;
  }
  return std::make_pair(Lo, Hi);
}

namespace {

//===-- Constraints over boxes -------------------------------------------===//

/// Restricts V in B to A*V + C <= 0. False on overflow.
bool clampVar(Box &B, unsigned V, i64 A, i64 C) {
  auto NegC = sub(0, C);
  if (!NegC)
    return false;
  if (A > 0) {
    auto Bound = floorDiv(*NegC, A);
    if (!Bound)
      return false;
    B.Hi[V] = std::min(B.Hi[V], *Bound);
  } else {
    auto Bound = ceilDiv(*NegC, A);
    if (!Bound)
      return false;
    B.Lo[V] = std::max(B.Lo[V], *Bound);
  }
  return true;
}

enum class Outcome { Ok, Overflow };

/// Sound tightening of every variable's range by C <= 0 (interval
/// arithmetic). Marks the box empty when C cannot hold.
Outcome tighten(Box &B, const IntForm &C) {
  for (size_t V = 0; V < C.Coef.size(); ++V) {
    if (C.Coef[V] == 0)
      continue;
    auto Rest = formRange(C, B, static_cast<int>(V));
    if (!Rest)
      return Outcome::Overflow;
    if (!clampVar(B, static_cast<unsigned>(V), C.Coef[V], Rest->first))
      return Outcome::Overflow;
    if (B.Lo[V] > B.Hi[V])
      return Outcome::Ok;
  }
  return Outcome::Ok;
}

/// Splits B by A_U*U + A_W*W + C <= 0 into boxes whose union is exactly the
/// points of B that satisfy it: the values of U for which every W satisfies
/// the constraint form one box; each other U value that admits some W gets a
/// box of its own with W clamped. Fails when that needs more than
/// MaxPartialValues boxes.
std::optional<std::vector<Box>> splitBy(const Box &B, unsigned U, unsigned W,
                                        i64 AU, i64 AW, i64 C, bool &Overflow) {
  auto WT = termRange(AW, B.Lo[W], B.Hi[W]);
  if (!WT) {
    Overflow = true;
    return std::nullopt;
  }
  auto CFull = add(C, WT->second), CSome = add(C, WT->first);
  if (!CFull || !CSome) {
    Overflow = true;
    return std::nullopt;
  }
  Box Full = B, Some = B;
  if (!clampVar(Full, U, AU, *CFull) || !clampVar(Some, U, AU, *CSome)) {
    Overflow = true;
    return std::nullopt;
  }
  std::vector<Box> Out;
  if (Some.Lo[U] > Some.Hi[U])
    return Out;
  std::vector<i64> Partial;
  // Values of U in [Lo, Hi], both inclusive; the range may be empty.
  auto AddRange = [&](i64 Lo, i64 Hi) {
    for (i64 X = Lo; X <= Hi; ++X) {
      if (Partial.size() > MaxPartialValues)
        return;
      Partial.push_back(X);
      if (X == Hi)
        return;
    }
  };
  if (Full.Lo[U] > Full.Hi[U]) {
    AddRange(Some.Lo[U], Some.Hi[U]);
  } else {
    if (Some.Lo[U] < Full.Lo[U])
      AddRange(Some.Lo[U], Full.Lo[U] - 1);
    if (Full.Hi[U] < Some.Hi[U])
      AddRange(Full.Hi[U] + 1, Some.Hi[U]);
    Out.push_back(Full);
  }
  if (Partial.size() > MaxPartialValues)
    return std::nullopt;
  for (i64 X : Partial) {
    Box P = B;
    P.Lo[U] = P.Hi[U] = X;
    auto T = mul(AU, X);
    auto CX = T ? add(C, *T) : std::nullopt;
    if (!CX || !clampVar(P, W, AW, *CX)) {
      Overflow = true;
      return std::nullopt;
    }
    if (P.Lo[W] <= P.Hi[W])
      Out.push_back(P);
  }
  return Out;
}

/// Applies C <= 0 to every box. Exactness is lost when a constraint couples
/// variables in a way no split can express; the boxes then only shrink by
/// sound tightening.
Outcome applyConstraint(const IntForm &C, std::vector<Box> &Boxes,
                        bool &Exact) {
  std::vector<Box> Out;
  for (Box &B : Boxes) {
    // Variables fixed in this box are constants here.
    i64 K = C.C0;
    std::vector<unsigned> Vars;
    for (size_t V = 0; V < C.Coef.size(); ++V) {
      if (C.Coef[V] == 0)
        continue;
      if (B.Lo[V] == B.Hi[V]) {
        auto T = mul(C.Coef[V], B.Lo[V]);
        auto S = T ? add(K, *T) : std::nullopt;
        if (!S)
          return Outcome::Overflow;
        K = *S;
        continue;
      }
      Vars.push_back(static_cast<unsigned>(V));
    }
    if (Vars.empty()) {
      if (K <= 0)
        Out.push_back(std::move(B));
      continue;
    }
    if (Vars.size() == 1) {
      if (!clampVar(B, Vars[0], C.Coef[Vars[0]], K))
        return Outcome::Overflow;
      if (B.Lo[Vars[0]] <= B.Hi[Vars[0]])
        Out.push_back(std::move(B));
      continue;
    }
    if (Vars.size() == 2) {
      bool Overflow = false;
      unsigned U = Vars[0], W = Vars[1];
      auto S1 = splitBy(B, U, W, C.Coef[U], C.Coef[W], K, Overflow);
      auto S2 = splitBy(B, W, U, C.Coef[W], C.Coef[U], K, Overflow);
      if (Overflow)
        return Outcome::Overflow;
      const std::vector<Box> *Best = nullptr;
      if (S1 && (!S2 || S1->size() <= S2->size()))
        Best = &*S1;
      else if (S2)
        Best = &*S2;
      if (Best) {
        Out.insert(Out.end(), Best->begin(), Best->end());
        continue;
      }
    }
    Exact = false;
    if (tighten(B, C) == Outcome::Overflow)
      return Outcome::Overflow;
    if (!B.empty())
      Out.push_back(std::move(B));
  }
  Boxes = std::move(Out);
  if (Boxes.size() > MaxBoxes) {
    // Too many pieces to stay exact: keep their bounding box (a superset).
    Box Hull = Boxes[0];
    for (const Box &B : Boxes)
      for (size_t V = 0; V < B.Lo.size(); ++V) {
        Hull.Lo[V] = std::min(Hull.Lo[V], B.Lo[V]);
        Hull.Hi[V] = std::max(Hull.Hi[V], B.Hi[V]);
      }
    Boxes.assign(1, Hull);
    Exact = false;
  }
  return Outcome::Ok;
}

/// Replaces pairs of variables (U, W) that occur in every form only as
/// K*U + W (same K everywhere), with |K| no larger than W's extent, by one
/// variable G = K*U + W held in W's slot. G then takes every value of its
/// range, so a guard on the pair (i < n with i = ctaid*ntid + tid) becomes a
/// guard on one variable and clamps exactly.
Outcome fuse(Box &B, std::vector<IntForm *> &Forms,
             const std::vector<IntForm> &Constraints) {
  bool Changed = true;
  while (Changed) {
    Changed = false;
    for (const IntForm &C : Constraints) {
      for (size_t U = 0; U < C.Coef.size() && !Changed; ++U) {
        for (size_t W = 0; W < C.Coef.size() && !Changed; ++W) {
          i64 CU = C.Coef[U], CW = C.Coef[W];
          if (U == W || CU == 0 || CW == 0 || B.Lo[U] == B.Hi[U] ||
              B.Lo[W] == B.Hi[W])
            continue;
          if (CU % CW != 0)
            continue;
          i64 K = CU / CW;
          i64 ExtW = B.Hi[W] - B.Lo[W] + 1; // ranges are small enough
          if (K == 0 || K > ExtW || -K > ExtW)
            continue;
          bool Consistent = true;
          for (IntForm *F : Forms) {
            auto P = mul(K, F->Coef[W]);
            if (!P || *P != F->Coef[U]) {
              Consistent = false;
              break;
            }
          }
          if (!Consistent)
            continue;
          auto A1 = mul(K, B.Lo[U]), A2 = mul(K, B.Hi[U]);
          if (!A1 || !A2)
            return Outcome::Overflow;
          auto Lo = add(std::min(*A1, *A2), B.Lo[W]);
          auto Hi = add(std::max(*A1, *A2), B.Hi[W]);
          if (!Lo || !Hi)
            return Outcome::Overflow;
          B.Lo[W] = *Lo;
          B.Hi[W] = *Hi;
          B.Lo[U] = B.Hi[U] = 0;
          for (IntForm *F : Forms)
            F->Coef[U] = 0;
          Changed = true;
        }
      }
      if (Changed)
        break;
    }
  }
  return Outcome::Ok;
}

//===-- Shapes ----------------------------------------------------------===//

/// The set { A(x) + b : x in B, 0 <= b < Width } as regions. Variables are
/// taken by increasing |coefficient|: a stride no larger than the contiguous
/// run extends it, a stride that continues the last lattice extends that
/// lattice, any other stride opens a new dimension. Every step is an exact
/// identity; more than two outer dimensions are enumerated, or replaced by the
/// hull (setting Exact to false) when that would make too many regions.
Outcome shapeOf(const IntForm &A, const Box &B, i64 Width,
                std::vector<ByteRegion> &Out, bool &Exact) {
  i64 Base = A.C0;
  struct Dim {
    i64 N, P;
  };
  std::vector<Dim> Terms;
  for (size_t V = 0; V < A.Coef.size(); ++V) {
    i64 C = A.Coef[V];
    if (C == 0)
      continue;
    auto T = mul(C, C > 0 ? B.Lo[V] : B.Hi[V]);
    auto S = T ? add(Base, *T) : std::nullopt;
    if (!S || C == std::numeric_limits<i64>::min())
      return Outcome::Overflow;
    Base = *S;
    auto Ext = sub(B.Hi[V], B.Lo[V]);
    if (!Ext)
      return Outcome::Overflow;
    if (*Ext > 0)
      Terms.push_back({*Ext + 1, C < 0 ? -C : C});
  }
  std::sort(Terms.begin(), Terms.end(),
            [](const Dim &X, const Dim &Y) { return X.P < Y.P; });
  i64 Run = Width;
  std::vector<Dim> Outer;
  for (const Dim &T : Terms) {
    if (Outer.empty() && T.P <= Run) {
      auto E = mul(T.P, T.N - 1);
      auto R = E ? add(Run, *E) : std::nullopt;
      if (!R)
        return Outcome::Overflow;
      Run = *R;
    } else if (!Outer.empty() && T.P % Outer.back().P == 0 &&
               T.P / Outer.back().P <= Outer.back().N) {
      auto E = mul(T.P / Outer.back().P, T.N - 1);
      auto N = E ? add(Outer.back().N, *E) : std::nullopt;
      if (!N)
        return Outcome::Overflow;
      Outer.back().N = *N;
    } else {
      Outer.push_back(T);
    }
    while (!Outer.empty() && Run >= Outer.front().P) {
      auto E = mul(Outer.front().P, Outer.front().N - 1);
      auto R = E ? add(Run, *E) : std::nullopt;
      if (!R)
        return Outcome::Overflow;
      Run = *R;
      Outer.erase(Outer.begin());
    }
  }
  if (Outer.size() <= 2) {
    ByteRegion R;
    R.Base = Base;
    R.Bytes = Run;
    if (Outer.size() >= 1) {
      R.Rows = Outer[0].N;
      R.Pitch = Outer[0].P;
    }
    if (Outer.size() == 2) {
      R.Planes = Outer[1].N;
      R.PlanePitch = Outer[1].P;
    }
    Out.push_back(R);
    return Outcome::Ok;
  }
  // Enumerate the dimensions past the second.
  i64 Combos = 1;
  for (size_t I = 2; I < Outer.size(); ++I) {
    auto C = mul(Combos, Outer[I].N);
    if (!C || *C > MaxRegionsPerShape) {
      Combos = -1;
      break;
    }
    Combos = *C;
  }
  if (Combos < 0) {
    // The hull: from Base to the last byte of the last element.
    i64 Span = Run;
    for (const Dim &D : Outer) {
      auto E = mul(D.P, D.N - 1);
      auto S = E ? add(Span, *E) : std::nullopt;
      if (!S)
        return Outcome::Overflow;
      Span = *S;
    }
    ByteRegion R;
    R.Base = Base;
    R.Bytes = Span;
    Out.push_back(R);
    Exact = false;
    return Outcome::Ok;
  }
  std::vector<i64> Idx(Outer.size(), 0);
  for (i64 K = 0; K < Combos; ++K) {
    i64 Off = Base;
    for (size_t I = 2; I < Outer.size(); ++I) {
      auto E = mul(Outer[I].P, Idx[I]);
      auto S = E ? add(Off, *E) : std::nullopt;
      if (!S)
        return Outcome::Overflow;
      Off = *S;
    }
    ByteRegion R;
    R.Base = Off;
    R.Bytes = Run;
    R.Rows = Outer[0].N;
    R.Pitch = Outer[0].P;
    R.Planes = Outer[1].N;
    R.PlanePitch = Outer[1].P;
    Out.push_back(R);
    for (size_t I = 2; I < Outer.size(); ++I) {
      if (++Idx[I] < Outer[I].N)
        break;
      Idx[I] = 0;
    }
  }
  return Outcome::Ok;
}

} // namespace

//===-- Accesses --------------------------------------------------------===//

std::vector<PieceBox> decompose(const LaunchConfig &L) {
  std::vector<PieceBox> Out;
  const i64 GX = L.Grid[0], GY = L.Grid[1];
  const i64 Plane = GX * GY;
  i64 Lo = L.First, Hi = L.First + L.Count;
  while (Lo < Hi) {
    i64 X = Lo % GX, Y = (Lo / GX) % GY, Z = Lo / Plane;
    PieceBox P;
    if (X != 0 || Hi - Lo < GX) {
      i64 XE = std::min(GX, X + (Hi - Lo));
      P = {{X, Y, Z}, {XE - 1, Y, Z}};
      Lo += XE - X;
    } else if (Y != 0 || Hi - Lo < Plane) {
      i64 Rows = std::min(GY - Y, (Hi - Lo) / GX);
      P = {{0, Y, Z}, {GX - 1, Y + Rows - 1, Z}};
      Lo += Rows * GX;
    } else {
      i64 Planes = (Hi - Lo) / Plane;
      P = {{0, 0, Z}, {GX - 1, GY - 1, Z + Planes - 1}};
      Lo += Planes * Plane;
    }
    Out.push_back(P);
  }
  return Out;
}

AccessResult evalAccess(const Env &E, const Access &A, const PieceBox &Piece) {
  AccessResult Res;
  auto Unknown = [&] {
    Res.K = AccessResult::Unknown;
    Res.Regions.clear();
    return Res;
  };
  Box B;
  B.Lo.assign(A.NumVars, 0);
  B.Hi.assign(A.NumVars, 0);
  for (unsigned D = 0; D < 3; ++D) {
    B.Hi[D] = E.L.Block[D] - 1;
    B.Lo[3 + D] = Piece.Lo[D];
    B.Hi[3 + D] = Piece.Hi[D];
  }
  bool Exact = A.Exact;
  std::vector<IntForm> Constraints;
  IntForm Addr;
  // Reach bounds the points that pass the guards read so far. Checks and
  // hulls only need to hold there: a guard's own checks held on the points
  // that passed the guards before it, so on Reach every guard computes what
  // the kernel computes, and points outside never run the access.
  Box Reach = B;
  for (const Line &L : A.Lines) {
    switch (L.K) {
    case Line::VarRange: {
      auto Lo = E.eval(L.Lo), Hi = E.eval(L.Hi);
      if (!Lo || !Hi)
        return Unknown();
      if (*Lo > *Hi)
        return Res; // e.g. a loop that runs no iteration: nothing touched
      B.Lo[L.Var] = Reach.Lo[L.Var] = *Lo;
      B.Hi[L.Var] = Reach.Hi[L.Var] = *Hi;
      break;
    }
    case Line::VarHull: {
      i64 Lo = std::numeric_limits<i64>::max();
      i64 Hi = std::numeric_limits<i64>::min();
      for (const Form &F : L.Forms) {
        auto IF = evalForm(E, F, A.NumVars);
        auto R = IF ? formRange(*IF, Reach) : std::nullopt;
        if (!R)
          return Unknown();
        Lo = std::min(Lo, R->first);
        Hi = std::max(Hi, R->second);
      }
      B.Lo[L.Var] = Reach.Lo[L.Var] = Lo;
      B.Hi[L.Var] = Reach.Hi[L.Var] = Hi;
      Exact = false;
      break;
    }
    case Line::Le: {
      auto IF = evalForm(E, L.Forms[0], A.NumVars);
      if (!IF)
        return Unknown();
      bool HasVars = false;
      for (i64 C : IF->Coef)
        HasVars |= C != 0;
      if (!HasVars) {
        if (IF->C0 > 0)
          return Res; // a launch-wide guard is false: nothing touched
        break;
      }
      if (tighten(Reach, *IF) == Outcome::Overflow)
        return Unknown();
      if (Reach.empty())
        return Res; // no thread passes the guards
      Constraints.push_back(std::move(*IF));
      break;
    }
    case Line::Check: {
      auto IF = evalForm(E, L.Forms[0], A.NumVars);
      auto R = IF ? formRange(*IF, Reach) : std::nullopt;
      auto Lo = E.eval(L.Lo), Hi = E.eval(L.Hi);
      if (!R || !Lo || !Hi || R->first < *Lo || R->second > *Hi)
        return Unknown();
      break;
    }
    case Line::At: {
      auto IF = evalForm(E, L.Forms[0], A.NumVars);
      if (!IF)
        return Unknown();
      Addr = std::move(*IF);
      break;
    }
    }
  }
  if (B.empty())
    return Res;
  std::vector<IntForm *> Forms;
  for (IntForm &C : Constraints)
    Forms.push_back(&C);
  Forms.push_back(&Addr);
  if (fuse(B, Forms, Constraints) == Outcome::Overflow)
    return Unknown();
  std::vector<Box> Boxes{B};
  for (const IntForm &C : Constraints)
    if (applyConstraint(C, Boxes, Exact) == Outcome::Overflow)
      return Unknown();
  for (const Box &X : Boxes)
    if (shapeOf(Addr, X, A.Width, Res.Regions, Exact) == Outcome::Overflow)
      return Unknown();
  Res.K = Res.Regions.empty() ? AccessResult::Nothing : AccessResult::Touched;
  Res.Exact = Exact;
  return Res;
}

} // namespace footprint
} // namespace rt
} // namespace cleave
