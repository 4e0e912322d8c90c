//===- BlocksDependences.cpp - Dependences of technique(blocks) ---------===//
//
// Part of Cleave (docs/tile.md, "Higher-dimensional tables"). The write of
// iteration p = (i, j, k) touches cell p; a read in iteration q, inside
// inner loops with indices s, touches cell q + Off(s). Flow: p writes the
// cell that a later q reads; anti: q reads the cell that a later p
// writes. Both as isl relations on the iteration box (inner indices
// projected out), whose distances must lie in the nonnegative orthant for
// every value of the parameters: then a dependence never goes from a block
// (or an in-block level) to an earlier one.
//
//===----------------------------------------------------------------------===//
#include "cleave/Tile/Blocks.h"

#include "clang/AST/Decl.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"

#include <isl/ctx.h>
#include <isl/map.h>
#include <isl/options.h>
#include <isl/point.h>
#include <isl/set.h>
#include <isl/space.h>
#include <isl/val.h>

#include <functional>
#include <memory>
#include <regex>

namespace cleave::tile {
namespace {

struct CtxFree {
  void operator()(isl_ctx *C) const { isl_ctx_free(C); }
};

std::string dims(const std::vector<const clang::VarDecl *> &Vars) {
  std::vector<std::string> Names;
  for (const clang::VarDecl *V : Vars)
    Names.push_back("p_" + V->getName().str());
  return llvm::join(Names, ", ");
}

std::string bounds(const Loop &L) {
  return L.Lower.str("p_", false) + " <= p_" + L.Index->getName().str() +
         " < " + L.Upper.str("p_", false);
}

isl_stat addPoint(isl_point *P, void *User) {
  auto *Out = static_cast<std::vector<std::string> *>(User);
  std::string S = "(";
  for (int K = 0; K < 3; ++K) {
    isl_val *V = isl_point_get_coordinate_val(P, isl_dim_set, K);
    S += (K ? ", " : "") + std::to_string(isl_val_get_num_si(V));
    isl_val_free(V);
  }
  Out->push_back(S + ")");
  isl_point_free(P);
  return isl_stat_ok;
}

/// The distances as a list when there are a few whatever the parameters,
/// else as isl writes the set (names as in the source).
std::string distancesText(isl_set *D, isl_set *Simple) {
  isl_set *Points = isl_set_project_out(isl_set_copy(D), isl_dim_param, 0,
                                        isl_set_dim(D, isl_dim_param));
  std::vector<std::string> Found;
  if (isl_set_is_bounded(Points) == isl_bool_true)
    isl_set_foreach_point(Points, addPoint, &Found);
  isl_set_free(Points);
  if (!Found.empty() && Found.size() <= 16) {
    llvm::sort(Found, std::greater<>());
    return llvm::join(Found, ", ");
  }
  char *Str = isl_set_to_str(Simple);
  // The isl names of the variables are the source's with "p_".
  std::string Text = std::regex_replace(Str, std::regex("\\bp_"), "");
  free(Str);
  return Text;
}

} // namespace

llvm::Expected<std::vector<std::string>> blockDependences(const BlockNest &N,
                                                          bool &NonNegative) {
  std::unique_ptr<isl_ctx, CtxFree> C(isl_ctx_alloc());
  isl_options_set_on_error(C.get(), ISL_ON_ERROR_CONTINUE);
  // Parameters: every variable of a bound that is not an index.
  std::vector<const clang::VarDecl *> Params, Outer;
  auto Index = [&](const clang::VarDecl *V) {
    return llvm::any_of(N.Loops, [&](const Loop &L) { return L.Index == V; }) ||
           llvm::any_of(N.InnerLoops,
                        [&](const Loop &L) { return L.Index == V; });
  };
  auto AddParams = [&](const Loop &L) {
    for (const Poly *P : {&L.Lower, &L.Upper})
      for (const clang::VarDecl *V : P->variables())
        if (!Index(V) && !llvm::is_contained(Params, V))
          Params.push_back(V);
  };
  for (const Loop &L : N.Loops) {
    AddParams(L);
    Outer.push_back(L.Index);
  }
  for (const Loop &L : N.InnerLoops)
    AddParams(L);
  std::string Pre = "[" + dims(Params) + "] -> ";
  std::string Box = bounds(N.Loops[0]) + " and " + bounds(N.Loops[1]) +
                    " and " + bounds(N.Loops[2]);
  std::string T = "T[" + dims(Outer) + "]";
  isl_map *Writes = isl_map_read_from_str(
      C.get(),
      (Pre + "{ " + T + " -> A[" + dims(Outer) + "] : " + Box + " }").c_str());
  isl_map *Reads = nullptr;
  for (const BlockAccess &Acc : N.Accesses) {
    if (Acc.Array != N.Table || !Acc.Reads)
      continue;
    std::vector<const clang::VarDecl *> Inner;
    std::string Dom = Box;
    for (unsigned L : Acc.Inner) {
      Inner.push_back(N.InnerLoops[L].Index);
      Dom += " and " + bounds(N.InnerLoops[L]);
    }
    std::string Cell;
    for (int D = 0; D < 3; ++D)
      Cell += (D ? ", p_" : "p_") + Outer[D]->getName().str() + " + (" +
              Acc.Off[D].str("p_", false) + ")";
    // The inner indices are dimensions of the domain, then projected out.
    std::vector<const clang::VarDecl *> All = Outer;
    All.insert(All.end(), Inner.begin(), Inner.end());
    std::string Text =
        Pre + "{ S[" + dims(All) + "] -> A[" + Cell + "] : " + Dom + " }";
    isl_map *M = isl_map_read_from_str(C.get(), Text.c_str());
    M = isl_map_project_out(M, isl_dim_in, 3, Inner.size());
    M = isl_map_set_tuple_name(M, isl_dim_in, "T");
    if (!M) {
      isl_map_free(Reads);
      isl_map_free(Writes);
      return llvm::createStringError("isl cannot read the access of the "
                                     "table: " +
                                     Text);
    }
    Reads = Reads ? isl_map_union(Reads, M) : M;
  }
  if (!Writes)
    return llvm::createStringError("isl cannot read the nest's domain");
  std::vector<std::string> Out;
  NonNegative = true;
  if (!Reads) {
    isl_map_free(Writes);
    return Out;
  }
  isl_set *Orthant = isl_set_read_from_str(
      C.get(), (Pre + "{ [a, b, c] : a >= 0 and b >= 0 and c >= 0 }").c_str());
  // Flow: write p, then read q of p's cell; anti: read q of p's cell, then
  // write p.
  isl_map *Flow = isl_map_apply_range(isl_map_copy(Writes),
                                      isl_map_reverse(isl_map_copy(Reads)));
  isl_map *Anti =
      isl_map_apply_range(isl_map_copy(Reads), isl_map_reverse(Writes));
  isl_map_free(Reads);
  for (auto [Kind, M] : {std::pair{"flow", Flow}, std::pair{"anti", Anti}}) {
    M = isl_map_intersect(
        M, isl_map_lex_lt(isl_space_range(isl_map_get_space(M))));
    isl_set *D = isl_set_reset_tuple_id(isl_map_deltas(M));
    isl_set *Simple = isl_set_coalesce(isl_set_copy(D));
    if (!D || !Simple) {
      isl_set_free(D);
      isl_set_free(Simple);
      isl_set_free(Orthant);
      return llvm::createStringError("isl failed on the table's dependences");
    }
    if (isl_set_is_empty(D) != isl_bool_true) {
      NonNegative &= isl_set_is_subset(D, Orthant) == isl_bool_true;
      Out.push_back(std::string(Kind) + " " + distancesText(D, Simple));
    }
    isl_set_free(D);
    isl_set_free(Simple);
  }
  isl_set_free(Orthant);
  return Out;
}

} // namespace cleave::tile
