//===- Stencil.cpp - An iterated 2-D stencil as a StencilNest, or why not -===//
//
// Part of Cleave (docs/tile.md). Reads the time loop, models its step with
// extractNest, recognizes the copy back or the swap that follows it, and
// asks isl (Dependences.cpp) for the dependences: none inside a step (its
// iterations are independent), and uniform ones between steps, whose
// largest component is the halo each time step adds.
//
//===----------------------------------------------------------------------===//
#include "cleave/Tile/Stencil.h"

#include "cleave/Tile/Dependences.h"

#include "clang/AST/ASTContext.h"
#include "clang/AST/Decl.h"
#include "clang/AST/ExprCXX.h"

#include "llvm/ADT/STLExtras.h"

using namespace clang;

namespace cleave::tile {
namespace {

const VarDecl *varOf(const Expr *E) {
  if (const auto *DRE =
          dyn_cast_or_null<DeclRefExpr>(E ? E->IgnoreParenImpCasts() : nullptr))
    return dyn_cast<VarDecl>(DRE->getDecl());
  return nullptr;
}

/// `std::swap(X, Y)` (or an unqualified `swap`): the two variables.
std::optional<std::pair<const VarDecl *, const VarDecl *>>
swapCall(const Stmt *S) {
  const auto *Call = dyn_cast<CallExpr>(S);
  const FunctionDecl *FD = Call ? Call->getDirectCallee() : nullptr;
  if (!FD || !FD->getIdentifier() || FD->getName() != "swap" ||
      Call->getNumArgs() != 2)
    return std::nullopt;
  const VarDecl *X = varOf(Call->getArg(0)), *Y = varOf(Call->getArg(1));
  if (!X || !Y)
    return std::nullopt;
  return std::pair{X, Y};
}

/// `T *tmp = X; X = Y; Y = tmp;`: the two variables.
std::optional<std::pair<const VarDecl *, const VarDecl *>>
swapByTemporary(ArrayRef<const Stmt *> S) {
  if (S.size() != 3)
    return std::nullopt;
  const auto *DS = dyn_cast<DeclStmt>(S[0]);
  const auto *Tmp = DS && DS->isSingleDecl()
                        ? dyn_cast<VarDecl>(DS->getSingleDecl())
                        : nullptr;
  auto Assign =
      [](const Stmt *St) -> std::pair<const VarDecl *, const VarDecl *> {
    const auto *BO = dyn_cast<BinaryOperator>(St);
    if (!BO || BO->getOpcode() != BO_Assign)
      return {nullptr, nullptr};
    return {varOf(BO->getLHS()), varOf(BO->getRHS())};
  };
  if (!Tmp || !Tmp->getInit())
    return std::nullopt;
  const VarDecl *X = varOf(Tmp->getInit());
  auto [L1, R1] = Assign(S[1]);
  auto [L2, R2] = Assign(S[2]);
  if (!X || L1 != X || !R1 || L2 != R1 || R2 != Tmp)
    return std::nullopt;
  return std::pair{X, R1};
}

int arrayIndex(const Nest &N, const VarDecl *V) {
  for (unsigned K = 0; K < N.Arrays.size(); ++K)
    if (N.Arrays[K].Decl == V)
      return K;
  return -1;
}

class StencilBuilder {
public:
  StencilBuilder(ASTContext &Ctx, Refusal &Why) : Ctx(Ctx), Why(Why) {}
  std::optional<StencilNest> build(const ForStmt *Time);

private:
  ASTContext &Ctx;
  Refusal &Why;
  StencilNest S;

