//===- Extract.cpp - A marked loop nest as a Nest, or why not -------------===//
//
// Part of Cleave (docs/tile.md). Reads the two loop headers, walks the body
// once (what it reads and writes, what it calls) and recovers the 2-D view
// of every array the nest writes. Anything the generated code could not
// reproduce exactly is a Refusal at the construct that shows it.
//
//===----------------------------------------------------------------------===//
#include "cleave/Tile/Nest.h"

#include "clang/AST/ASTContext.h"
#include "clang/AST/Decl.h"
#include "clang/AST/ExprCXX.h"
#include "clang/AST/StmtCXX.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallPtrSet.h"

using namespace clang;

namespace cleave::tile {
namespace {

const Expr *strip(const Expr *E) {
  while (true) {
    E = E->IgnoreParenImpCasts();
    // Integral-to-integral casts (`(long)i`) keep the value of subscripts
    // in range; other casts end the affine expression.
    if (const auto *C = dyn_cast<ExplicitCastExpr>(E))
      if (C->getType()->isIntegerType() &&
          C->getSubExpr()->getType()->isIntegerType()) {
        E = C->getSubExpr();
        continue;
      }
    return E;
  }
}

const VarDecl *refVar(const Expr *E) {
  if (const auto *DRE = dyn_cast<DeclRefExpr>(strip(E)))
    return dyn_cast<VarDecl>(DRE->getDecl());
  return nullptr;
}

bool isScalar(QualType T) {
  T = T.getNonReferenceType();
  return T->isArithmeticType() || T->isEnumeralType();
}

/// An enum declared in a function: the generated code, at namespace scope,
/// cannot name it.
bool isLocalType(QualType T) {
  if (const auto *ET = T.getNonReferenceType()->getAs<EnumType>())
    return ET->getDecl()->getParentFunctionOrMethod() != nullptr;
  return false;
}

class NestBuilder {
public:
  NestBuilder(ASTContext &Ctx, Refusal &Why) : Ctx(Ctx), Why(Why) {}

  std::optional<Nest> build(const ForStmt *Outer);
  /// The header of one loop, and the variables its bounds read.
  std::optional<Loop> loop(const ForStmt *F,
                           std::vector<const VarDecl *> &Captures) {
    if (!readHeader(F, N.Outer))
      return std::nullopt;
    Captures = N.Captures;
    return N.Outer;
  }

private:
  ASTContext &Ctx;
  Refusal &Why;
  Nest N;
  llvm::SmallPtrSet<const VarDecl *, 8> BodyLocals;
  bool Failed = false;

  bool refuse(SourceLocation Loc, std::string Text) {
    if (!Failed) {
      Why = {Loc, std::move(Text)};
      Failed = true;
    }
    return false;
  }

  bool readHeader(const ForStmt *F, Loop &L);
  std::optional<Poly> affine(const Expr *E);
  void capture(const VarDecl *V);
  bool isIndex(const VarDecl *V) const {
    return V == N.Outer.Index || V == N.Inner.Index;
  }

