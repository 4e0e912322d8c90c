//===- Rebase.cpp - Rebased variants: the original code on a slab --------===//
//
// Part of Cleave. See cleave/Transforms/Rebase.h and docs/transforms.md
// ("Rebased variants").
//
// Why: the partition-ready variant recovers the original block index from
// first + ctaid, a few dependent instructions between the block index and
// the first load; on kernels whose blocks live ~2,000 cycles that costs 2-4 %
// (bench/results/partition-overhead/
// partition-overhead-2026-11-21-h100-7a7ae32.md). A rebased clone runs the
// kernel's own instructions and moves the offset into parameter
// values computed on the host.
//
// Soundness. Let D be the dimension, f the slab's first index along D, and
// compare block j of the slab launch ("new") with block j + f of the
// original launch ("orig"). Every integer value v of the kernel falls in one
// of two groups:
//
//  * v does not depend on ctaid.D: it is computed from the same inputs in
//    both runs (loads through rebased addresses read the same bytes), so
//    new(j) = orig(j + f);
//  * v is tainted: built from ctaid.D by add, sub, multiplication by a
//    launch-invariant value, shift by a constant, trunc, and extensions.
//    Add, sub, mul, shl and trunc are ring homomorphisms modulo 2^w, so
//    new(j) = orig(j + f) - K_v * f (mod 2^w), K_v the coefficient of
//    ctaid.D as a polynomial in launch-time symbols.
//
// The relation breaks at extensions and ordered comparisons, which see the
// integer, not its residue. There the value must be fully affine (a form in
// tid, ctaid and symbols only), and the runtime checks that the form's
// minimum and maximum over the whole original grid fit the type: then
// new(j) = orig(j) exactly (same code, same inputs), orig(j + f) = orig(j) +
// K_v * f exactly, and the comparison against b holds in the new run against
// b - K_v * f iff it held in the original (the new bound is a parameter,
// checked to fit too). Equality comparisons hold modulo 2^w and need no
// check. An address P + off with off tainted is orig - K * f bytes away in the
// new run (pointer arithmetic is modulo 2^64), so it is rebuilt on a new
// parameter P + K * f. Anything else a tainted value reaches (a store's
// value, a phi, a select, a call, a division, ...) refuses the dimension.
// Kernels that read gridDim along D are refused too: the slab launch has
// another grid.
//
//===----------------------------------------------------------------------===//
#include "cleave/Transforms/Rebase.h"

#include "cleave/Analysis/KernelLegality.h"
#include "cleave/Support/KernelInfo.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/SmallPtrSet.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Analysis/OptimizationRemarkEmitter.h"
#include "llvm/IR/Constants.h"
#include "llvm/IR/DiagnosticInfo.h"
#include "llvm/IR/Function.h"
#include "llvm/IR/GetElementPtrTypeIterator.h"
#include "llvm/IR/InstIterator.h"
#include "llvm/IR/Instructions.h"
#include "llvm/IR/IntrinsicInst.h"
#include "llvm/IR/IntrinsicsNVPTX.h"
#include "llvm/IR/Module.h"
#include "llvm/IR/Operator.h"
#include "llvm/Support/MathExtras.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Transforms/Utils/Cloning.h"
#include "llvm/Transforms/Utils/Local.h"

#include <array>
#include <map>
#include <optional>

using namespace llvm;

namespace cleave {

static constexpr const char *PassName = "cleave-rebase";

static StringRef dimName(unsigned D) { return StringRef("xyz" + D, 1); }

std::string rebaseVariantName(StringRef Kernel, unsigned Dim) {
  return ("__cleave_rb" + dimName(Dim % 3) + "_" + Kernel).str();
}

namespace {

//===-- Polynomials in launch-time symbols ---------------------------------===//

/// A polynomial with int64 coefficients over the footprint text's symbols
/// (argN, block.d, grid.d, first). Monomials are sorted symbol lists, so
/// equal polynomials compare equal.
class Poly {
public:
  using Monomial = SmallVector<std::string, 2>;

  static Poly constant(int64_t C) {
    Poly P;
    if (C)
      P.Terms[{}] = C;
    return P;
  }
  static Poly symbol(StringRef S) {
    Poly P;
    P.Terms[{S.str()}] = 1;
    return P;
  }

  bool isZero() const { return Terms.empty(); }
  /// Whether this is one launch dimension, block.d or grid.d: a value in
  /// [1, 2^31 - 1], which a sign or zero extension of 32 or more bits
  /// leaves as it is.
  bool isLaunchDimension() const {
    if (Terms.size() != 1 || Terms.begin()->second != 1 ||
        Terms.begin()->first.size() != 1)
      return false;
    StringRef S = Terms.begin()->first.front();
    return S.starts_with("block.") || S.starts_with("grid.");
  }
  bool isConstant() const {
    return Terms.empty() || (Terms.size() == 1 && Terms.begin()->first.empty());
  }
  bool operator==(const Poly &O) const { return Terms == O.Terms; }

