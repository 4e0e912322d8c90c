//===- BlocksExtract.cpp - A technique(blocks) nest as a BlockNest --------===//
//
// Part of Cleave (docs/tile.md, "Higher-dimensional tables"). Reads the
// three loop headers, walks the body (inner loops with affine bounds
// included) and models every subscript as a sum of pitch x affine terms;
// the table's subscripts must be cells of one 3-D view. Anything whose
// accesses cannot be known statically is a Refusal at the construct that
// shows it.
//
//===----------------------------------------------------------------------===//
#include "cleave/Tile/Blocks.h"

#include "clang/AST/ASTContext.h"
#include "clang/AST/Decl.h"
#include "clang/AST/ExprCXX.h"
#include "clang/AST/StmtCXX.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallPtrSet.h"

#include <functional>

using namespace clang;

namespace cleave::tile {
namespace {

using Terms = std::vector<std::pair<Poly, Poly>>;

void addTerm(Terms &T, const Poly &Pitch, const Poly &Aff) {
  for (auto &[P, A] : T)
    if (P == Pitch) {
      A = A + Aff;
      return;
    }
  T.push_back({Pitch, Aff});
}

class BlockBuilder {
public:
  BlockBuilder(ASTContext &Ctx, Refusal &Why) : Ctx(Ctx), Why(Why) {}
  std::optional<BlockNest> build(const ForStmt *Outer);

private:
  ASTContext &Ctx;
  Refusal &Why;
  BlockNest N;
  llvm::SmallPtrSet<const VarDecl *, 8> BodyLocals, Indices;
  std::vector<unsigned> InnerStack;
  unsigned LoopDepth = 0;
  bool Failed = false;

