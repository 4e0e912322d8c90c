//===- Poly.cpp - Polynomials over loop indices and parameters ------------===//
//
// Part of Cleave (docs/tile.md).
//
//===----------------------------------------------------------------------===//
#include "cleave/Tile/Nest.h"

#include "clang/AST/Decl.h"

#include <algorithm>

namespace cleave::tile {

static bool varLess(const clang::VarDecl *A, const clang::VarDecl *B) {
  if (A->getName() != B->getName())
    return A->getName() < B->getName();
  return A < B;
}

bool Poly::Less::operator()(const Monomial &A, const Monomial &B) const {
  return std::lexicographical_compare(A.begin(), A.end(), B.begin(), B.end(),
                                      varLess);
}

void Poly::add(const Monomial &M, int64_t C) {
  if (C == 0)
    return;
  int64_t &Slot = Terms[M];
  Slot += C;
  if (Slot == 0)
    Terms.erase(M);
}

Poly Poly::constant(int64_t C) {
  Poly P;
  P.add({}, C);
  return P;
}

Poly Poly::variable(const clang::VarDecl *V) {
  Poly P;
  P.add({V}, 1);
  return P;
}

Poly Poly::operator+(const Poly &O) const {
  Poly R = *this;
  for (const auto &[M, C] : O.Terms)
    R.add(M, C);
  return R;
}

Poly Poly::operator-(const Poly &O) const {
  Poly R = *this;
  for (const auto &[M, C] : O.Terms)
    R.add(M, -C);
  return R;
}

Poly Poly::operator*(const Poly &O) const {
  Poly R;
  for (const auto &[MA, CA] : Terms)
    for (const auto &[MB, CB] : O.Terms) {
      Monomial M = MA;
      M.insert(M.end(), MB.begin(), MB.end());
      std::sort(M.begin(), M.end(), varLess);
      R.add(M, CA * CB);
    }
  return R;
}

unsigned Poly::degree() const {
  unsigned D = 0;
  for (const auto &Term : Terms)
    D = std::max<unsigned>(D, Term.first.size());
  return D;
}

int64_t Poly::constantTerm() const {
  auto It = Terms.find({});
  return It == Terms.end() ? 0 : It->second;
}

Poly Poly::coefficientOf(const clang::VarDecl *V) const {
  Poly R;
  for (const auto &[M, C] : Terms) {
    auto It = std::find(M.begin(), M.end(), V);
    if (It == M.end())
      continue;
    Monomial Rest = M;
    Rest.erase(Rest.begin() + (It - M.begin()));
    R.add(Rest, C);
  }
  return R;
}

Poly Poly::without(const clang::VarDecl *V) const {
  Poly R;
  for (const auto &[M, C] : Terms)
    if (std::find(M.begin(), M.end(), V) == M.end())
      R.add(M, C);
  return R;
}

bool Poly::mentions(const clang::VarDecl *V) const {
  for (const auto &Term : Terms)
    if (std::find(Term.first.begin(), Term.first.end(), V) != Term.first.end())
      return true;
  return false;
}

std::vector<const clang::VarDecl *> Poly::variables() const {
  std::vector<const clang::VarDecl *> Vars;
  for (const auto &Term : Terms)
    for (const clang::VarDecl *V : Term.first)
      if (std::find(Vars.begin(), Vars.end(), V) == Vars.end())
        Vars.push_back(V);
  std::sort(Vars.begin(), Vars.end(), varLess);
  return Vars;
}

std::string Poly::str(const std::string &Prefix, bool Widen) const {
  if (Terms.empty())
    return "0";
  std::string S;
  // The constant term (the empty monomial) sorts first; print it last, as
  // people write `m + 1`.
  std::vector<std::pair<Monomial, int64_t>> Ordered(Terms.begin(), Terms.end());
  if (!Ordered.empty() && Ordered.front().first.empty())
    std::rotate(Ordered.begin(), Ordered.begin() + 1, Ordered.end());
  for (const auto &[M, C] : Ordered) {
    int64_t Abs = C < 0 ? -C : C;
    if (S.empty())
      S += C < 0 ? "-" : "";
    else
      S += C < 0 ? " - " : " + ";
    std::string Factors;
    for (const clang::VarDecl *V : M) {
      if (!Factors.empty())
        Factors += " * ";
      std::string Name = Prefix + V->getName().str();
      Factors += Widen ? "(long long)" + Name : Name;
    }
    if (Factors.empty())
      S += std::to_string(Abs);
    else if (Abs == 1)
      S += Factors;
    else
      S += std::to_string(Abs) + " * " + Factors;
  }
  return S;
}

} // namespace cleave::tile
