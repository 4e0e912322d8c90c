//===- FootprintAnalysis.cpp - Bytes a range of blocks touches ------------===//
//
// Part of Cleave. For every memory access of a kernel whose address is a
// pointer parameter plus an offset, the offset is turned into an affine form
//
//     C0 + sum_v Coef_v * v
//
// over the thread ids, block ids, loop iteration counters and a few
// over-approximated ("opaque") values, where C0 and the coefficients are
// expressions in the launch dimensions and the scalar arguments. The
// conditions under which the access executes become affine constraints
// "form <= 0". The runtime evaluates all of this for a concrete launch and
// block range (runtime/lib/program/Footprint.cpp, docs/footprints.md).
//
// The integer arithmetic of the kernel wraps; the forms do not. Each form is
// the mathematical value of the kernel's expression; wherever a narrower
// integer could have wrapped (an i32 index without nsw, say), the form comes
// with a "check" that the runtime evaluates over the launch: if the
// mathematical value stays within the type's range, the wrapped value equals
// it, otherwise the footprint is Unknown for that launch. This is stronger
// than relying on nsw flags alone (clang drops them from blockIdx.x *
// blockDim.x + threadIdx.x) and still never unsound.
//
// An access is Exact when every value in its form is known exactly and every
// condition on the path to it was turned into constraints that hold exactly
// when the access executes; otherwise it is Bounded (necessary conditions
// only, opaque values by their ranges) or, when the offset has no affine
// over-approximation, Unknown.
//
//===----------------------------------------------------------------------===//
#include "cleave/ABI/FormatVersions.h"
#include "cleave/Analysis/DeviceReports.h"
#include "cleave/Analysis/Footprint.h"
#include "cleave/Support/KernelInfo.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Analysis/LoopInfo.h"
#include "llvm/Analysis/ScalarEvolution.h"
#include "llvm/Analysis/ScalarEvolutionExpressions.h"
#include "llvm/Analysis/ValueTracking.h"
#include "llvm/IR/CFG.h"
#include "llvm/IR/Dominators.h"
#include "llvm/IR/Function.h"
#include "llvm/IR/InstIterator.h"
#include "llvm/IR/Instructions.h"
#include "llvm/IR/IntrinsicInst.h"
#include "llvm/IR/IntrinsicsNVPTX.h"
#include "llvm/IR/PatternMatch.h"
#include "llvm/Support/raw_ostream.h"

#include <array>
#include <map>
#include <optional>

using namespace llvm;
using namespace llvm::PatternMatch;

namespace cleave {

namespace {

//===----------------------------------------------------------------------===//
// Symbolic expressions over the launch symbols
//===----------------------------------------------------------------------===//

struct Expr;
using ExprRef = std::shared_ptr<const Expr>;

/// An expression in first, count, grid.*, block.* and argN. Division is
/// floor division, as in the runtime.
struct Expr {
  enum Kind { Const, Sym, Add, Sub, Mul, Div, Min, Max } K = Const;
  int64_t C = 0;
  std::string Name;
  ExprRef L, R;
};

ExprRef cnst(int64_t V) {
  auto E = std::make_shared<Expr>();
  E->C = V;
  return E;
}

ExprRef sym(StringRef Name) {
  auto E = std::make_shared<Expr>();
  E->K = Expr::Sym;
  E->Name = Name.str();
  return E;
}

bool isConst(const ExprRef &E, int64_t &V) {
  if (E->K != Expr::Const)
    return false;
  V = E->C;
  return true;
}

bool isConstEq(const ExprRef &E, int64_t Want) {
  return E->K == Expr::Const && E->C == Want;
}

ExprRef node(Expr::Kind K, ExprRef L, ExprRef R) {
  auto E = std::make_shared<Expr>();
  E->K = K;
  E->L = std::move(L);
  E->R = std::move(R);
  return E;
}

/// -1 * X is how negation is represented.
bool isNegation(const ExprRef &E, ExprRef &X) {
  if (E->K == Expr::Mul && isConstEq(E->L, -1)) {
    X = E->R;
    return true;
  }
  return false;
}

ExprRef mkMul(ExprRef A, ExprRef B);

ExprRef mkAdd(ExprRef A, ExprRef B) {
  int64_t X, Y, S;
  if (isConst(A, X) && isConst(B, Y) && !__builtin_add_overflow(X, Y, &S))
    return cnst(S);
  if (isConstEq(A, 0))
    return B;
  if (isConstEq(B, 0))
    return A;
  // Constants go to the right, where they read as "x + 3" or "x - 3".
  if (A->K == Expr::Const)
    std::swap(A, B);
  ExprRef N;
  if (isNegation(B, N))
    return node(Expr::Sub, A, N);
  if (isNegation(A, N))
    return node(Expr::Sub, B, N);
  // (x + c1) + c2 -> x + (c1 + c2)
  if (B->K == Expr::Const && A->K == Expr::Add && A->R->K == Expr::Const &&
      !__builtin_add_overflow(A->R->C, B->C, &S))
    return mkAdd(A->L, cnst(S));
  return node(Expr::Add, A, B);
}

ExprRef mkMul(ExprRef A, ExprRef B) {
  int64_t X, Y, P;
  if (isConst(A, X) && isConst(B, Y) && !__builtin_mul_overflow(X, Y, &P))
    return cnst(P);
  // Constants go to the left, where they read as "4*x".
  if (B->K == Expr::Const)
    std::swap(A, B);
  if (isConstEq(A, 0))
    return A;
  if (isConstEq(A, 1))
    return B;
  // c1 * (c2 * x) -> (c1 * c2) * x
  if (A->K == Expr::Const && B->K == Expr::Mul && B->L->K == Expr::Const &&
      !__builtin_mul_overflow(A->C, B->L->C, &P))
    return mkMul(cnst(P), B->R);
  // -1 * (a - b) -> b - a
  if (isConstEq(A, -1) && B->K == Expr::Sub)
    return node(Expr::Sub, B->R, B->L);
  return node(Expr::Mul, A, B);
}

ExprRef mkNeg(ExprRef A) { return mkMul(cnst(-1), std::move(A)); }

ExprRef mkSub(ExprRef A, ExprRef B) { return mkAdd(std::move(A), mkNeg(B)); }

ExprRef mkDiv(ExprRef A, ExprRef B) {
  int64_t X, Y;
  if (isConstEq(B, 1))
    return A;
  if (isConst(A, X) && isConst(B, Y) && Y != 0 &&
      !(X == INT64_MIN && Y == -1)) {
    int64_t Q = X / Y;
    if ((X % Y != 0) && ((X < 0) != (Y < 0)))
      --Q;
    return cnst(Q);
  }
  return node(Expr::Div, A, B);
}

ExprRef mkMinMax(bool IsMax, ExprRef A, ExprRef B) {
  int64_t X, Y;
  if (isConst(A, X) && isConst(B, Y))
    return cnst(IsMax ? std::max(X, Y) : std::min(X, Y));
  return node(IsMax ? Expr::Max : Expr::Min, A, B);
}

/// Serialized (prefix) form.
void printSExpr(raw_ostream &OS, const ExprRef &E) {
  switch (E->K) {
  case Expr::Const:
    OS << E->C;
    return;
  case Expr::Sym:
    OS << E->Name;
    return;
  default:
    break;
  }
  static const char *Ops[] = {"", "", "+", "-", "*", "/", "min", "max"};
  OS << '(' << Ops[E->K] << ' ';
  printSExpr(OS, E->L);
  OS << ' ';
  printSExpr(OS, E->R);
  OS << ')';
}

std::string keyOf(const ExprRef &E) {
  std::string S;
  raw_string_ostream OS(S);
  printSExpr(OS, E);
  return S;
}

/// A polynomial over atoms (symbols and division, min and max nodes) with
/// integer coefficients. Monomials are keyed by the sorted serialized forms
/// of their atoms, so equal expressions meet and cancel.
struct Poly {
  struct Mono {
    int64_t Coef = 0;
    std::vector<ExprRef> Atoms;
  };
  std::map<std::vector<std::string>, Mono> Terms;
};

ExprRef simplify(const ExprRef &E);

bool addPoly(Poly &Acc, const Poly &P, int64_t Sign) {
  for (const auto &[Key, M] : P.Terms) {
    auto &Dst = Acc.Terms[Key];
    if (Dst.Atoms.empty())
      Dst.Atoms = M.Atoms;
    int64_t C;
    if (__builtin_mul_overflow(M.Coef, Sign, &C) ||
        __builtin_add_overflow(Dst.Coef, C, &Dst.Coef))
      return false;
    if (Dst.Coef == 0)
      Acc.Terms.erase(Key);
  }
  return true;
}

std::optional<Poly> toPoly(const ExprRef &E, unsigned Depth) {
  if (Depth > 32)
    return std::nullopt;
  Poly P;
  switch (E->K) {
  case Expr::Const:
    if (E->C != 0)
      P.Terms[{}] = {E->C, {}};
    return P;
  case Expr::Add:
  case Expr::Sub: {
    auto L = toPoly(E->L, Depth + 1), R = toPoly(E->R, Depth + 1);
    if (!L || !R || !addPoly(P, *L, 1) ||
        !addPoly(P, *R, E->K == Expr::Add ? 1 : -1))
      return std::nullopt;
    return P;
  }
  case Expr::Mul: {
    auto L = toPoly(E->L, Depth + 1), R = toPoly(E->R, Depth + 1);
    if (!L || !R || L->Terms.size() * R->Terms.size() > 64)
      return std::nullopt;
    for (const auto &[KL, ML] : L->Terms)
      for (const auto &[KR, MR] : R->Terms) {
        Poly One;
        std::vector<std::pair<std::string, ExprRef>> Atoms;
        for (size_t I = 0; I < KL.size(); ++I)
          Atoms.push_back({KL[I], ML.Atoms[I]});
        for (size_t I = 0; I < KR.size(); ++I)
          Atoms.push_back({KR[I], MR.Atoms[I]});
        llvm::sort(Atoms, [](const auto &A, const auto &B) {
          return A.first < B.first;
        });
        std::vector<std::string> Key;
        Poly::Mono M;
        if (__builtin_mul_overflow(ML.Coef, MR.Coef, &M.Coef))
          return std::nullopt;
        for (auto &A : Atoms) {
          Key.push_back(A.first);
          M.Atoms.push_back(A.second);
        }
        One.Terms[Key] = M;
        if (!addPoly(P, One, 1))
          return std::nullopt;
      }
    return P;
  }
  case Expr::Sym:
  case Expr::Div:
  case Expr::Min:
  case Expr::Max: {
    ExprRef A = E;
    if (E->K == Expr::Div)
      A = mkDiv(simplify(E->L), simplify(E->R));
    else if (E->K != Expr::Sym)
      A = mkMinMax(E->K == Expr::Max, simplify(E->L), simplify(E->R));
    if (A->K == Expr::Const)
      return toPoly(A, Depth + 1);
    P.Terms[{keyOf(A)}] = {1, {A}};
    return P;
  }
  }
  return std::nullopt;
}

/// Monomials of higher degree first, the constant last: "4*arg2*tid - 8".
ExprRef fromPoly(const Poly &P) {
  std::vector<const Poly::Mono *> Monos;
  for (const auto &KV : P.Terms)
    Monos.push_back(&KV.second);
  std::stable_sort(Monos.begin(), Monos.end(),
                   [](const Poly::Mono *A, const Poly::Mono *B) {
                     return A->Atoms.size() > B->Atoms.size();
                   });
  ExprRef Sum;
  int64_t Const = 0;
  for (const Poly::Mono *M : Monos)
    if (M->Atoms.empty())
      Const = M->Coef;
  // "1 - n" rather than "-n + 1".
  if (Const > 0 && !Monos.empty() && !Monos[0]->Atoms.empty() &&
      Monos[0]->Coef < 0) {
    Sum = cnst(Const);
    Const = 0;
  }
  for (const Poly::Mono *M : Monos) {
    if (M->Atoms.empty())
      continue;
    ExprRef Prod;
    for (const ExprRef &A : M->Atoms)
      Prod = Prod ? node(Expr::Mul, Prod, A) : A;
    int64_t Mag = M->Coef < 0 ? -M->Coef : M->Coef;
    if (Mag != 1)
      Prod = node(Expr::Mul, cnst(Mag), Prod);
    if (!Sum)
      Sum = M->Coef < 0 ? node(Expr::Mul, cnst(-1), Prod) : Prod;
    else
      Sum = node(M->Coef < 0 ? Expr::Sub : Expr::Add, Sum, Prod);
  }
  if (!Sum)
    return cnst(Const);
  if (Const != 0)
    Sum = node(Expr::Add, Sum, cnst(Const));
  return Sum;
}

ExprRef simplify(const ExprRef &E) {
  auto P = toPoly(E, 0);
  return P ? fromPoly(*P) : E;
}

/// Readable infix form; Prec is the binding strength the context needs.
void printInfix(raw_ostream &OS, const ExprRef &E, int Prec = 0) {
  ExprRef N;
  switch (E->K) {
  case Expr::Const:
    if (E->C < 0 && Prec > 0)
      OS << '(' << E->C << ')';
    else
      OS << E->C;
    return;
  case Expr::Sym:
    OS << E->Name;
    return;
  case Expr::Min:
  case Expr::Max:
    OS << (E->K == Expr::Min ? "min(" : "max(");
    printInfix(OS, E->L);
    OS << ", ";
    printInfix(OS, E->R);
    OS << ')';
    return;
  case Expr::Add:
  case Expr::Sub: {
    if (Prec > 1)
      OS << '(';
    printInfix(OS, E->L, 1);
    int64_t C;
    if (E->K == Expr::Add && isConst(E->R, C) && C < 0)
      OS << " - " << -C;
    else {
      OS << (E->K == Expr::Add ? " + " : " - ");
      printInfix(OS, E->R, E->K == Expr::Add ? 1 : 2);
    }
    if (Prec > 1)
      OS << ')';
    return;
  }
  case Expr::Mul:
    if (isNegation(E, N)) {
      // Products associate: -4*x needs no parentheses.
      OS << '-';
      printInfix(OS, N, N->K == Expr::Mul ? 2 : 3);
      return;
    }
    [[fallthrough]];
  case Expr::Div:
    if (Prec > 2)
      OS << '(';
    // A quotient inside a product gets parentheses: floor division does not
    // commute with the multiplication.
    printInfix(OS, E->L, E->L->K == Expr::Div ? 3 : 2);
    OS << (E->K == Expr::Mul ? "*" : " / ");
    printInfix(OS, E->R, E->K == Expr::Mul && E->R->K == Expr::Mul ? 2 : 3);
    if (Prec > 2)
      OS << ')';
    return;
  }
}

//===----------------------------------------------------------------------===//
// Affine forms over variables
//===----------------------------------------------------------------------===//

/// Variables 0-5 are the thread and block ids; the rest are declared by the
/// access that uses them.
enum : unsigned {
  VarTidX,
  VarTidY,
  VarTidZ,
  VarCtaidX,
  VarCtaidY,
  VarCtaidZ,
  NumBuiltinVars
};
const char *const BuiltinVarNames[NumBuiltinVars] = {
    "tid.x", "tid.y", "tid.z", "ctaid.x", "ctaid.y", "ctaid.z"};

struct Form {
  ExprRef C0 = cnst(0);
  /// Sorted by variable, no zero coefficient.
  std::map<unsigned, ExprRef> Terms;

