//===- FootprintEvaluatorTest.cpp - The runtime's footprint evaluator -----===//
//
// The evaluator on its own, with texts written by hand: the parser's error
// messages, expression semantics, launch validation, the decomposition of a
// block range, region coalescing, and random affine programs checked against
// enumeration of every thread.
//
//===----------------------------------------------------------------------===//
#include "cleave/rt/Footprint.h"

#include "gtest/gtest.h"

#include <algorithm>
#include <random>
#include <sstream>

using namespace cleave::rt;

namespace {

const char *Header =
    "cleave-footprint 1\nkernel k\narg 0 ptr p\narg 1 int 32 n\n";

Status parseText(const std::string &Body, FootprintProgram &P) {
  return FootprintProgram::parse(Header + Body, P);
}

std::vector<ByteInterval> intervals(const std::vector<ByteRegion> &R) {
  std::vector<ByteInterval> Out;
  EXPECT_TRUE(toIntervals(R, Out));
  return Out;
}

TEST(FootprintEvaluator, ParseErrorsNameTheLine) {
  FootprintProgram P;
  Status S = FootprintProgram::parse("cleave-footprint 2\n", P);
  EXPECT_FALSE(S.Ok);
  EXPECT_NE(S.Message.find("line 1: unsupported version"), std::string::npos)
      << S.Message;
  S = FootprintProgram::parse("kernel k\n", P);
  EXPECT_NE(S.Message.find("expected 'cleave-footprint 1'"), std::string::npos);
  S = parseText("access 0 read 4 exact\n  at (affine (+ m 1))\nend\nend\n", P);
  EXPECT_NE(S.Message.find("line 6: unknown symbol 'm'"), std::string::npos)
      << S.Message;
  S = parseText("access 0 read 4 exact\n  at (affine 0 (L0 4))\nend\nend\n", P);
  EXPECT_NE(S.Message.find("unknown variable 'L0'"), std::string::npos);
  S = parseText("access 1 read 4 exact\n  at (affine 0)\nend\nend\n", P);
  EXPECT_NE(S.Message.find("argument 1 is not a pointer"), std::string::npos);
  S = parseText("access 0 read 4 exact\n  at (affine (- 1 2 3))\nend\nend\n",
                P);
  EXPECT_NE(S.Message.find("exactly two operands"), std::string::npos);
  S = parseText("access 0 read 4 exact\n  at (affine 0)\nend\n", P);
  EXPECT_NE(S.Message.find("missing 'end'"), std::string::npos);
  S = parseText("access 0 read 4 exact\n  at (affine 0)\n  le (affine 1)\n"
                "end\nend\n",
                P);
  EXPECT_NE(S.Message.find("'at' must be the last line"), std::string::npos);
  S = parseText("access 0 read 4 exact\n  var tid.x range 0 1\n"
                "  at (affine 0)\nend\nend\n",
                P);
  EXPECT_NE(S.Message.find("declared twice"), std::string::npos);
  S = parseText("untracked read extra\nend\n", P);
  EXPECT_NE(S.Message.find("unexpected 'extra'"), std::string::npos);
  // Comments and blank lines are fine.
  S = parseText("# nothing\n\nunknown 0 write # why\nend\n", P);
  EXPECT_TRUE(S.Ok) << S.Message;
}

TEST(FootprintEvaluator, LaunchValidation) {
  FootprintProgram P;
  ASSERT_TRUE(parseText("end\n", P).Ok);
  LaunchConfig L;
  L.Grid[0] = 4;
  L.Count = 5;
  L.Args = {0, 0};
  FootprintResult R;
  EXPECT_FALSE(P.evaluate(L, R).Ok);
  L.Count = 4;
  L.Block[1] = 0;
  EXPECT_FALSE(P.evaluate(L, R).Ok);
  L.Block[1] = 1;
  L.Args = {0};
  EXPECT_FALSE(P.evaluate(L, R).Ok);
  L.Args = {0, 0};
  ASSERT_TRUE(P.evaluate(L, R).Ok);
  ASSERT_EQ(R.Params.size(), 1u);
  EXPECT_EQ(R.Params[0].ReadClass, FootprintClass::Exact);
  EXPECT_TRUE(R.Params[0].Reads.empty());
}

TEST(FootprintEvaluator, ExpressionSemantics) {
  // Floor division, min, max; the value lands in Base.
  FootprintProgram P;
  ASSERT_TRUE(parseText("access 0 write 1 exact\n"
                        "  at (affine (+ (* 1000 (/ -7 2)) (max arg1 (min 3 "
                        "5)) ))\nend\nend\n",
                        P)
                  .Ok);
  LaunchConfig L;
  L.Count = 1;
  L.Args = {0, 9};
  FootprintResult R;
  ASSERT_TRUE(P.evaluate(L, R).Ok);
  ASSERT_EQ(R.Params[0].Writes.size(), 1u);
  EXPECT_EQ(R.Params[0].Writes[0].Base, -4000 + 9);
  // Overflow makes the parameter Unknown instead of wrapping.
  ASSERT_TRUE(
      parseText("access 0 write 1 exact\n"
                "  at (affine (* arg1 4611686018427387904))\nend\nend\n",
                P)
          .Ok);
  ASSERT_TRUE(P.evaluate(L, R).Ok);
  EXPECT_EQ(R.Params[0].WriteClass, FootprintClass::Unknown);
  // Division by zero too.
  ASSERT_TRUE(parseText("access 0 write 1 exact\n"
                        "  at (affine (/ 1 arg1))\nend\nend\n",
                        P)
                  .Ok);
  L.Args = {0, 0};
  ASSERT_TRUE(P.evaluate(L, R).Ok);
  EXPECT_EQ(R.Params[0].WriteClass, FootprintClass::Unknown);
}

TEST(FootprintEvaluator, ChecksAndGuardsInOrder) {
  // A launch-wide guard that fails makes the access empty before the check
  // after it can refuse the launch.
  FootprintProgram P;
  ASSERT_TRUE(parseText("access 0 write 4 exact\n"
                        "  le (affine (- 1 arg1))\n"
                        "  check (affine arg1 (tid.x 1)) 0 10\n"
                        "  at (affine 0 (tid.x 4))\nend\nend\n",
                        P)
                  .Ok);
  LaunchConfig L;
  L.Block[0] = 4;
  L.Count = 1;
  L.Args = {0, 0}; // guard 1 - n <= 0 fails
  FootprintResult R;
  ASSERT_TRUE(P.evaluate(L, R).Ok);
  EXPECT_EQ(R.Params[0].WriteClass, FootprintClass::Exact);
  EXPECT_TRUE(R.Params[0].Writes.empty());
  L.Args = {0, 7}; // the guard holds and n + tid <= 7 + 3 passes the check
  ASSERT_TRUE(P.evaluate(L, R).Ok);
  EXPECT_EQ(R.Params[0].WriteClass, FootprintClass::Exact);
  L.Args = {0, 8};
  ASSERT_TRUE(P.evaluate(L, R).Ok);
  EXPECT_EQ(R.Params[0].WriteClass, FootprintClass::Unknown);

  // A check after a thread guard only needs to hold for the threads that
  // pass it: a loop count tid - 1 behind tid >= 1 is fine for tid = 0.
  ASSERT_TRUE(parseText("access 0 write 4 exact\n"
                        "  le (affine 1 (tid.x -1))\n"
                        "  check (affine -1 (tid.x 1)) 0 4294967295\n"
                        "  at (affine 0 (tid.x 4))\nend\nend\n",
                        P)
                  .Ok);
  ASSERT_TRUE(P.evaluate(L, R).Ok);
  EXPECT_EQ(R.Params[0].WriteClass, FootprintClass::Exact);
  ASSERT_EQ(R.Params[0].Writes.size(), 1u);
  EXPECT_EQ(R.Params[0].Writes[0].Base, 4);
  EXPECT_EQ(R.Params[0].Writes[0].Bytes, 12);
  // Guards no thread passes leave nothing to check.
  ASSERT_TRUE(parseText("access 0 write 4 exact\n"
                        "  le (affine 9 (tid.x -1))\n"
                        "  check (affine 0 (tid.x 1)) 0 0\n"
                        "  at (affine 0 (tid.x 4))\nend\nend\n",
                        P)
                  .Ok);
  ASSERT_TRUE(P.evaluate(L, R).Ok);
  EXPECT_EQ(R.Params[0].WriteClass, FootprintClass::Exact);
  EXPECT_TRUE(R.Params[0].Writes.empty());
}

TEST(FootprintEvaluator, BlockRangeDecomposition) {
  // One byte per block at its linear id: the footprint is exactly
  // [first, first + count) for any grid shape.
  FootprintProgram P;
  ASSERT_TRUE(parseText("access 0 write 1 exact\n"
                        "  at (affine 0 (ctaid.x 1) (ctaid.y grid.x) (ctaid.z "
                        "(* grid.x grid.y)))\nend\nend\n",
                        P)
                  .Ok);
  std::mt19937 G(1);
  for (int I = 0; I < 500; ++I) {
    LaunchConfig L;
    for (int D = 0; D < 3; ++D)
      L.Grid[D] = std::uniform_int_distribution<int>(1, 7)(G);
    int64_t Total = L.Grid[0] * L.Grid[1] * L.Grid[2];
    L.First = std::uniform_int_distribution<int64_t>(0, Total)(G);
    L.Count = std::uniform_int_distribution<int64_t>(0, Total - L.First)(G);
    L.Args = {0, 0};
    FootprintResult R;
    ASSERT_TRUE(P.evaluate(L, R).Ok);
    auto Got = intervals(R.Params[0].Writes);
    if (L.Count == 0) {
      EXPECT_TRUE(Got.empty());
      continue;
    }
    ASSERT_EQ(Got.size(), 1u);
    EXPECT_EQ(Got[0].Lo, L.First);
    EXPECT_EQ(Got[0].Hi, L.First + L.Count);
    // Coalescing turns the pieces back into one interval.
    EXPECT_EQ(R.Params[0].Writes.size(), 1u);
  }
}

TEST(FootprintEvaluator, CoalescingPreservesBytes) {
  std::mt19937 G(2);
  auto Pick = [&](int Lo, int Hi) {
    return std::uniform_int_distribution<int>(Lo, Hi)(G);
  };
  for (int I = 0; I < 2000; ++I) {
    std::vector<ByteRegion> Rs;
    int N = Pick(1, 6);
    // Shapes that share pitches often, so that the merge rules fire.
    int Pitch = Pick(2, 9);
    for (int K = 0; K < N; ++K) {
      ByteRegion R;
      R.Base = Pick(0, 40);
      R.Bytes = Pick(1, Pitch + 2);
      if (Pick(0, 2)) {
        R.Rows = Pick(1, 5);
        R.Pitch = Pick(0, 1) ? Pitch : Pitch * 2;
        if (R.Bytes >= R.Pitch)
          R.Rows = 1, R.Pitch = 0;
      }
      if (R.Rows > 1 && Pick(0, 3) == 0) {
        R.Planes = Pick(1, 3);
        R.PlanePitch = R.Rows * R.Pitch + Pick(0, 5);
      }
      Rs.push_back(R);
    }
    auto Before = intervals(Rs);
    std::vector<ByteRegion> After = Rs;
    coalesceRegions(After);
    EXPECT_EQ(intervals(After).size(), Before.size());
    EXPECT_TRUE(intervals(After) == Before);
    EXPECT_LE(After.size(), Rs.size());
    for (const ByteRegion &R : After) {
      if (R.Rows > 1) {
        EXPECT_LT(R.Bytes, R.Pitch); // rows never overlap
      }
    }
  }
  // The loop-unrolling case: two interleaved column slices become one.
  std::vector<ByteRegion> Rs(2);
  Rs[0] = {0, 8, 4, 64, 1, 0};
  Rs[1] = {32, 8, 4, 64, 1, 0};
  coalesceRegions(Rs);
  ASSERT_EQ(Rs.size(), 1u);
  EXPECT_EQ(Rs[0].Rows, 8);
  EXPECT_EQ(Rs[0].Pitch, 32);
}

/// Random affine accesses over a small launch, against enumeration of every
/// point of the iteration space.
TEST(FootprintEvaluator, RandomAffineProgramsMatchEnumeration) {
  std::mt19937 G(3);
  auto Pick = [&](int Lo, int Hi) {
    return std::uniform_int_distribution<int>(Lo, Hi)(G);
  };
  const char *Vars[] = {"tid.x", "tid.y", "ctaid.x", "ctaid.y", "L0"};
  unsigned Exact = 0, Total = 0;
  for (int I = 0; I < 3000; ++I) {
    int Width = Pick(1, 4);
    int Trip = Pick(0, 4);
    int Coef[5];
    std::ostringstream Text;
    Text << "access 0 read " << Width << " exact\n";
    Text << "  var L0 range 0 " << Trip - 1 << "\n";
    // Guards: up to three, each over one or two variables.
    int NumLe = Pick(0, 3);
    struct Le {
      int C0, C[5];
    };
    std::vector<Le> Les;
    for (int K = 0; K < NumLe; ++K) {
      Le X{Pick(-12, 12), {0, 0, 0, 0, 0}};
      int A = Pick(0, 4), B = Pick(0, 4), C = Pick(0, 4);
      X.C[A] = Pick(-5, 5);
      if (Pick(0, 1))
        X.C[B] += Pick(-5, 5) * (Pick(0, 1) ? 4 : 1);
      // Three coupled variables: no split applies, bounds only.
      if (Pick(0, 5) == 0)
        X.C[C] += Pick(-3, 3);
      Les.push_back(X);
      Text << "  le (affine " << X.C0;
      for (int V = 0; V < 5; ++V)
        if (X.C[V])
          Text << " (" << Vars[V] << ' ' << X.C[V] << ')';
      Text << ")\n";
    }
    int C0 = Pick(0, 50);
    Text << "  at (affine " << C0;
    for (int V = 0; V < 5; ++V) {
      Coef[V] = Pick(0, 2) ? Pick(-8, 8) : 0;
      if (V == 2 && Pick(0, 1))
        Coef[V] = Coef[0] * Pick(1, 6); // ctaid.x * k + tid.x patterns
      if (Coef[V])
        Text << " (" << Vars[V] << ' ' << Coef[V] << ')';
    }
    Text << ")\nend\nend\n";
    FootprintProgram P;
    Status S = parseText(Text.str(), P);
    ASSERT_TRUE(S.Ok) << S.Message << "\n" << Text.str();
    LaunchConfig L;
    L.Grid[0] = Pick(1, 4);
    L.Grid[1] = Pick(1, 3);
    L.Block[0] = Pick(1, 6);
    L.Block[1] = Pick(1, 3);
    int64_t NB = L.Grid[0] * L.Grid[1];
    L.First = Pick(0, NB);
    L.Count = Pick(0, NB - L.First);
    L.Args = {0, 0};
    FootprintResult R;
    ASSERT_TRUE(P.evaluate(L, R).Ok);
    std::vector<ByteInterval> Truth;
    for (int64_t B = L.First; B < L.First + L.Count; ++B)
      for (int Ty = 0; Ty < L.Block[1]; ++Ty)
        for (int Tx = 0; Tx < L.Block[0]; ++Tx)
          for (int It = 0; It < Trip; ++It) {
            int64_t V[5] = {Tx, Ty, B % L.Grid[0], B / L.Grid[0], It};
            bool Ok = true;
            for (const Le &X : Les) {
              int64_t Sum = X.C0;
              for (int K = 0; K < 5; ++K)
                Sum += X.C[K] * V[K];
              Ok &= Sum <= 0;
            }
            if (!Ok)
              continue;
            int64_t A = C0;
            for (int K = 0; K < 5; ++K)
              A += Coef[K] * V[K];
            Truth.push_back({A, A + Width});
          }
    std::vector<ByteRegion> Touched;
    for (auto &X : Truth)
      Touched.push_back({X.Lo, X.Hi - X.Lo, 1, 0, 1, 0});
    auto T2 = intervals(Touched);
    const ParamFootprint &PF = R.Params[0];
    ASSERT_NE(PF.ReadClass, FootprintClass::Unknown) << Text.str();
    auto Got = intervals(PF.Reads);
    ++Total;
    if (PF.ReadClass == FootprintClass::Exact) {
      ++Exact;
      EXPECT_TRUE(Got == T2) << Text.str();
    } else {
      // Bounded: every touched byte is inside.
      size_t J = 0;
      for (const ByteInterval &X : T2) {
        while (J < Got.size() && Got[J].Hi < X.Hi)
          ++J;
        ASSERT_TRUE(J < Got.size() && Got[J].Lo <= X.Lo) << Text.str();
      }
    }
    if (::testing::Test::HasFailure())
      break;
  }
  // Guards over one variable, or two in lexicographic order, stay exact;
  // only a few coupled pairs fall back to bounds.
  EXPECT_GT(Exact * 10, Total * 9) << Exact << " of " << Total;
}

} // namespace

