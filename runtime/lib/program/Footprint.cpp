//===- Footprint.cpp - Evaluate serialized kernel footprints --------------===//
//
// Part of Cleave's runtime. The text format and the evaluation algorithm are
// specified in docs/footprints.md; this file follows that document section by
// section: tokenizer and parser, expression evaluation, decomposition of the
// block range into boxes, per-access solving (fusion of index pairs, clamping
// and splitting by the guards, shapes) and coalescing of the regions.
//
//===----------------------------------------------------------------------===//
#include "cleave/rt/Footprint.h"

#include "cleave/ABI/FormatVersions.h"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <limits>
#include <memory>
#include <mutex>
#include <optional>
#include <utility>

namespace cleave {
namespace rt {

namespace {

using i64 = int64_t;

constexpr unsigned NumBuiltinVars = 6; // tid.x/y/z, ctaid.x/y/z
const char *const BuiltinVarNames[NumBuiltinVars] = {
    "tid.x", "tid.y", "tid.z", "ctaid.x", "ctaid.y", "ctaid.z"};

// Limits that keep evaluation cheap; exceeding one loses exactness, never
// soundness.
constexpr size_t MaxPartialValues = 64; // values enumerated by one split
constexpr size_t MaxBoxes = 256;        // boxes per access and piece
constexpr i64 MaxRegionsPerShape = 4096;

//===-- Checked arithmetic ----------------------------------------------===//

std::optional<i64> add(i64 A, i64 B) {
  i64 R;
  if (__builtin_add_overflow(A, B, &R))
    return std::nullopt;
  return R;
}
std::optional<i64> sub(i64 A, i64 B) {
  i64 R;
  if (__builtin_sub_overflow(A, B, &R))
    return std::nullopt;
  return R;
}
std::optional<i64> mul(i64 A, i64 B) {
  i64 R;
  if (__builtin_mul_overflow(A, B, &R))
    return std::nullopt;
  return R;
}
std::optional<i64> floorDiv(i64 A, i64 B) {
  if (B == 0 || (A == std::numeric_limits<i64>::min() && B == -1))
    return std::nullopt;
  i64 Q = A / B;
  if ((A % B != 0) && ((A < 0) != (B < 0)))
    --Q;
  return Q;
}
std::optional<i64> ceilDiv(i64 A, i64 B) {
  auto Q = floorDiv(A, B);
  if (!Q)
    return std::nullopt;
  if (A % B != 0)
    return add(*Q, 1);
  return Q;
}

//===-- Program representation ------------------------------------------===//

enum class SymKind : uint8_t {
  First,
  Count,
  GridX,
  GridY,
  GridZ,
  BlockX,
  BlockY,
  BlockZ,
  Arg
};

enum class Op : uint8_t { Const, Sym, Add, Sub, Mul, Div, Min, Max };

struct Node {
  Op K = Op::Const;
  SymKind S = SymKind::First;
  unsigned ArgNo = 0;
  i64 Value = 0;
  int L = -1, R = -1;
};

/// C0 + sum Coef * var, expressions by node index.
struct Form {
  int C0 = -1;
  std::vector<std::pair<unsigned, int>> Terms;
};

struct Line {
  enum Kind { VarRange, VarHull, Le, Check, At } K;
  unsigned Var = 0;
  int Lo = -1, Hi = -1;
  std::vector<Form> Forms;
};

struct Access {
  unsigned Arg = 0;
  bool Write = false;
  i64 Width = 1;
  bool Exact = true;
  unsigned NumVars = NumBuiltinVars;
  std::vector<Line> Lines;
};

struct UnknownRec {
  unsigned Arg;
  bool Write;
};

enum class ArgKind : uint8_t { Ptr, Int, Other };

/// One extra parameter of a rebased variant (docs/footprints.md, "rebase").
struct RebaseParamRec {
  bool IsPtr = false;
  unsigned Arg = 0;  // ptr: the pointer argument it rebases
  unsigned Bits = 0; // int: the width
  RebaseMode Mode = RebaseMode::Wrap;
  int Value = -1; // ptr: the byte delta; int: the value
};

struct RebaseCheck {
  Form F;
  int Lo = -1, Hi = -1;
};

struct RebaseRec {
  RebasedVariant V;
  std::vector<RebaseParamRec> Params;
  std::vector<RebaseCheck> Checks;
};

/// The last results of evaluate(). A result depends only on the grid, the
/// block, the range and the integer arguments, and a program launches the
/// same few of these again and again (each step of an iteration, each
/// device's range, a decision and then its run), so evaluating once per key
/// takes most of the engine's host time per launch off (bench/engine).
class EvalMemo {
public:
  /// Entries kept; replaced oldest first.
  static constexpr size_t Capacity = 32;
  /// Results of more regions than this are not kept (they would hold much
  /// memory, and evaluating them costs little beside what uses them).
  static constexpr size_t MaxRegions = 4096;