  bool hasVars() const { return !Terms.empty(); }
};

Form formConst(ExprRef E) {
  Form F;
  F.C0 = std::move(E);
  return F;
}

Form formVar(unsigned V) {
  Form F;
  F.Terms[V] = cnst(1);
  return F;
}

Form addForms(const Form &A, const Form &B) {
  Form R = A;
  R.C0 = mkAdd(A.C0, B.C0);
  for (const auto &[V, C] : B.Terms) {
    auto It = R.Terms.find(V);
    if (It == R.Terms.end()) {
      R.Terms[V] = C;
      continue;
    }
    It->second = mkAdd(It->second, C);
    if (isConstEq(It->second, 0))
      R.Terms.erase(It);
  }
  return R;
}

Form scaleForm(const Form &A, const ExprRef &S) {
  Form R;
  R.C0 = mkMul(S, A.C0);
  if (isConstEq(S, 0))
    return R;
  for (const auto &[V, C] : A.Terms)
    R.Terms[V] = mkMul(S, C);
  return R;
}

Form negForm(const Form &A) { return scaleForm(A, cnst(-1)); }

/// Simplifies every expression of F and drops terms that cancel.
void normalize(Form &F) {
  F.C0 = simplify(F.C0);
  for (auto It = F.Terms.begin(); It != F.Terms.end();) {
    It->second = simplify(It->second);
    if (isConstEq(It->second, 0))
      It = F.Terms.erase(It);
    else
      ++It;
  }
}
Form subForms(const Form &A, const Form &B) { return addForms(A, negForm(B)); }

//===----------------------------------------------------------------------===//
// Access records
//===----------------------------------------------------------------------===//

struct FLine {
  enum Kind { VarRange, VarHull, Le, Check, At } K;
  unsigned Var = 0;
  ExprRef Lo, Hi;
  SmallVector<Form, 2> Forms;
};

struct AccessRec {
  unsigned Arg = 0;
  bool Write = false;
  uint64_t Width = 1;
  bool Exact = true;
  std::vector<std::string> VarNames;
  std::vector<FLine> Lines;
  /// Why the access is not exact, for the printer.
  std::vector<std::string> Notes;
  const Instruction *Inst = nullptr;
};

struct UnknownRec {
  unsigned Arg;
  bool Write;
  std::string Why;
};

struct ArgInfo {
  enum Kind { Ptr, Int, Other } K = Other;
  unsigned Bits = 0;
  std::string Name;
};

void printForm(raw_ostream &OS, const Form &F,
               const std::vector<std::string> &Names) {
  OS << "(affine ";
  printSExpr(OS, F.C0);
  for (const auto &[V, C] : F.Terms) {
    OS << " (" << Names[V] << ' ';
    printSExpr(OS, C);
    OS << ')';
  }
  OS << ')';
}

/// "4*tid.x + 4*block.x*ctaid.x + 8"; with OmitC0 the constant is left out.
void printFormInfix(raw_ostream &OS, const Form &F,
                    const std::vector<std::string> &Names, bool OmitC0) {
  bool First = true;
  for (const auto &[V, C] : F.Terms) {
    ExprRef N;
    int64_t K;
    bool Neg = false;
    ExprRef Mag = C;
    if (isNegation(C, N)) {
      Neg = true;
      Mag = N;
    } else if (isConst(C, K) && K < 0) {
      Neg = true;
      Mag = cnst(-K);
    }
    if (First)
      OS << (Neg ? "-" : "");
    else
      OS << (Neg ? " - " : " + ");
    First = false;
    if (!isConstEq(Mag, 1)) {
      printInfix(OS, Mag, 2);
      OS << '*';
    }
    OS << Names[V];
  }
  if (OmitC0 && !First)
    return;
  int64_t K;
  if (First) {
    printInfix(OS, F.C0);
  } else if (isConst(F.C0, K)) {
    if (K > 0)
      OS << " + " << K;
    else if (K < 0)
      OS << " - " << -K;
  } else {
    ExprRef N;
    if (isNegation(F.C0, N)) {
      OS << " - ";
      printInfix(OS, N, 2);
    } else {
      OS << " + ";
      printInfix(OS, F.C0, 1);
    }
  }
}

/// Prints C0 <= 0 for a launch-wide C0 as "x <= c" or "x >= c", whichever
/// reads without a leading minus.
void printLaunchCondition(raw_ostream &OS, const ExprRef &C0) {
  auto P = toPoly(C0, 0);
  if (!P) {
    printInfix(OS, C0);
    OS << " <= 0";
    return;
  }
  int64_t C = 0;
  auto It = P->Terms.find({});
  if (It != P->Terms.end()) {
    C = It->second.Coef;
    P->Terms.erase(It);
  }
  if (P->Terms.empty()) {
    OS << C << " <= 0";
    return;
  }
  // Lead with a positive term: the highest-degree one decides.
  const Poly::Mono *Lead = nullptr;
  for (const auto &KV : P->Terms)
    if (!Lead || KV.second.Atoms.size() > Lead->Atoms.size())
      Lead = &KV.second;
  if (Lead->Coef < 0) {
    for (auto &KV : P->Terms)
      KV.second.Coef = -KV.second.Coef;
    printInfix(OS, fromPoly(*P));
    OS << " >= " << C;
  } else {
    printInfix(OS, fromPoly(*P));
    OS << " <= " << -C;
  }
}

/// True when every coefficient of F is negative as written.
bool allTermsNegative(const Form &F) {
  for (const auto &KV : F.Terms) {
    ExprRef N;
    int64_t K;
    if (!isNegation(KV.second, N) && !(isConst(KV.second, K) && K < 0))
      return false;
  }
  return F.hasVars();
}

void serializeAccess(raw_ostream &OS, const AccessRec &A) {
  OS << "access " << A.Arg << (A.Write ? " write " : " read ") << A.Width
     << (A.Exact ? " exact" : " bounded") << '\n';
  for (const FLine &L : A.Lines) {
    OS << "  ";
    switch (L.K) {
    case FLine::VarRange:
      OS << "var " << A.VarNames[L.Var] << " range ";
      printSExpr(OS, L.Lo);
      OS << ' ';
      printSExpr(OS, L.Hi);
      break;
    case FLine::VarHull:
      OS << "var " << A.VarNames[L.Var] << " hull";
      for (const Form &F : L.Forms) {
        OS << ' ';
        printForm(OS, F, A.VarNames);
      }
      break;
    case FLine::Le:
      OS << "le ";
      printForm(OS, L.Forms[0], A.VarNames);
      break;
    case FLine::Check:
      OS << "check ";
      printForm(OS, L.Forms[0], A.VarNames);
      OS << ' ';
      printSExpr(OS, L.Lo);
      OS << ' ';
      printSExpr(OS, L.Hi);
      break;
    case FLine::At:
      OS << "at ";
      printForm(OS, L.Forms[0], A.VarNames);
      break;
    }
    OS << '\n';
  }
  OS << "end\n";
}

} // namespace

struct FootprintImpl {
  bool IsKernel = false;
  std::string Name;
  std::vector<ArgInfo> Args;
  std::vector<AccessRec> Accesses;
  std::vector<UnknownRec> Unknowns;
  bool Untracked[2] = {false, false};
  std::string UntrackedWhy[2];
  /// Per argument: [read, write] classes and whether it is accessed so.
  std::vector<std::array<FootprintClass, 2>> Class;
  std::vector<std::array<bool, 2>> Accessed;
};

namespace {

//===----------------------------------------------------------------------===//
// Control: the conditions under which a block executes
//===----------------------------------------------------------------------===//

/// The blocks of one loop (or of the function) with every sub-loop collapsed
/// into one node and the back edges removed: a DAG for well-formed loops.
struct RegionGraph {
  static constexpr unsigned Exit = ~0u;     ///< leaves the region
  static constexpr unsigned Continue = ~1u; ///< back edge to the header
  struct Node {
    BasicBlock *BB = nullptr; ///< null for a sub-loop
    const Loop *Sub = nullptr;
    SmallVector<unsigned, 2> Succ;
    SmallVector<unsigned, 2> Pred; ///< nodes only
    unsigned NumExitEdges = 0;     ///< sub-loops: distinct exit edges
  };
  const Loop *L = nullptr;
  std::vector<Node> Nodes;
  DenseMap<const BasicBlock *, unsigned> Index;
  unsigned Entry = Exit;