namespace {

// A vecadd-like rebase record: one pointer shifted by 4*block.x*first bytes,
// the bound n - block.x*first (signed), and the index's range check.
const char *RebaseBody =
    "rebase x __cleave_rbx_k\n"
    "  param ptr 0 (* 4 block.x first)\n"
    "  param int 32 signed (+ arg1 (* -1 block.x first))\n"
    "  check (affine 0 (ctaid.x block.x) (tid.x 1)) -2147483648 2147483647\n"
    "end\n"
    "end\n";

LaunchConfig launch1D(int64_t Grid, int64_t Block, int64_t N) {
  LaunchConfig L;
  L.Grid[0] = Grid;
  L.Block[0] = Block;
  L.Args = {0, N};
  return L;
}

} // namespace

TEST(FootprintEvaluator, RebaseValues) {
  FootprintProgram P;
  ASSERT_TRUE(parseText(RebaseBody, P).Ok);
  ASSERT_EQ(P.rebasedVariants().size(), 1u);
  ASSERT_NE(P.rebasedVariant(0), nullptr);
  EXPECT_EQ(P.rebasedVariant(0)->Entry, "__cleave_rbx_k");
  EXPECT_EQ(P.rebasedVariant(1), nullptr);

  std::vector<RebaseValue> V;
  std::string Why;
  ASSERT_TRUE(P.rebase(launch1D(100, 128, 12000), 0, 30, V, Why)) << Why;
  ASSERT_EQ(V.size(), 2u);
  EXPECT_TRUE(V[0].IsPointer);
  EXPECT_EQ(V[0].ArgNo, 0u);
  EXPECT_EQ(V[0].Value, 4 * 128 * 30);
  EXPECT_FALSE(V[1].IsPointer);
  EXPECT_EQ(V[1].Bits, 32u);
  EXPECT_EQ(V[1].Value, 12000 - 128 * 30);
  // A bound below the slab is fine for a signed comparison (every thread
  // of the slab fails it, as in the original).
  ASSERT_TRUE(P.rebase(launch1D(100, 128, 5), 0, 90, V, Why)) << Why;
  EXPECT_EQ(V[1].Value, 5 - 128 * 90);

  // The index of the last thread does not fit an int: refused.
  EXPECT_FALSE(P.rebase(launch1D((int64_t(1) << 31) / 128 + 1, 128, 7), 0, 1,
                        V, Why));
  EXPECT_NE(Why.find("integer type"), std::string::npos) << Why;
  // No record along y, and a slab outside the grid.
  EXPECT_FALSE(P.rebase(launch1D(100, 128, 7), 1, 0, V, Why));
  EXPECT_FALSE(P.rebase(launch1D(100, 128, 7), 0, 100, V, Why));
}