  bool find(const std::vector<i64> &Key, FootprintResult &Out) {
    std::lock_guard<std::mutex> G(Lock);
    for (const Entry &E : Entries)
      if (E.Key == Key) {
        Out = E.Result;
        return true;
      }
    return false;
  }

  void insert(std::vector<i64> Key, const FootprintResult &R) {
    size_t Regions = 0;
    for (const ParamFootprint &P : R.Params)
      Regions += P.Reads.size() + P.Writes.size();
    if (Regions > MaxRegions)
      return;
    std::lock_guard<std::mutex> G(Lock);
    if (Entries.size() < Capacity) {
      Entries.push_back({std::move(Key), R});
      return;
    }
    Entries[Next] = {std::move(Key), R};
    Next = (Next + 1) % Capacity;
  }

private:
  struct Entry {
    std::vector<i64> Key;
    FootprintResult Result;
  };
  std::mutex Lock;
  std::vector<Entry> Entries;
  size_t Next = 0;
};

} // namespace

struct FootprintProgram::Impl {
  std::string Kernel;
  std::vector<ArgKind> Args;
  std::vector<Node> Nodes;
  std::vector<Access> Accesses;
  std::vector<UnknownRec> Unknowns;
  bool Untracked[2] = {false, false}; // [read, write]
  std::vector<RebaseRec> Rebases;
  std::vector<RebasedVariant> RebaseList;
  std::shared_ptr<EvalMemo> Memo = std::make_shared<EvalMemo>();
};

namespace {

//===-- Tokenizer and parser --------------------------------------------===//

std::vector<std::string_view> tokenize(std::string_view Line) {
  std::vector<std::string_view> Toks;
  size_t I = 0;
  while (I < Line.size()) {
    char C = Line[I];
    if (C == '#')
      break;
    if (std::isspace(static_cast<unsigned char>(C))) {
      ++I;
      continue;
    }
    if (C == '(' || C == ')') {
      Toks.push_back(Line.substr(I, 1));
      ++I;
      continue;
    }
    size_t J = I;
    while (J < Line.size() && Line[J] != '(' && Line[J] != ')' &&
           Line[J] != '#' && !std::isspace(static_cast<unsigned char>(Line[J])))
      ++J;
    Toks.push_back(Line.substr(I, J - I));
    I = J;
  }
  return Toks;
}

bool parseInt(std::string_view T, i64 &V) {
  if (T.empty() || T.size() > 24)
    return false;
  size_t I = 0;
  bool Neg = false;
  if (T[0] == '-' || T[0] == '+') {
    Neg = T[0] == '-';
    I = 1;
  }
  if (I == T.size())
    return false;
  // Accumulate negatively so that INT64_MIN parses.
  i64 Acc = 0;
  for (; I < T.size(); ++I) {
    if (!std::isdigit(static_cast<unsigned char>(T[I])))
      return false;
    auto M = mul(Acc, 10);
    if (!M)
      return false;
    auto S = sub(*M, T[I] - '0');
    if (!S)
      return false;
    Acc = *S;
  }
  if (Neg) {
    V = Acc;
    return true;
  }
  if (Acc == std::numeric_limits<i64>::min())
    return false;
  V = -Acc;
  return true;
}

class Parser {
public:
  Parser(FootprintProgram::Impl &P) : P(P) {}

  Status run(std::string_view Text);

private:
  FootprintProgram::Impl &P;
  unsigned LineNo = 0;
  std::vector<std::string_view> Toks;
  size_t Pos = 0;
  // Variables of the access being parsed.
  std::vector<std::string> VarNames;
  std::string Err;