  unsigned nodeOf(const BasicBlock *BB) const {
    auto It = Index.find(BB);
    return It == Index.end() ? Exit : It->second;
  }
};

RegionGraph buildRegion(Function &F, LoopInfo &LI, const Loop *L) {
  RegionGraph G;
  G.L = L;
  DenseMap<const Loop *, unsigned> SubIndex;
  auto Add = [&](BasicBlock &BB) {
    const Loop *BL = LI.getLoopFor(&BB);
    if (BL == L) {
      G.Index[&BB] = G.Nodes.size();
      G.Nodes.emplace_back();
      G.Nodes.back().BB = &BB;
      return;
    }
    // The sub-loop of L that contains BB.
    while (BL && BL->getParentLoop() != L)
      BL = BL->getParentLoop();
    if (!BL)
      return;
    auto [It, New] = SubIndex.try_emplace(BL, G.Nodes.size());
    if (New) {
      G.Nodes.emplace_back();
      G.Nodes.back().Sub = BL;
    }
    G.Index[&BB] = It->second;
  };
  if (L) {
    for (BasicBlock *BB : L->blocks())
      Add(*BB);
  } else {
    for (BasicBlock &BB : F)
      Add(BB);
  }
  auto Target = [&](BasicBlock *S) -> unsigned {
    if (L && S == L->getHeader())
      return RegionGraph::Continue;
    return G.nodeOf(S);
  };
  for (unsigned N = 0; N < G.Nodes.size(); ++N) {
    auto &Nd = G.Nodes[N];
    SmallVector<std::pair<BasicBlock *, BasicBlock *>, 4> Edges;
    if (Nd.BB) {
      for (BasicBlock *S : successors(Nd.BB))
        Edges.push_back({Nd.BB, S});
    } else {
      SmallVector<std::pair<BasicBlock *, BasicBlock *>, 4> ExitEdges;
      Nd.Sub->getExitEdges(ExitEdges);
      for (auto &E : ExitEdges)
        Edges.push_back({const_cast<BasicBlock *>(E.first),
                         const_cast<BasicBlock *>(E.second)});
      Nd.NumExitEdges = Edges.size();
    }
    // Back edges stay (as Continue): they leave the iteration, so a branch
    // whose other side continues the loop still guards what follows it.
    for (auto &E : Edges) {
      unsigned T = Target(E.second);
      if (!is_contained(Nd.Succ, T))
        Nd.Succ.push_back(T);
    }
  }
  for (unsigned N = 0; N < G.Nodes.size(); ++N)
    for (unsigned S : G.Nodes[N].Succ)
      if (S < G.Nodes.size())
        G.Nodes[S].Pred.push_back(N);
  G.Entry = G.nodeOf(L ? L->getHeader() : &F.getEntryBlock());
  return G;
}

//===----------------------------------------------------------------------===//
// The builder of one access record
//===----------------------------------------------------------------------===//

/// "%14" or "%cmp": how a value reads in the IR.
std::string describe(const Value *V) {
  std::string S;
  raw_string_ostream OS(S);
  V->printAsOperand(OS, /*PrintType=*/false);
  return S;
}

struct Variant {
  ValueToSCEVMapTy Map;
  SmallVector<std::pair<BasicBlock *, BasicBlock *>, 2> Edges;
};

class AccessBuilder {
public:
  AccessBuilder(Function &F, ScalarEvolution &SE, LoopInfo &LI,
                DominatorTree &DT, std::map<const Loop *, RegionGraph> &Graphs,
                const std::vector<ArgInfo> &Args, BasicBlock *Target,
                const Variant &V, AccessRec &R)
      : F(F), SE(SE), LI(LI), DT(DT), Graphs(Graphs), Args(Args), T(Target),
        V(V), R(R) {
    R.VarNames.assign(BuiltinVarNames, BuiltinVarNames + NumBuiltinVars);
  }

  /// Emits the constraints under which T executes. False when the variant's
  /// path does not exist.
  bool emitReach();

  /// The exact (signed) value of an integer or index SCEV as a form, with
  /// the checks that make it so.
  std::optional<Form> exactSigned(const SCEV *S);
  std::optional<Form> exactUnsigned(const SCEV *S);

  /// A fresh variable J in [0, Len) (bytes of a memory intrinsic).
  std::optional<Form> byteRangeVar(const SCEV *Len);

  void emitAt(const Form &F) {
    FLine L;
    L.K = FLine::At;
    L.Forms.push_back(F);
    pushLine(std::move(L));
  }

  /// Appends a line with its expressions simplified.
  void pushLine(FLine L) {
    for (Form &F : L.Forms)
      normalize(F);
    if (L.Lo)
      L.Lo = simplify(L.Lo);
    if (L.Hi)
      L.Hi = simplify(L.Hi);
    R.Lines.push_back(std::move(L));
  }

  void inexact(const Twine &Why) {
    R.Exact = false;
    std::string S = Why.str();
    if (!is_contained(R.Notes, S))
      R.Notes.push_back(S);
  }

  /// Why the last conversion that failed outright failed, for the user.
  const std::string &failure() const { return FailWhy; }

  const SCEV *rewrite(const SCEV *S) {
    if (V.Map.empty())
      return S;
    ValueToSCEVMapTy M = V.Map;
    return SCEVParameterRewriter::rewrite(S, SE, M);
  }

private:
  Function &F;
  ScalarEvolution &SE;
  LoopInfo &LI;
  DominatorTree &DT;
  std::map<const Loop *, RegionGraph> &Graphs;
  const std::vector<ArgInfo> &Args;
  BasicBlock *T;
  const Variant &V;
  AccessRec &R;
  DenseMap<const Loop *, unsigned> LoopVars;
  unsigned NumLoopVars = 0, NumOpaqueVars = 0, NumByteVars = 0;
  SmallPtrSet<const Value *, 8> PhisInProgress;
  std::string FailWhy;
  void failed(const Twine &Why) {
    if (FailWhy.empty())
      FailWhy = Why.str();
  }

  /// A form whose value is congruent to the SCEV's modulo 2^Bits (Modular)
  /// or equal to its signed value.
  struct CForm {
    Form F;
    bool Modular = false;
    unsigned Bits = 64;
  };
  std::optional<CForm> conv(const SCEV *S, unsigned Depth);
  std::optional<Form> convSigned(const SCEV *S, unsigned Depth);
  std::optional<Form> convUnsigned(const SCEV *S, unsigned Depth);
  Form makeSigned(const CForm &C);
  Form makeUnsigned(const CForm &C, const SCEV *S);
  std::optional<Form> fallback(const SCEV *S, unsigned Depth);
  std::optional<unsigned> loopVar(const Loop *L);
  unsigned newVar(std::string Name) {
    R.VarNames.push_back(std::move(Name));
    return R.VarNames.size() - 1;
  }
  void emitCheck(const Form &F, int64_t Lo, int64_t Hi);
  void emitLe(const Form &F) {
    FLine L;
    L.K = FLine::Le;
    L.Forms.push_back(F);
    normalize(L.Forms[0]);
    // The same guard reached twice (a && b, then b again) says nothing new.
    for (const FLine &E : R.Lines)
      if (E.K == FLine::Le && sameForm(E.Forms[0], L.Forms[0]))
        return;
    pushLine(std::move(L));
  }
  bool sameForm(const Form &A, const Form &B) const {
    std::string SA, SB;
    raw_string_ostream OA(SA), OB(SB);
    printForm(OA, A, R.VarNames);
    printForm(OB, B, R.VarNames);
    return SA == SB;
  }

