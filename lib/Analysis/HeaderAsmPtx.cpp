//===- HeaderAsmPtx.cpp - Arithmetic PTX blocks of cuda_fp16/bf16 ---------===//
//
// Part of Cleave. See cleave/Analysis/HeaderAsmPtx.h. The grammar is that of
// the asm strings as Clang 19 prints them into IR: `$N` operands, `$$` for a
// literal `$` (the headers' `__$temp3` registers), nested `{ }` scopes whose
// `.reg` declarations may reuse a name, `;` ending every statement.
//
//===----------------------------------------------------------------------===//
#include "cleave/Analysis/HeaderAsmPtx.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSwitch.h"
#include "llvm/IR/DerivedTypes.h"
#include "llvm/IR/InlineAsm.h"

#include <optional>

using namespace llvm;

namespace cleave {

unsigned ptxTypeBits(PtxType T) {
  switch (T) {
  case PtxType::B8:
  case PtxType::U8:
  case PtxType::S8:
    return 8;
  case PtxType::B16:
  case PtxType::U16:
  case PtxType::S16:
  case PtxType::F16:
  case PtxType::BF16:
    return 16;
  case PtxType::B32:
  case PtxType::U32:
  case PtxType::S32:
  case PtxType::F32:
  case PtxType::F16x2:
  case PtxType::BF16x2:
    return 32;
  case PtxType::B64:
  case PtxType::U64:
  case PtxType::S64:
  case PtxType::F64:
    return 64;
  case PtxType::Pred:
    return 1;
  }
  return 0;
}

static std::optional<PtxType> parseType(StringRef S) {
  return StringSwitch<std::optional<PtxType>>(S)
      .Case("b8", PtxType::B8)
      .Case("b16", PtxType::B16)
      .Case("b32", PtxType::B32)
      .Case("b64", PtxType::B64)
      .Case("u8", PtxType::U8)
      .Case("u16", PtxType::U16)
      .Case("u32", PtxType::U32)
      .Case("u64", PtxType::U64)
      .Case("s8", PtxType::S8)
      .Case("s16", PtxType::S16)
      .Case("s32", PtxType::S32)
      .Case("s64", PtxType::S64)
      .Case("f16", PtxType::F16)
      .Case("f16x2", PtxType::F16x2)
      .Case("bf16", PtxType::BF16)
      .Case("bf16x2", PtxType::BF16x2)
      .Case("f32", PtxType::F32)
      .Case("f64", PtxType::F64)
      .Case("pred", PtxType::Pred)
      .Default(std::nullopt);
}

static bool isHalfType(PtxType T) {
  return T == PtxType::F16 || T == PtxType::F16x2 || T == PtxType::BF16 ||
         T == PtxType::BF16x2;
}
static bool isIntType(PtxType T) {
  return T == PtxType::U8 || T == PtxType::U16 || T == PtxType::U32 ||
         T == PtxType::U64 || T == PtxType::S8 || T == PtxType::S16 ||
         T == PtxType::S32 || T == PtxType::S64;
}
static bool isBitsType(PtxType T) {
  return T == PtxType::B16 || T == PtxType::B32 || T == PtxType::B64;
}
static bool isScalarFloat(PtxType T) {
  return T == PtxType::F16 || T == PtxType::BF16 || T == PtxType::F32 ||
         T == PtxType::F64;
}

namespace {

/// Opcode and modifiers of one instruction, before its validation.
struct Decoded {
  PtxInst I;
  SmallVector<PtxType, 2> Types;
  bool Approx = false, HasCmp = false;
};

std::optional<Decoded> decodeOpcode(StringRef Opcode) {
  SmallVector<StringRef, 6> Parts;
  Opcode.split(Parts, '.');
  std::optional<PtxOp> Op = StringSwitch<std::optional<PtxOp>>(Parts[0])
                                .Case("mov", PtxOp::Mov)
                                .Case("add", PtxOp::Add)
                                .Case("sub", PtxOp::Sub)
                                .Case("mul", PtxOp::Mul)
                                .Case("fma", PtxOp::Fma)
                                .Case("neg", PtxOp::Neg)
                                .Case("abs", PtxOp::Abs)
                                .Case("min", PtxOp::Min)
                                .Case("max", PtxOp::Max)
                                .Case("div", PtxOp::Div)
                                .Case("rcp", PtxOp::Rcp)
                                .Case("sqrt", PtxOp::Sqrt)
                                .Case("rsqrt", PtxOp::Rsqrt)
                                .Case("ex2", PtxOp::Ex2)
                                .Case("lg2", PtxOp::Lg2)
                                .Case("sin", PtxOp::Sin)
                                .Case("cos", PtxOp::Cos)
                                .Case("tanh", PtxOp::Tanh)
                                .Case("cvt", PtxOp::Cvt)
                                .Case("setp", PtxOp::Setp)
                                .Case("set", PtxOp::Set)
                                .Case("selp", PtxOp::Selp)
                                .Case("and", PtxOp::And)
                                .Case("or", PtxOp::Or)
                                .Case("xor", PtxOp::Xor)
                                .Case("not", PtxOp::Not)
                                .Case("shl", PtxOp::Shl)
                                .Case("shr", PtxOp::Shr)
          .Case("addc", PtxOp::AddC)
          .Case("subc", PtxOp::SubC)
          .Case("mad", PtxOp::Mad)
          .Case("madc", PtxOp::MadC)
                                .Default(std::nullopt);
  if (!Op)
    return std::nullopt;
  Decoded D{PtxInst{*Op, PtxType::B32}};
  bool CmpAllowed = *Op == PtxOp::Set || *Op == PtxOp::Setp;
  for (StringRef M : ArrayRef(Parts).drop_front()) {
    if (std::optional<PtxType> T = parseType(M)) {
      D.Types.push_back(*T);
      continue;
    }
    if (!D.Types.empty())
      return std::nullopt; // modifiers precede the types
    std::optional<PtxRound> R = StringSwitch<std::optional<PtxRound>>(M)
                                    .Case("rn", PtxRound::RN)
                                    .Case("rz", PtxRound::RZ)
                                    .Case("rm", PtxRound::RM)
                                    .Case("rp", PtxRound::RP)
                                    .Case("rni", PtxRound::RNI)
                                    .Case("rzi", PtxRound::RZI)
                                    .Case("rmi", PtxRound::RMI)
                                    .Case("rpi", PtxRound::RPI)
                                    .Default(std::nullopt);
    std::optional<PtxCmp> C = StringSwitch<std::optional<PtxCmp>>(M)
                                  .Case("eq", PtxCmp::EQ)
                                  .Case("ne", PtxCmp::NE)
                                  .Case("lt", PtxCmp::LT)
                                  .Case("le", PtxCmp::LE)
                                  .Case("gt", PtxCmp::GT)
                                  .Case("ge", PtxCmp::GE)
                                  .Case("equ", PtxCmp::EQU)
                                  .Case("neu", PtxCmp::NEU)
                                  .Case("ltu", PtxCmp::LTU)
                                  .Case("leu", PtxCmp::LEU)
                                  .Case("gtu", PtxCmp::GTU)
                                  .Case("geu", PtxCmp::GEU)
                                  .Case("num", PtxCmp::NUM)
                                  .Case("nan", PtxCmp::NAN_)
                                  .Default(std::nullopt);
    if (R && D.I.Round == PtxRound::None)
      D.I.Round = *R;
    else if (C && CmpAllowed && !D.HasCmp) {
      D.I.Cmp = *C;
      D.HasCmp = true;
    } else if (M == "ftz" && !D.I.Ftz)
      D.I.Ftz = true;
    else if (M == "sat" && !D.I.Sat)
      D.I.Sat = true;
    else if (M == "relu" && !D.I.Relu)
      D.I.Relu = true;
    else if (M == "NaN" && !D.I.PropagateNaN)
      D.I.PropagateNaN = true;
    else if (M == "approx" && !D.Approx)
      D.Approx = true;
    else if (M == "cc" && !D.I.CarryOut)
      D.I.CarryOut = true;
    else if ((M == "lo" || M == "hi") && D.I.Part == PtxInst::Whole)
      D.I.Part = M == "lo" ? PtxInst::Lo : PtxInst::Hi;
    else
      return std::nullopt;
    CmpAllowed = false; // the comparison comes first
  }
  return D;
}

/// Whether a cvt from \p S to \p D with rounding \p R is one the lowering
/// implements (the forms the headers emit, and their siblings).
bool validCvt(PtxType D, PtxType S, PtxRound R) {
  bool Narrow = R == PtxRound::RN || R == PtxRound::RZ || R == PtxRound::RM ||
                R == PtxRound::RP;
  bool Integral = R == PtxRound::RNI || R == PtxRound::RZI ||
                  R == PtxRound::RMI || R == PtxRound::RPI;
  bool DHalf = D == PtxType::F16 || D == PtxType::BF16;
  bool SHalf = S == PtxType::F16 || S == PtxType::BF16;
  if (D == PtxType::F32 && SHalf)
    return R == PtxRound::None;
  if (D == PtxType::F64 && S == PtxType::F32)
    return R == PtxRound::None;
  if (D == PtxType::F32 && S == PtxType::F64)
    return R == PtxRound::RN;
  if (DHalf && (S == PtxType::F32 || S == PtxType::F64))
    return Narrow;
  if (DHalf && isIntType(S) && ptxTypeBits(S) >= 16)
    return Narrow;
  if ((DHalf || D == PtxType::F32) && S == D)
    return Integral;
  if (isIntType(D) && (SHalf || S == PtxType::F32))
    return Integral;
  if ((D == PtxType::F16x2 || D == PtxType::BF16x2) && S == PtxType::F32)
    return R == PtxRound::RN;
  return false;
}

/// Checks modifiers and types of \p D for its opcode; fills Type/SrcType.
bool validate(Decoded &D) {
  PtxInst &I = D.I;
  auto One = [&](auto Pred) {
    if (D.Types.size() != 1 || !Pred(D.Types[0]))
      return false;
    I.Type = D.Types[0];
    return true;
  };
  bool NoFlags = !I.Ftz && !I.Sat && !I.Relu && !I.PropagateNaN && !D.Approx;
  bool RoundNone = I.Round == PtxRound::None;
  auto ArithType = [](PtxType T) { return isHalfType(T) || T == PtxType::F32; };
  auto Word = [](PtxType T) { return T == PtxType::U32 || T == PtxType::S32; };
  bool IntForm = D.Types.size() == 1 && Word(D.Types[0]);
  // Integer add/sub only in carry chains (.cc); mul only as .lo/.hi.
  bool Chain = I.Op == PtxOp::AddC || I.Op == PtxOp::SubC ||
               I.Op == PtxOp::Mad || I.Op == PtxOp::MadC ||
               ((I.Op == PtxOp::Add || I.Op == PtxOp::Sub) && IntForm &&
                I.CarryOut) ||
               (I.Op == PtxOp::Mul && IntForm && !I.CarryOut);
  if (Chain) {
    bool Halves = I.Op == PtxOp::Mul || I.Op == PtxOp::Mad ||
                  I.Op == PtxOp::MadC;
    return NoFlags && RoundNone && (I.Part != PtxInst::Whole) == Halves &&
           One(Word);
  }
  if (I.CarryOut || I.Part != PtxInst::Whole)
    return false;
  switch (I.Op) {
  case PtxOp::Mov:
    return NoFlags && RoundNone && One([](PtxType T) {
             return T != PtxType::Pred && ptxTypeBits(T) >= 16;
           });
  case PtxOp::Add:
  case PtxOp::Sub:
  case PtxOp::Mul: {
    // Halves: .rn only, .sat. f32: the four roundings for add and sub,
    // .ftz; f64: .rn.
    if (I.Relu || I.PropagateNaN || D.Approx)
      return false;
    bool Directed = I.Round == PtxRound::RZ || I.Round == PtxRound::RM ||
                    I.Round == PtxRound::RP;
    if (!One([](PtxType T) {
          return isHalfType(T) || T == PtxType::F32 || T == PtxType::F64;
        }))
      return false;
    if (isHalfType(I.Type))
      return !I.Ftz && (RoundNone || I.Round == PtxRound::RN);
    // Directed roundings only on f32 add/sub: the runtime's f32 fma helper
    // they become is exact, its f64 twin is within an ulp.
    return !I.Sat && (!I.Ftz || I.Type == PtxType::F32) &&
           (RoundNone || I.Round == PtxRound::RN ||
            (Directed && I.Op != PtxOp::Mul && I.Type == PtxType::F32));
  }
  case PtxOp::Fma:
    return I.Round == PtxRound::RN && !I.PropagateNaN && !D.Approx && !I.Ftz &&
           !(I.Sat && I.Relu) && One(ArithType) &&
           (!(I.Sat || I.Relu) || isHalfType(I.Type));
  case PtxOp::Neg:
  case PtxOp::Abs:
    return NoFlags && RoundNone && One(isHalfType);
  case PtxOp::Min:
  case PtxOp::Max:
    return !I.Ftz && !I.Sat && !I.Relu && !D.Approx && RoundNone &&
           One(ArithType);
  case PtxOp::Rsqrt: // libdevice's rsqrt.approx.ftz.f64 too
    return D.Approx && !I.Sat && !I.Relu && !I.PropagateNaN && RoundNone &&
           One([](PtxType T) {
             return T == PtxType::F32 || T == PtxType::F64;
           });
  case PtxOp::Div:
  case PtxOp::Rcp:
  case PtxOp::Sqrt:
  case PtxOp::Ex2:
  case PtxOp::Lg2:
  case PtxOp::Sin:
  case PtxOp::Cos:
    return D.Approx && !I.Sat && !I.Relu && !I.PropagateNaN && RoundNone &&
           One([](PtxType T) { return T == PtxType::F32; });
  case PtxOp::Tanh:
    return D.Approx && !I.Ftz && !I.Sat && !I.Relu && !I.PropagateNaN &&
           RoundNone && One(ArithType);
  case PtxOp::Cvt:
    if (D.Types.size() != 2 || I.Ftz || I.Sat || I.Relu || I.PropagateNaN ||
        D.Approx)
      return false;
    I.Type = D.Types[0];
    I.SrcType = D.Types[1];
    return validCvt(I.Type, I.SrcType, I.Round);
  case PtxOp::Setp:
    if (!D.HasCmp || !NoFlags || !RoundNone || !One(isScalarFloat))
      return false;
    I.SrcType = I.Type;
    return true;
  case PtxOp::Set: {
    if (!D.HasCmp || !NoFlags || !RoundNone || D.Types.size() != 2)
      return false;
    I.Type = D.Types[0];
    I.SrcType = D.Types[1];
    if (!isHalfType(I.SrcType) && I.SrcType != PtxType::F32)
      return false;
    if (I.Type == PtxType::U32 || I.Type == PtxType::S32)
      return true;
    // A floating destination holds 1.0/0.0 (per lane) of the source's type.
    return I.Type == I.SrcType;
  }
  case PtxOp::Selp:
    return NoFlags && RoundNone && One([](PtxType T) {
             return T != PtxType::Pred && ptxTypeBits(T) >= 16;
           });
  case PtxOp::And:
  case PtxOp::Or:
  case PtxOp::Xor:
  case PtxOp::Not:
  case PtxOp::Shl:
    return NoFlags && RoundNone && One(isBitsType);
  case PtxOp::Shr:
    return NoFlags && RoundNone && One([](PtxType T) {
             return isBitsType(T) || (isIntType(T) && ptxTypeBits(T) >= 16);
           });
  }
  return false;
}

/// The operand count of \p I's instruction.
unsigned operandCount(const PtxInst &I) {
  switch (I.Op) {
  case PtxOp::Mov:
  case PtxOp::Neg:
  case PtxOp::Abs:
  case PtxOp::Rcp:
  case PtxOp::Sqrt:
  case PtxOp::Rsqrt:
  case PtxOp::Ex2:
  case PtxOp::Lg2:
  case PtxOp::Sin:
  case PtxOp::Cos:
  case PtxOp::Tanh:
  case PtxOp::Not:
    return 2;
  case PtxOp::Cvt:
    return I.Type == PtxType::F16x2 || I.Type == PtxType::BF16x2 ? 3 : 2;
  case PtxOp::Fma:
  case PtxOp::Selp:
  case PtxOp::Mad:
  case PtxOp::MadC:
    return 4;
  default:
    return 3;
  }
}

/// Width in bits that operand \p N of \p I carries.
unsigned operandBits(const PtxInst &I, unsigned N) {
  switch (I.Op) {
  case PtxOp::Cvt:
    return ptxTypeBits(N == 0 ? I.Type : I.SrcType);
  case PtxOp::Setp:
    return N == 0 ? 1 : ptxTypeBits(I.SrcType);
  case PtxOp::Set:
    return ptxTypeBits(N == 0 ? I.Type : I.SrcType);
  case PtxOp::Selp:
    return N == 3 ? 1 : ptxTypeBits(I.Type);
  case PtxOp::Shl:
  case PtxOp::Shr:
    return N == 2 ? 32 : ptxTypeBits(I.Type);
  default:
    return ptxTypeBits(I.Type);
  }
}

class Parser {
public:
  Parser(StringRef Asm, PtxBlock &B) : S(Asm), B(B) {}
  bool parse();

private:
  bool statement(StringRef Text);
  bool declaration(StringRef Text);
  bool instruction(StringRef Text);
  std::optional<PtxOperand> operand(StringRef Text);
  bool checkOperand(const PtxOperand &O, unsigned Bits, bool Dest,
                    bool WiderIntDest);
  std::optional<unsigned> lookup(StringRef Name) const;