  bool fail(const std::string &Msg) {
    if (Err.empty())
      Err = "line " + std::to_string(LineNo) + ": " + Msg;
    return false;
  }
  bool atEnd() const { return Pos >= Toks.size(); }
  std::string_view peek() const { return atEnd() ? "" : Toks[Pos]; }
  bool expect(std::string_view T) {
    if (peek() != T)
      return fail("expected '" + std::string(T) + "', found '" +
                  std::string(peek()) + "'");
    ++Pos;
    return true;
  }
  bool parseUnsigned(unsigned &V, const char *What) {
    i64 X;
    if (atEnd() || !parseInt(peek(), X) || X < 0 || X > (1 << 20))
      return fail(std::string("expected ") + What);
    ++Pos;
    V = static_cast<unsigned>(X);
    return true;
  }
  int addNode(Node N) {
    P.Nodes.push_back(N);
    return static_cast<int>(P.Nodes.size() - 1);
  }
  bool parseExpr(int &Out);
  bool parseForm(Form &Out);
  bool parseDir(bool &Write) {
    if (peek() == "read")
      Write = false;
    else if (peek() == "write")
      Write = true;
    else
      return fail("expected 'read' or 'write'");
    ++Pos;
    return true;
  }
  int findVar(std::string_view Name) const {
    for (size_t I = 0; I < VarNames.size(); ++I)
      if (VarNames[I] == Name)
        return static_cast<int>(I);
    return -1;
  }
  bool parseAccessLine(Access &A, bool &Done, bool &SawAt);
  bool parseRebaseLine(RebaseRec &R, bool &Done);
  bool endOfLine() {
    if (!atEnd())
      return fail("unexpected '" + std::string(peek()) + "'");
    return true;
  }
};

bool Parser::parseExpr(int &Out) {
  if (atEnd())
    return fail("expected an expression");
  std::string_view T = peek();
  ++Pos;
  if (T == "(") {
    std::string_view OpTok = peek();
    Op K;
    if (OpTok == "+")
      K = Op::Add;
    else if (OpTok == "-")
      K = Op::Sub;
    else if (OpTok == "*")
      K = Op::Mul;
    else if (OpTok == "/")
      K = Op::Div;
    else if (OpTok == "min")
      K = Op::Min;
    else if (OpTok == "max")
      K = Op::Max;
    else
      return fail("unknown operator '" + std::string(OpTok) + "'");
    ++Pos;
    int L, R;
    if (!parseExpr(L) || !parseExpr(R))
      return false;
    Node N;
    N.K = K;
    N.L = L;
    N.R = R;
    int Cur = addNode(N);
    // + * min max accept more operands and fold them to the left.
    while (peek() != ")" && !atEnd()) {
      if (K == Op::Sub || K == Op::Div)
        return fail("'-' and '/' take exactly two operands");
      int Next;
      if (!parseExpr(Next))
        return false;
      Node M;
      M.K = K;
      M.L = Cur;
      M.R = Next;
      Cur = addNode(M);
    }
    if (!expect(")"))
      return false;
    Out = Cur;
    return true;
  }
  Node N;
  i64 V;
  if (parseInt(T, V)) {
    N.K = Op::Const;
    N.Value = V;
    Out = addNode(N);
    return true;
  }
  N.K = Op::Sym;
  static const std::pair<const char *, SymKind> Syms[] = {
      {"first", SymKind::First},    {"count", SymKind::Count},
      {"grid.x", SymKind::GridX},   {"grid.y", SymKind::GridY},
      {"grid.z", SymKind::GridZ},   {"block.x", SymKind::BlockX},
      {"block.y", SymKind::BlockY}, {"block.z", SymKind::BlockZ}};
  for (const auto &S : Syms)
    if (T == S.first) {
      N.S = S.second;
      Out = addNode(N);
      return true;
    }
  if (T.size() > 3 && T.substr(0, 3) == "arg") {
    i64 Idx;
    if (parseInt(T.substr(3), Idx) && T[3] != '-' && T[3] != '+' && Idx >= 0 &&
        static_cast<size_t>(Idx) < P.Args.size()) {
      if (P.Args[Idx] != ArgKind::Int)
        return fail("'" + std::string(T) + "' is not an integer argument");
      N.S = SymKind::Arg;
      N.ArgNo = static_cast<unsigned>(Idx);
      Out = addNode(N);
      return true;
    }
  }
  return fail("unknown symbol '" + std::string(T) + "'");
}

bool Parser::parseForm(Form &Out) {
  if (!expect("(") || !expect("affine"))
    return false;
  if (!parseExpr(Out.C0))
    return false;
  while (peek() == "(") {
    ++Pos;
    int V = findVar(peek());
    if (V < 0)
      return fail("unknown variable '" + std::string(peek()) + "'");
    ++Pos;
    int Coef;
    if (!parseExpr(Coef) || !expect(")"))
      return false;
    Out.Terms.push_back({static_cast<unsigned>(V), Coef});
  }
  return expect(")");
}

bool Parser::parseAccessLine(Access &A, bool &Done, bool &SawAt) {
  std::string_view Kw = peek();
  ++Pos;
  if (Kw == "end") {
    if (!SawAt)
      return fail("access without 'at'");
    Done = true;
    return endOfLine();
  }
  if (SawAt)
    return fail("'at' must be the last line of an access");
  Line L;
  if (Kw == "var") {
    std::string_view Name = peek();
    if (Name.empty() || !std::isalpha(static_cast<unsigned char>(Name[0])))
      return fail("expected a variable name");
    if (findVar(Name) >= 0)
      return fail("variable '" + std::string(Name) + "' declared twice");
    ++Pos;
    L.Var = static_cast<unsigned>(VarNames.size());
    if (peek() == "range") {
      ++Pos;
      L.K = Line::VarRange;
      if (!parseExpr(L.Lo) || !parseExpr(L.Hi))
        return false;
    } else if (peek() == "hull") {
      ++Pos;
      L.K = Line::VarHull;
      while (peek() == "(") {
        Form F;
        if (!parseForm(F))
          return false;
        L.Forms.push_back(std::move(F));
      }
      if (L.Forms.empty())
        return fail("'hull' needs at least one form");
    } else {
      return fail("expected 'range' or 'hull'");
    }
    // Declared after its definition so that it cannot refer to itself.
    VarNames.emplace_back(Name);
    A.NumVars = static_cast<unsigned>(VarNames.size());
  } else if (Kw == "le") {
    L.K = Line::Le;
    L.Forms.emplace_back();
    if (!parseForm(L.Forms.back()))
      return false;
  } else if (Kw == "check") {
    L.K = Line::Check;
    L.Forms.emplace_back();
    if (!parseForm(L.Forms.back()) || !parseExpr(L.Lo) || !parseExpr(L.Hi))
      return false;
  } else if (Kw == "at") {
    L.K = Line::At;
    L.Forms.emplace_back();
    if (!parseForm(L.Forms.back()))
      return false;
    SawAt = true;
  } else {
    return fail("unknown directive '" + std::string(Kw) + "' in an access");
  }
  A.Lines.push_back(std::move(L));
  return endOfLine();
}

bool Parser::parseRebaseLine(RebaseRec &R, bool &Done) {
  std::string_view Kw = peek();
  ++Pos;
  if (Kw == "end") {
    Done = true;
    return endOfLine();
  }
  if (Kw == "check") {
    RebaseCheck C;
    if (!parseForm(C.F) || !parseExpr(C.Lo) || !parseExpr(C.Hi))
      return false;
    R.Checks.push_back(std::move(C));
    return endOfLine();
  }
  if (Kw != "param")
    return fail("expected 'param', 'check' or 'end' in a rebase record");
  RebaseParamRec Q;
  std::string_view K = peek();
  ++Pos;
  if (K == "ptr") {
    Q.IsPtr = true;
    if (!parseUnsigned(Q.Arg, "an argument index"))
      return false;
    if (Q.Arg >= P.Args.size() || P.Args[Q.Arg] != ArgKind::Ptr)
      return fail("argument " + std::to_string(Q.Arg) + " is not a pointer");
  } else if (K == "int") {
    if (!parseUnsigned(Q.Bits, "a bit width"))
      return false;
    if (Q.Bits != 32 && Q.Bits != 64)
      return fail("rebased bounds have 32 or 64 bits");
    std::string_view M = peek();
    ++Pos;
    if (M == "wrap")
      Q.Mode = RebaseMode::Wrap;
    else if (M == "signed")
      Q.Mode = RebaseMode::Signed;
    else if (M == "unsigned")
      Q.Mode = RebaseMode::Unsigned;
    else
      return fail("expected 'wrap', 'signed' or 'unsigned'");
  } else {
    return fail("expected 'ptr' or 'int'");
  }
  if (!parseExpr(Q.Value))
    return false;
  R.Params.push_back(Q);
  return endOfLine();
}

Status Parser::run(std::string_view Text) {
  enum { Header, Kernel, Body, InAccess, InRebase, Done } State = Header;
  Access Cur;
  RebaseRec CurRebase;
  bool SawAt = false;
  size_t Start = 0;
  while (Start <= Text.size() && State != Done) {
    size_t End = Text.find('\n', Start);
    if (End == std::string_view::npos)
      End = Text.size();
    std::string_view LineText = Text.substr(Start, End - Start);
    Start = End + 1;
    ++LineNo;
    Toks = tokenize(LineText);
    Pos = 0;
    if (Toks.empty()) {
      if (End == Text.size())
        break;
      continue;
    }
    bool Ok = true;
    std::string_view Kw = peek();
    switch (State) {
    case Header:
      ++Pos;
      if (Kw != FootprintMagic) {
        Ok = fail(std::string("expected '") + FootprintMagic + " " +
                  std::to_string(FootprintFormatVersion) + "'");
        break;
      }
      if (peek() != std::to_string(FootprintFormatVersion)) {
        Ok = fail("unsupported version '" + std::string(peek()) + "'");
        break;
      }
      ++Pos;
      Ok = endOfLine();
      State = Kernel;
      break;
    case Kernel:
      ++Pos;
      if (Kw != "kernel" || atEnd()) {
        Ok = fail("expected 'kernel NAME'");
        break;
      }
      P.Kernel = std::string(peek());
      ++Pos;
      Ok = endOfLine();
      State = Body;
      break;
    case Body: {
      ++Pos;
      if (Kw == "arg") {
        unsigned Idx;
        if (!(Ok = parseUnsigned(Idx, "an argument index")))
          break;
        if (Idx != P.Args.size()) {
          Ok = fail("arguments must be declared in order");
          break;
        }
        if (!P.Accesses.empty() || !P.Unknowns.empty()) {
          Ok = fail("arguments must come before accesses");
          break;
        }
        std::string_view K = peek();
        ++Pos;
        if (K == "ptr") {
          P.Args.push_back(ArgKind::Ptr);
        } else if (K == "int") {
          unsigned Bits;
          if (!(Ok = parseUnsigned(Bits, "a bit width")))
            break;
          if (Bits == 0 || Bits > 64) {
            Ok = fail("integer arguments have 1 to 64 bits");
            break;
          }
          P.Args.push_back(ArgKind::Int);
        } else if (K == "other") {
          P.Args.push_back(ArgKind::Other);
        } else {
          Ok = fail("expected 'ptr', 'int BITS' or 'other'");
          break;
        }
        // An optional display name follows.
        if (!atEnd())
          ++Pos;
        Ok = endOfLine();
      } else if (Kw == "access" || Kw == "unknown") {
        unsigned Arg;
        bool Write;
        if (!(Ok = parseUnsigned(Arg, "an argument index")) ||
            !(Ok = parseDir(Write)))
          break;
        if (Arg >= P.Args.size() || P.Args[Arg] != ArgKind::Ptr) {
          Ok = fail("argument " + std::to_string(Arg) + " is not a pointer");
          break;
        }
        if (Kw == "unknown") {
          P.Unknowns.push_back({Arg, Write});
          Ok = endOfLine();
          break;
        }
        i64 W;
        if (atEnd() || !parseInt(peek(), W) || W <= 0) {
          Ok = fail("expected an access width in bytes");
          break;
        }
        ++Pos;
        Cur = Access();
        Cur.Arg = Arg;
        Cur.Write = Write;
        Cur.Width = W;
        if (peek() == "exact")
          Cur.Exact = true;
        else if (peek() == "bounded")
          Cur.Exact = false;
        else {
          Ok = fail("expected 'exact' or 'bounded'");
          break;
        }
        ++Pos;
        Ok = endOfLine();
        VarNames.assign(BuiltinVarNames, BuiltinVarNames + NumBuiltinVars);
        SawAt = false;
        State = InAccess;
      } else if (Kw == "untracked") {
        bool Write;
        if (!(Ok = parseDir(Write)))
          break;
        P.Untracked[Write] = true;
        Ok = endOfLine();
      } else if (Kw == "rebase") {
        CurRebase = RebaseRec();
        std::string_view D = peek();
        if (D != "x" && D != "y" && D != "z") {
          Ok = fail("expected the dimension 'x', 'y' or 'z'");
          break;
        }
        CurRebase.V.Dim = unsigned(D[0] - 'x');
        ++Pos;
        if (atEnd()) {
          Ok = fail("expected the rebased variant's entry name");
          break;
        }
        CurRebase.V.Entry = std::string(peek());
        ++Pos;
        for (const RebaseRec &R : P.Rebases)
          if (R.V.Dim == CurRebase.V.Dim) {
            Ok = fail("two rebase records for one dimension");
            break;
          }
        if (!Ok || !(Ok = endOfLine()))
          break;
        VarNames.assign(BuiltinVarNames, BuiltinVarNames + NumBuiltinVars);
        State = InRebase;
      } else if (Kw == "end") {
        Ok = endOfLine();
        State = Done;
      } else {
        Ok = fail("unknown directive '" + std::string(Kw) + "'");
      }
      break;
    }
    case InAccess: {
      bool Finished = false;
      Ok = parseAccessLine(Cur, Finished, SawAt);
      if (Ok && Finished) {
        P.Accesses.push_back(std::move(Cur));
        State = Body;
      }
      break;
    }
    case InRebase: {
      bool Finished = false;
      Ok = parseRebaseLine(CurRebase, Finished);
      if (Ok && Finished) {
        P.RebaseList.push_back(CurRebase.V);
        P.Rebases.push_back(std::move(CurRebase));
        State = Body;
      }
      break;
    }
    case Done:
      break;
    }
    if (!Ok)
      return Status::error(Err);
    if (End == Text.size())
      break;
  }
  if (State != Done)
    return Status::error("line " + std::to_string(LineNo) +
                         ": unexpected end of text (missing 'end')");
  return Status::success();
}

//===-- Evaluation ------------------------------------------------------===//

struct Env {
  const FootprintProgram::Impl &P;
  const LaunchConfig &L;