  // Conditions.
  struct Mark {
    size_t Lines, Vars, Loops, Opaque;
  };
  Mark mark() const {
    return {R.Lines.size(), R.VarNames.size(), NumLoopVars, NumOpaqueVars};
  }
  void rollback(const Mark &M);
  bool addCondition(Value *C, bool Polarity, BasicBlock *At, unsigned Depth);
  bool addICmp(CmpInst::Predicate P, Value *A, Value *B, BasicBlock *At);
  bool reachIn(const RegionGraph &G, unsigned From, unsigned To);
  bool edgeCondition(const RegionGraph &G, BasicBlock *Q, BasicBlock *P);
  const RegionGraph &graph(const Loop *L) {
    auto It = Graphs.find(L);
    if (It == Graphs.end())
      It = Graphs.emplace(L, buildRegion(F, LI, L)).first;
    return It->second;
  }
};

void AccessBuilder::rollback(const Mark &M) {
  R.Lines.resize(M.Lines);
  R.VarNames.resize(M.Vars);
  NumLoopVars = M.Loops;
  NumOpaqueVars = M.Opaque;
  for (auto It = LoopVars.begin(); It != LoopVars.end();) {
    auto Cur = It++;
    if (Cur->second >= M.Vars)
      LoopVars.erase(Cur);
  }
}

void AccessBuilder::emitCheck(const Form &Unsimplified, int64_t Lo,
                              int64_t Hi) {
  Form F = Unsimplified;
  normalize(F);
  int64_t K;
  if (!F.hasVars() && isConst(F.C0, K) && K >= Lo && K <= Hi)
    return;
  FLine L;
  L.K = FLine::Check;
  L.Forms.push_back(F);
  L.Lo = cnst(Lo);
  L.Hi = cnst(Hi);
  // The same check twice is noise (i < n guards and a[i] share one).
  for (const FLine &E : R.Lines)
    if (E.K == FLine::Check && E.Lo->C == Lo && E.Hi->C == Hi &&
        sameForm(E.Forms[0], F))
      return;
  pushLine(std::move(L));
}

Form AccessBuilder::makeSigned(const CForm &C) {
  if (C.Modular && C.Bits < 64)
    emitCheck(C.F, -(int64_t(1) << (C.Bits - 1)),
              (int64_t(1) << (C.Bits - 1)) - 1);
  return C.F;
}

Form AccessBuilder::makeUnsigned(const CForm &C, const SCEV *S) {
  if (C.Bits >= 64) {
    if (!SE.isKnownNonNegative(S))
      emitCheck(C.F, 0, INT64_MAX);
    return C.F;
  }
  // An exact signed value that SCEV knows to be non-negative is its own
  // unsigned value.
  if (!C.Modular && SE.isKnownNonNegative(S))
    return C.F;
  emitCheck(C.F, 0, (int64_t(1) << C.Bits) - 1);
  return C.F;
}

std::optional<Form> AccessBuilder::convSigned(const SCEV *S, unsigned Depth) {
  auto C = conv(S, Depth);
  if (!C)
    return std::nullopt;
  return makeSigned(*C);
}

std::optional<Form> AccessBuilder::convUnsigned(const SCEV *S, unsigned Depth) {
  auto C = conv(S, Depth);
  if (!C)
    return std::nullopt;
  return makeUnsigned(*C, S);
}

std::optional<Form> AccessBuilder::exactSigned(const SCEV *S) {
  return convSigned(S, 0);
}
std::optional<Form> AccessBuilder::exactUnsigned(const SCEV *S) {
  return convUnsigned(S, 0);
}

/// The backedge-taken count of a loop that ScalarEvolution gives up on only
/// because it cannot prove its induction variable does not wrap: LLVM 19 does
/// not carry an increment's nsw/nuw flag to the recurrence when the loop body
/// calls something not known to return, and every __syncthreads() is such a
/// call. Recognized form: a single exiting latch `br (icmp Inc, Bound)` where
/// Inc = add nsw/nuw Phi, Step (constant Step > 0), Phi = [Start, preheader],
/// [Inc, latch], Start and Bound loop-invariant, and the loop continues while
/// Inc < Bound (signed with nsw, unsigned with nuw). A wrapping Inc would be
/// poison and branching on it undefined, so the count is
///   ceil(max(Bound - Start - Step, 0) / Step),
/// computed in 64 bits so that the subtraction cannot wrap.
static const SCEV *guardedLoopBackedgeCount(ScalarEvolution &SE,
                                            const Loop *L) {
  BasicBlock *Latch = L->getLoopLatch();
  if (!Latch || L->getExitingBlock() != Latch || !L->getLoopPredecessor())
    return nullptr;
  auto *Br = dyn_cast<BranchInst>(Latch->getTerminator());
  if (!Br || !Br->isConditional())
    return nullptr;
  auto *Cmp = dyn_cast<ICmpInst>(Br->getCondition());
  if (!Cmp)
    return nullptr;
  bool ContinueOnTrue = Br->getSuccessor(0) == L->getHeader();
  if (!ContinueOnTrue && Br->getSuccessor(1) != L->getHeader())
    return nullptr;
  // Normalize to "continue while Inc <pred> Bound".
  ICmpInst::Predicate Pred = Cmp->getPredicate();
  Value *Inc = Cmp->getOperand(0), *Bound = Cmp->getOperand(1);
  if (!ContinueOnTrue)
    Pred = ICmpInst::getInversePredicate(Pred);
  if (!isa<BinaryOperator>(Inc) || isa<PHINode>(Bound)) {
    std::swap(Inc, Bound);
    Pred = ICmpInst::getSwappedPredicate(Pred);
  }
  bool Signed = Pred == ICmpInst::ICMP_SLT;
  if (!Signed && Pred != ICmpInst::ICMP_ULT)
    return nullptr;
  auto *Add = dyn_cast<BinaryOperator>(Inc);
  if (!Add || Add->getOpcode() != Instruction::Add || !L->contains(Add) ||
      !(Signed ? Add->hasNoSignedWrap() : Add->hasNoUnsignedWrap()))
    return nullptr;
  auto *Phi = dyn_cast<PHINode>(Add->getOperand(0));
  auto *StepC = dyn_cast<ConstantInt>(Add->getOperand(1));
  if (!Phi || !StepC) {
    Phi = dyn_cast<PHINode>(Add->getOperand(1));
    StepC = dyn_cast<ConstantInt>(Add->getOperand(0));
  }
  if (!Phi || !StepC || Phi->getParent() != L->getHeader() ||
      Phi->getNumIncomingValues() != 2 || StepC->isNegative() ||
      StepC->isZero())
    return nullptr;
  if (Phi->getIncomingValueForBlock(Latch) != Add)
    return nullptr;
  Value *Start = Phi->getIncomingValueForBlock(L->getLoopPredecessor());
  const SCEV *StartS = SE.getSCEV(Start), *BoundS = SE.getSCEV(Bound);
  if (!SE.isLoopInvariant(StartS, L) || !SE.isLoopInvariant(BoundS, L))
    return nullptr;
  Type *I64 = Type::getInt64Ty(Phi->getContext());
  if (Phi->getType()->getIntegerBitWidth() > 32)
    return nullptr; // 64-bit differences could wrap
  auto Ext = [&](const SCEV *S) {
    return Signed ? SE.getSignExtendExpr(S, I64) : SE.getZeroExtendExpr(S, I64);
  };
  const SCEV *Step = SE.getConstant(I64, StepC->getZExtValue());
  const SCEV *D = SE.getMinusSCEV(SE.getMinusSCEV(Ext(BoundS), Ext(StartS)),
                                  Step);
  const SCEV *Pos = SE.getSMaxExpr(D, SE.getZero(I64));
  return SE.getUDivExpr(
      SE.getAddExpr(Pos, SE.getConstant(I64, StepC->getZExtValue() - 1)),
      Step);
}

std::optional<unsigned> AccessBuilder::loopVar(const Loop *L) {
  auto It = LoopVars.find(L);
  if (It != LoopVars.end())
    return It->second;
  if (!L->contains(T))
    return std::nullopt;
  // The header runs BTC+1 times once the loop is entered, so the iteration
  // counter takes every value of [0, BTC].
  const SCEV *BTC = SE.getBackedgeTakenCount(L);
  bool ExactCount = true;
  if (isa<SCEVCouldNotCompute>(BTC))
    if (const SCEV *G = guardedLoopBackedgeCount(SE, L))
      BTC = G;
  if (isa<SCEVCouldNotCompute>(BTC)) {
    ExactCount = false;
    BTC = SE.getSymbolicMaxBackedgeTakenCount(L);
    if (isa<SCEVCouldNotCompute>(BTC))
      BTC = SE.getConstantMaxBackedgeTakenCount(L);
    if (isa<SCEVCouldNotCompute>(BTC)) {
      failed("loop " + describe(L->getHeader()) +
             " has no computable trip count");
      return std::nullopt;
    }
  }
  auto Count = convUnsigned(BTC, 1);
  if (!Count)
    return std::nullopt;
  unsigned Var = newVar("L" + std::to_string(NumLoopVars++));
  FLine Line;
  Line.Var = Var;
  if (!Count->hasVars() && ExactCount) {
    Line.K = FLine::VarRange;
    Line.Lo = cnst(0);
    Line.Hi = Count->C0;
  } else {
    // Only a bound on the count (or a count that varies per thread).
    Line.K = FLine::VarHull;
    Line.Forms.push_back(formConst(cnst(0)));
    Line.Forms.push_back(*Count);
    inexact("trip count of loop " + describe(L->getHeader()) +
            " is only bounded");
  }
  pushLine(std::move(Line));
  LoopVars[L] = Var;
  return Var;
}

std::optional<Form> AccessBuilder::byteRangeVar(const SCEV *Len) {
  auto N = exactUnsigned(Len);
  if (!N)
    return std::nullopt;
  unsigned Var = newVar("J" + std::to_string(NumByteVars++));
  FLine Line;
  Line.Var = Var;
  if (!N->hasVars()) {
    Line.K = FLine::VarRange;
    Line.Lo = cnst(0);
    Line.Hi = mkAdd(N->C0, cnst(-1));
  } else {
    Line.K = FLine::VarHull;
    Line.Forms.push_back(formConst(cnst(0)));
    Line.Forms.push_back(addForms(*N, formConst(cnst(-1))));
    inexact("length of a memory intrinsic varies per thread");
  }
  pushLine(std::move(Line));
  return formVar(Var);
}

/// When a subexpression has no affine form: min/max/phi become a variable
/// within the hull of their operands; anything else a variable within the
/// range SCEV proves for it. Either makes the access inexact.
std::optional<Form> AccessBuilder::fallback(const SCEV *S, unsigned Depth) {
  SmallVector<const SCEV *, 4> Ops;
  if (auto *MM = dyn_cast<SCEVMinMaxExpr>(S)) {
    Ops.append(MM->operands().begin(), MM->operands().end());
  } else if (auto *SM = dyn_cast<SCEVSequentialMinMaxExpr>(S)) {
    Ops.append(SM->operands().begin(), SM->operands().end());
  } else if (auto *U = dyn_cast<SCEVUnknown>(S)) {
    auto *Phi = dyn_cast<PHINode>(U->getValue());
    if (Phi && !PhisInProgress.count(Phi) && Phi->getNumIncomingValues() <= 8 &&
        SE.isSCEVable(Phi->getType())) {
      const Loop *PL = LI.getLoopFor(Phi->getParent());
      for (Value *In : Phi->incoming_values())
        Ops.push_back(SE.getSCEVAtScope(SE.getSCEV(In), PL));
    }
  }
  bool IsUnsigned = isa<SCEVUMaxExpr>(S) || isa<SCEVUMinExpr>(S) ||
                    isa<SCEVSequentialUMinExpr>(S);
  if (!Ops.empty()) {
    Mark M = mark();
    const Value *Phi = nullptr;
    if (auto *U = dyn_cast<SCEVUnknown>(S)) {
      Phi = U->getValue();
      PhisInProgress.insert(Phi);
    }
    SmallVector<Form, 4> Forms;
    for (const SCEV *Op : Ops) {
      auto Fm = IsUnsigned ? convUnsigned(rewrite(Op), Depth + 1)
                           : convSigned(rewrite(Op), Depth + 1);
      if (!Fm) {
        Forms.clear();
        break;
      }
      Forms.push_back(*Fm);
    }
    if (Phi)
      PhisInProgress.erase(Phi);
    if (!Forms.empty()) {
      unsigned Var = newVar("U" + std::to_string(NumOpaqueVars++));
      FLine Line;
      Line.K = FLine::VarHull;
      Line.Var = Var;
      Line.Forms = std::move(Forms);
      pushLine(std::move(Line));
      inexact("value bounded by the hull of its operands");
      return formVar(Var);
    }
    rollback(M);
  }
  unsigned Bits = SE.getTypeSizeInBits(S->getType());
  if (Bits > 64)
    return std::nullopt;
  // A range of 2^31 values or more says nothing useful about a buffer (the
  // sign-extended i32 that may have wrapped, say): refuse instead.
  ConstantRange CR = SE.getSignedRange(S);
  if (CR.isFullSet() || CR.isEmptySet() ||
      CR.isSizeLargerThan((uint64_t(1) << 31) - 1)) {
    if (auto *U = dyn_cast<SCEVUnknown>(S))
      failed("value " + describe(U->getValue()) + " is not bounded");
    return std::nullopt;
  }
  unsigned Var = newVar("U" + std::to_string(NumOpaqueVars++));
  FLine Line;
  Line.K = FLine::VarHull;
  Line.Var = Var;
  Line.Forms.push_back(formConst(cnst(CR.getSignedMin().getSExtValue())));
  Line.Forms.push_back(formConst(cnst(CR.getSignedMax().getSExtValue())));
  pushLine(std::move(Line));
  inexact("value bounded by its range");
  return formVar(Var);
}

std::optional<AccessBuilder::CForm> AccessBuilder::conv(const SCEV *S,
                                                        unsigned Depth) {
  if (Depth > 48)
    return std::nullopt;
  unsigned Bits = SE.getTypeSizeInBits(S->getType());
  if (Bits > 64)
    return std::nullopt;
  CForm Out;
  Out.Bits = Bits;
  // Checks and variables of a failed attempt must not stay behind: a check
  // could refuse a launch for nothing.
  const Mark Start = mark();
  // Only add/mul/addrec results can be merely congruent; see the file
  // comment.
  auto Wraps = [&](bool NSW) { return !NSW && Bits < 64; };

  switch (S->getSCEVType()) {
  case scConstant:
    Out.F = formConst(cnst(cast<SCEVConstant>(S)->getAPInt().getSExtValue()));
    return Out;

  case scUnknown: {
    Value *Val = cast<SCEVUnknown>(S)->getValue();
    if (auto *A = dyn_cast<Argument>(Val)) {
      // Only arguments the text declares "int" may appear as symbols.
      if (A->getParent() == &F && A->getArgNo() < Args.size() &&
          Args[A->getArgNo()].K == ArgInfo::Int) {
        Out.F = formConst(sym("arg" + std::to_string(A->getArgNo())));
        return Out;
      }
    }
    if (auto *II = dyn_cast<IntrinsicInst>(Val)) {
      switch (II->getIntrinsicID()) {
      case Intrinsic::nvvm_read_ptx_sreg_tid_x:
        Out.F = formVar(VarTidX);
        return Out;
      case Intrinsic::nvvm_read_ptx_sreg_tid_y:
        Out.F = formVar(VarTidY);
        return Out;
      case Intrinsic::nvvm_read_ptx_sreg_tid_z:
        Out.F = formVar(VarTidZ);
        return Out;
      case Intrinsic::nvvm_read_ptx_sreg_ctaid_x:
        Out.F = formVar(VarCtaidX);
        return Out;
      case Intrinsic::nvvm_read_ptx_sreg_ctaid_y:
        Out.F = formVar(VarCtaidY);
        return Out;
      case Intrinsic::nvvm_read_ptx_sreg_ctaid_z:
        Out.F = formVar(VarCtaidZ);
        return Out;
      case Intrinsic::nvvm_read_ptx_sreg_ntid_x:
        Out.F = formConst(sym("block.x"));
        return Out;
      case Intrinsic::nvvm_read_ptx_sreg_ntid_y:
        Out.F = formConst(sym("block.y"));
        return Out;
      case Intrinsic::nvvm_read_ptx_sreg_ntid_z:
        Out.F = formConst(sym("block.z"));
        return Out;
      case Intrinsic::nvvm_read_ptx_sreg_nctaid_x:
        Out.F = formConst(sym("grid.x"));
        return Out;
      case Intrinsic::nvvm_read_ptx_sreg_nctaid_y:
        Out.F = formConst(sym("grid.y"));
        return Out;
      case Intrinsic::nvvm_read_ptx_sreg_nctaid_z:
        Out.F = formConst(sym("grid.z"));
        return Out;
      default:
        break;
      }
    }
    auto Fb = fallback(S, Depth);
    if (!Fb)
      return std::nullopt;
    Out.F = *Fb;
    return Out;
  }

  case scAddExpr: {
    auto *A = cast<SCEVAddExpr>(S);
    bool Mod = Wraps(A->hasNoSignedWrap());
    for (const SCEV *Op : A->operands()) {
      auto C = conv(Op, Depth + 1);
      if (!C)
        return std::nullopt;
      Mod |= C->Modular;
      Out.F = addForms(Out.F, C->F);
    }
    Out.Modular = Mod;
    return Out;
  }

  case scMulExpr: {
    auto *M = cast<SCEVMulExpr>(S);
    bool Mod = Wraps(M->hasNoSignedWrap());
    std::optional<Form> WithVars;
    ExprRef Scale = cnst(1);
    for (const SCEV *Op : M->operands()) {
      auto C = conv(Op, Depth + 1);
      if (!C)
        return std::nullopt;
      Mod |= C->Modular;
      if (C->F.hasVars()) {
        if (WithVars) {
          // A product of two variables is not affine.
          rollback(Start);
          auto Fb = fallback(S, Depth);
          if (!Fb)
            return std::nullopt;
          Out.F = *Fb;
          return Out;
        }
        WithVars = C->F;
      } else {
        Scale = mkMul(Scale, C->F.C0);
      }
    }
    Out.F = WithVars ? scaleForm(*WithVars, Scale) : formConst(Scale);
    Out.Modular = Mod;
    return Out;
  }

  case scAddRecExpr: {
    auto *AR = cast<SCEVAddRecExpr>(S);
    if (!AR->isAffine())
      break;
    auto Start = conv(AR->getStart(), Depth + 1);
    auto Step = conv(AR->getStepRecurrence(SE), Depth + 1);
    if (!Start || !Step || Step->F.hasVars())
      break;
    auto Var = loopVar(AR->getLoop());
    if (!Var)
      return std::nullopt;
    Out.F = addForms(Start->F, scaleForm(formVar(*Var), Step->F.C0));
    Out.Modular =
        Start->Modular || Step->Modular || Wraps(AR->hasNoSignedWrap());
    return Out;
  }

  case scZeroExtend: {
    auto *Z = cast<SCEVZeroExtendExpr>(S);
    // zext(trunc(x to iM)) is x mod 2^M, whatever x is.
    if (auto *Tr = dyn_cast<SCEVTruncateExpr>(Z->getOperand())) {
      unsigned M = SE.getTypeSizeInBits(Tr->getType());
      auto X = conv(Tr->getOperand(), Depth + 1);
      if (X && !X->F.hasVars() && M < 63) {
        ExprRef P = cnst(int64_t(1) << M);
        Out.F = formConst(mkSub(X->F.C0, mkMul(P, mkDiv(X->F.C0, P))));
        return Out;
      }
      rollback(Start);
    }
    auto X = conv(Z->getOperand(), Depth + 1);
    if (!X)
      break;
    Out.F = makeUnsigned(*X, Z->getOperand());
    return Out;
  }

  case scSignExtend: {
    auto X = conv(cast<SCEVSignExtendExpr>(S)->getOperand(), Depth + 1);
    if (!X)
      break;
    Out.F = makeSigned(*X);
    return Out;
  }

  case scTruncate: {
    auto X = conv(cast<SCEVTruncateExpr>(S)->getOperand(), Depth + 1);
    if (!X)
      break;
    Out.F = X->F;
    Out.Modular = X->Modular || X->Bits > Bits;
    return Out;
  }

  case scUDivExpr: {
    auto *D = cast<SCEVUDivExpr>(S);
    Mark Mk = mark();
    auto A = convUnsigned(D->getLHS(), Depth + 1);
    auto B = convUnsigned(D->getRHS(), Depth + 1);
    if (A && B && !A->hasVars() && !B->hasVars()) {
      Out.F = formConst(mkDiv(A->C0, B->C0));
      return Out;
    }
    rollback(Mk);
    break;
  }

  case scSMaxExpr:
  case scSMinExpr:
  case scUMaxExpr:
  case scUMinExpr:
  case scSequentialUMinExpr: {
    bool IsMax = isa<SCEVSMaxExpr>(S) || isa<SCEVUMaxExpr>(S);
    bool IsUnsigned = !isa<SCEVSMaxExpr>(S) && !isa<SCEVSMinExpr>(S);
    ArrayRef<const SCEV *> Ops =
        isa<SCEVMinMaxExpr>(S) ? cast<SCEVMinMaxExpr>(S)->operands()
                               : cast<SCEVSequentialMinMaxExpr>(S)->operands();
    Mark Mk = mark();
    ExprRef Acc;
    bool Affine = true;
    for (const SCEV *Op : Ops) {
      auto Fm =
          IsUnsigned ? convUnsigned(Op, Depth + 1) : convSigned(Op, Depth + 1);
      if (!Fm || Fm->hasVars()) {
        Affine = false;
        break;
      }
      Acc = Acc ? mkMinMax(IsMax, Acc, Fm->C0) : Fm->C0;
    }
    if (Affine && Acc) {
      Out.F = formConst(Acc);
      return Out;
    }
    rollback(Mk);
    break;
  }

  default:
    break;
  }
  rollback(Start);
  auto Fb = fallback(S, Depth);
  if (!Fb)
    return std::nullopt;
  Out.F = *Fb;
  return Out;
}

//===-- Conditions -------------------------------------------------------===//

bool AccessBuilder::addCondition(Value *C, bool Polarity, BasicBlock *At,
                                 unsigned Depth) {
  if (Depth > 16)
    return false;
  if (auto *CI = dyn_cast<ConstantInt>(C)) {
    if (CI->isOne() != Polarity)
      emitLe(formConst(cnst(1))); // the edge is never taken
    return true;
  }
  Value *A, *B;
  if (match(C, m_LogicalAnd(m_Value(A), m_Value(B)))) {
    if (!Polarity)
      return false; // !(a && b) is a disjunction
    bool OkA = addCondition(A, true, At, Depth + 1);
    bool OkB = addCondition(B, true, At, Depth + 1);
    return OkA && OkB;
  }
  if (match(C, m_LogicalOr(m_Value(A), m_Value(B)))) {
    if (Polarity)
      return false;
    bool OkA = addCondition(A, false, At, Depth + 1);
    bool OkB = addCondition(B, false, At, Depth + 1);
    return OkA && OkB;
  }
  if (match(C, m_Not(m_Value(A))))
    return addCondition(A, !Polarity, At, Depth + 1);
  if (auto *Cmp = dyn_cast<ICmpInst>(C)) {
    CmpInst::Predicate P =
        Polarity ? Cmp->getPredicate() : Cmp->getInversePredicate();
    return addICmp(P, Cmp->getOperand(0), Cmp->getOperand(1), At);
  }
  return false;
}

bool AccessBuilder::addICmp(CmpInst::Predicate P, Value *A, Value *B,
                            BasicBlock *At) {
  if (!A->getType()->isIntegerTy() || !SE.isSCEVable(A->getType()))
    return false;
  const Loop *Scope = LI.getLoopFor(At);
  const SCEV *SA = rewrite(SE.getSCEVAtScope(SE.getSCEV(A), Scope));
  const SCEV *SB = rewrite(SE.getSCEVAtScope(SE.getSCEV(B), Scope));
  // a != b is one-sided when SCEV knows on which side a lies (y != 0 for a
  // y known non-negative is y > 0).
  if (P == CmpInst::ICMP_NE) {
    if (SE.isKnownPredicate(CmpInst::ICMP_SGE, SA, SB))
      P = CmpInst::ICMP_SGT;
    else if (SE.isKnownPredicate(CmpInst::ICMP_SLE, SA, SB))
      P = CmpInst::ICMP_SLT;
    else if (SE.isKnownPredicate(CmpInst::ICMP_UGE, SA, SB))
      P = CmpInst::ICMP_UGT;
    else if (SE.isKnownPredicate(CmpInst::ICMP_ULE, SA, SB))
      P = CmpInst::ICMP_ULT;
  }
  Mark M = mark();
  bool Unsigned = CmpInst::isUnsigned(P);
  auto FA = Unsigned ? exactUnsigned(SA) : exactSigned(SA);
  auto FB = Unsigned ? exactUnsigned(SB) : exactSigned(SB);
  if (!FA || !FB) {
    rollback(M);
    return false;
  }
  Form D = subForms(*FA, *FB); // A - B
  Form One = formConst(cnst(1));
  // Both sides now hold their exact values in the predicate's signedness.
  switch (P) {
  case CmpInst::ICMP_SLT:
  case CmpInst::ICMP_ULT: // A - B + 1 <= 0
    emitLe(addForms(D, One));
    break;
  case CmpInst::ICMP_SLE:
  case CmpInst::ICMP_ULE:
    emitLe(D);
    break;
  case CmpInst::ICMP_SGT:
  case CmpInst::ICMP_UGT: // B - A + 1 <= 0
    emitLe(addForms(negForm(D), One));
    break;
  case CmpInst::ICMP_SGE:
  case CmpInst::ICMP_UGE:
    emitLe(negForm(D));
    break;
  case CmpInst::ICMP_EQ:
    emitLe(D);
    emitLe(negForm(D));
    break;
  case CmpInst::ICMP_NE:
    // A launch-wide a != b is |a - b| >= 1; with variables it would be a
    // disjunction.
    if (D.hasVars()) {
      rollback(M);
      return false;
    }
    emitLe(formConst(mkSub(cnst(1), mkMinMax(true, D.C0, mkNeg(D.C0)))));
    break;
  default:
    rollback(M);
    return false;
  }
  return true;
}

/// Emits the conditions under which a thread at node From of G reaches node
/// To. The nodes that can lie on such a path form a sub-DAG; a thread leaves
/// it only through a branch with one successor outside. If every such branch
/// is in a node that every path passes, and its condition is understood, the
/// conjunction of those conditions is exactly "reaches To". Anything else
/// keeps the understood conditions (they are necessary) and marks the access
/// inexact. False when To cannot be reached from From.
bool AccessBuilder::reachIn(const RegionGraph &G, unsigned From, unsigned To) {
  if (From == To)
    return true;
  const unsigned N = G.Nodes.size();
  if (From >= N || To >= N)
    return false;
  auto Reach = [&](unsigned Start, unsigned Skip, bool Forward,
                   const BitVector *Within) {
    BitVector Seen(N);
    if (Start == Skip)
      return Seen;
    SmallVector<unsigned, 16> Work{Start};
    Seen.set(Start);
    while (!Work.empty()) {
      unsigned X = Work.pop_back_val();
      for (unsigned S : Forward ? G.Nodes[X].Succ : G.Nodes[X].Pred)
        if (S < N && S != Skip && !Seen.test(S) &&
            (!Within || Within->test(S))) {
          Seen.set(S);
          Work.push_back(S);
        }
    }
    return Seen;
  };
  BitVector Fwd = Reach(From, ~0u, true, nullptr);
  if (!Fwd.test(To))
    return false;
  BitVector In = Reach(To, ~0u, false, nullptr);
  In &= Fwd;

  // Topological order of the sub-DAG (Kahn); a cycle means an irreducible
  // region, where the analysis below does not hold.
  std::vector<unsigned> InDeg(N, 0), Order;
  for (unsigned X : In.set_bits())
    for (unsigned S : G.Nodes[X].Succ)
      if (S < N && In.test(S))
        ++InDeg[S];
  SmallVector<unsigned, 16> Ready;
  for (unsigned X : In.set_bits())
    if (!InDeg[X])
      Ready.push_back(X);
  while (!Ready.empty()) {
    unsigned X = Ready.pop_back_val();
    Order.push_back(X);
    for (unsigned S : G.Nodes[X].Succ)
      if (S < N && In.test(S) && --InDeg[S] == 0)
        Ready.push_back(S);
  }
  if (Order.size() != In.count()) {
    inexact("irreducible control flow");
    return true;
  }
  for (unsigned X : Order) {
    if (X == To)
      continue;
    const auto &Nd = G.Nodes[X];
    bool Leaves = false;
    for (unsigned S : Nd.Succ)
      Leaves |= S >= N || !In.test(S);
    if (!Leaves)
      continue;
    bool MustPass = !Reach(From, X, true, &In).test(To);
    auto *Br = Nd.BB ? dyn_cast<BranchInst>(Nd.BB->getTerminator()) : nullptr;
    if (!MustPass || !Br || !Br->isConditional()) {
      inexact("the path to the access depends on a branch that not every "
              "thread passes");
      continue;
    }
    unsigned S0 = G.nodeOf(Br->getSuccessor(0));
    unsigned S1 = G.nodeOf(Br->getSuccessor(1));
    if (G.L && Br->getSuccessor(0) == G.L->getHeader())
      S0 = RegionGraph::Continue;
    if (G.L && Br->getSuccessor(1) == G.L->getHeader())
      S1 = RegionGraph::Continue;
    bool In0 = S0 < N && In.test(S0), In1 = S1 < N && In.test(S1);
    if (In0 == In1)
      continue;
    if (!addCondition(Br->getCondition(), In0, Nd.BB, 0))
      inexact("condition " + describe(Br->getCondition()) +
              " is not an affine comparison");
  }
  return true;
}

/// The condition of the edge Q -> P, emitted; false when there is no edge.
bool AccessBuilder::edgeCondition(const RegionGraph &G, BasicBlock *Q,
                                  BasicBlock *P) {
  unsigned QN = G.nodeOf(Q);
  if (QN >= G.Nodes.size())
    return false;
  const auto &Nd = G.Nodes[QN];
  if (!Nd.BB) {
    // Leaving a sub-loop: certain only when it has a single exit.
    if (Nd.NumExitEdges != 1)
      inexact("loop with several exits before the access");
    return true;
  }
  auto *Br = dyn_cast<BranchInst>(Q->getTerminator());
  if (!Br) {
    inexact("multi-way branch before the access");
    return true;
  }
  if (!Br->isConditional())
    return Br->getSuccessor(0) == P;
  bool To0 = Br->getSuccessor(0) == P, To1 = Br->getSuccessor(1) == P;
  if (!To0 && !To1)
    return false;
  if (To0 && To1)
    return true;
  if (!addCondition(Br->getCondition(), To0, Q, 0))
    inexact("condition " + describe(Br->getCondition()) +
            " is not an affine comparison");
  return true;
}

bool AccessBuilder::emitReach() {
  // From the outermost region in: the function, then each loop around T.
  SmallVector<const Loop *, 4> Chain;
  for (const Loop *L = LI.getLoopFor(T); L; L = L->getParentLoop())
    Chain.push_back(L);
  std::reverse(Chain.begin(), Chain.end());
  for (size_t I = 0; I <= Chain.size(); ++I) {
    const Loop *L = I == 0 ? nullptr : Chain[I - 1];
    const RegionGraph &G = graph(L);
    unsigned To =
        I < Chain.size() ? G.nodeOf(Chain[I]->getHeader()) : G.nodeOf(T);
    // The variant's edges into blocks of this region, in path order.
    SmallVector<std::pair<BasicBlock *, BasicBlock *>, 2> Edges;
    for (auto &E : V.Edges)
      if (LI.getLoopFor(E.second) == L)
        Edges.push_back(E);
    llvm::sort(Edges, [&](const auto &X, const auto &Y) {
      return DT.dominates(X.second, Y.second) && X.second != Y.second;
    });
    unsigned Cur = G.Entry;
    for (auto &[Q, P] : Edges) {
      if (!reachIn(G, Cur, G.nodeOf(Q)) || !edgeCondition(G, Q, P))
        return false;
      Cur = G.nodeOf(P);
    }
    if (!reachIn(G, Cur, To))
      return false;
  }
  return true;
}

//===----------------------------------------------------------------------===//
// The analysis of one kernel
//===----------------------------------------------------------------------===//

class KernelAnalyzer {
public:
  KernelAnalyzer(Function &F, ScalarEvolution &SE, LoopInfo &LI,
                 DominatorTree &DT, FootprintImpl &Out)
      : F(F), SE(SE), LI(LI), DT(DT), Out(Out) {}