TEST(FootprintEvaluator, RebaseBoundMustFit) {
  FootprintProgram P;
  ASSERT_TRUE(parseText("rebase x e\n"
                        "  param int 32 unsigned (+ arg1 (* -1 block.x first))\n"
                        "end\nend\n",
                        P)
                  .Ok);
  std::vector<RebaseValue> V;
  std::string Why;
  EXPECT_TRUE(P.rebase(launch1D(10, 32, 1000), 0, 3, V, Why)) << Why;
  EXPECT_EQ(V[0].Value, 1000 - 96);
  // n - 32*f < 0 does not fit an unsigned bound.
  EXPECT_FALSE(P.rebase(launch1D(10, 32, 50), 0, 3, V, Why));
  EXPECT_NE(Why.find("does not fit"), std::string::npos) << Why;

  // Wrap: modulo 2^32, read back sign-extended.
  ASSERT_TRUE(parseText("rebase x e\n"
                        "  param int 32 wrap (+ arg1 (* -1 block.x first))\n"
                        "end\nend\n",
                        P)
                  .Ok);
  EXPECT_TRUE(P.rebase(launch1D(10, 32, 50), 0, 3, V, Why)) << Why;
  EXPECT_EQ(V[0].Value, 50 - 96);
}

TEST(FootprintEvaluator, RebaseParseErrors) {
  FootprintProgram P;
  Status S = parseText("rebase w e\nend\nend\n", P);
  EXPECT_NE(S.Message.find("dimension"), std::string::npos) << S.Message;
  S = parseText("rebase x e\n  param ptr 1 0\nend\nend\n", P);
  EXPECT_NE(S.Message.find("not a pointer"), std::string::npos) << S.Message;
  S = parseText("rebase x e\n  param int 32 sometimes 0\nend\nend\n", P);
  EXPECT_NE(S.Message.find("'wrap', 'signed' or 'unsigned'"),
            std::string::npos)
      << S.Message;
  S = parseText("rebase x e\n  param int 16 wrap 0\nend\nend\n", P);
  EXPECT_NE(S.Message.find("32 or 64 bits"), std::string::npos) << S.Message;
  S = parseText("rebase x e\nend\nrebase x f\nend\nend\n", P);
  EXPECT_NE(S.Message.find("two rebase records"), std::string::npos)
      << S.Message;
  S = parseText("rebase x e\n  param ptr 0 0\n", P);
  EXPECT_NE(S.Message.find("missing 'end'"), std::string::npos) << S.Message;
}