  std::optional<i64> eval(int N) const {
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
};

/// An affine form with evaluated coefficients, one per variable.
struct IntForm {
  i64 C0 = 0;
  std::vector<i64> Coef;
};

struct Box {
  std::vector<i64> Lo, Hi;
  bool empty() const {
    for (size_t I = 0; I < Lo.size(); ++I)
      if (Lo[I] > Hi[I])
        return true;
    return false;
  }
};

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

/// Min and max of the term C*v over v in [Lo, Hi].
std::optional<std::pair<i64, i64>> termRange(i64 C, i64 Lo, i64 Hi) {
  auto A = mul(C, Lo), B = mul(C, Hi);
  if (!A || !B)
    return std::nullopt;
  return std::make_pair(std::min(*A, *B), std::max(*A, *B));
}

/// Min and max of F over the box, skipping variable Skip.
std::optional<std::pair<i64, i64>> formRange(const IntForm &F, const Box &B,
                                             int Skip = -1) {
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

struct PieceBox {
  i64 Lo[3], Hi[3];
};

/// Splits the linear block range [First, First+Count) of the grid into boxes
/// of (x, y, z): a partial first row, the rest of its plane, whole planes,
/// the rows of the last plane and a partial last row (at most 5).
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

struct AccessResult {
  enum Kind { Nothing, Touched, Unknown } K = Nothing;
  bool Exact = true;
  std::vector<ByteRegion> Regions;
};

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

//===-- Coalescing ------------------------------------------------------===//

void canonicalize(ByteRegion &R) {
  for (;;) {
    if (R.Planes > 1 && R.Rows == 1) {
      R.Rows = R.Planes;
      R.Pitch = R.PlanePitch;
      R.Planes = 1;
    }
    if (R.Planes == 1)
      R.PlanePitch = 0;
    if (R.Rows == 1) {
      R.Pitch = 0;
      return;
    }
    if (R.Bytes >= R.Pitch) {
      R.Bytes += R.Pitch * (R.Rows - 1);
      R.Rows = 1;
      continue;
    }
    if (R.Planes > 1 && R.Rows * R.Pitch == R.PlanePitch) {
      R.Rows *= R.Planes;
      R.Planes = 1;
      continue;
    }
    return;
  }
}

/// Merges B into A when their union is one region.
bool tryMerge(ByteRegion &A, const ByteRegion &B) {
  const ByteRegion *X = &A, *Y = &B;
  if (Y->Base < X->Base)
    std::swap(X, Y);
  // Side by side (or overlapping) in every row and plane.
  if (X->Rows == Y->Rows && X->Pitch == Y->Pitch && X->Planes == Y->Planes &&
      X->PlanePitch == Y->PlanePitch && Y->Base <= X->Base + X->Bytes) {
    ByteRegion R = *X;
    R.Bytes = std::max(X->Base + X->Bytes, Y->Base + Y->Bytes) - X->Base;
    canonicalize(R);
    A = R;
    return true;
  }
  if (X->Planes > 1 || Y->Planes > 1 || X->Bytes != Y->Bytes)
    return false;
  // Stacked rows of one pitch: Y starts at or before the row after X's last.
  if (X->Rows > 1 || Y->Rows > 1) {
    i64 P = X->Rows > 1 ? X->Pitch : Y->Pitch;
    if ((X->Rows == 1 || X->Pitch == P) && (Y->Rows == 1 || Y->Pitch == P)) {
      i64 D = Y->Base - X->Base;
      if (D % P == 0 && D / P <= X->Rows) {
        ByteRegion R = *X;
        R.Pitch = P;
        R.Rows = std::max(X->Rows, D / P + Y->Rows);
        canonicalize(R);
        A = R;
        return true;
      }
    }
  }
  // Interleaved rows: Y's rows fall halfway between X's.
  if (X->Rows == Y->Rows && X->Rows > 1 && X->Pitch == Y->Pitch &&
      2 * (Y->Base - X->Base) == X->Pitch) {
    ByteRegion R = *X;
    R.Rows = 2 * X->Rows;
    R.Pitch = X->Pitch / 2;
    canonicalize(R);
    A = R;
    return true;
  }
  return false;
}

} // namespace

//===-- Public API ------------------------------------------------------===//

bool ByteRegion::operator==(const ByteRegion &O) const {
  return Base == O.Base && Bytes == O.Bytes && Rows == O.Rows &&
         Pitch == O.Pitch && Planes == O.Planes && PlanePitch == O.PlanePitch;
}

const ParamFootprint *FootprintResult::find(unsigned ArgNo) const {
  for (const ParamFootprint &P : Params)
    if (P.ArgNo == ArgNo)
      return &P;
  return nullptr;
}

void coalesceRegions(std::vector<ByteRegion> &Regions) {
  for (ByteRegion &R : Regions)
    canonicalize(R);
  Regions.erase(std::remove_if(Regions.begin(), Regions.end(),
                               [](const ByteRegion &R) {
                                 return R.Bytes <= 0 || R.Rows <= 0 ||
                                        R.Planes <= 0;
                               }),
                Regions.end());
  // Pairwise merging is quadratic; past a few thousand regions only sorting
  // happens.
  if (Regions.size() <= 2048) {
    bool Changed = true;
    while (Changed) {
      Changed = false;
      for (size_t I = 0; I < Regions.size() && !Changed; ++I)
        for (size_t J = I + 1; J < Regions.size() && !Changed; ++J)
          if (tryMerge(Regions[I], Regions[J])) {
            Regions.erase(Regions.begin() + J);
            Changed = true;
          }
    }
  }
  std::sort(Regions.begin(), Regions.end(),
            [](const ByteRegion &A, const ByteRegion &B) {
              return A.Base < B.Base || (A.Base == B.Base && A.Bytes < B.Bytes);
            });
}

bool toIntervals(const std::vector<ByteRegion> &Regions,
                 std::vector<ByteInterval> &Out, size_t MaxIntervals) {
  Out.clear();
  std::vector<ByteInterval> All;
  for (const ByteRegion &R : Regions)
    for (i64 P = 0; P < R.Planes; ++P)
      for (i64 Row = 0; Row < R.Rows; ++Row) {
        if (All.size() >= MaxIntervals)
          return false;
        i64 Lo = R.Base + P * R.PlanePitch + Row * R.Pitch;
        All.push_back({Lo, Lo + R.Bytes});
      }
  auto ByLo = [](const ByteInterval &A, const ByteInterval &B) {
    return A.Lo < B.Lo;
  };
  // One region with positive pitches comes out in order already.
  if (!std::is_sorted(All.begin(), All.end(), ByLo))
    std::sort(All.begin(), All.end(), ByLo);
  for (const ByteInterval &I : All) {
    if (!Out.empty() && I.Lo <= Out.back().Hi)
      Out.back().Hi = std::max(Out.back().Hi, I.Hi);
    else
      Out.push_back(I);
  }
  return true;
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
  Parser Prs(Parsed);
  Status S = Prs.run(Text);
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