  /// Sum, difference and product; nullopt on int64 overflow.
  static std::optional<Poly> add(const Poly &A, const Poly &B, int64_t Sign) {
    Poly R = A;
    for (const auto &[M, C] : B.Terms) {
      int64_t Prod, Sum;
      if (MulOverflow(C, Sign, Prod) || AddOverflow(R.Terms[M], Prod, Sum))
        return std::nullopt;
      R.Terms[M] = Sum;
    }
    R.prune();
    return R;
  }
  static std::optional<Poly> mul(const Poly &A, const Poly &B) {
    Poly R;
    for (const auto &[MA, CA] : A.Terms)
      for (const auto &[MB, CB] : B.Terms) {
        Monomial M = MA;
        M.append(MB.begin(), MB.end());
        llvm::sort(M);
        int64_t Prod, Sum;
        if (MulOverflow(CA, CB, Prod) || AddOverflow(R.Terms[M], Prod, Sum))
          return std::nullopt;
        R.Terms[M] = Sum;
      }
    R.prune();
    return R;
  }

  /// Prefix S-expression of the footprint text: "0", "(* 4 block.x)", ...
  std::string str() const {
    if (Terms.empty())
      return "0";
    SmallVector<std::string, 4> Parts;
    for (const auto &[M, C] : Terms) {
      if (M.empty()) {
        Parts.push_back(std::to_string(C));
        continue;
      }
      SmallVector<std::string, 4> F;
      if (C != 1)
        F.push_back(std::to_string(C));
      F.append(M.begin(), M.end());
      Parts.push_back(F.size() == 1 ? F.front()
                                    : "(* " + join(F, " ") + ")");
    }
    return Parts.size() == 1 ? Parts.front() : "(+ " + join(Parts, " ") + ")";
  }

private:
  std::map<Monomial, int64_t> Terms;
  void prune() {
    for (auto It = Terms.begin(); It != Terms.end();)
      It = It->second ? std::next(It) : Terms.erase(It);
  }
};

//===-- Affine forms over tid and ctaid ------------------------------------===//

/// Variables of a form: ctaid.x, ctaid.y, ctaid.z, tid.x, tid.y, tid.z.
constexpr unsigned NumVars = 6;
constexpr const char *VarNames[NumVars] = {"ctaid.x", "ctaid.y", "ctaid.z",
                                           "tid.x",   "tid.y",   "tid.z"};

struct Check;

/// C0 + sum Coef[v] * var_v, the mathematical value of an integer; Needs are
/// the range checks under which the kernel's value equals it (extensions on
/// the way).
struct Affine {
  Poly C0;
  std::array<Poly, NumVars> Coef;
  std::vector<Check> Needs;

