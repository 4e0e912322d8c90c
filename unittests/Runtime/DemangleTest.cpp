//===- DemangleTest.cpp - Kernel names in the runtime's logs --------------===//
//
// Part of Cleave. CLEAVE_LOG=plan names kernels as people write them, with
// the mangled name kept beside it.
//
//===----------------------------------------------------------------------===//
#include "../../runtime/lib/support/Demangle.h"
#include "cleave/rt/Launch.h"

#include "gtest/gtest.h"

using namespace cleave::rt;

namespace {

TEST(Demangle, CudaKernelNames) {
  EXPECT_EQ(demangle("_Z11matmulNaivePKfS0_Pfi"),
            "matmulNaive(float const*, float const*, float*, int)");
  EXPECT_EQ(demangle("_Z5shiftIiLi3EEvPT_i"), "void shift<int, 3>(int*, int)");
  // extern "C" kernels and names that are not valid manglings stay as
  // they are.
  EXPECT_EQ(demangle("vecadd"), "vecadd");
  EXPECT_EQ(demangle("_Z"), "_Z");
  EXPECT_EQ(demangle("_Zjunk"), "_Zjunk");
  EXPECT_EQ(displayName("_Z4copyPKfPfi"),
            "copy(float const*, float*, int) [_Z4copyPKfPfi]");
  EXPECT_EQ(displayName("vecadd"), "vecadd");
}

TEST(Demangle, ThePlanNamesTheKernelDemangled) {
  LaunchPlan Plan;
  Plan.KernelName = "_Z6vecaddPKfS0_Pfi";
  Plan.Split = false;
  Plan.Reason = "test";
  EXPECT_EQ(Plan.describe().rfind(
                "launch vecadd(float const*, float const*, float*, int) "
                "[_Z6vecaddPKfS0_Pfi]: not split (test)",
                0),
            0u)
      << Plan.describe();
}

} // namespace