TEST(FootprintEvaluator, RepeatedLaunchesGiveTheSameFootprints) {
  // evaluate() keeps its last results per launch; a program that has seen
  // many launches (more than it keeps, in a random order with repeats) must
  // give what a freshly parsed program gives for each one.
  const std::string Body = "access 0 read 4 exact\n"
                           "  le (affine (- 0 arg1) (ctaid.x block.x) (tid.x "
                           "1) (ctaid.y 1))\n"
                           "  at (affine 0 (ctaid.x (* 4 block.x)) (tid.x 4) "
                           "(ctaid.y (* 4 arg1)))\nend\n"
                           "access 0 write 4 exact\n"
                           "  at (affine 0 (ctaid.y 4))\nend\nend\n";
  FootprintProgram Seen;
  ASSERT_TRUE(parseText(Body, Seen).Ok);
  std::vector<LaunchConfig> Pool;
  for (int64_t GX : {3, 5})
    for (int64_t BX : {8, 32})
      for (int64_t N : {10, 64, 200})
        for (int64_t First : {0, 1, 2}) {
          LaunchConfig L;
          L.Grid[0] = GX;
          L.Grid[1] = 4;
          L.Block[0] = BX;
          L.First = First;
          L.Count = GX * 4 - First - 1;
          L.Args = {0, N};
          Pool.push_back(L);
        }
  ASSERT_GT(Pool.size(), 32u); // more than the evaluator keeps
  std::mt19937 G(7);
  for (int I = 0; I < 400; ++I) {
    LaunchConfig L = Pool[std::uniform_int_distribution<size_t>(
        0, Pool.size() - 1)(G)];
    L.Args[0] = I; // a pointer's value never changes a footprint
    FootprintResult Got, Want;
    ASSERT_TRUE(Seen.evaluate(L, Got).Ok);
    FootprintProgram Fresh;
    ASSERT_TRUE(parseText(Body, Fresh).Ok);
    ASSERT_TRUE(Fresh.evaluate(L, Want).Ok);
    ASSERT_EQ(Got.Params.size(), Want.Params.size());
    for (size_t P = 0; P < Want.Params.size(); ++P) {
      EXPECT_EQ(Got.Params[P].ReadClass, Want.Params[P].ReadClass);
      EXPECT_EQ(Got.Params[P].WriteClass, Want.Params[P].WriteClass);
      EXPECT_EQ(intervals(Got.Params[P].Reads),
                intervals(Want.Params[P].Reads))
          << "launch " << I;
      EXPECT_EQ(intervals(Got.Params[P].Writes),
                intervals(Want.Params[P].Writes))
          << "launch " << I;
    }
  }
}