  bool isInvariant() const {
    return llvm::all_of(Coef, [](const Poly &P) { return P.isZero(); });
  }
};

/// "The form stays in [Lo, Hi] over the whole grid."
struct Check {
  std::string Form; // the footprint text's (affine ...) form
  int64_t Lo, Hi;
  bool operator==(const Check &O) const {
    return Form == O.Form && Lo == O.Lo && Hi == O.Hi;
  }
};

std::string formText(const Affine &A) {
  std::string S = "(affine " + A.C0.str();
  for (unsigned V = 0; V < NumVars; ++V)
    if (!A.Coef[V].isZero())
      S += std::string(" (") + VarNames[V] + " " + A.Coef[V].str() + ")";
  return S + ")";
}

void appendNeeds(std::vector<Check> &To, const std::vector<Check> &From) {
  for (const Check &C : From)
    if (!llvm::is_contained(To, C))
      To.push_back(C);
}

std::optional<Affine> combine(const Affine &A, const Affine &B, int64_t Sign) {
  Affine R;
  std::optional<Poly> C0 = Poly::add(A.C0, B.C0, Sign);
  if (!C0)
    return std::nullopt;
  R.C0 = *C0;
  for (unsigned V = 0; V < NumVars; ++V) {
    std::optional<Poly> C = Poly::add(A.Coef[V], B.Coef[V], Sign);
    if (!C)
      return std::nullopt;
    R.Coef[V] = *C;
  }
  R.Needs = A.Needs;
  appendNeeds(R.Needs, B.Needs);
  return R;
}

std::optional<Affine> scale(const Affine &A, const Poly &S) {
  Affine R;
  std::optional<Poly> C0 = Poly::mul(A.C0, S);
  if (!C0)
    return std::nullopt;
  R.C0 = *C0;
  for (unsigned V = 0; V < NumVars; ++V) {
    std::optional<Poly> C = Poly::mul(A.Coef[V], S);
    if (!C)
      return std::nullopt;
    R.Coef[V] = *C;
  }
  R.Needs = A.Needs;
  return R;
}

/// The range check that a value of \p Bits bits, read as signed or
/// unsigned, equals its form.
Check rangeCheck(const Affine &A, unsigned Bits, bool Signed) {
  Check C;
  C.Form = formText(A);
  if (Bits >= 64) {
    C.Lo = Signed ? INT64_MIN : 0;
    C.Hi = INT64_MAX;
  } else if (Signed) {
    C.Lo = -(int64_t(1) << (Bits - 1));
    C.Hi = (int64_t(1) << (Bits - 1)) - 1;
  } else {
    C.Lo = 0;
    C.Hi = (int64_t(1) << Bits) - 1;
  }
  return C;
}

//===-- The analysis of one kernel and dimension ---------------------------===//

/// An integer value: its coefficient of ctaid.D (zero when it does not
/// depend on it) and, when known, its form.
struct IntInfo {
  Poly K;
  std::optional<Affine> Form;
};

/// A pointer that depends on ctaid.D: the parameter it is based on and the
/// byte coefficient of ctaid.D in its address.
struct PtrInfo {
  Argument *Root = nullptr;
  Poly K;
};

struct PtrSink {
  Instruction *I;
  unsigned Op;
  unsigned Class; // index into Analysis::PtrClasses
};

struct CmpSink {
  ICmpInst *I;
  unsigned Op;    // the operand replaced by a bound parameter
  unsigned Class; // index into Analysis::IntClasses
};

/// The result for one dimension: what the clone needs, or why not.
struct Analysis {
  std::string Why;                  // empty: the dimension can be rebased
  const Instruction *WhyAt = nullptr;
  std::vector<std::pair<unsigned, Poly>> PtrClasses; // (arg, K bytes)
  struct IntClass {
    Type *Ty;
    Poly Bound, K;
    std::string Mode; // wrap | signed | unsigned
  };
  std::vector<IntClass> IntClasses;
  std::vector<PtrSink> PtrSinks;
  std::vector<CmpSink> CmpSinks;
  std::vector<Check> Checks;
};

unsigned getPointerOperandIndex(const Instruction *I) {
  if (isa<StoreInst>(I))
    return StoreInst::getPointerOperandIndex();
  if (isa<AtomicRMWInst>(I))
    return AtomicRMWInst::getPointerOperandIndex();
  return AtomicCmpXchgInst::getPointerOperandIndex();
}

std::optional<std::pair<bool, unsigned>> sregOf(const Value *V) {
  const auto *II = dyn_cast<IntrinsicInst>(V);
  if (!II)
    return std::nullopt;
  switch (II->getIntrinsicID()) {
  case Intrinsic::nvvm_read_ptx_sreg_ctaid_x:
    return std::make_pair(false, 0u);
  case Intrinsic::nvvm_read_ptx_sreg_ctaid_y:
    return std::make_pair(false, 1u);
  case Intrinsic::nvvm_read_ptx_sreg_ctaid_z:
    return std::make_pair(false, 2u);
  case Intrinsic::nvvm_read_ptx_sreg_nctaid_x:
    return std::make_pair(true, 0u);
  case Intrinsic::nvvm_read_ptx_sreg_nctaid_y:
    return std::make_pair(true, 1u);
  case Intrinsic::nvvm_read_ptx_sreg_nctaid_z:
    return std::make_pair(true, 2u);
  default:
    return std::nullopt;
  }
}

/// True when F is unknown (an indirect call) or, with what it calls, reads
/// ctaid or nctaid: the clone could not keep its block index exact.
bool mayReadGridRegisters(const Function *F) {
  if (!F)
    return true;
  SmallPtrSet<const Function *, 8> Seen;
  SmallVector<const Function *, 8> Work{F};
  while (!Work.empty()) {
    const Function *G = Work.pop_back_val();
    if (!Seen.insert(G).second || G->isDeclaration())
      continue;
    for (const Instruction &I : instructions(*G)) {
      if (sregOf(&I))
        return true;
      if (const auto *CB = dyn_cast<CallBase>(&I)) {
        const Function *Callee = CB->getCalledFunction();
        if (!Callee)
          return true;
        Work.push_back(Callee);
      }
    }
  }
  return false;
}

class Analyzer {
public:
  Analyzer(Function &K, unsigned D) : K(K), D(D) {}
  Analysis run();

private:
  Function &K;
  unsigned D;
  Analysis R;
  SetVector<Instruction *> Tainted;
  SmallPtrSet<Instruction *, 16> SinksSeen;
  DenseMap<Value *, std::optional<IntInfo>> IntMemo;
  DenseMap<Value *, std::optional<PtrInfo>> PtrMemo;