  void run();

private:
  Function &F;
  ScalarEvolution &SE;
  LoopInfo &LI;
  DominatorTree &DT;
  FootprintImpl &Out;
  std::map<const Loop *, RegionGraph> Graphs;
  StringSet<> Seen; // serialized accesses, to drop duplicates

  enum class BaseKind { Param, Private, Untracked };
  BaseKind classifyBase(Value *Ptr, SmallVectorImpl<unsigned> &Params);
  void access(Instruction &I, Value *Ptr, bool Write, uint64_t Width,
              Value *Len);
  void unknown(unsigned Arg, bool Write, const Twine &Why) {
    Out.Unknowns.push_back({Arg, Write, Why.str()});
  }
  void untracked(bool Write, const Twine &Why) {
    if (!Out.Untracked[Write])
      Out.UntrackedWhy[Write] = Why.str();
    Out.Untracked[Write] = true;
  }
  void call(CallBase &CB);
  std::vector<Variant> variants(const SCEV *Off, BasicBlock *T);
  void finish();
};

KernelAnalyzer::BaseKind
KernelAnalyzer::classifyBase(Value *Ptr, SmallVectorImpl<unsigned> &Params) {
  SmallVector<const Value *, 4> Objs;
  getUnderlyingObjects(Ptr, Objs, &LI, 16);
  bool AnyParam = false;
  for (const Value *O : Objs) {
    if (auto *A = dyn_cast<Argument>(O)) {
      if (A->getParent() == &F && A->hasByValAttr())
        continue;
      if (A->getParent() == &F) {
        if (!is_contained(Params, A->getArgNo()))
          Params.push_back(A->getArgNo());
        AnyParam = true;
        continue;
      }
      return BaseKind::Untracked;
    }
    if (isa<AllocaInst>(O) || isa<ConstantPointerNull>(O) || isa<UndefValue>(O))
      continue;
    if (auto *GV = dyn_cast<GlobalVariable>(O)) {
      // Shared, constant and local memory are not buffers the runtime moves.
      unsigned AS = GV->getAddressSpace();
      if (AS == 3 || AS == 4 || AS == 5 || GV->isConstant())
        continue;
    }
    return BaseKind::Untracked;
  }
  return AnyParam ? BaseKind::Param : BaseKind::Private;
}

/// Splits the offset along the incoming edges of the non-header phis it
/// uses: each variant fixes the edge, so the phi becomes its incoming value
/// and the edge's condition joins the path. This keeps loop-remainder
/// accesses (k = 0 or k = K & ~1) exact.
std::vector<Variant> KernelAnalyzer::variants(const SCEV *Off, BasicBlock *T) {
  constexpr size_t MaxVariants = 16;
  std::vector<Variant> Done, Work(1);
  for (unsigned Round = 0; Round < 4 && !Work.empty(); ++Round) {
    std::vector<Variant> Next;
    for (Variant &V : Work) {
      ValueToSCEVMapTy M = V.Map;
      const SCEV *S =
          M.empty() ? Off : SCEVParameterRewriter::rewrite(Off, SE, M);
      PHINode *Split = nullptr;
      SmallVector<const SCEV *, 16> Stack{S};
      SmallPtrSet<const SCEV *, 16> Visited;
      while (!Stack.empty() && !Split) {
        const SCEV *X = Stack.pop_back_val();
        if (!Visited.insert(X).second)
          continue;
        auto *U = dyn_cast<SCEVUnknown>(X);
        auto *Phi = U ? dyn_cast<PHINode>(U->getValue()) : nullptr;
        if (Phi && !V.Map.count(Phi) && !LI.isLoopHeader(Phi->getParent()) &&
            DT.dominates(Phi->getParent(), T) &&
            Phi->getNumIncomingValues() <= 4) {
          const Loop *PL = LI.getLoopFor(Phi->getParent());
          if (!PL || PL->contains(T))
            Split = Phi;
        }
        for (const SCEV *Op : X->operands())
          Stack.push_back(Op);
      }
      if (!Split || Done.size() + Next.size() + Work.size() > MaxVariants) {
        Done.push_back(std::move(V));
        continue;
      }
      const Loop *PL = LI.getLoopFor(Split->getParent());
      // A variant that already entered this block through an edge takes the
      // same edge for every phi of the block.
      BasicBlock *Entered = nullptr;
      for (auto &E : V.Edges)
        if (E.second == Split->getParent())
          Entered = E.first;
      if (Entered) {
        Variant W = V;
        W.Map[Split] = SE.getSCEVAtScope(
            SE.getSCEV(Split->getIncomingValueForBlock(Entered)), PL);
        Next.push_back(std::move(W));
        continue;
      }
      SmallPtrSet<BasicBlock *, 4> Preds;
      for (unsigned I = 0; I < Split->getNumIncomingValues(); ++I) {
        BasicBlock *Q = Split->getIncomingBlock(I);
        if (!Preds.insert(Q).second)
          continue;
        Variant W = V;
        W.Map[Split] =
            SE.getSCEVAtScope(SE.getSCEV(Split->getIncomingValue(I)), PL);
        W.Edges.push_back({Q, Split->getParent()});
        Next.push_back(std::move(W));
      }
    }
    Work = std::move(Next);
  }
  for (Variant &V : Work)
    Done.push_back(std::move(V));
  return Done;
}

void KernelAnalyzer::access(Instruction &I, Value *Ptr, bool Write,
                            uint64_t Width, Value *Len) {
  SmallVector<unsigned, 2> Params;
  const SCEV *S = SE.getSCEV(Ptr);
  const SCEV *Base = SE.getPointerBase(S);
  Argument *Param = nullptr;
  if (auto *U = dyn_cast<SCEVUnknown>(Base))
    if (auto *A = dyn_cast<Argument>(U->getValue()->stripPointerCasts()))
      if (A->getParent() == &F && !A->hasByValAttr())
        Param = A;
  if (!Param) {
    switch (classifyBase(Ptr, Params)) {
    case BaseKind::Private:
      return;
    case BaseKind::Untracked:
      untracked(Write, "through " + describe(getUnderlyingObject(Ptr, 16)) +
                           ", a pointer not derived from a parameter");
      return;
    case BaseKind::Param:
      for (unsigned A : Params)
        unknown(A, Write, "address selects between buffers");
      return;
    }
  }
  unsigned Arg = Param->getArgNo();
  BasicBlock *BB = I.getParent();
  const SCEV *Off = SE.removePointerBase(S);
  Off = SE.getSCEVAtScope(Off, LI.getLoopFor(BB));
  const SCEV *LenS = Len ? SE.getSCEV(Len) : nullptr;
  if (isa<SCEVCouldNotCompute>(Off)) {
    unknown(Arg, Write, "offset not computable");
    return;
  }
  for (const Variant &V : variants(Off, BB)) {
    AccessRec R;
    R.Arg = Arg;
    R.Write = Write;
    R.Width = Width;
    R.Inst = &I;
    AccessBuilder B(F, SE, LI, DT, Graphs, Out.Args, BB, V, R);
    if (!B.emitReach())
      continue; // this path to the access does not exist
    auto Addr = B.exactSigned(B.rewrite(Off));
    if (!Addr) {
      std::string Why;
      raw_string_ostream OS(Why);
      OS << "offset " << *Off << " is not affine";
      if (!B.failure().empty())
        OS << ": " << B.failure();
      unknown(Arg, Write, Why);
      return;
    }
    Form At = *Addr;
    if (LenS) {
      auto J = B.byteRangeVar(LenS);
      if (!J) {
        unknown(Arg, Write, "length of a memory intrinsic not affine");
        return;
      }
      At = addForms(At, *J);
    }
    B.emitAt(At);
    std::string Key;
    raw_string_ostream OS(Key);
    serializeAccess(OS, R);
    if (!Seen.insert(Key).second)
      continue;
    Out.Accesses.push_back(std::move(R));
  }
}

void KernelAnalyzer::call(CallBase &CB) {
  if (isa<DbgInfoIntrinsic>(CB) || CB.isLifetimeStartOrEnd() ||
      isa<AssumeInst>(CB) || isa<PseudoProbeInst>(CB))
    return;
  if (CB.doesNotAccessMemory() || CB.onlyAccessesInaccessibleMemory())
    return;
  auto *Callee = CB.getCalledFunction();
  bool IsIntrinsic = Callee && Callee->isIntrinsic();
  const DataLayout &DL = F.getDataLayout();
  if (auto *II = dyn_cast<IntrinsicInst>(&CB)) {
    switch (II->getIntrinsicID()) {
    case Intrinsic::nvvm_ldg_global_f:
    case Intrinsic::nvvm_ldg_global_i:
    case Intrinsic::nvvm_ldg_global_p:
    case Intrinsic::nvvm_ldu_global_f:
    case Intrinsic::nvvm_ldu_global_i:
    case Intrinsic::nvvm_ldu_global_p:
      access(CB, CB.getArgOperand(0), false, DL.getTypeStoreSize(CB.getType()),
             nullptr);
      return;
    case Intrinsic::prefetch:
      return;
    default:
      break;
    }
    // CUDA's scoped and special atomics: (pointer, operands...) returning
    // the old value, so they read and write the value's bytes.
    if (Callee && Callee->getName().starts_with("llvm.nvvm.atomic.") &&
        CB.arg_size() >= 1 && CB.getArgOperand(0)->getType()->isPointerTy() &&
        CB.getType()->isSized()) {
      uint64_t W = DL.getTypeStoreSize(CB.getType());
      access(CB, CB.getArgOperand(0), false, W, nullptr);
      access(CB, CB.getArgOperand(0), true, W, nullptr);
      return;
    }
  }
  // printf and assert read only what their pointer arguments point to (a
  // format string and an argument buffer): no buffer of the launch.
  bool ReadsArgsOnly = Callee && isDeviceReportFunction(*Callee);
  bool Writes = !CB.onlyReadsMemory() && !ReadsArgsOnly;
  bool AnyPtr = false;
  for (Value *Op : CB.args()) {
    if (!Op->getType()->isPointerTy())
      continue;
    AnyPtr = true;
    SmallVector<unsigned, 2> Params;
    switch (classifyBase(Op, Params)) {
    case BaseKind::Private:
      break;
    case BaseKind::Untracked:
      untracked(false, "through a pointer passed to a call");
      if (Writes)
        untracked(true, "through a pointer passed to a call");
      break;
    case BaseKind::Param:
      for (unsigned A : Params) {
        unknown(A, false, "passed to a call");
        if (Writes)
          unknown(A, true, "passed to a call");
      }
      break;
    }
  }
  // Barriers, fences and the like touch no buffer; an opaque function might
  // reach any memory through pointers it finds elsewhere.
  if (IsIntrinsic || ReadsArgsOnly || (AnyPtr && CB.onlyAccessesArgMemory()))
    return;
  untracked(false, "in a call to a function that may access memory");
  if (Writes)
    untracked(true, "in a call to a function that may access memory");
}

void KernelAnalyzer::run() {
  Out.IsKernel = true;
  Out.Name = F.getName().str();
  for (Argument &A : F.args()) {
    ArgInfo AI;
    // A byval pointer is the kernel's copy of a struct argument, not a buffer.
    if (A.getType()->isPointerTy() && !A.hasByValAttr())
      AI.K = ArgInfo::Ptr;
    else if (A.getType()->isIntegerTy() &&
             A.getType()->getIntegerBitWidth() <= 64) {
      AI.K = ArgInfo::Int;
      AI.Bits = A.getType()->getIntegerBitWidth();
    }
    AI.Name = A.getName().str();
    Out.Args.push_back(AI);
  }
  const DataLayout &DL = F.getDataLayout();
  for (Instruction &I : instructions(F)) {
    if (!DT.isReachableFromEntry(I.getParent()))
      continue;
    if (auto *LdI = dyn_cast<LoadInst>(&I)) {
      access(I, LdI->getPointerOperand(), false,
             DL.getTypeStoreSize(LdI->getType()), nullptr);
    } else if (auto *St = dyn_cast<StoreInst>(&I)) {
      access(I, St->getPointerOperand(), true,
             DL.getTypeStoreSize(St->getValueOperand()->getType()), nullptr);
    } else if (auto *RMW = dyn_cast<AtomicRMWInst>(&I)) {
      uint64_t W = DL.getTypeStoreSize(RMW->getValOperand()->getType());
      access(I, RMW->getPointerOperand(), false, W, nullptr);
      access(I, RMW->getPointerOperand(), true, W, nullptr);
    } else if (auto *CX = dyn_cast<AtomicCmpXchgInst>(&I)) {
      uint64_t W = DL.getTypeStoreSize(CX->getNewValOperand()->getType());
      access(I, CX->getPointerOperand(), false, W, nullptr);
      access(I, CX->getPointerOperand(), true, W, nullptr);
    } else if (auto *MT = dyn_cast<MemTransferInst>(&I)) {
      access(I, MT->getRawDest(), true, 1, MT->getLength());
      access(I, MT->getRawSource(), false, 1, MT->getLength());
    } else if (auto *MS = dyn_cast<MemSetInst>(&I)) {
      access(I, MS->getRawDest(), true, 1, MS->getLength());
    } else if (auto *CB = dyn_cast<CallBase>(&I)) {
      call(*CB);
    }
  }
  finish();
}

void KernelAnalyzer::finish() {
  unsigned N = Out.Args.size();
  Out.Class.assign(N, {FootprintClass::Exact, FootprintClass::Exact});
  Out.Accessed.assign(N, {false, false});
  auto Worsen = [](FootprintClass &C, FootprintClass By) {
    if (static_cast<int>(By) > static_cast<int>(C))
      C = By;
  };
  for (const AccessRec &A : Out.Accesses) {
    Out.Accessed[A.Arg][A.Write] = true;
    if (!A.Exact)
      Worsen(Out.Class[A.Arg][A.Write], FootprintClass::Bounded);
  }
  for (const UnknownRec &U : Out.Unknowns) {
    Out.Accessed[U.Arg][U.Write] = true;
    Out.Class[U.Arg][U.Write] = FootprintClass::Unknown;
  }
  for (unsigned Dir = 0; Dir < 2; ++Dir)
    if (Out.Untracked[Dir])
      for (unsigned I = 0; I < N; ++I)
        if (Out.Args[I].K == ArgInfo::Ptr) {
          Out.Class[I][Dir] = FootprintClass::Unknown;
          Out.Accessed[I][Dir] = true;
        }
}

} // namespace

//===----------------------------------------------------------------------===//
// Public interface
//===----------------------------------------------------------------------===//

AnalysisKey FootprintAnalysis::Key;

KernelFootprint::KernelFootprint() : Impl(std::make_unique<FootprintImpl>()) {}
KernelFootprint::KernelFootprint(KernelFootprint &&) = default;
KernelFootprint &KernelFootprint::operator=(KernelFootprint &&) = default;
KernelFootprint::~KernelFootprint() = default;

FootprintClass KernelFootprint::readClass(unsigned ArgNo) const {
  if (!Impl || ArgNo >= Impl->Class.size())
    return FootprintClass::Exact;
  return Impl->Class[ArgNo][0];
}

FootprintClass KernelFootprint::writeClass(unsigned ArgNo) const {
  if (!Impl || ArgNo >= Impl->Class.size())
    return FootprintClass::Exact;
  return Impl->Class[ArgNo][1];
}

bool KernelFootprint::isKernel() const { return Impl && Impl->IsKernel; }

bool KernelFootprint::reads(unsigned ArgNo) const {
  return Impl && ArgNo < Impl->Accessed.size() && Impl->Accessed[ArgNo][0];
}

bool KernelFootprint::writes(unsigned ArgNo) const {
  return Impl && ArgNo < Impl->Accessed.size() && Impl->Accessed[ArgNo][1];
}

std::string KernelFootprint::serialize() const {
  std::string S;
  raw_string_ostream OS(S);
  if (!Impl || !Impl->IsKernel)
    return S;
  OS << FootprintMagic << " " << FootprintFormatVersion << "\n";
  OS << "kernel " << Impl->Name << '\n';
  for (unsigned I = 0; I < Impl->Args.size(); ++I) {
    const ArgInfo &A = Impl->Args[I];
    OS << "arg " << I;
    switch (A.K) {
    case ArgInfo::Ptr:
      OS << " ptr";
      break;
    case ArgInfo::Int:
      OS << " int " << A.Bits;
      break;
    case ArgInfo::Other:
      OS << " other";
      break;
    }
    // Names are informative only; keep them to one token.
    bool Plain = !A.Name.empty() && all_of(A.Name, [](char C) {
      return isAlnum(C) || C == '_' || C == '.';
    });
    if (Plain)
      OS << ' ' << A.Name;
    OS << '\n';
  }
  for (unsigned Dir = 0; Dir < 2; ++Dir)
    if (Impl->Untracked[Dir])
      OS << "untracked " << (Dir ? "write" : "read") << " # "
         << Impl->UntrackedWhy[Dir] << '\n';
  // Reasons are comments; a line break inside one would end it early.
  auto OneLine = [](std::string S) {
    std::replace(S.begin(), S.end(), '\n', ' ');
    return S;
  };
  for (const UnknownRec &U : Impl->Unknowns)
    OS << "unknown " << U.Arg << (U.Write ? " write" : " read") << " # "
       << OneLine(U.Why) << '\n';
  for (const AccessRec &A : Impl->Accesses)
    serializeAccess(OS, A);
  OS << "end\n";
  return S;
}

void KernelFootprint::print(raw_ostream &OS, const Function &F) const {
  if (!Impl || !Impl->IsKernel)
    return;
  OS << "footprint of '" << displayName(F) << "'\n";
  auto ClassOf = [&](unsigned I, unsigned Dir) -> std::string {
    if (!Impl->Accessed[I][Dir])
      return "none";
    return getFootprintClassName(Impl->Class[I][Dir]);
  };
  for (unsigned I = 0; I < Impl->Args.size(); ++I) {
    const ArgInfo &A = Impl->Args[I];
    if (A.K != ArgInfo::Ptr)
      continue;
    OS << "  arg " << I;
    if (!A.Name.empty())
      OS << " '" << A.Name << "'";
    OS << ": read " << ClassOf(I, 0) << ", write " << ClassOf(I, 1) << '\n';
    for (unsigned Dir = 0; Dir < 2; ++Dir)
      if (Impl->Untracked[Dir])
        OS << "    " << (Dir ? "write" : "read") << " unknown: the kernel also "
           << (Dir ? "writes " : "reads ") << Impl->UntrackedWhy[Dir] << '\n';
    for (const UnknownRec &U : Impl->Unknowns)
      if (U.Arg == I)
        OS << "    " << (U.Write ? "write" : "read") << " unknown: " << U.Why
           << '\n';
    for (const AccessRec &R : Impl->Accesses) {
      if (R.Arg != I)
        continue;
      OS << "    " << (R.Write ? "write " : "read ") << R.Width
         << (R.Width == 1 ? " byte" : " bytes") << " at ";
      for (const FLine &L : R.Lines)
        if (L.K == FLine::At)
          printFormInfix(OS, L.Forms[0], R.VarNames, false);
      OS << (R.Exact ? "" : " (bounded)") << '\n';
      for (const FLine &L : R.Lines) {
        switch (L.K) {
        case FLine::VarRange:
          OS << "      for " << R.VarNames[L.Var] << " in [";
          printInfix(OS, L.Lo);
          OS << ", ";
          printInfix(OS, L.Hi);
          OS << "]\n";
          break;
        case FLine::VarHull:
          OS << "      with " << R.VarNames[L.Var] << " within hull(";
          for (size_t K = 0; K < L.Forms.size(); ++K) {
            if (K)
              OS << ", ";
            printFormInfix(OS, L.Forms[K], R.VarNames, false);
          }
          OS << ")\n";
          break;
        case FLine::Le: {
          // "vars <= -C0" reads better than "vars + C0 <= 0".
          const Form &Fm = L.Forms[0];
          OS << "      if ";
          if (allTermsNegative(Fm)) {
            Form Neg = negForm(Fm);
            normalize(Neg);
            printFormInfix(OS, Neg, R.VarNames, true);
            OS << " >= ";
            printInfix(OS, Fm.C0);
          } else if (Fm.hasVars()) {
            printFormInfix(OS, Fm, R.VarNames, true);
            OS << " <= ";
            printInfix(OS, simplify(mkNeg(Fm.C0)));
          } else {
            printLaunchCondition(OS, Fm.C0);
          }
          OS << '\n';
          break;
        }
        case FLine::Check:
        case FLine::At:
          break;
        }
      }
      for (const std::string &N : R.Notes)
        OS << "      ; " << N << '\n';
    }
  }
  OS << "  serialized:\n";
  std::string S = serialize();
  for (StringRef Line : split(StringRef(S).rtrim('\n'), '\n'))
    OS << "    " << Line << '\n';
}

KernelFootprint FootprintAnalysis::run(Function &F,
                                       FunctionAnalysisManager &FAM) {
  KernelFootprint R;
  if (!isKernel(F))
    return R;
  auto &SE = FAM.getResult<ScalarEvolutionAnalysis>(F);
  auto &LI = FAM.getResult<LoopAnalysis>(F);
  auto &DT = FAM.getResult<DominatorTreeAnalysis>(F);
  KernelAnalyzer(F, SE, LI, DT, *R.Impl).run();
  return R;
}

PreservedAnalyses FootprintPrinterPass::run(Function &F,
                                            FunctionAnalysisManager &FAM) {
  if (isKernel(F))
    FAM.getResult<FootprintAnalysis>(F).print(OS, F);
  return PreservedAnalyses::all();
}

} // namespace cleave
