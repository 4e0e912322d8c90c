//===- Dependences.cpp - Dependences of a marked nest, with isl -----------===//
//
// Part of Cleave (docs/tile.md). Builds the nest's domain and the cell maps
// of the written arrays' accesses as isl text, then for every ordered pair
// of accesses (one of them a write) the relation "iteration p touches the
// cell that a later iteration q touches" and its deltas q - p. The arrays
// only read carry no dependence; their overlap with the written ones is the
// run-time check's business (WavefrontEmitter.cpp).
//
//===----------------------------------------------------------------------===//
#include "cleave/Tile/Dependences.h"

#include "clang/AST/Decl.h"

#include "llvm/ADT/StringExtras.h"

#include <isl/ctx.h>
#include <isl/map.h>
#include <isl/options.h>
#include <isl/point.h>
#include <isl/set.h>
#include <isl/space.h>
#include <isl/val.h>

#include <isl/union_map.h>
#include <isl/union_set.h>

#include <memory>

namespace cleave::tile {
namespace {

struct CtxFree {
  void operator()(isl_ctx *C) const { isl_ctx_free(C); }
};
struct MapFree {
  void operator()(isl_map *M) const { isl_map_free(M); }
};
struct SetFree {
  void operator()(isl_set *S) const { isl_set_free(S); }
};
using Map = std::unique_ptr<isl_map, MapFree>;
using Set = std::unique_ptr<isl_set, SetFree>;

/// The isl texts of one nest: "[p_n, p_m] -> " and the domain's
/// constraints.
struct IslText {
  std::string Params;
  std::string Bounds; ///< "lo_i <= i < hi_i and lo_j <= j < hi_j"
  std::string Domain;
};

IslText islText(const Nest &N) {
  std::vector<const clang::VarDecl *> Vars;
  for (const Poly *P :
       {&N.Outer.Lower, &N.Outer.Upper, &N.Inner.Lower, &N.Inner.Upper})
    for (const clang::VarDecl *V : P->variables())
      if (llvm::find(Vars, V) == Vars.end())
        Vars.push_back(V);
  IslText T;
  T.Params = "[";
  for (size_t I = 0; I < Vars.size(); ++I)
    T.Params += (I ? ", p_" : "p_") + Vars[I]->getName().str();
  T.Params += "] -> ";
  auto Bounds = [](const Loop &L, const char *Var) {
    return L.Lower.str("p_", false) + " <= " + Var + " < " +
           L.Upper.str("p_", false);
  };
  T.Bounds = Bounds(N.Outer, "i") + " and " + Bounds(N.Inner, "j");
  T.Domain = T.Params + "{ S[i, j] : " + T.Bounds + " }";
  return T;
}

std::string cellMap(const IslText &T, const Access &A) {
  return T.Params + "{ S[i, j] -> A" + std::to_string(A.Array) + "[i + (" +
         std::to_string(A.Row) + "), j + (" + std::to_string(A.Col) + ")] }";
}

Map readMap(isl_ctx *C, const std::string &S) {
  return Map(isl_map_read_from_str(C, S.c_str()));
}

isl_stat addPoint(isl_point *P, void *User) {
  auto *Out = static_cast<std::vector<std::pair<int64_t, int64_t>> *>(User);
  isl_val *A = isl_point_get_coordinate_val(P, isl_dim_set, 0);
  isl_val *B = isl_point_get_coordinate_val(P, isl_dim_set, 1);
  Out->push_back({isl_val_get_num_si(A), isl_val_get_num_si(B)});
  isl_val_free(A);
  isl_val_free(B);
  isl_point_free(P);
  return isl_stat_ok;
}

/// The deltas of the accesses X (earlier) and Y (later) of one array.
llvm::Expected<Set> deltas(isl_ctx *C, const IslText &T, const Access &X,
                           const Access &Y) {
  Set Dom(isl_set_read_from_str(C, T.Domain.c_str()));
  Map MX = readMap(C, cellMap(T, X)), MY = readMap(C, cellMap(T, Y));
  if (!Dom || !MX || !MY)
    return llvm::createStringError("isl cannot read the nest's domain or "
                                   "accesses");
  isl_map *R = isl_map_apply_range(MX.release(), isl_map_reverse(MY.release()));
  R = isl_map_intersect_domain(R, isl_set_copy(Dom.get()));
  R = isl_map_intersect_range(R, isl_set_copy(Dom.get()));
  R = isl_map_intersect(R, isl_map_lex_lt(isl_set_get_space(Dom.get())));
  // Distances compare against unnamed sets.
  return Set(isl_set_reset_tuple_id(isl_map_deltas(R)));
}

} // namespace

const char *kindName(DependenceKind K) {
  switch (K) {
  case DependenceKind::Flow:
    return "flow";
  case DependenceKind::Anti:
    return "anti";
  case DependenceKind::Output:
    return "output";
  }
  return "?";
}

std::string distancesText(const Dependence &D) {
  std::vector<std::string> Parts;
  for (auto [A, B] : D.Distances)
    Parts.push_back("(" + std::to_string(A) + ", " + std::to_string(B) + ")");
  return llvm::join(Parts, ", ");
}

llvm::Expected<std::vector<Dependence>> computeDependences(const Nest &N) {
  std::unique_ptr<isl_ctx, CtxFree> C(isl_ctx_alloc());
  isl_options_set_on_error(C.get(), ISL_ON_ERROR_CONTINUE);
  IslText T = islText(N);
  Set NonNeg(isl_set_read_from_str(
      C.get(), (T.Params + "{ [a, b] : a >= 0 and b >= 0 }").c_str()));
  std::vector<Dependence> Deps;
  for (const Access &X : N.Accesses)
    for (const Access &Y : N.Accesses) {
      if (X.Array != Y.Array || !N.Arrays[X.Array].Written)
        continue;
      for (DependenceKind K : {DependenceKind::Flow, DependenceKind::Anti,
                               DependenceKind::Output}) {
        bool Applies = K == DependenceKind::Flow   ? X.Writes && Y.Reads
                       : K == DependenceKind::Anti ? X.Reads && Y.Writes
                                                   : X.Writes && Y.Writes;
        if (!Applies)
          continue;
        llvm::Expected<Set> D = deltas(C.get(), T, X, Y);
        if (!D)
          return D.takeError();
        if (isl_set_is_empty(D->get()) == isl_bool_true)
          continue;
        auto It = llvm::find_if(Deps, [&](const Dependence &O) {
          return O.Kind == K && O.Array == X.Array;
        });
        if (It == Deps.end()) {
          Deps.push_back({K, X.Array, {}, true});
          It = Deps.end() - 1;
        }
        isl_bool Sub = isl_set_is_subset(D->get(), NonNeg.get());
        if (Sub == isl_bool_error)
          return llvm::createStringError("isl failed on the dependences");
        It->NonNegative &= Sub == isl_bool_true;
        isl_set *Points =
            isl_set_project_out(isl_set_copy(D->get()), isl_dim_param, 0,
                                isl_set_dim(D->get(), isl_dim_param));
        std::vector<std::pair<int64_t, int64_t>> Found;
        if (isl_set_is_bounded(Points) == isl_bool_true)
          isl_set_foreach_point(Points, addPoint, &Found);
        isl_set_free(Points);
        for (auto P : Found)
          if (llvm::find(It->Distances, P) == It->Distances.end())
            It->Distances.push_back(P);
      }
    }
  for (Dependence &D : Deps)
    llvm::sort(D.Distances, [](auto A, auto B) { return A > B; });
  return Deps;
}

static isl_stat addPoint3(isl_point *P, void *User) {
  auto *Out = static_cast<std::vector<std::array<int64_t, 3>> *>(User);
  std::array<int64_t, 3> D;
  for (int K = 0; K < 3; ++K) {
    isl_val *V = isl_point_get_coordinate_val(P, isl_dim_set, K);
    D[K] = isl_val_get_num_si(V);
    isl_val_free(V);
  }
  Out->push_back(D);
  isl_point_free(P);
  return isl_stat_ok;
}

llvm::Expected<std::vector<std::array<int64_t, 3>>>
stepDistances(const Nest &Step, unsigned In, unsigned Out) {
  std::unique_ptr<isl_ctx, CtxFree> C(isl_ctx_alloc());
  isl_options_set_on_error(C.get(), ISL_ON_ERROR_CONTINUE);
  IslText T = islText(Step);
  std::string Domain =
      T.Params + "{ S[t, i, j] : t >= 0 and " + T.Bounds + " }";
  // Cell c of the array the step reads, as it is at step t: C[t, c]. A
  // write at step t is what step t + 1 reads (after the copy or the swap).
  auto CellAt = [&](const Access &A, const char *Time) {
    return T.Params + "{ S[t, i, j] -> C[" + Time + ", i + (" +
           std::to_string(A.Row) + "), j + (" + std::to_string(A.Col) + ")] }";
  };
  Set Dom(isl_set_read_from_str(C.get(), Domain.c_str()));
  if (!Dom)
    return llvm::createStringError("isl cannot read the stencil's domain");
  isl_union_map *Writes = nullptr, *Reads = nullptr;
  auto Add = [&](isl_union_map *&U, const std::string &Text) {
    isl_map *M = isl_map_read_from_str(C.get(), Text.c_str());
    M = isl_map_intersect_domain(M, isl_set_copy(Dom.get()));
    isl_union_map *UM = isl_union_map_from_map(M);
    U = U ? isl_union_map_union(U, UM) : UM;
  };
  for (const Access &A : Step.Accesses) {
    if (A.Array == Out && A.Writes)
      Add(Writes, CellAt(A, "t + 1"));
    if (A.Array == In && A.Reads)
      Add(Reads, CellAt(A, "t"));
  }
  if (!Writes || !Reads) {
    isl_union_map_free(Writes);
    isl_union_map_free(Reads);
    return std::vector<std::array<int64_t, 3>>{};
  }
  isl_union_map *Dep =
      isl_union_map_apply_range(Writes, isl_union_map_reverse(Reads));
  isl_union_set *UDeltas = isl_union_map_deltas(Dep);
  if (UDeltas && isl_union_set_is_empty(UDeltas) == isl_bool_true) {
    isl_union_set_free(UDeltas);
    return std::vector<std::array<int64_t, 3>>{};
  }
  isl_set *Deltas = isl_set_from_union_set(UDeltas);
  if (!Deltas)
    return llvm::createStringError("isl failed on the stencil's dependences");
  std::vector<std::array<int64_t, 3>> Found;
  isl_set *Points = isl_set_project_out(Deltas, isl_dim_param, 0,
                                        isl_set_dim(Deltas, isl_dim_param));
  bool Bounded = isl_set_is_bounded(Points) == isl_bool_true;
  if (Bounded)
    isl_set_foreach_point(Points, addPoint3, &Found);
  isl_set_free(Points);
  if (!Bounded)
    return llvm::createStringError("the dependences between time steps are "
                                   "not uniform");
  llvm::sort(Found);
  return Found;
}

} // namespace cleave::tile