  bool refuse(SourceLocation Loc, std::string Text) {
    Why = {Loc, std::move(Text)};
    return false;
  }
  bool checkStep(const ForStmt *Time);
  bool checkCopy(const ForStmt *F);
  bool checkDependences(const ForStmt *Time);
};

/// The step writes one array at (i, j), from another that it only reads,
/// and does not use the time index.
bool StencilBuilder::checkStep(const ForStmt *Time) {
  Nest &N = S.Step;
  if (!N.Reductions.empty())
    return refuse(N.Reductions.front().Uses.front()->getBeginLoc(),
                  "a time-tiled step cannot reduce a scalar");
  if (llvm::is_contained(N.Captures, S.Time.Index))
    return refuse(N.Outer.For->getBeginLoc(),
                  "the step uses the time index '" +
                      S.Time.Index->getName().str() +
                      "' (time tiles run several steps in one kernel)");
  int Written = -1;
  for (unsigned K = 0; K < N.Arrays.size(); ++K)
    if (N.Arrays[K].Written) {
      if (Written >= 0)
        return refuse(N.Outer.For->getBeginLoc(),
                      "the step writes two arrays ('" +
                          N.Arrays[Written].Decl->getName().str() + "' and '" +
                          N.Arrays[K].Decl->getName().str() + "')");
      Written = K;
    }
  S.Out = Written;
  const Array &Out = N.Arrays[S.Out];
  for (const Access &A : N.Accesses)
    if (A.Array == S.Out && A.Reads)
      return refuse(A.Expr->getBeginLoc(),
                    "the step reads '" + Out.Decl->getName().str() +
                        "', which it writes (a stencil step reads one array "
                        "and writes another)");
  if (Out.WriteRow != 0 || Out.WriteCol != 0)
    return refuse(N.Outer.For->getBeginLoc(), "the step must write '" +
                                                  Out.Decl->getName().str() +
                                                  "' at cell (i, j)");
  // One assignment among the body's statements: every step writes every
  // cell (a cell a step skips would keep, in the tiles' windows, a value
  // the nest as written does not leave there).
  std::vector<const Stmt *> Top;
  if (const auto *CS = dyn_cast<CompoundStmt>(N.Body))
    Top.assign(CS->body_begin(), CS->body_end());
  else
    Top.push_back(N.Body);
  unsigned Writes = 0, Unconditional = 0;
  for (const Access &A : N.Accesses)
    if (A.Array == S.Out && A.Writes) {
      ++Writes;
      Unconditional += llvm::any_of(Top, [&](const Stmt *St) {
        const auto *BO = dyn_cast<BinaryOperator>(St);
        return BO && BO->getOpcode() == BO_Assign &&
               BO->getLHS()->IgnoreParens() == A.Expr;
      });
    }
  if (Writes != 1 || Unconditional != 1)
    return refuse(N.Body->getBeginLoc(),
                  "the step must write '" + Out.Decl->getName().str() +
                      "' once, unconditionally, as a statement of its body");
  return true;
}

/// `for (i) for (j) In[i * P + j] = Out[i * P + j];` over the step's
/// domain.
bool StencilBuilder::checkCopy(const ForStmt *F) {
  Refusal CopyWhy;
  std::optional<Nest> C = extractNest(F, Ctx, CopyWhy);
  if (!C) {
    Why = CopyWhy;
    return false;
  }
  const Nest &N = S.Step;
  std::string Expect = "the copy back must be '" +
                       N.Arrays[S.In].Decl->getName().str() +
                       "[cell] = " + N.Arrays[S.Out].Decl->getName().str() +
                       "[cell]' over the step's domain";
  int In = arrayIndex(*C, N.Arrays[S.In].Decl),
      Out = arrayIndex(*C, N.Arrays[S.Out].Decl);
  if (!(C->Outer.Lower == N.Outer.Lower) ||
      !(C->Outer.Upper == N.Outer.Upper) ||
      !(C->Inner.Lower == N.Inner.Lower) ||
      !(C->Inner.Upper == N.Inner.Upper) || In < 0 || Out < 0 ||
      C->Arrays.size() != 2 || C->Accesses.size() != 2 ||
      !C->Reductions.empty() || !recoverView(*C, Out, CopyWhy))
    return refuse(F->getBeginLoc(), Expect);
  for (const Access &A : C->Accesses) {
    bool Good =
        A.Array == unsigned(In) ? A.Writes && !A.Reads : A.Reads && !A.Writes;
    if (!Good || A.Row != 0 || A.Col != 0 ||
        !(C->Arrays[A.Array].Pitch == N.Arrays[S.Out].Pitch))
      return refuse(A.Expr->getBeginLoc(), Expect);
  }
  // The body is that one assignment: nothing else may run per cell.
  const Stmt *Body = C->Body;
  if (const auto *CS = dyn_cast<CompoundStmt>(Body); CS && CS->size() == 1)
    Body = CS->body_front();
  const auto *BO = dyn_cast<BinaryOperator>(Body);
  if (!BO || BO->getOpcode() != BO_Assign ||
      !isa<ArraySubscriptExpr>(BO->getRHS()->IgnoreParenImpCasts()))
    return refuse(C->Body->getBeginLoc(), Expect);
  return true;
}

/// Inside a step, no dependence (isl); between steps, uniform ones.
bool StencilBuilder::checkDependences(const ForStmt *Time) {
  llvm::Expected<std::vector<Dependence>> Deps = computeDependences(S.Step);
  if (!Deps)
    return refuse(S.Step.Outer.For->getBeginLoc(), toString(Deps.takeError()));
  if (!Deps->empty()) {
    const Dependence &D = Deps->front();
    return refuse(S.Step.Outer.For->getBeginLoc(),
                  std::string("the step's iterations depend on each other (") +
                      kindName(D.Kind) + " " + distancesText(D) + " through '" +
                      S.Step.Arrays[D.Array].Decl->getName().str() + "')");
  }
  llvm::Expected<std::vector<std::array<int64_t, 3>>> Dist =
      stepDistances(S.Step, S.In, S.Out);
  if (!Dist)
    return refuse(Time->getBeginLoc(), toString(Dist.takeError()));
  S.Distances = std::move(*Dist);
  for (const auto &D : S.Distances) {
    if (D[0] != 1)
      return refuse(Time->getBeginLoc(),
                    "a dependence between time steps has time distance " +
                        std::to_string(D[0]));
    S.Radius =
        std::max<unsigned>(S.Radius, std::max(std::abs(D[1]), std::abs(D[2])));
  }
  return true;
}

std::optional<StencilNest> StencilBuilder::build(const ForStmt *Time) {
  std::optional<Loop> T = readLoop(Time, Ctx, Why, S.TimeCaptures);
  if (!T)
    return std::nullopt;
  S.Time = *T;
  std::vector<const Stmt *> Parts;
  if (const auto *CS = dyn_cast<CompoundStmt>(Time->getBody()))
    Parts.assign(CS->body_begin(), CS->body_end());
  const char *Shape = "the time loop's body must be a step nest followed by "
                      "a nest that copies its result back, or by a swap of "
                      "the two pointers";
  if (Parts.size() < 2 || !isa<ForStmt>(Parts[0]))
    return refuse(Time->getBody()->getBeginLoc(), Shape), std::nullopt;
  std::optional<Nest> Step = extractNest(cast<ForStmt>(Parts[0]), Ctx, Why);
  if (!Step)
    return std::nullopt;
  S.Step = std::move(*Step);
  if (!checkStep(Time))
    return std::nullopt;
  const VarDecl *OutVar = S.Step.Arrays[S.Out].Decl;
  ArrayRef<const Stmt *> Rest = ArrayRef(Parts).drop_front();
  std::optional<std::pair<const VarDecl *, const VarDecl *>> Swapped =
      Rest.size() == 1 ? swapCall(Rest[0]) : swapByTemporary(Rest);
  const VarDecl *InVar = nullptr;
  if (Swapped) {
    S.Form = StencilForm::Swap;
    InVar = Swapped->first == OutVar ? Swapped->second : Swapped->first;
    if (Swapped->first != OutVar && Swapped->second != OutVar)
      return refuse(Rest[0]->getBeginLoc(),
                    "the swap must exchange '" + OutVar->getName().str() +
                        "' with the array the step reads"),
             std::nullopt;
    // The generated function takes them by reference, to swap them as the
    // nest does.
    auto LocalPointer = [](const VarDecl *V) {
      return V->hasLocalStorage() &&
             V->getType().getNonReferenceType()->isPointerType();
    };
    if (!LocalPointer(InVar) || !LocalPointer(OutVar))
      return refuse(Rest[0]->getBeginLoc(),
                    "the swapped arrays must be local pointer variables"),
             std::nullopt;
  } else if (Rest.size() == 1 && isa<ForStmt>(Rest[0])) {
    S.Form = StencilForm::CopyBack;
    // The copy's target is the array the step reads.
    for (const Array &A : S.Step.Arrays)
      if (!A.Written && A.Decl != OutVar) {
        Refusal Ignore;
        std::optional<Nest> C =
            extractNest(cast<ForStmt>(Rest[0]), Ctx, Ignore);
        if (C && arrayIndex(*C, A.Decl) >= 0 &&
            C->Arrays[arrayIndex(*C, A.Decl)].Written)
          InVar = A.Decl;
      }
    if (!InVar)
      return refuse(Rest[0]->getBeginLoc(),
                    "the copy back must write the array the step reads"),
             std::nullopt;
  } else {
    return refuse(Rest[0]->getBeginLoc(), Shape), std::nullopt;
  }
  int In = arrayIndex(S.Step, InVar);
  if (In < 0)
    return refuse(S.Step.Outer.For->getBeginLoc(),
                  "the step does not read '" + InVar->getName().str() + "'"),
           std::nullopt;
  S.In = In;
  if (!recoverView(S.Step, S.In, Why))
    return std::nullopt;
  const Array &A = S.Step.Arrays[S.In], &B = S.Step.Arrays[S.Out];
  if (!(A.Pitch == B.Pitch))
    return refuse(S.Step.Outer.For->getBeginLoc(),
                  "'" + A.Decl->getName().str() + "' and '" +
                      B.Decl->getName().str() +
                      "' must have the same row pitch"),
           std::nullopt;
  if (!(A.Element.getCanonicalType().getUnqualifiedType() ==
        B.Element.getCanonicalType().getUnqualifiedType()))
    return refuse(S.Step.Outer.For->getBeginLoc(),
                  "'" + A.Decl->getName().str() + "' and '" +
                      B.Decl->getName().str() +
                      "' must have the same element type"),
           std::nullopt;
  if (S.Form == StencilForm::CopyBack && !checkCopy(cast<ForStmt>(Rest[0])))
    return std::nullopt;
  for (const Access &Acc : S.Step.Accesses)
    if (Acc.Array == S.In) {
      std::pair<int64_t, int64_t> O{Acc.Row, Acc.Col};
      if (!llvm::is_contained(S.Offsets, O))
        S.Offsets.push_back(O);
    }
  llvm::sort(S.Offsets);
  if (!checkDependences(Time))
    return std::nullopt;
  return std::move(S);
}

} // namespace

const char *StencilNest::shapeName() const {
  int64_t R = Radius;
  bool Box = Offsets.size() == size_t((2 * R + 1) * (2 * R + 1));
  bool Star =
      Offsets.size() == size_t(4 * R + 1) && llvm::all_of(Offsets, [](auto O) {
        return O.first == 0 || O.second == 0;
      });
  return Box ? "box" : Star ? "star" : "general";
}

std::optional<StencilNest> extractStencil(const ForStmt *Time, ASTContext &Ctx,
                                          Refusal &Why) {
  return StencilBuilder(Ctx, Why).build(Time);
}

} // namespace cleave::tile