  bool refuse(const Twine &Why, const Instruction *At) {
    if (R.Why.empty()) {
      R.Why = Why.str();
      R.WhyAt = At;
    }
    return false;
  }
  bool isTainted(const Value *V) const {
    const auto *I = dyn_cast<Instruction>(V);
    return I && Tainted.contains(const_cast<Instruction *>(I));
  }
  std::optional<IntInfo> intInfo(Value *V);
  std::optional<IntInfo> computeIntInfo(Value *V);
  std::optional<PtrInfo> ptrInfo(Value *V);
  std::optional<Affine> cleanForm(Value *V);
  bool extension(const IntInfo &Op, unsigned Bits, bool Signed,
                 const Instruction *At);
  bool addCheck(const Affine &A, unsigned Bits, bool Signed);
  bool pointerSink(Instruction &I, unsigned Op);
  bool compareSink(ICmpInst &C);
  unsigned ptrClass(unsigned Arg, const Poly &KB);
};

bool Analyzer::addCheck(const Affine &A, unsigned Bits, bool Signed) {
  appendNeeds(R.Checks, A.Needs);
  Check C = rangeCheck(A, Bits, Signed);
  if (!llvm::is_contained(R.Checks, C))
    R.Checks.push_back(C);
  return true;
}

/// The form of a value that does not depend on ctaid.D, or nullopt when it
/// is not affine in tid, ctaid and launch-time symbols (a load, a phi, ...).
std::optional<Affine> Analyzer::cleanForm(Value *V) {
  if (auto *C = dyn_cast<ConstantInt>(V)) {
    if (C->getBitWidth() > 64)
      return std::nullopt;
    Affine A;
    A.C0 = Poly::constant(C->getSExtValue());
    return A;
  }
  if (auto *Arg = dyn_cast<Argument>(V)) {
    if (!Arg->getType()->isIntegerTy() ||
        Arg->getType()->getIntegerBitWidth() > 64)
      return std::nullopt;
    Affine A;
    A.C0 = Poly::symbol("arg" + std::to_string(Arg->getArgNo()));
    return A;
  }
  std::optional<IntInfo> I = intInfo(V);
  if (!I)
    return std::nullopt;
  return I->Form;
}

std::optional<IntInfo> Analyzer::intInfo(Value *V) {
  auto It = IntMemo.find(V);
  if (It != IntMemo.end())
    return It->second;
  IntMemo[V] = std::nullopt; // cycles (phis) are opaque
  std::optional<IntInfo> Info = computeIntInfo(V);
  IntMemo[V] = Info;
  return Info;
}

bool Analyzer::extension(const IntInfo &Op, unsigned Bits, bool Signed,
                         const Instruction *At) {
  if (!Op.Form)
    return refuse("an extension of a value that depends on the block index "
                  "is not affine in the thread and block indices",
                  At);
  return addCheck(*Op.Form, Bits, Signed);
}

/// Info of an integer value: tainted values must be built by the operations
/// the file comment lists (else nullopt with R.Why set); clean values get
/// K = 0 and their form when they have one.
std::optional<IntInfo> Analyzer::computeIntInfo(Value *V) {
  bool T = isTainted(V);
  if (!isa<Instruction>(V) || !V->getType()->isIntegerTy() ||
      V->getType()->getIntegerBitWidth() > 64) {
    if (T) {
      refuse("a value of an unsupported type depends on the block index",
             cast<Instruction>(V));
      return std::nullopt;
    }
    IntInfo I;
    if (!isa<Instruction>(V))
      I.Form = cleanForm(V);
    return I;
  }
  auto *Inst = cast<Instruction>(V);
  auto Opaque = [&]() -> std::optional<IntInfo> {
    if (T) {
      refuse("the block index reaches '" + Twine(Inst->getOpcodeName()) +
                 "', which is not an affine operation",
             Inst);
      return std::nullopt;
    }
    return IntInfo();
  };
  if (auto S = sregOf(Inst)) {
    IntInfo I;
    Affine A;
    if (S->first) {
      if (S->second == D) // refused before the walk
        return std::nullopt;
      A.C0 = Poly::symbol(std::string("grid.") + "xyz"[S->second]);
    } else {
      A.Coef[S->second] = Poly::constant(1);
      if (S->second == D)
        I.K = Poly::constant(1);
    }
    I.Form = A;
    return I;
  }
  if (const auto *II = dyn_cast<IntrinsicInst>(Inst)) {
    Affine A;
    switch (II->getIntrinsicID()) {
    case Intrinsic::nvvm_read_ptx_sreg_tid_x:
    case Intrinsic::nvvm_read_ptx_sreg_tid_y:
    case Intrinsic::nvvm_read_ptx_sreg_tid_z:
      A.Coef[3 + II->getIntrinsicID() - Intrinsic::nvvm_read_ptx_sreg_tid_x] =
          Poly::constant(1);
      break;
    case Intrinsic::nvvm_read_ptx_sreg_ntid_x:
    case Intrinsic::nvvm_read_ptx_sreg_ntid_y:
    case Intrinsic::nvvm_read_ptx_sreg_ntid_z:
      A.C0 = Poly::symbol(
          std::string("block.") +
          "xyz"[II->getIntrinsicID() - Intrinsic::nvvm_read_ptx_sreg_ntid_x]);
      break;
    default:
      return Opaque();
    }
    IntInfo I;
    I.Form = A;
    return I;
  }

  unsigned Bits = Inst->getType()->getIntegerBitWidth();
  switch (Inst->getOpcode()) {
  case Instruction::Add:
  case Instruction::Sub:
  case Instruction::Or: {
    if (Inst->getOpcode() == Instruction::Or &&
        !cast<PossiblyDisjointInst>(Inst)->isDisjoint())
      return Opaque();
    std::optional<IntInfo> A = intInfo(Inst->getOperand(0));
    std::optional<IntInfo> B = intInfo(Inst->getOperand(1));
    if (!A || !B)
      return std::nullopt;
    int64_t Sign = Inst->getOpcode() == Instruction::Sub ? -1 : 1;
    IntInfo I;
    std::optional<Poly> KS = Poly::add(A->K, B->K, Sign);
    if (!KS) {
      refuse("a coefficient of the block index overflows", Inst);
      return std::nullopt;
    }
    I.K = *KS;
    if (A->Form && B->Form)
      I.Form = combine(*A->Form, *B->Form, Sign);
    return I;
  }
  case Instruction::Mul:
  case Instruction::Shl: {
    std::optional<IntInfo> A = intInfo(Inst->getOperand(0));
    std::optional<IntInfo> B = intInfo(Inst->getOperand(1));
    if (!A || !B)
      return std::nullopt;
    if (Inst->getOpcode() == Instruction::Shl) {
      auto *C = dyn_cast<ConstantInt>(Inst->getOperand(1));
      if (!C || C->getZExtValue() >= Bits || C->getZExtValue() > 62)
        return Opaque();
      B = IntInfo();
      B->Form = Affine();
      B->Form->C0 = Poly::constant(int64_t(1) << C->getZExtValue());
    }
    if (!A->K.isZero() && !B->K.isZero()) {
      refuse("a product of two values that depend on the block index", Inst);
      return std::nullopt;
    }
    // The factor that does not depend on ctaid.D must be launch-invariant
    // for the coefficient to be computable on the host.
    const IntInfo &Var = A->K.isZero() ? *B : *A;
    const IntInfo &Fac = A->K.isZero() ? *A : *B;
    if (!Var.K.isZero() && (!Fac.Form || !Fac.Form->isInvariant())) {
      refuse("the block index is multiplied by a value that is not "
             "launch-invariant",
             Inst);
      return std::nullopt;
    }
    IntInfo I;
    if (!Var.K.isZero()) {
      std::optional<Poly> KP = Poly::mul(Var.K, Fac.Form->C0);
      if (!KP) {
        refuse("a coefficient of the block index overflows", Inst);
        return std::nullopt;
      }
      I.K = *KP;
      if (!Fac.Form->Needs.empty()) {
        refuse("a factor of the block index needs a range check", Inst);
        return std::nullopt;
      }
    }
    if (A->Form && B->Form) {
      if (B->Form->isInvariant())
        I.Form = scale(*A->Form, B->Form->C0);
      else if (A->Form->isInvariant())
        I.Form = scale(*B->Form, A->Form->C0);
      if (I.Form) {
        appendNeeds(I.Form->Needs, A->Form->Needs);
        appendNeeds(I.Form->Needs, B->Form->Needs);
      }
    }
    return I;
  }
  case Instruction::Trunc: {
    std::optional<IntInfo> A = intInfo(Inst->getOperand(0));
    if (!A)
      return std::nullopt;
    return A; // a ring homomorphism; checks at the uses see the form
  }
  case Instruction::SExt:
  case Instruction::ZExt: {
    Value *Op = Inst->getOperand(0);
    std::optional<IntInfo> A = intInfo(Op);
    if (!A)
      return std::nullopt;
    bool Signed = Inst->getOpcode() == Instruction::SExt;
    unsigned From = Op->getType()->getIntegerBitWidth();
    if (!A->K.isZero()) {
      if (!extension(*A, From, Signed, Inst))
        return std::nullopt;
      return A;
    }
    if (isa<Argument>(Op) && Inst->getOpcode() == Instruction::SExt)
      return A; // argN is the argument's sign-extended value
    // A clean extension keeps its form under the same check, which only
    // matters (and is only emitted) if a checked tainted form uses it.
    if (A->Form && !A->Form->isInvariant()) {
      Affine F = *A->Form;
      Check C = rangeCheck(F, From, Signed);
      appendNeeds(F.Needs, {C});
      A->Form = F;
    } else if (A->Form && !A->Form->C0.isConstant() &&
               !(From >= 32 && A->Form->C0.isLaunchDimension())) {
      // An extended symbol is kept opaque (an argument's zero extension,
      // a product that wrapped), but for blockDim or gridDim extended from
      // 32 bits or more: (long)blockIdx.x * blockDim.x.
      A->Form.reset();
    }
    return A;
  }
  default:
    return Opaque();
  }
}

unsigned Analyzer::ptrClass(unsigned Arg, const Poly &KB) {
  for (auto [I, C] : enumerate(R.PtrClasses))
    if (C.first == Arg && C.second == KB)
      return I;
  R.PtrClasses.push_back({Arg, KB});
  return R.PtrClasses.size() - 1;
}

/// A pointer: its base parameter and the byte coefficient of ctaid.D.
std::optional<PtrInfo> Analyzer::ptrInfo(Value *V) {
  auto It = PtrMemo.find(V);
  if (It != PtrMemo.end())
    return It->second;
  std::optional<PtrInfo> Out;
  if (auto *A = dyn_cast<Argument>(V)) {
    if (A->getParent() == &K && A->getType()->isPointerTy() &&
        !A->hasByValAttr())
      Out = PtrInfo{A, Poly()};
  } else if (auto *C = dyn_cast<CastInst>(V)) {
    if (C->getOpcode() == Instruction::AddrSpaceCast ||
        C->getOpcode() == Instruction::BitCast)
      Out = ptrInfo(C->getOperand(0));
  } else if (auto *G = dyn_cast<GetElementPtrInst>(V)) {
    std::optional<PtrInfo> Base = ptrInfo(G->getPointerOperand());
    if (Base) {
      const DataLayout &DL = K.getParent()->getDataLayout();
      Out = Base;
      for (gep_type_iterator GI = gep_type_begin(G), GE = gep_type_end(G);
           GI != GE; ++GI) {
        Value *Idx = GI.getOperand();
        if (GI.isStruct()) {
          if (isTainted(Idx)) {
            Out.reset();
            break;
          }
          continue;
        }
        if (!isTainted(Idx))
          continue;
        TypeSize Size = GI.getSequentialElementStride(DL);
        if (Size.isScalable()) {
          Out.reset();
          break;
        }
        std::optional<IntInfo> II = intInfo(Idx);
        if (!II) {
          Out.reset();
          break;
        }
        unsigned IdxBits = Idx->getType()->getIntegerBitWidth();
        if (IdxBits < DL.getIndexTypeSizeInBits(G->getType()) &&
            !extension(*II, IdxBits, true, G)) {
          Out.reset();
          break;
        }
        std::optional<Poly> Step =
            Poly::mul(II->K, Poly::constant(int64_t(Size.getFixedValue())));
        std::optional<Poly> Sum =
            Step ? Poly::add(Out->K, *Step, 1) : std::nullopt;
        if (!Sum) {
          refuse("a coefficient of the block index overflows", G);
          Out.reset();
          break;
        }
        Out->K = *Sum;
      }
    }
  }
  PtrMemo[V] = Out;
  return Out;
}

bool Analyzer::pointerSink(Instruction &I, unsigned Op) {
  std::optional<PtrInfo> P = ptrInfo(I.getOperand(Op));
  if (!P)
    return refuse("an address that depends on the block index is not "
                  "based on a pointer parameter",
                  &I);
  if (P->K.isZero())
    return true; // the block index cancels out
  R.PtrSinks.push_back({&I, Op, ptrClass(P->Root->getArgNo(), P->K)});
  return true;
}

bool Analyzer::compareSink(ICmpInst &C) {
  std::optional<IntInfo> A = intInfo(C.getOperand(0));
  std::optional<IntInfo> B = intInfo(C.getOperand(1));
  if (!A || !B)
    return false;
  bool Ordered = C.isRelational();
  bool Signed = C.isSigned();
  unsigned Bits = C.getOperand(0)->getType()->getIntegerBitWidth();
  if (A->K == B->K) {
    // The difference does not depend on ctaid.D; ordered comparisons need
    // both sides exact.
    if (!Ordered)
      return true;
    if (!A->Form || !B->Form)
      return refuse("an ordered comparison of values that depend on the "
                    "block index is not affine",
                    &C);
    return addCheck(*A->Form, Bits, Signed) && addCheck(*B->Form, Bits, Signed);
  }
  if (!A->K.isZero() && !B->K.isZero())
    return refuse("a comparison of two values with different coefficients "
                  "of the block index",
                  &C);
  unsigned BoundOp = A->K.isZero() ? 0 : 1;
  const IntInfo &Var = BoundOp == 0 ? *B : *A;
  const IntInfo &Bound = BoundOp == 0 ? *A : *B;
  if (!Bound.Form || !Bound.Form->isInvariant())
    return refuse("the block index is compared with a value that is not "
                  "launch-invariant",
                  &C);
  if (!Bound.Form->Needs.empty())
    return refuse("a bound compared with the block index needs a range "
                  "check",
                  &C);
  std::string Mode = "wrap";
  if (Ordered) {
    if (!Var.Form)
      return refuse("an ordered comparison of a value that depends on the "
                    "block index is not affine",
                    &C);
    addCheck(*Var.Form, Bits, Signed);
    addCheck(*Bound.Form, Bits, Signed);
    Mode = Signed ? "signed" : "unsigned";
  }
  Type *Ty = C.getOperand(0)->getType();
  unsigned Class = R.IntClasses.size();
  for (auto [I, IC] : enumerate(R.IntClasses))
    if (IC.Ty == Ty && IC.Bound == Bound.Form->C0 && IC.K == Var.K &&
        IC.Mode == Mode)
      Class = I;
  if (Class == R.IntClasses.size())
    R.IntClasses.push_back({Ty, Bound.Form->C0, Var.K, Mode});
  R.CmpSinks.push_back({&C, BoundOp, Class});
  return true;
}

Analysis Analyzer::run() {
  // Reads of ctaid.D are the roots; gridDim along D and calls that could
  // read either refuse the dimension.
  SmallVector<Instruction *, 4> Roots;
  for (Instruction &I : instructions(K)) {
    if (auto S = sregOf(&I)) {
      if (S->second != D)
        continue;
      if (S->first) {
        refuse("the kernel reads gridDim." + dimName(D), &I);
        return R;
      }
      Roots.push_back(&I);
      continue;
    }
    if (auto *CB = dyn_cast<CallBase>(&I))
      if (mayReadGridRegisters(CB->getCalledFunction())) {
        refuse("a call that may read the block index or grid size", &I);
        return R;
      }
  }
  if (Roots.empty()) {
    refuse("the kernel does not read blockIdx." + dimName(D), nullptr);
    return R;
  }
  SmallVector<Instruction *, 16> Work(Roots.begin(), Roots.end());
  for (Instruction *I : Roots)
    Tainted.insert(I);
  while (!Work.empty()) {
    Instruction *I = Work.pop_back_val();
    for (User *U : I->users()) {
      auto *UI = cast<Instruction>(U);
      // A memory access does not pass the taint to what it loads (the
      // bytes are the same in both runs), nor a comparison to its truth
      // value (its bound is rebased with it).
      if (isa<LoadInst, StoreInst, AtomicRMWInst, AtomicCmpXchgInst, ICmpInst>(
              UI))
        continue;
      if (Tainted.insert(UI))
        Work.push_back(UI);
    }
  }
  for (Instruction *I : Tainted) {
    for (User *U : I->users()) {
      auto *UI = cast<Instruction>(U);
      bool Ok = true;
      if (isa<LoadInst, StoreInst, AtomicRMWInst, AtomicCmpXchgInst, ICmpInst>(
              UI) &&
          !SinksSeen.insert(UI).second)
        continue;
      if (auto *L = dyn_cast<LoadInst>(UI)) {
        Ok = pointerSink(*L, L->getPointerOperandIndex());
      } else if (isa<StoreInst, AtomicRMWInst, AtomicCmpXchgInst>(UI)) {
        // Only the address may depend on the block index.
        unsigned PtrOp = getPointerOperandIndex(UI);
        for (Use &Op : UI->operands())
          if (Op.getOperandNo() != PtrOp && isTainted(Op.get()))
            Ok = refuse("a value that depends on the block index is stored",
                        UI);
        if (Ok && isTainted(UI->getOperand(PtrOp)))
          Ok = pointerSink(*UI, PtrOp);
      } else if (auto *C = dyn_cast<ICmpInst>(UI)) {
        if (!C->getOperand(0)->getType()->isIntegerTy())
          Ok = refuse("a pointer that depends on the block index is "
                      "compared",
                      C);
        else
          Ok = compareSink(*C);
      } else if (isa<GetElementPtrInst>(UI) ||
                 (isa<CastInst>(UI) && UI->getType()->isPointerTy() &&
                  !isa<IntToPtrInst>(UI))) {
        // Checked where the pointer is used.
      } else if (UI->getType()->isIntegerTy()) {
        Ok = intInfo(UI).has_value();
      } else {
        Ok = refuse("the block index reaches '" +
                        Twine(UI->getOpcodeName()) + "'",
                    UI);
      }
      if (!Ok || !R.Why.empty())
        return R;
    }
    // Integer values in the taint must themselves be understood (an unused
    // one is harmless, but its operands were walked anyway).
    if (I->getType()->isIntegerTy() && !intInfo(I))
      return R;
  }
  return R;
}

//===-- The clone ------------------------------------------------------------===//

/// Makes the clone of K described by A and returns it with its `rebase`
/// record in RebaseAttr.
Function *makeClone(Function &K, unsigned D, const Analysis &A) {
  Module &M = *K.getParent();
  LLVMContext &Ctx = M.getContext();
  // The extra parameters come first: the parameters the clone reads then
  // sit at the same low offsets of the parameter bank as the original's
  // (measured: reading them 32 bytes further up cost 0.6-1.3 % on short
  // blocks, identical SASS otherwise).
  FunctionType *OldTy = K.getFunctionType();
  SmallVector<Type *, 16> Params;
  for (const auto &P : A.PtrClasses)
    Params.push_back(K.getArg(P.first)->getType());
  for (const auto &I : A.IntClasses)
    Params.push_back(I.Ty);
  unsigned NumExtra = Params.size();
  Params.append(OldTy->param_begin(), OldTy->param_end());
  auto *NewTy = FunctionType::get(OldTy->getReturnType(), Params, false);
  Function *NewF =
      Function::Create(NewTy, GlobalValue::ExternalLinkage,
                       K.getAddressSpace(), rebaseVariantName(K.getName(), D),
                       &M);
  ValueToValueMapTy VMap;
  auto OldParam = [&](unsigned ArgNo) { return NewF->getArg(NumExtra + ArgNo); };
  for (Argument &Arg : K.args()) {
    OldParam(Arg.getArgNo())->setName(Arg.getName());
    VMap[&Arg] = OldParam(Arg.getArgNo());
  }
  SmallVector<ReturnInst *, 4> Returns;
  CloneFunctionInto(NewF, &K, VMap, CloneFunctionChangeType::LocalChangesOnly,
                    Returns);
  NewF->setLinkage(GlobalValue::ExternalLinkage);
  NewF->setVisibility(GlobalValue::DefaultVisibility);
  if (DISubprogram *SP = NewF->getSubprogram())
    if (SP != K.getSubprogram() && !SP->getLinkageName().empty())
      SP->replaceLinkageName(MDString::get(Ctx, NewF->getName()));
  markAsKernelLike(*NewF, K);
  NewF->addFnAttr(VariantAttr, "rebase");
  NewF->addFnAttr(OriginAttr, K.getName());

  auto PtrParam = [&](unsigned C) { return NewF->getArg(C); };
  auto IntParam = [&](unsigned C) {
    return NewF->getArg(A.PtrClasses.size() + C);
  };

  // Rebuild each rebased address on its class's parameter: the chain of
  // GEPs and casts from the parameter, cloned once per class, placed before
  // the original links.
  std::map<std::pair<Value *, unsigned>, Value *> Rebuilt;
  std::function<Value *(Value *, unsigned)> Rebuild = [&](Value *V,
                                                          unsigned C) {
    if (auto *Arg = dyn_cast<Argument>(V)) {
      assert(Arg->getArgNo() == NumExtra + A.PtrClasses[C].first);
      (void)Arg;
      return static_cast<Value *>(PtrParam(C));
    }
    auto Key = std::make_pair(V, C);
    auto It = Rebuilt.find(Key);
    if (It != Rebuilt.end())
      return It->second;
    auto *I = cast<Instruction>(V);
    Instruction *Copy = I->clone();
    Copy->setOperand(0, Rebuild(I->getOperand(0), C));
    if (auto *G = dyn_cast<GetElementPtrInst>(Copy))
      // The new offsets may be negative: only inbounds stays true.
      G->setNoWrapFlags(G->isInBounds() ? GEPNoWrapFlags::inBounds()
                                        : GEPNoWrapFlags::none());
    Copy->insertBefore(I);
    Copy->setName(I->getName() + ".rb");
    Rebuilt[Key] = Copy;
    return static_cast<Value *>(Copy);
  };
  // Old address chains and bounds may be shared by several sinks: weak
  // handles, deleted once.
  SmallVector<WeakTrackingVH, 8> MaybeDead;
  for (const PtrSink &S : A.PtrSinks) {
    auto *I = cast<Instruction>(VMap[S.I]);
    Value *Old = I->getOperand(S.Op);
    I->setOperand(S.Op, Rebuild(Old, S.Class));
    if (auto *OI = dyn_cast<Instruction>(Old))
      MaybeDead.push_back(OI);
  }
  for (const CmpSink &S : A.CmpSinks) {
    auto *I = cast<Instruction>(VMap[S.I]);
    Value *Old = I->getOperand(S.Op);
    I->setOperand(S.Op, IntParam(S.Class));
    if (auto *OI = dyn_cast<Instruction>(Old))
      MaybeDead.push_back(OI);
  }
  RecursivelyDeleteTriviallyDeadInstructionsPermissive(MaybeDead);

  // Parameter attributes. A pointer whose accesses all moved to one new
  // parameter hands it its attributes (noalias included); otherwise the
  // accesses through the old and new parameters may overlap, so noalias
  // goes from all of them.
  for (auto [C, P] : enumerate(A.PtrClasses)) {
    Argument *Old = OldParam(P.first);
    Argument *New = PtrParam(C);
    New->setName(Old->getName() + ".rb");
    unsigned Classes = llvm::count_if(
        A.PtrClasses, [&](const auto &Q) { return Q.first == P.first; });
    AttributeSet OldAttrs =
        NewF->getAttributes().getParamAttrs(NumExtra + P.first);
    for (Attribute At : OldAttrs) {
      if (!At.isEnumAttribute())
        continue;
      Attribute::AttrKind AK = At.getKindAsEnum();
      if (AK == Attribute::NoAlias && (Classes > 1 || !Old->use_empty()))
        continue;
      if (AK == Attribute::NoAlias || AK == Attribute::ReadOnly ||
          AK == Attribute::WriteOnly || AK == Attribute::NoCapture ||
          AK == Attribute::NoUndef)
        New->addAttr(At);
    }
    if (Classes > 1 || !Old->use_empty())
      Old->removeAttr(Attribute::NoAlias);
  }
  for (unsigned C = 0; C < A.IntClasses.size(); ++C) {
    IntParam(C)->setName("rb.bound" + std::to_string(C));
    IntParam(C)->addAttr(Attribute::NoUndef);
  }

  // The record the runtime evaluates (docs/footprints.md, "rebase").
  std::string Text;
  raw_string_ostream OS(Text);
  OS << "rebase " << dimName(D) << " " << NewF->getName() << "\n";
  for (const auto &P : A.PtrClasses)
    OS << "  param ptr " << P.first << " "
       << Poly::mul(P.second, Poly::symbol("first"))->str() << "\n";
  for (const auto &I : A.IntClasses) {
    std::optional<Poly> Shift = Poly::mul(I.K, Poly::symbol("first"));
    std::optional<Poly> V = Poly::add(I.Bound, *Shift, -1);
    OS << "  param int " << I.Ty->getIntegerBitWidth() << " " << I.Mode << " "
       << V->str() << "\n";
  }
  for (const Check &C : A.Checks)
    OS << "  check " << C.Form << " " << C.Lo << " " << C.Hi << "\n";
  OS << "end\n";
  NewF->addFnAttr(RebaseAttr, Text);
  return NewF;
}

std::string describeClone(const Analysis &A) {
  std::string S;
  raw_string_ostream OS(S);
  OS << A.PtrClasses.size() << " rebased pointer"
     << (A.PtrClasses.size() == 1 ? "" : "s") << ", " << A.IntClasses.size()
     << " rebased bound" << (A.IntClasses.size() == 1 ? "" : "s") << ", "
     << A.Checks.size() << " range check" << (A.Checks.size() == 1 ? "" : "s");
  return S;
}

} // namespace

std::string appendRebaseRecords(const Module &M, const Function &K,
                                std::string Text) {
  std::string Records;
  for (unsigned D = 0; D < 3; ++D)
    if (const Function *F = M.getFunction(rebaseVariantName(K.getName(), D)))
      Records += F->getFnAttribute(RebaseAttr).getValueAsString().str();
  size_t End = Text.rfind("end\n");
  if (Records.empty() || End == std::string::npos)
    return Text;
  return Text.insert(End, Records);
}

PreservedAnalyses RebasePass::run(Module &M, ModuleAnalysisManager &MAM) {
  FunctionAnalysisManager &FAM =
      MAM.getResult<FunctionAnalysisManagerModuleProxy>(M).getManager();
  bool Changed = false;
  for (Function *K : getKernels(M)) {
    const KernelLegality &Legality = FAM.getResult<KernelLegalityAnalysis>(*K);
    if (!Legality.canSplit())
      continue; // cleave-partition says why
    auto &ORE = FAM.getResult<OptimizationRemarkEmitterAnalysis>(*K);
    for (unsigned D = 0; D < 3; ++D) {
      if (M.getFunction(rebaseVariantName(K->getName(), D)))
        continue; // made by an earlier run
      Analysis A = Analyzer(*K, D).run();
      if (!A.Why.empty()) {
        if (!A.WhyAt)
          continue; // the dimension is not used: nothing to say
        ORE.emit([&] {
          return OptimizationRemarkMissed(PassName, "NotRebased",
                                          userLocation(*A.WhyAt),
                                          A.WhyAt->getParent())
                 << "kernel '" << displayName(*K)
                 << "' has no rebased variant along " << dimName(D)
                 << ": " << A.Why;
        });
        continue;
      }
      Function *Clone = makeClone(*K, D, A);
      Changed = true;
      ORE.emit([&] {
        return OptimizationRemark(PassName, "RebasedVariant", K)
               << "kernel '" << displayName(*K) << "': created '"
               << Clone->getName() << "' (block index "
               << dimName(D) << ": " << describeClone(A) << ")";
      });
    }
  }
  return Changed ? PreservedAnalyses::none() : PreservedAnalyses::all();
}

} // namespace cleave
