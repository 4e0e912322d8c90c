//===- KernelInfoTest.cpp - Kernel markings ---------------------------------===//
#include "cleave/Support/KernelInfo.h"

#include "llvm/AsmParser/Parser.h"
#include "llvm/IR/Function.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm/Support/SourceMgr.h"
#include "gtest/gtest.h"

using namespace llvm;

namespace {

std::unique_ptr<Module> parse(LLVMContext &Ctx, StringRef IR) {
  SMDiagnostic Err;
  auto M = parseAssemblyString(IR, Err, Ctx);
  if (!M)
    ADD_FAILURE() << Err.getMessage().str();
  return M;
}

TEST(KernelInfo, RecognizesEveryMarking) {
  LLVMContext Ctx;
  auto M = parse(Ctx, R"(
define void @annotated() { ret void }
define ptx_kernel void @ptx() { ret void }
define spir_kernel void @spir() { ret void }
define void @helper() { ret void }
declare void @decl()
define void @variant() "cleave-variant"="partition" { ret void }
!nvvm.annotations = !{!0, !1, !2}
!0 = !{ptr @annotated, !"kernel", i32 1}
!1 = !{ptr @helper, !"maxntid", i32 256}
!2 = !{ptr @variant, !"kernel", i32 1}
)");
  ASSERT_TRUE(M);
  EXPECT_TRUE(cleave::isKernel(*M->getFunction("annotated")));
  EXPECT_TRUE(cleave::isKernel(*M->getFunction("ptx")));
  EXPECT_TRUE(cleave::isKernel(*M->getFunction("spir")));
  EXPECT_FALSE(cleave::isKernel(*M->getFunction("helper")));
  EXPECT_FALSE(cleave::isKernel(*M->getFunction("decl")));
  EXPECT_FALSE(cleave::isKernel(*M->getFunction("variant")));
  EXPECT_TRUE(cleave::isCleaveVariant(*M->getFunction("variant")));
  auto Kernels = cleave::getKernels(*M);
  ASSERT_EQ(Kernels.size(), 3u);
  EXPECT_EQ(Kernels[0]->getName(), "annotated");
}

TEST(KernelInfo, MarkAsKernelLikeCopiesAnnotations) {
  LLVMContext Ctx;
  auto M = parse(Ctx, R"(
define void @k() { ret void }
define void @clone() { ret void }
!nvvm.annotations = !{!0, !1}
!0 = !{ptr @k, !"kernel", i32 1}
!1 = !{ptr @k, !"maxntid", i32 128}
)");
  ASSERT_TRUE(M);
  Function *Clone = M->getFunction("clone");
  EXPECT_FALSE(cleave::isKernel(*Clone));
  cleave::markAsKernelLike(*Clone, *M->getFunction("k"));
  EXPECT_TRUE(cleave::isKernel(*Clone));
  // Both the kernel entry and maxntid were duplicated.
  EXPECT_EQ(M->getNamedMetadata("nvvm.annotations")->getNumOperands(), 4u);
}

TEST(KernelInfo, VariantNames) {
  EXPECT_EQ(cleave::partitionVariantName("_Z3fooPf"), "__cleave_pr__Z3fooPf");
  EXPECT_EQ(cleave::mergeVariantName("k"), "__cleave_merge_k");
}

} // namespace