  bool refuse(SourceLocation Loc, std::string Text) {
    if (!Failed) {
      Why = {Loc, std::move(Text)};
      Failed = true;
    }
    return false;
  }
  void capture(const VarDecl *V) {
    if (!Indices.count(V) && !BodyLocals.count(V) &&
        !llvm::is_contained(N.Captures, V))
      N.Captures.push_back(V);
  }
  bool isParam(const VarDecl *V) const {
    return V && !Indices.count(V) && !BodyLocals.count(V) &&
           V->hasLocalStorage() &&
           V->getType().getNonReferenceType()->isIntegerType();
  }
  std::optional<Terms> decompose(const Expr *E, std::string &Bad);
  bool header(const ForStmt *F, Loop &L, bool Outer);
  bool walk(const Stmt *S, bool InSwitch);
  bool walkAccess(const ArraySubscriptExpr *E, bool Reads, bool Writes);
  bool walkWrite(const Expr *Target, const Stmt *Op, bool AlsoReads);
  bool walkRef(const DeclRefExpr *E);
  bool walkCall(const CallExpr *E);
  bool tableView();
};

/// E as pitch x affine terms, or nothing with the reason in Bad: a product
/// of two terms that both hold indices, a variable of the body, a value
/// read from memory.
std::optional<Terms> BlockBuilder::decompose(const Expr *E, std::string &Bad) {
  E = E->IgnoreParenImpCasts();
  if (const auto *C = dyn_cast<ExplicitCastExpr>(E))
    if (C->getType()->isIntegerType() &&
        C->getSubExpr()->getType()->isIntegerType())
      return decompose(C->getSubExpr(), Bad);
  if (const auto *B = dyn_cast<BinaryOperator>(E);
      B && (B->getOpcode() == BO_Add || B->getOpcode() == BO_Sub ||
            B->getOpcode() == BO_Mul)) {
    std::optional<Terms> L = decompose(B->getLHS(), Bad);
    std::optional<Terms> R = L ? decompose(B->getRHS(), Bad) : std::nullopt;
    if (!R)
      return std::nullopt;
    if (B->getOpcode() != BO_Mul) {
      for (auto &[P, A] : *R)
        addTerm(*L, P, B->getOpcode() == BO_Add ? A : Poly::constant(0) - A);
      return L;
    }
    // One factor must hold parameters and constants only.
    auto ParamOnly = [](const Terms &T) -> std::optional<Poly> {
      Poly Q = Poly::constant(0);
      for (const auto &[P, A] : T) {
        if (!A.isConstant())
          return std::nullopt;
        Q = Q + P * A;
      }
      return Q;
    };
    std::optional<Poly> Q = ParamOnly(*L);
    const Terms *Other = &*R;
    if (!Q) {
      Q = ParamOnly(*R);
      Other = &*L;
    }
    if (!Q) {
      Bad = "non-affine";
      return std::nullopt;
    }
    Terms Out;
    for (const auto &[P, A] : *Other) {
      if (Q->isConstant())
        addTerm(Out, P, A * *Q);
      else
        addTerm(Out, P * *Q, A);
    }
    return Out;
  }
  if (const auto *U = dyn_cast<UnaryOperator>(E);
      U && (U->getOpcode() == UO_Minus || U->getOpcode() == UO_Plus)) {
    std::optional<Terms> S = decompose(U->getSubExpr(), Bad);
    if (S && U->getOpcode() == UO_Minus)
      for (auto &[P, A] : *S)
        A = Poly::constant(0) - A;
    return S;
  }
  if (const auto *DRE = dyn_cast<DeclRefExpr>(E))
    if (const auto *V = dyn_cast<VarDecl>(DRE->getDecl())) {
      if (Indices.count(V))
        return Terms{{Poly::constant(1), Poly::variable(V)}};
      if (isParam(V)) {
        capture(V);
        return Terms{{Poly::variable(V), Poly::constant(1)}};
      }
    }
  if (Expr::EvalResult R; !E->isValueDependent() && E->EvaluateAsInt(R, Ctx) &&
                          R.Val.getInt().getSignificantBits() <= 63)
    return Terms{
        {Poly::constant(1), Poly::constant(R.Val.getInt().getSExtValue())}};
  bool Data = false;
  std::function<void(const Stmt *)> Find = [&](const Stmt *S) {
    if (!S)
      return;
    Data |= isa<ArraySubscriptExpr, CallExpr>(S);
    if (const auto *D = dyn_cast<DeclRefExpr>(S))
      Data |= isa<VarDecl>(D->getDecl()) &&
              BodyLocals.count(cast<VarDecl>(D->getDecl()));
    for (const Stmt *C : S->children())
      Find(C);
  };
  Find(E);
  Bad = Data ? "depends on data" : "non-affine";
  return std::nullopt;
}

/// A loop's header (readLoop's forms); the outer loops' bounds may not use
/// the indices, an inner loop's only the indices around it and parameters.
bool BlockBuilder::header(const ForStmt *F, Loop &L, bool Outer) {
  std::vector<const VarDecl *> Vars;
  std::optional<Loop> R = readLoop(F, Ctx, Why, Vars);
  if (!R) {
    Failed = true;
    return false;
  }
  for (const VarDecl *V : Vars) {
    if (Indices.count(V) && Outer)
      return refuse(F->getBeginLoc(),
                    "loop bound depends on an enclosing loop index ('" +
                        V->getName().str() +
                        "'): the table's domain must be a box");
    if (BodyLocals.count(V))
      return refuse(F->getBeginLoc(), "the inner loop's bound reads '" +
                                          V->getName().str() +
                                          "', a variable of the body: its "
                                          "iterations are not known "
                                          "statically");
    if (!Indices.count(V))
      capture(V);
  }
  L = *R;
  Indices.insert(L.Index);
  return true;
}

bool BlockBuilder::walkAccess(const ArraySubscriptExpr *E, bool Reads,
                              bool Writes) {
  const auto *DRE = dyn_cast<DeclRefExpr>(E->getBase()->IgnoreParenImpCasts());
  const auto *V = DRE ? dyn_cast<VarDecl>(DRE->getDecl()) : nullptr;
  QualType T = V ? V->getType().getNonReferenceType() : QualType();
  if (!V || V->hasGlobalStorage() || BodyLocals.count(V) ||
      !(T->isPointerType() ||
        (T->isArrayType() &&
         !T->getArrayElementTypeNoTypeQual()->isArrayType())))
    return refuse(E->getBeginLoc(),
                  "only subscripts of pointers and one-dimensional arrays "
                  "declared outside the nest are supported");
  if (!E->getType()->isArithmeticType())
    return refuse(E->getBeginLoc(), "array elements must be arithmetic "
                                    "scalars");
  std::string Bad;
  std::optional<Terms> S = decompose(E->getIdx(), Bad);
  if (!S)
    return refuse(E->getIdx()->getBeginLoc(),
                  Bad == "depends on data"
                      ? "the subscript of '" + V->getName().str() +
                            "' depends on data read by the nest: its "
                            "dependences are not known statically"
                      : "non-affine subscript of '" + V->getName().str() + "'");
  capture(V);
  size_t Index = arrayIndex(N.Arrays, V, E->getType(), T);
  N.Arrays[Index].Written |= Writes;
  BlockAccess Acc;
  Acc.Expr = E;
  Acc.Array = Index;
  Acc.Reads = Reads;
  Acc.Writes = Writes;
  Acc.Inner = InnerStack;
  Acc.Terms = *S;
  if (Writes && (LoopDepth > 0 || !InnerStack.empty()))
    return refuse(E->getBeginLoc(), "the nest writes '" + V->getName().str() +
                                        "' inside an inner loop: each "
                                        "iteration must write its cell once");
  N.Accesses.push_back(Acc);
  return true;
}

bool BlockBuilder::walkWrite(const Expr *Target, const Stmt *Op,
                             bool AlsoReads) {
  const Expr *T = Target->IgnoreParens();
  if (const auto *AS = dyn_cast<ArraySubscriptExpr>(T))
    return walkAccess(AS, AlsoReads, true) && walk(AS->getIdx(), false);
  if (const auto *D = dyn_cast<DeclRefExpr>(T))
    if (const auto *V = dyn_cast<VarDecl>(D->getDecl());
        V && BodyLocals.count(V))
      return true;
  if (const auto *D = dyn_cast<DeclRefExpr>(T))
    return refuse(Op->getBeginLoc(),
                  "the nest writes '" + D->getDecl()->getNameAsString() +
                      "', declared outside its body (technique(blocks) "
                      "writes only the table's cells)");
  return refuse(Op->getBeginLoc(), "the nest writes something other than "
                                   "an array element or a variable of its "
                                   "body");
}

bool BlockBuilder::walkRef(const DeclRefExpr *E) {
  const auto *V = dyn_cast<VarDecl>(E->getDecl());
  if (!V || BodyLocals.count(V) || Indices.count(V))
    return true;
  if (V->hasGlobalStorage() && !V->hasLocalStorage()) {
    if (V->isUsableInConstantExpressions(Ctx))
      return true;
    return refuse(E->getBeginLoc(), "the nest reads the global variable '" +
                                        V->getName().str() +
                                        "', which device code cannot");
  }
  QualType T = V->getType().getNonReferenceType();
  if (T->isPointerType() || T->isArrayType())
    return refuse(E->getBeginLoc(), "'" + V->getName().str() +
                                        "' is used other than as '" +
                                        V->getName().str() + "[subscript]'");
  if (!T->isArithmeticType())
    return refuse(E->getBeginLoc(), "'" + V->getName().str() + "' has type '" +
                                        T.getAsString() +
                                        "': only arithmetic scalars are "
                                        "supported");
  capture(V);
  return true;
}

bool BlockBuilder::walkCall(const CallExpr *E) {
  const FunctionDecl *FD = E->getDirectCallee();
  if (isa<CXXMemberCallExpr>(E) || !FD ||
      !(FD->isConstexpr() || FD->getBuiltinID()))
    return refuse(E->getBeginLoc(),
                  "the nest calls " +
                      (FD ? "'" + FD->getNameAsString() + "'"
                          : std::string("through a pointer")) +
                      ", which device code cannot call (only constexpr "
                      "functions and builtins)");
  for (const Expr *Arg : E->arguments())
    if (!walk(Arg, false))
      return false;
  return true;
}

bool BlockBuilder::walk(const Stmt *S, bool InSwitch) {
  if (!S || Failed)
    return !Failed;
  if (const auto *F = dyn_cast<ForStmt>(S)) {
    Loop L;
    if (!header(F, L, false))
      return false;
    N.InnerLoops.push_back(L);
    InnerStack.push_back(N.InnerLoops.size() - 1);
    ++LoopDepth;
    bool Ok = walk(F->getBody(), false);
    --LoopDepth;
    InnerStack.pop_back();
    return Ok;
  }
  if (isa<WhileStmt, DoStmt, CXXForRangeStmt>(S))
    return refuse(S->getBeginLoc(),
                  "the body holds a while, do or range-for loop: its "
                  "iterations, and so the cells it reads, are not known "
                  "statically (write it as a for loop with affine bounds)");
  if (isa<ReturnStmt, GotoStmt, IndirectGotoStmt, LabelStmt, CXXTryStmt,
          CXXThrowExpr, LambdaExpr, CXXThisExpr, StmtExpr>(S) ||
      (isa<BreakStmt>(S) && !InSwitch && LoopDepth == 0))
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
  if (const auto *BO = dyn_cast<BinaryOperator>(S); BO && BO->isAssignmentOp())
    return walkWrite(BO->getLHS(), BO, BO->isCompoundAssignmentOp()) &&
           walk(BO->getRHS(), InSwitch);
  if (const auto *UO = dyn_cast<UnaryOperator>(S)) {
    if (UO->isIncrementDecrementOp())
      return walkWrite(UO->getSubExpr(), UO, true);
    if (UO->getOpcode() == UO_AddrOf)
      return refuse(UO->getBeginLoc(), "the nest takes an address");
  }
  if (const auto *AS = dyn_cast<ArraySubscriptExpr>(S))
    return walkAccess(AS, true, false) && walk(AS->getIdx(), InSwitch);
  if (const auto *DRE = dyn_cast<DeclRefExpr>(S))
    return walkRef(DRE);
  if (const auto *CE = dyn_cast<CallExpr>(S))
    return walkCall(CE);
  bool Switch = InSwitch || isa<SwitchStmt>(S);
  for (const Stmt *Child : S->children())
    if (!walk(Child, Switch))
      return false;
  return true;
}

/// The table's accesses as cells (i + a, j + b, k + c) of one 3-D view with
/// pitches (P0, P1, 1), its write at the iteration's own cell.
bool BlockBuilder::tableView() {
  std::optional<unsigned> Table;
  for (unsigned A = 0; A < N.Arrays.size(); ++A)
    if (N.Arrays[A].Written) {
      if (Table)
        return refuse(N.Loops[0].For->getBeginLoc(),
                      "the nest writes two arrays ('" +
                          N.Arrays[*Table].Decl->getName().str() + "' and '" +
                          N.Arrays[A].Decl->getName().str() +
                          "'): technique(blocks) writes one table");
      Table = A;
    }
  if (!Table)
    return refuse(N.Loops[0].For->getBeginLoc(), "the nest writes no array");
  N.Table = *Table;
  std::string Name = N.Arrays[*Table].Decl->getName().str();
  bool First = true;
  for (BlockAccess &Acc : N.Accesses) {
    if (Acc.Array != *Table)
      continue;
    auto Shape = [&] {
      return refuse(Acc.Expr->getIdx()->getBeginLoc(),
                    "the subscript of '" + Name +
                        "' is not of the form ((i + a) * P + j + b) * Q + "
                        "k + c, with offsets a, b, c in the inner loops' "
                        "indices and one pitch P, Q per dimension");
    };
    if (Acc.Terms.size() > 3)
      return Shape();
    std::array<Poly, 3> Pitch;
    std::array<bool, 3> Seen{};
    for (const auto &[P, A] : Acc.Terms) {
      int Dim = -1;
      for (int D = 0; D < 3; ++D)
        if (A.mentions(N.Loops[D].Index))
          Dim = Dim == -1 ? D : 3;
      if (Dim < 0 || Dim > 2 ||
          !(A.coefficientOf(N.Loops[Dim].Index) == Poly::constant(1)))
        return Shape();
      Seen[Dim] = true;
      Pitch[Dim] = P;
      Acc.Off[Dim] = A - Poly::variable(N.Loops[Dim].Index);
    }
    if (!Seen[0] || !Seen[1] || !Seen[2] || !(Pitch[2] == Poly::constant(1)))
      return Shape();
    if (First) {
      N.Pitch = {Pitch[0], Pitch[1]};
      First = false;
    } else if (!(N.Pitch[0] == Pitch[0]) || !(N.Pitch[1] == Pitch[1])) {
      return Shape();
    }
    if (Acc.Writes)
      for (const Poly &O : Acc.Off)
        if (!(O == Poly::constant(0)))
          return refuse(Acc.Expr->getBeginLoc(),
                        "the nest must write '" + Name +
                            "' at its own cell (i, j, k)");
  }
  return true;
}

std::optional<BlockNest> BlockBuilder::build(const ForStmt *Outer) {
  const ForStmt *F = Outer;
  for (int D = 0; D < 3; ++D) {
    if (!F) {
      refuse(Outer->getBeginLoc(),
             "technique(blocks) takes a perfect nest of three for loops");
      return std::nullopt;
    }
    if (!header(F, N.Loops[D], true))
      return std::nullopt;
    const Stmt *Body = F->getBody();
    if (D < 2) {
      if (const auto *CS = dyn_cast<CompoundStmt>(Body); CS && CS->size() == 1)
        Body = CS->body_front();
      F = dyn_cast<ForStmt>(Body);
    } else {
      N.Body = Body;
    }
  }
  if (!walk(N.Body, false) || !tableView())
    return std::nullopt;
  return std::move(N);
}

} // namespace

std::optional<BlockNest> extractBlockNest(const ForStmt *Outer, ASTContext &Ctx,
                                          Refusal &Why) {
  return BlockBuilder(Ctx, Why).build(Outer);
}

} // namespace cleave::tile