  StringRef S;
  PtxBlock &B;
  std::vector<StringMap<unsigned>> Scopes;
  /// Registers and outputs written so far (an output tied to an input
  /// starts with its value); a read of one not yet set is refused.
  std::vector<bool> Written;
  SmallVector<bool, 2> OutputSet;
  /// Whether an earlier instruction wrote the carry flag.
  bool CarrySet = false;
};

bool Parser::parse() {
  for (int Tied : B.TiedInput)
    OutputSet.push_back(Tied != -1);
  Scopes.emplace_back();
  while (true) {
    S = S.ltrim();
    if (S.empty())
      break;
    if (S.front() == '{') {
      Scopes.emplace_back();
      S = S.drop_front();
    } else if (S.front() == '}') {
      if (Scopes.size() == 1)
        return false;
      Scopes.pop_back();
      S = S.drop_front();
    } else {
      size_t End = S.find(';');
      if (End == StringRef::npos || !statement(S.take_front(End).trim()))
        return false;
      S = S.drop_front(End + 1);
    }
  }
  return Scopes.size() == 1 && !B.Insts.empty();
}

bool Parser::statement(StringRef Text) {
  if (Text.starts_with(".reg"))
    return declaration(Text.drop_front(4).ltrim());
  return instruction(Text);
}

static bool isIdentifier(StringRef N) {
  if (N.empty() || !(isAlpha(N.front()) || N.front() == '_'))
    return false;
  return all_of(N, [](char C) { return isAlnum(C) || C == '_' || C == '$'; });
}

bool Parser::declaration(StringRef Text) {
  if (!Text.consume_front("."))
    return false;
  size_t End = Text.find_first_of(" \t\n");
  std::optional<PtxType> T = parseType(Text.take_front(End));
  if (!T || End == StringRef::npos)
    return false;
  SmallVector<StringRef, 4> Names;
  Text.drop_front(End).split(Names, ',');
  for (StringRef N : Names) {
    N = N.trim();
    if (!isIdentifier(N) || Scopes.back().count(N))
      return false;
    Scopes.back()[N] = B.Regs.size();
    B.Regs.push_back({ptxTypeBits(*T)});
    Written.push_back(false);
  }
  return true;
}

std::optional<unsigned> Parser::lookup(StringRef Name) const {
  for (auto It = Scopes.rbegin(); It != Scopes.rend(); ++It)
    if (auto F = It->find(Name); F != It->end())
      return F->second;
  return std::nullopt;
}

std::optional<PtxOperand> Parser::operand(StringRef Text) {
  Text = Text.trim();
  PtxOperand O{PtxOperand::Imm};
  if (Text.consume_front("{")) {
    if (!Text.consume_back("}"))
      return std::nullopt;
    auto [Lo, Hi] = Text.split(',');
    std::optional<PtxOperand> L = operand(Lo), H = operand(Hi);
    if (!L || !H || L->K == PtxOperand::Pair || H->K == PtxOperand::Pair)
      return std::nullopt;
    O.K = PtxOperand::Pair;
    O.Halves = {*L, *H};
    return O;
  }
  if (Text.consume_front("$")) {
    O.K = PtxOperand::Arg;
    if (Text.getAsInteger(10, O.Index) || O.Index >= B.OperandBits.size())
      return std::nullopt;
    return O;
  }
  if (!Text.empty() && isDigit(Text.front())) {
    if (!Text.consume_back("U"))
      Text.consume_back("u");
    if (Text.getAsInteger(0, O.Value))
      return std::nullopt;
    return O;
  }
  std::optional<unsigned> R = lookup(Text);
  if (!R)
    return std::nullopt;
  O.K = PtxOperand::Reg;
  O.Index = *R;
  return O;
}

bool Parser::checkOperand(const PtxOperand &O, unsigned Bits, bool Dest,
                          bool WiderIntDest) {
  switch (O.K) {
  case PtxOperand::Pair:
    return Bits >= 16 && checkOperand(O.Halves[0], Bits / 2, Dest, false) &&
           checkOperand(O.Halves[1], Bits / 2, Dest, false);
  case PtxOperand::Imm:
    return !Dest && Bits > 1 && (Bits == 64 || O.Value >> Bits == 0);
  case PtxOperand::Arg: {
    unsigned Have = B.OperandBits[O.Index];
    // Outputs are written (and may be read back once they hold a value);
    // inputs are only read.
    if (Dest && O.Index >= B.NumOutputs)
      return false;
    if (O.Index < B.NumOutputs) {
      if (!Dest && !OutputSet[O.Index])
        return false;
      OutputSet[O.Index] = true;
    }
    return Have == Bits || (WiderIntDest && Have > Bits);
  }
  case PtxOperand::Reg: {
    unsigned Have = B.Regs[O.Index].Bits;
    if (!Dest && !Written[O.Index])
      return false;
    if (Dest)
      Written[O.Index] = true;
    return Have == Bits || (WiderIntDest && Have > Bits && Bits != 1);
  }
  }
  return false;
}

bool Parser::instruction(StringRef Text) {
  size_t End = Text.find_first_of(" \t\n");
  if (End == StringRef::npos)
    return false;
  std::optional<Decoded> D = decodeOpcode(Text.take_front(End));
  if (!D || !validate(*D))
    return false;
  PtxInst &I = D->I;
  // Operands split at commas outside `{lo,hi}`.
  StringRef Rest = Text.drop_front(End);
  SmallVector<StringRef, 4> Texts;
  int Depth = 0;
  size_t Start = 0;
  for (size_t P = 0; P <= Rest.size(); ++P) {
    char C = P < Rest.size() ? Rest[P] : ',';
    Depth += C == '{' ? 1 : C == '}' ? -1 : 0;
    if (C == ',' && Depth == 0) {
      Texts.push_back(Rest.slice(Start, P));
      Start = P + 1;
    }
  }
  if (Texts.size() != operandCount(I))
    return false;
  for (StringRef T : Texts) {
    std::optional<PtxOperand> O = operand(T);
    if (!O)
      return false;
    I.Ops.push_back(*O);
  }
  // Only mov packs and unpacks pairs.
  for (const PtxOperand &O : I.Ops)
    if (O.K == PtxOperand::Pair && I.Op != PtxOp::Mov)
      return false;
  // Sources first: `abs.f16 i, i` reads i before writing it.
  for (unsigned N = 1; N < I.Ops.size(); ++N)
    if (!checkOperand(I.Ops[N], operandBits(I, N), false, false))
      return false;
  bool IntDest = I.Op == PtxOp::Cvt && isIntType(I.Type);
  if (!checkOperand(I.Ops[0], operandBits(I, 0), true, IntDest))
    return false;
  // A carry-in reads the flag an earlier .cc wrote.
  bool CarryIn = I.Op == PtxOp::AddC || I.Op == PtxOp::SubC ||
                 I.Op == PtxOp::MadC;
  if (CarryIn && !CarrySet)
    return false;
  CarrySet |= I.CarryOut;
  B.Insts.push_back(std::move(I));
  return true;
}

/// Reads the asm's constraints: outputs first ("=h", "=r", "=l", "=f",
/// "=d"), then inputs of the same letters or tied to an output ("0").
/// Anything else (memory, clobbers, early clobbers) is refused.
bool parseConstraints(const CallBase &CB, StringRef Cons, PtxBlock &B) {
  SmallVector<StringRef, 8> Parts;
  Cons.split(Parts, ',');
  auto Width = [](StringRef L) -> unsigned {
    return StringSwitch<unsigned>(L)
        .Case("h", 16)
        .Cases("r", "f", 32)
        .Cases("l", "d", 64)
        .Default(0);
  };
  SmallVector<Type *, 8> Types;
  if (auto *ST = dyn_cast<StructType>(CB.getType()))
    append_range(Types, ST->elements());
  else if (!CB.getType()->isVoidTy())
    Types.push_back(CB.getType());
  for (StringRef P : Parts) {
    bool Output = P.consume_front("=");
    if (Output) {
      if (B.NumOutputs != B.OperandBits.size())
        return false;
      ++B.NumOutputs;
      B.TiedInput.push_back(-1);
    }
    unsigned Bits = Width(P), Tied = 0;
    if (!Bits && !Output && !P.getAsInteger(10, Tied) && Tied < B.NumOutputs) {
      if (B.TiedInput[Tied] != -1)
        return false;
      B.TiedInput[Tied] = B.OperandBits.size();
      Bits = B.OperandBits[Tied];
    }
    if (!Bits)
      return false;
    B.OperandBits.push_back(Bits);
  }
  // The IR's types agree with the letters (a float for "f", i16 for "h").
  if (Types.size() != B.NumOutputs ||
      CB.arg_size() != B.OperandBits.size() - B.NumOutputs)
    return false;
  for (unsigned N = 0; N < B.OperandBits.size(); ++N) {
    Type *T = N < B.NumOutputs ? Types[N]
                               : CB.getArgOperand(N - B.NumOutputs)->getType();
    if (!(T->isIntegerTy() || T->isFloatTy() || T->isDoubleTy()) ||
        T->getPrimitiveSizeInBits() != B.OperandBits[N])
      return false;
  }
  return B.NumOutputs > 0;
}

} // namespace

std::shared_ptr<const PtxBlock> parsePtxArithmetic(const CallBase &CB) {
  const auto *IA = dyn_cast<InlineAsm>(CB.getCalledOperand());
  if (!IA)
    return nullptr;
  auto B = std::make_shared<PtxBlock>();
  if (!parseConstraints(CB, IA->getConstraintString(), *B))
    return nullptr;
  if (!Parser(IA->getAsmString(), *B).parse())
    return nullptr;
  // Every output is written, or tied to an input that gives its value.
  for (unsigned O = 0; O < B->NumOutputs; ++O) {
    bool Written = B->TiedInput[O] != -1;
    for (const PtxInst &I : B->Insts)
      Written |= I.Ops[0].K == PtxOperand::Arg && I.Ops[0].Index == O;
    if (!Written)
      return nullptr;
  }
  return B;
}

} // namespace cleave
