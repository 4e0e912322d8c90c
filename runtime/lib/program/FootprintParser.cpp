//===- FootprintParser.cpp - Parse footprint texts -----------------------===//
//
// Part of Cleave's runtime. Reads the text that the compiler's footprint
// analysis writes (docs/footprints.md, "The text format") into the program
// that FootprintSolver.cpp evaluates: a tokenizer and a line-by-line parser
// whose state says which part of the text it is in.
//
//===----------------------------------------------------------------------===//
#include "FootprintProgram.h"

#include "cleave/ABI/FormatVersions.h"

#include <cctype>

namespace cleave {
namespace rt {
namespace footprint {

namespace {

//===-- Tokenizer -------------------------------------------------------===//

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

//===-- Parser ----------------------------------------------------------===//

class Parser {
public:
  Parser(FootprintProgram::Impl &P) : P(P) {}

  Status run(std::string_view Text);

private:
  FootprintProgram::Impl &P;
  /// Where the parser is in the text: before its first line, after it,
  /// among the declarations, inside an access or a rebase record, past the
  /// final 'end'.
  enum class State { Header, Kernel, Body, InAccess, InRebase, Done };
  State At = State::Header;
  Access Cur;          // the access being parsed (InAccess)
  RebaseRec CurRebase; // the rebase record being parsed (InRebase)
  bool SawAt = false;  // whether Cur has its 'at' line
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
  bool parseLine();
  bool parseMagicLine(std::string_view Kw);
  bool parseKernelLine(std::string_view Kw);
  bool parseBodyLine(std::string_view Kw);
  bool parseArgDecl();
  bool parseAccessStart(std::string_view Kw);
  bool parseRebaseStart();
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

/// The first line: the magic word and the format version.
bool Parser::parseMagicLine(std::string_view Kw) {
  ++Pos;
  if (Kw != FootprintMagic)
    return fail(std::string("expected '") + FootprintMagic + " " +
                std::to_string(FootprintFormatVersion) + "'");
  if (peek() != std::to_string(FootprintFormatVersion))
    return fail("unsupported version '" + std::string(peek()) + "'");
  ++Pos;
  bool Ok = endOfLine();
  At = State::Kernel;
  return Ok;
}

/// The second line: 'kernel NAME'.
bool Parser::parseKernelLine(std::string_view Kw) {
  ++Pos;
  if (Kw != "kernel" || atEnd())
    return fail("expected 'kernel NAME'");
  P.Kernel = std::string(peek());
  ++Pos;
  bool Ok = endOfLine();
  At = State::Body;
  return Ok;
}

/// 'arg INDEX ptr|int BITS|other [NAME]', in order, before any access.
bool Parser::parseArgDecl() {
  unsigned Idx;
  if (!parseUnsigned(Idx, "an argument index"))
    return false;
  if (Idx != P.Args.size())
    return fail("arguments must be declared in order");
  if (!P.Accesses.empty() || !P.Unknowns.empty())
    return fail("arguments must come before accesses");
  std::string_view K = peek();
  ++Pos;
  if (K == "ptr") {
    P.Args.push_back(ArgKind::Ptr);
  } else if (K == "int") {
    unsigned Bits;
    if (!parseUnsigned(Bits, "a bit width"))
      return false;
    if (Bits == 0 || Bits > 64)
      return fail("integer arguments have 1 to 64 bits");
    P.Args.push_back(ArgKind::Int);
  } else if (K == "other") {
    P.Args.push_back(ArgKind::Other);
  } else {
    return fail("expected 'ptr', 'int BITS' or 'other'");
  }
  // An optional display name follows.
  if (!atEnd())
    ++Pos;
  return endOfLine();
}

/// 'unknown ARG read|write', or the first line of an access:
/// 'access ARG read|write WIDTH exact|bounded'.
bool Parser::parseAccessStart(std::string_view Kw) {
  unsigned Arg;
  bool Write;
  if (!parseUnsigned(Arg, "an argument index") || !parseDir(Write))
    return false;
  if (Arg >= P.Args.size() || P.Args[Arg] != ArgKind::Ptr)
    return fail("argument " + std::to_string(Arg) + " is not a pointer");
  if (Kw == "unknown") {
    P.Unknowns.push_back({Arg, Write});
    return endOfLine();
  }
  i64 W;
  if (atEnd() || !parseInt(peek(), W) || W <= 0)
    return fail("expected an access width in bytes");
  ++Pos;
  Cur = Access();
  Cur.Arg = Arg;
  Cur.Write = Write;
  Cur.Width = W;
  if (peek() == "exact")
    Cur.Exact = true;
  else if (peek() == "bounded")
    Cur.Exact = false;
  else
    return fail("expected 'exact' or 'bounded'");
  ++Pos;
  bool Ok = endOfLine();
  VarNames.assign(BuiltinVarNames, BuiltinVarNames + NumBuiltinVars);
  SawAt = false;
  At = State::InAccess;
  return Ok;
}

/// The first line of a rebase record: 'rebase x|y|z ENTRY'.
bool Parser::parseRebaseStart() {
  CurRebase = RebaseRec();
  std::string_view D = peek();
  if (D != "x" && D != "y" && D != "z")
    return fail("expected the dimension 'x', 'y' or 'z'");
  CurRebase.V.Dim = unsigned(D[0] - 'x');
  ++Pos;
  if (atEnd())
    return fail("expected the rebased variant's entry name");
  CurRebase.V.Entry = std::string(peek());
  ++Pos;
  for (const RebaseRec &R : P.Rebases)
    if (R.V.Dim == CurRebase.V.Dim)
      return fail("two rebase records for one dimension");
  if (!endOfLine())
    return false;
  VarNames.assign(BuiltinVarNames, BuiltinVarNames + NumBuiltinVars);
  At = State::InRebase;
  return true;
}

/// A line between the kernel line and the final 'end'.
bool Parser::parseBodyLine(std::string_view Kw) {
  ++Pos;
  if (Kw == "arg")
    return parseArgDecl();
  if (Kw == "access" || Kw == "unknown")
    return parseAccessStart(Kw);
  if (Kw == "untracked") {
    bool Write;
    if (!parseDir(Write))
      return false;
    P.Untracked[Write] = true;
    return endOfLine();
  }
  if (Kw == "rebase")
    return parseRebaseStart();
  if (Kw == "end") {
    bool Ok = endOfLine();
    At = State::Done;
    return Ok;
  }
  return fail("unknown directive '" + std::string(Kw) + "'");
}

/// One non-empty line (its tokens in Toks), by the state the text is in.
bool Parser::parseLine() {
  std::string_view Kw = peek();
  switch (At) {
  case State::Header:
    return parseMagicLine(Kw);
  case State::Kernel:
    return parseKernelLine(Kw);
  case State::Body:
    return parseBodyLine(Kw);
  case State::InAccess: {
    bool Finished = false;
    bool Ok = parseAccessLine(Cur, Finished, SawAt);
    if (Ok && Finished) {
      P.Accesses.push_back(std::move(Cur));
      At = State::Body;
    }
    return Ok;
  }
  case State::InRebase: {
    bool Finished = false;
    bool Ok = parseRebaseLine(CurRebase, Finished);
    if (Ok && Finished) {
      P.RebaseList.push_back(CurRebase.V);
      P.Rebases.push_back(std::move(CurRebase));
      At = State::Body;
    }
    return Ok;
  }
  case State::Done:
    break;
  }
  return true;
}

Status Parser::run(std::string_view Text) {
  size_t Start = 0;
  while (Start <= Text.size() && At != State::Done) {
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
    if (!parseLine())
      return Status::error(Err);
    if (End == Text.size())
      break;
  }
  if (At != State::Done)
    return Status::error("line " + std::to_string(LineNo) +
                         ": unexpected end of text (missing 'end')");
  return Status::success();
}

} // namespace

Status parseProgram(std::string_view Text, FootprintProgram::Impl &P) {
  return Parser(P).run(Text);
}

} // namespace footprint
} // namespace rt
} // namespace cleave