  bool walk(const Stmt *S, bool InSwitch);
  bool walkAccess(const ArraySubscriptExpr *E, bool Reads, bool Writes);
  bool walkWrite(const Expr *Target, const Expr *Op, bool AlsoReads);
  bool walkReduction(const VarDecl *V, const BinaryOperator *Op);
  bool checkReductions();
  llvm::SmallPtrSet<const VarDecl *, 8> ReadScalars;
  /// Statements whose value nobody uses: where a reduction may stand.
  llvm::SmallPtrSet<const Stmt *, 16> StatementLevel;
  bool walkRef(const DeclRefExpr *E);
  bool walkCall(const CallExpr *E, bool WalkArgs = true);
  bool recoverRows();
};

/// The loop index, its first value and its end; only `i < U`, `i <= U`
/// and a step of one are understood.
bool NestBuilder::readHeader(const ForStmt *F, Loop &L) {
  L.For = F;
  const auto *Init = dyn_cast_or_null<DeclStmt>(F->getInit());
  const VarDecl *V = Init && Init->isSingleDecl()
                         ? dyn_cast<VarDecl>(Init->getSingleDecl())
                         : nullptr;
  if (!V || !V->getInit() || !V->getType()->isIntegerType())
    return refuse(F->getBeginLoc(),
                  "the loop must declare its integer index in its "
                  "initializer (for (int i = ...; ...))");
  L.Index = V;
  const auto *Cond = dyn_cast_or_null<BinaryOperator>(
      F->getCond() ? F->getCond()->IgnoreParenImpCasts() : nullptr);
  if (!Cond || refVar(Cond->getLHS()) != V ||
      (Cond->getOpcode() != BO_LT && Cond->getOpcode() != BO_LE))
    return refuse(F->getCond() ? F->getCond()->getBeginLoc() : F->getBeginLoc(),
                  "the loop condition must be '" + V->getName().str() +
                      " < bound' or '" + V->getName().str() + " <= bound'");
  const Expr *Inc = F->getInc() ? F->getInc()->IgnoreParens() : nullptr;
  bool StepOne = false;
  if (const auto *U = dyn_cast_or_null<UnaryOperator>(Inc))
    StepOne = U->isIncrementOp() && refVar(U->getSubExpr()) == V;
  else if (const auto *CA = dyn_cast_or_null<CompoundAssignOperator>(Inc)) {
    std::optional<Poly> Step = affine(CA->getRHS());
    StepOne = CA->getOpcode() == BO_AddAssign && refVar(CA->getLHS()) == V &&
              Step && *Step == Poly::constant(1);
  }
  if (!StepOne)
    return refuse(Inc ? Inc->getBeginLoc() : F->getBeginLoc(),
                  "the loop must step its index by one");
  std::optional<Poly> Lo = affine(V->getInit());
  std::optional<Poly> Hi = affine(Cond->getRHS());
  for (auto [P, E] : {std::pair{&Lo, V->getInit()}, {&Hi, Cond->getRHS()}}) {
    if (!*P || (*P)->degree() > 1 || (*P)->mentions(N.Outer.Index) ||
        ((*P)->mentions(V)))
      return refuse(E->getBeginLoc(),
                    !*P || (*P)->degree() > 1
                        ? "loop bound is not affine in integer parameters"
                        : "loop bound depends on an enclosing loop index "
                          "(only rectangular nests are supported yet)");
  }
  L.Lower = *Lo;
  L.Upper = Cond->getOpcode() == BO_LE ? *Hi + Poly::constant(1) : *Hi;
  return true;
}

void NestBuilder::capture(const VarDecl *V) {
  if (!isIndex(V) && !BodyLocals.count(V) && !llvm::is_contained(N.Captures, V))
    N.Captures.push_back(V);
}

/// E as a polynomial in the loop indices and the integer variables declared
/// outside the nest (which it captures), or nothing.
std::optional<Poly> NestBuilder::affine(const Expr *E) {
  E = strip(E);
  if (const auto *B = dyn_cast<BinaryOperator>(E)) {
    std::optional<Poly> L = affine(B->getLHS()), R = affine(B->getRHS());
    if (!L || !R)
      return std::nullopt;
    switch (B->getOpcode()) {
    case BO_Add:
      return *L + *R;
    case BO_Sub:
      return *L - *R;
    case BO_Mul:
      if (L->degree() + R->degree() > 2)
        return std::nullopt;
      return *L * *R;
    default:
      break;
    }
  } else if (const auto *U = dyn_cast<UnaryOperator>(E)) {
    std::optional<Poly> S = affine(U->getSubExpr());
    if (S && U->getOpcode() == UO_Minus)
      return Poly::constant(0) - *S;
    if (S && U->getOpcode() == UO_Plus)
      return S;
  } else if (const auto *DRE = dyn_cast<DeclRefExpr>(E)) {
    const auto *V = dyn_cast<VarDecl>(DRE->getDecl());
    if (V && V->getType().getNonReferenceType()->isIntegerType() &&
        !BodyLocals.count(V) && (V->hasLocalStorage() || isIndex(V))) {
      capture(V);
      return Poly::variable(V);
    }
  }
  if (Expr::EvalResult R; !E->isValueDependent() && E->EvaluateAsInt(R, Ctx) &&
                          R.Val.getInt().getSignificantBits() <= 63)
    return Poly::constant(R.Val.getInt().getSExtValue());
  return std::nullopt;
}

bool NestBuilder::walkAccess(const ArraySubscriptExpr *E, bool Reads,
                             bool Writes) {
  const VarDecl *V = refVar(E->getBase());
  QualType T = V ? V->getType().getNonReferenceType() : QualType();
  bool PointerOr1D =
      V && (T->isPointerType() ||
            (T->isArrayType() &&
             !T->getArrayElementTypeNoTypeQual()->isArrayType()));
  if (!PointerOr1D || V->hasGlobalStorage() || BodyLocals.count(V))
    return refuse(E->getBeginLoc(),
                  "only subscripts of pointers and one-dimensional arrays "
                  "declared outside the nest are supported (write a "
                  "multi-dimensional array as a pointer with linearized "
                  "subscripts)");
  if (!isScalar(E->getType()) || isLocalType(E->getType()))
    return refuse(E->getBeginLoc(),
                  "array elements must be arithmetic scalars of a type "
                  "declared outside functions");
  if (!walk(E->getIdx(), false))
    return false;
  std::optional<Poly> S = affine(E->getIdx());
  if (!S || S->degree() > 2)
    return refuse(E->getIdx()->getBeginLoc(),
                  "non-affine subscript of '" + V->getName().str() + "'");
  // Affine in the indices: no term holds two of them (i * i, i * j).
  for (const VarDecl *X : {N.Outer.Index, N.Inner.Index})
    if (S->coefficientOf(X).mentions(N.Outer.Index) ||
        S->coefficientOf(X).mentions(N.Inner.Index))
      return refuse(E->getIdx()->getBeginLoc(),
                    "non-affine subscript of '" + V->getName().str() + "'");
  capture(V);
  size_t Index = arrayIndex(N.Arrays, V, E->getType(), T);
  N.Arrays[Index].Written |= Writes;
  Access Acc;
  Acc.Expr = E;
  Acc.Array = Index;
  Acc.Reads = Reads;
  Acc.Writes = Writes;
  Acc.Subscript = *S;
  N.Accesses.push_back(Acc);
  return true;
}

/// `Target = ...`, `Target op= ...`, `++Target`: an element write, a write
/// to a variable of the body, or a refusal.
bool NestBuilder::walkWrite(const Expr *Target, const Expr *Op,
                            bool AlsoReads) {
  const Expr *T = Target->IgnoreParens();
  if (const auto *AS = dyn_cast<ArraySubscriptExpr>(T))
    return walkAccess(AS, AlsoReads, true);
  if (const VarDecl *V = refVar(T); V && BodyLocals.count(V))
    return true;
  if (const VarDecl *V = refVar(T))
    return refuse(Op->getBeginLoc(),
                  "the nest writes '" + V->getName().str() +
                      "', declared outside its body (only array elements "
                      "may be written, and integer scalars updated as 's += "
                      "e', 's = std::max(s, e)' or 's = std::min(s, e)')");
  return refuse(Op->getBeginLoc(),
                "the nest writes something other than an array element or "
                "a variable of its body");
}

/// `V = ...` or `V += ...` for a scalar declared outside the nest: a
/// reduction when it has one of the forms of Reduction, else a refusal.
bool NestBuilder::walkReduction(const VarDecl *V, const BinaryOperator *Op) {
  auto Self = [&](const Expr *E) -> const DeclRefExpr * {
    const auto *DRE = dyn_cast<DeclRefExpr>(strip(E));
    return DRE && DRE->getDecl() == V ? DRE : nullptr;
  };
  std::optional<ReductionOp> Kind;
  const DeclRefExpr *SelfUse = nullptr;
  const Expr *Other = nullptr;
  const Expr *RHS = Op->getRHS()->IgnoreParenImpCasts();
  if (Op->getOpcode() == BO_AddAssign) {
    Kind = ReductionOp::Add;
    Other = Op->getRHS();
  } else if (Op->getOpcode() != BO_Assign) {
  } else if (const auto *Add = dyn_cast<BinaryOperator>(RHS);
             Add && Add->getOpcode() == BO_Add) {
    Kind = ReductionOp::Add;
    SelfUse = Self(Add->getLHS());
    Other = SelfUse ? Add->getRHS() : Add->getLHS();
    SelfUse = SelfUse ? SelfUse : Self(Add->getRHS());
  } else if (const auto *Call = dyn_cast<CallExpr>(RHS);
             Call && Call->getDirectCallee() && Call->getNumArgs() == 2 &&
             !isa<CXXMemberCallExpr>(Call)) {
    const FunctionDecl *FD = Call->getDirectCallee();
    StringRef Name = FD->getIdentifier() ? FD->getName() : "";
    if (Name == "max" || Name == "min")
      Kind = Name == "max" ? ReductionOp::Max : ReductionOp::Min;
    SelfUse = Self(Call->getArg(0));
    Other = SelfUse ? Call->getArg(1) : Call->getArg(0);
    SelfUse = SelfUse ? SelfUse : Self(Call->getArg(1));
    if (Kind && !walkCall(Call, /*WalkArgs=*/false))
      return false;
  }
  QualType T = V->getType().getNonReferenceType();
  if (!Kind || (Op->getOpcode() == BO_Assign && !SelfUse))
    return walkWrite(Op->getLHS(), Op, false);
  if (!StatementLevel.count(Op))
    return refuse(Op->getBeginLoc(), "the nest uses the value of an update "
                                     "of '" +
                                         V->getName().str() + "'");
  if (!T->isIntegerType() || T->isBooleanType() || Ctx.getTypeSize(T) < 32)
    return refuse(Op->getBeginLoc(),
                  "the reduction of '" + V->getName().str() + "' has type '" +
                      T.getAsString() +
                      "': only 32- and 64-bit integer reductions are "
                      "supported (floating-point sums depend on the order)");
  Reduction *R = nullptr;
  for (Reduction &Old : N.Reductions)
    if (Old.Var == V)
      R = &Old;
  if (R && R->Op != *Kind)
    return refuse(Op->getBeginLoc(), "the nest reduces '" + V->getName().str() +
                                         "' with two different operations");
  if (!R) {
    capture(V);
    N.Reductions.push_back({V, *Kind, {}});
    R = &N.Reductions.back();
  }
  R->Uses.push_back(cast<DeclRefExpr>(strip(Op->getLHS())));
  if (SelfUse)
    R->Uses.push_back(SelfUse);
  return walk(Other, false);
}

/// A reduced scalar must not be read elsewhere: the kernel's partial
/// values are not the sequential ones.
bool NestBuilder::checkReductions() {
  for (const Reduction &R : N.Reductions)
    if (ReadScalars.count(R.Var))
      return refuse(R.Uses.front()->getBeginLoc(), "the nest reads '" +
                                                       R.Var->getName().str() +
                                                       "' besides reducing it");
  return true;
}

bool NestBuilder::walkRef(const DeclRefExpr *E) {
  const auto *V = dyn_cast<VarDecl>(E->getDecl());
  if (!V || BodyLocals.count(V) || isIndex(V))
    return true;
  if (V->hasGlobalStorage() && !V->hasLocalStorage()) {
    if (V->isUsableInConstantExpressions(Ctx))
      return true;
    return refuse(E->getBeginLoc(),
                  "the nest reads the global variable '" + V->getName().str() +
                      "', which device code cannot (a constant with a "
                      "constant initializer can)");
  }
  QualType T = V->getType().getNonReferenceType();
  if (T->isPointerType() || T->isArrayType())
    return refuse(E->getBeginLoc(), "'" + V->getName().str() +
                                        "' is used other than as '" +
                                        V->getName().str() + "[subscript]'");
  if (isLocalType(T))
    return refuse(E->getBeginLoc(),
                  "'" + V->getName().str() +
                      "' has a type declared inside a function, which the "
                      "generated code cannot name");
  if (!isScalar(T))
    return refuse(E->getBeginLoc(),
                  "'" + V->getName().str() + "' has type '" + T.getAsString() +
                      "': only arithmetic scalars and arrays of them are "
                      "supported");
  capture(V);
  ReadScalars.insert(V);
  return true;
}

bool NestBuilder::walkCall(const CallExpr *E, bool WalkArgs) {
  const FunctionDecl *FD = E->getDirectCallee();
  if (isa<CXXMemberCallExpr>(E))
    return refuse(E->getBeginLoc(), "the nest calls a member function");
  if (!FD || !(FD->isConstexpr() || FD->getBuiltinID()))
    return refuse(E->getBeginLoc(),
                  "the nest calls " +
                      (FD ? "'" + FD->getNameAsString() + "'"
                          : std::string("through a pointer")) +
                      ", which device code cannot call (only constexpr "
                      "functions and builtins)");
  for (unsigned I = 0; I < E->getNumArgs() && I < FD->getNumParams(); ++I) {
    QualType PT = FD->getParamDecl(I)->getType();
    if (PT->isReferenceType() && !PT.getNonReferenceType().isConstQualified())
      return refuse(E->getArg(I)->getBeginLoc(),
                    "the nest passes an argument to '" + FD->getNameAsString() +
                        "' by non-const reference");
  }
  if (WalkArgs)
    for (const Expr *Arg : E->arguments())
      if (!walk(Arg, false))
        return false;
  return true;
}

bool NestBuilder::walk(const Stmt *S, bool InSwitch) {
  if (!S || Failed)
    return !Failed;
  if (isa<ForStmt, WhileStmt, DoStmt, CXXForRangeStmt>(S))
    return refuse(S->getBeginLoc(),
                  "the body holds a loop (only two-deep perfect nests are "
                  "supported)");
  if (isa<ReturnStmt, GotoStmt, IndirectGotoStmt, LabelStmt, CXXTryStmt,
          CXXThrowExpr, LambdaExpr, CXXThisExpr, StmtExpr>(S) ||
      (isa<BreakStmt>(S) && !InSwitch))
    return refuse(S->getBeginLoc(),
                  "the body leaves the nest or uses a construct the "
                  "generated kernel cannot reproduce (return, break, goto, "
                  "labels, exceptions, lambdas, 'this')");
  if (const auto *DS = dyn_cast<DeclStmt>(S)) {
    for (const Decl *D : DS->decls())
      if (const auto *V = dyn_cast<VarDecl>(D)) {
        if (!V->hasLocalStorage())
          return refuse(V->getLocation(),
                        "the body declares a static variable");
        if (V->getInit() && !walk(V->getInit(), InSwitch))
          return false;
        BodyLocals.insert(V);
      }
    return true;
  }
  if (const auto *BO = dyn_cast<BinaryOperator>(S);
      BO && BO->isAssignmentOp()) {
    const VarDecl *V = refVar(BO->getLHS());
    if (V && !BodyLocals.count(V) && !isIndex(V) && V->hasLocalStorage())
      return walkReduction(V, BO);
    return walkWrite(BO->getLHS(), BO, BO->isCompoundAssignmentOp()) &&
           walk(BO->getRHS(), InSwitch);
  }
  if (const auto *UO = dyn_cast<UnaryOperator>(S)) {
    if (UO->isIncrementDecrementOp())
      return walkWrite(UO->getSubExpr(), UO, true);
    if (UO->getOpcode() == UO_AddrOf)
      return refuse(UO->getBeginLoc(), "the nest takes an address");
  }
  if (const auto *AS = dyn_cast<ArraySubscriptExpr>(S))
    return walkAccess(AS, true, false);
  if (const auto *DRE = dyn_cast<DeclRefExpr>(S))
    return walkRef(DRE);
  if (const auto *CE = dyn_cast<CallExpr>(S))
    return walkCall(CE);
  if (const auto *CS = dyn_cast<CompoundStmt>(S))
    StatementLevel.insert(CS->body_begin(), CS->body_end());
  else if (const auto *If = dyn_cast<IfStmt>(S))
    StatementLevel.insert({If->getThen(), If->getElse()});
  else if (const auto *SC = dyn_cast<SwitchCase>(S))
    StatementLevel.insert(SC->getSubStmt());
  bool Switch = InSwitch || isa<SwitchStmt>(S);
  for (const Stmt *Child : S->children())
    if (!walk(Child, Switch))
      return false;
  return true;
}

bool NestBuilder::recoverRows() {
  for (unsigned X = 0; X < N.Arrays.size(); ++X)
    if (N.Arrays[X].Written && !recoverView(N, X, Why)) {
      Failed = true;
      return false;
    }
  return true;
}

} // namespace

/// Recovers (i + a) * P + j + b for every access of one array, with one
/// pitch P.
bool recoverView(Nest &N, unsigned ArrayIdx, Refusal &Why) {
  const VarDecl *I = N.Outer.Index, *J = N.Inner.Index;
  bool Seen = false;
  auto refuse = [&](SourceLocation Loc, std::string Text) {
    Why = {Loc, std::move(Text)};
    return false;
  };
  for (Access &Acc : N.Accesses) {
    Array &A = N.Arrays[Acc.Array];
    if (Acc.Array != ArrayIdx)
      continue;
    std::string Name = A.Decl->getName().str();
    const Poly &S = Acc.Subscript;
    Poly P = S.coefficientOf(I);
    Poly R = S.without(I).without(J);
    auto Fail = [&] {
      return refuse(Acc.Expr->getIdx()->getBeginLoc(),
                    "the subscript of '" + Name + "'" +
                        (A.Written ? ", which the nest writes," : "") +
                        " is not of the form "
                        "(" +
                        I->getName().str() + " + a) * pitch + " +
                        J->getName().str() +
                        " + b with constants a, b and one pitch for "
                        "every access");
    };
    if (!(S.coefficientOf(J) == Poly::constant(1)) || P.degree() > 1 ||
        P == Poly::constant(0) || (Seen && !(P == A.Pitch)))
      return Fail();
    int64_t Row;
    if (P.isConstant()) {
      if (!R.isConstant())
        return Fail();
      // Nearest row: a constant pitch leaves the split ambiguous; the
      // run-time column check (docs/tile.md) confirms it.
      int64_t Pv = P.constantTerm(), Rv = R.constantTerm();
      Row = (Rv >= 0 ? Rv + Pv / 2 : Rv - Pv / 2) / Pv;
    } else {
      const VarDecl *X = P.variables().front();
      Poly Px = P.coefficientOf(X), Rx = R.coefficientOf(X);
      if (!Px.isConstant() || !Rx.isConstant() ||
          Rx.constantTerm() % Px.constantTerm() != 0)
        return Fail();
      Row = Rx.constantTerm() / Px.constantTerm();
    }
    Poly Col = R - Poly::constant(Row) * P;
    if (!Col.isConstant())
      return Fail();
    Acc.Row = Row;
    Acc.Col = Col.constantTerm();
    if (!Seen) {
      A.Pitch = P;
      A.MinRow = A.MaxRow = Acc.Row;
      A.MinCol = A.MaxCol = Acc.Col;
    }
    A.MinRow = std::min(A.MinRow, Acc.Row);
    A.MaxRow = std::max(A.MaxRow, Acc.Row);
    A.MinCol = std::min(A.MinCol, Acc.Col);
    A.MaxCol = std::max(A.MaxCol, Acc.Col);
    if (Acc.Writes) {
      bool FirstWrite = llvm::none_of(
          llvm::ArrayRef(N.Accesses.data(), &Acc - N.Accesses.data()),
          [&](const Access &O) { return O.Array == Acc.Array && O.Writes; });
      if (!FirstWrite && (A.WriteRow != Acc.Row || A.WriteCol != Acc.Col))
        return refuse(Acc.Expr->getBeginLoc(),
                      "the nest writes '" + Name +
                          "' at two different offsets (each iteration must "
                          "write one cell of each array)");
      A.WriteRow = Acc.Row;
      A.WriteCol = Acc.Col;
    }
    Seen = true;
  }
  return true;
}

namespace {

std::optional<Nest> NestBuilder::build(const ForStmt *Outer) {
  if (!readHeader(Outer, N.Outer))
    return std::nullopt;
  const Stmt *Inner = Outer->getBody();
  if (const auto *CS = dyn_cast<CompoundStmt>(Inner); CS && CS->size() == 1)
    Inner = CS->body_front();
  const auto *InnerFor = dyn_cast<ForStmt>(Inner);
  if (!InnerFor)
    return refuse(Outer->getBody()->getBeginLoc(),
                  "the loop's body must be exactly one inner for loop (a "
                  "two-deep perfect nest)"),
           std::nullopt;
  if (!readHeader(InnerFor, N.Inner))
    return std::nullopt;
  // Bounds capture their parameters first: they lead the generated
  // parameter lists.
  N.Body = InnerFor->getBody();
  StatementLevel.insert(N.Body);
  if (!walk(N.Body, false) || !checkReductions() || !recoverRows())
    return std::nullopt;
  if (llvm::none_of(N.Arrays, [](const Array &A) { return A.Written; }))
    return refuse(Outer->getBeginLoc(), "the nest writes no array"),
           std::nullopt;
  return std::move(N);
}

} // namespace

std::optional<Nest> extractNest(const ForStmt *Outer, ASTContext &Ctx,
                                Refusal &Why) {
  return NestBuilder(Ctx, Why).build(Outer);
}

std::optional<Loop> readLoop(const ForStmt *F, ASTContext &Ctx, Refusal &Why,
                             std::vector<const VarDecl *> &Captures) {
  return NestBuilder(Ctx, Why).loop(F, Captures);
}

} // namespace cleave::tile
