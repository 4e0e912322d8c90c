//===- FootprintTest.cpp - Footprints against brute force -----------------===//
//
// Every suite kernel is analysed from its O2 device IR (inline below, made by
// clang++-19 --cuda-device-only -O2 from test/Inputs/*.cu and trimmed of
// metadata), its footprint is serialized, parsed back by the runtime
// evaluator and evaluated for many random launches and block ranges. A
// hand-written model of each kernel walks every thread of the range and
// records the bytes its accesses touch. Exact must equal that set, Bounded
// must contain it; each kernel also states which class it expects per launch,
// so a regression to a weaker class fails too.
//
//===----------------------------------------------------------------------===//
#include "cleave/Analysis/Footprint.h"
#include "cleave/Support/KernelInfo.h"
#include "cleave/rt/Footprint.h"

#include "llvm/AsmParser/Parser.h"
#include "llvm/IR/Function.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm/Passes/PassBuilder.h"
#include "llvm/Support/SourceMgr.h"
#include "gtest/gtest.h"

#include <algorithm>
#include <functional>
#include <iostream>
#include <map>
#include <optional>
#include <random>
#include <sstream>

using namespace llvm;
using cleave::FootprintAnalysis;
using cleave::FootprintClass;
namespace rt = cleave::rt;

namespace {

//===----------------------------------------------------------------------===//
// Device IR of the kernels
//===----------------------------------------------------------------------===//

// test/Inputs/vecadd.cu
const char *VecaddIR = R"IR(
target datalayout = "e-i64:64-i128:128-v16:16-v32:32-n16:32:64"
target triple = "nvptx64-nvidia-cuda"
define void @_Z6vecaddPKfS0_Pfi(ptr nocapture noundef readonly %0, ptr nocapture noundef readonly %1, ptr nocapture noundef writeonly %2, i32 noundef %3) {
  %5 = tail call noundef range(i32 0, 2147483647) i32 @llvm.nvvm.read.ptx.sreg.ctaid.x()
  %6 = tail call noundef range(i32 1, 1025) i32 @llvm.nvvm.read.ptx.sreg.ntid.x()
  %7 = mul i32 %5, %6
  %8 = tail call noundef range(i32 0, 1024) i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %9 = add i32 %7, %8
  %10 = icmp slt i32 %9, %3
  br i1 %10, label %11, label %19

11:
  %12 = sext i32 %9 to i64
  %13 = getelementptr inbounds float, ptr %2, i64 %12
  %14 = getelementptr inbounds float, ptr %1, i64 %12
  %15 = getelementptr inbounds float, ptr %0, i64 %12
  %16 = load float, ptr %15, align 4
  %17 = load float, ptr %14, align 4
  %18 = fadd contract float %16, %17
  store float %18, ptr %13, align 4
  br label %19

19:
  ret void
}
declare noundef i32 @llvm.nvvm.read.ptx.sreg.ctaid.x()
declare noundef i32 @llvm.nvvm.read.ptx.sreg.ntid.x()
declare noundef i32 @llvm.nvvm.read.ptx.sreg.tid.x()
!nvvm.annotations = !{!0}
!0 = !{ptr @_Z6vecaddPKfS0_Pfi, !"kernel", i32 1}
)IR";

// test/Inputs/vecadd.cl (clang -x cl -O2 with libclc)
const char *VecaddCLIR = R"IR(
target datalayout = "e-i64:64-i128:128-v16:16-v32:32-n16:32:64"
target triple = "nvptx64-unknown-nvidiacl"
define spir_kernel void @vecadd(ptr addrspace(1) nocapture noundef readonly align 4 %0, ptr addrspace(1) nocapture noundef readonly align 4 %1, ptr addrspace(1) nocapture noundef writeonly align 4 %2, i32 noundef %3) {
  %5 = tail call range(i32 0, 1024) i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %6 = tail call range(i32 1, 1025) i32 @llvm.nvvm.read.ptx.sreg.ntid.x()
  %7 = tail call range(i32 0, 2147483647) i32 @llvm.nvvm.read.ptx.sreg.ctaid.x()
  %8 = zext nneg i32 %6 to i64
  %9 = zext nneg i32 %7 to i64
  %10 = mul nuw nsw i64 %8, %9
  %11 = zext nneg i32 %5 to i64
  %12 = add nuw nsw i64 %10, %11
  %13 = trunc i64 %12 to i32
  %14 = icmp slt i32 %13, %3
  br i1 %14, label %15, label %24

15:
  %16 = shl i64 %12, 32
  %17 = ashr exact i64 %16, 32
  %18 = getelementptr inbounds float, ptr addrspace(1) %2, i64 %17
  %19 = getelementptr inbounds float, ptr addrspace(1) %1, i64 %17
  %20 = getelementptr inbounds float, ptr addrspace(1) %0, i64 %17
  %21 = load float, ptr addrspace(1) %20, align 4
  %22 = load float, ptr addrspace(1) %19, align 4
  %23 = fadd float %21, %22
  store float %23, ptr addrspace(1) %18, align 4
  br label %24

24:
  ret void
}
declare noundef i32 @llvm.nvvm.read.ptx.sreg.ctaid.x()
declare noundef i32 @llvm.nvvm.read.ptx.sreg.ntid.x()
declare noundef i32 @llvm.nvvm.read.ptx.sreg.tid.x()
!nvvm.annotations = !{!0}
!0 = !{ptr @vecadd, !"kernel", i32 1}
)IR";

// test/Inputs/matmul.cu
const char *MatmulIR = R"IR(
target datalayout = "e-i64:64-i128:128-v16:16-v32:32-n16:32:64"
target triple = "nvptx64-nvidia-cuda"
define void @_Z6matmulPKfS0_Pfiii(ptr nocapture noundef readonly %0, ptr nocapture noundef readonly %1, ptr nocapture noundef writeonly %2, i32 noundef %3, i32 noundef %4, i32 noundef %5) {
  %7 = tail call noundef range(i32 0, 65535) i32 @llvm.nvvm.read.ptx.sreg.ctaid.y()
  %8 = tail call noundef range(i32 1, 1025) i32 @llvm.nvvm.read.ptx.sreg.ntid.y()
  %9 = mul nuw nsw i32 %7, %8
  %10 = tail call noundef range(i32 0, 1024) i32 @llvm.nvvm.read.ptx.sreg.tid.y()
  %11 = add nuw nsw i32 %9, %10
  %12 = tail call noundef range(i32 0, 2147483647) i32 @llvm.nvvm.read.ptx.sreg.ctaid.x()
  %13 = tail call noundef range(i32 1, 1025) i32 @llvm.nvvm.read.ptx.sreg.ntid.x()
  %14 = mul i32 %12, %13
  %15 = tail call noundef range(i32 0, 1024) i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %16 = add i32 %14, %15
  %17 = icmp slt i32 %11, %3
  %18 = icmp slt i32 %16, %4
  %19 = and i1 %17, %18
  br i1 %19, label %20, label %81

20:
  %21 = icmp sgt i32 %5, 0
  br i1 %21, label %22, label %45

22:
  %23 = mul nuw nsw i32 %11, %5
  %24 = and i32 %5, 1
  %25 = icmp eq i32 %5, 1
  br i1 %25, label %28, label %26

26:
  %27 = and i32 %5, 2147483646
  br label %51

28:
  %29 = phi float [ poison, %22 ], [ %77, %51 ]
  %30 = phi i32 [ 0, %22 ], [ %78, %51 ]
  %31 = phi float [ 0.000000e+00, %22 ], [ %77, %51 ]
  %32 = icmp eq i32 %24, 0
  br i1 %32, label %45, label %33

33:
  %34 = add nuw nsw i32 %30, %23
  %35 = zext nneg i32 %34 to i64
  %36 = getelementptr inbounds float, ptr %0, i64 %35
  %37 = load float, ptr %36, align 4
  %38 = mul nsw i32 %30, %4
  %39 = add nsw i32 %38, %16
  %40 = sext i32 %39 to i64
  %41 = getelementptr inbounds float, ptr %1, i64 %40
  %42 = load float, ptr %41, align 4
  %43 = fmul contract float %37, %42
  %44 = fadd contract float %31, %43
  br label %45

45:
  %46 = phi float [ 0.000000e+00, %20 ], [ %29, %28 ], [ %44, %33 ]
  %47 = mul nsw i32 %11, %4
  %48 = add nsw i32 %47, %16
  %49 = sext i32 %48 to i64
  %50 = getelementptr inbounds float, ptr %2, i64 %49
  store float %46, ptr %50, align 4
  br label %81

51:
  %52 = phi i32 [ 0, %26 ], [ %78, %51 ]
  %53 = phi float [ 0.000000e+00, %26 ], [ %77, %51 ]
  %54 = phi i32 [ 0, %26 ], [ %79, %51 ]
  %55 = add nuw nsw i32 %52, %23
  %56 = zext nneg i32 %55 to i64
  %57 = getelementptr inbounds float, ptr %0, i64 %56
  %58 = load float, ptr %57, align 4
  %59 = mul nsw i32 %52, %4
  %60 = add nsw i32 %59, %16
  %61 = sext i32 %60 to i64
  %62 = getelementptr inbounds float, ptr %1, i64 %61
  %63 = load float, ptr %62, align 4
  %64 = fmul contract float %58, %63
  %65 = fadd contract float %53, %64
  %66 = or disjoint i32 %52, 1
  %67 = add nuw nsw i32 %66, %23
  %68 = zext nneg i32 %67 to i64
  %69 = getelementptr inbounds float, ptr %0, i64 %68
  %70 = load float, ptr %69, align 4
  %71 = mul nsw i32 %66, %4
  %72 = add nsw i32 %71, %16
  %73 = sext i32 %72 to i64
  %74 = getelementptr inbounds float, ptr %1, i64 %73
  %75 = load float, ptr %74, align 4
  %76 = fmul contract float %70, %75
  %77 = fadd contract float %65, %76
  %78 = add nuw nsw i32 %52, 2
  %79 = add i32 %54, 2
  %80 = icmp eq i32 %79, %27
  br i1 %80, label %28, label %51

81:
  ret void
}
declare noundef i32 @llvm.nvvm.read.ptx.sreg.ctaid.y()
declare noundef i32 @llvm.nvvm.read.ptx.sreg.ntid.y()
declare noundef i32 @llvm.nvvm.read.ptx.sreg.tid.y()
declare noundef i32 @llvm.nvvm.read.ptx.sreg.ctaid.x()
declare noundef i32 @llvm.nvvm.read.ptx.sreg.ntid.x()
declare noundef i32 @llvm.nvvm.read.ptx.sreg.tid.x()
!nvvm.annotations = !{!0}
!0 = !{ptr @_Z6matmulPKfS0_Pfiii, !"kernel", i32 1}
)IR";

// test/Inputs/matmul.cl (clang -x cl -O2 with libclc)
const char *MatmulCLIR = R"IR(
target datalayout = "e-i64:64-i128:128-v16:16-v32:32-n16:32:64"
target triple = "nvptx64-unknown-nvidiacl"
define spir_kernel void @matmul(ptr addrspace(1) nocapture noundef readonly align 4 %0, ptr addrspace(1) nocapture noundef readonly align 4 %1, ptr addrspace(1) nocapture noundef writeonly align 4 %2, i32 noundef %3, i32 noundef %4, i32 noundef %5) {
  %7 = tail call range(i32 0, 65535) i32 @llvm.nvvm.read.ptx.sreg.ctaid.y()
  %8 = tail call range(i32 1, 1025) i32 @llvm.nvvm.read.ptx.sreg.ntid.y()
  %9 = tail call range(i32 0, 1024) i32 @llvm.nvvm.read.ptx.sreg.tid.y()
  %10 = mul nuw nsw i32 %8, %7
  %11 = add nuw nsw i32 %10, %9
  %12 = tail call range(i32 0, 2147483647) i32 @llvm.nvvm.read.ptx.sreg.ctaid.x()
  %13 = tail call range(i32 1, 1025) i32 @llvm.nvvm.read.ptx.sreg.ntid.x()
  %14 = tail call range(i32 0, 1024) i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %15 = mul i32 %13, %12
  %16 = add i32 %15, %14
  %17 = icmp slt i32 %11, %3
  %18 = icmp slt i32 %16, %4
  %19 = and i1 %17, %18
  br i1 %19, label %20, label %78

20:
  %21 = icmp sgt i32 %5, 0
  br i1 %21, label %22, label %44

22:
  %23 = mul nuw nsw i32 %11, %5
  %24 = and i32 %5, 1
  %25 = icmp eq i32 %5, 1
  br i1 %25, label %28, label %26

26:
  %27 = and i32 %5, 2147483646
  br label %50

28:
  %29 = phi float [ poison, %22 ], [ %74, %50 ]
  %30 = phi i32 [ 0, %22 ], [ %75, %50 ]
  %31 = phi float [ 0.000000e+00, %22 ], [ %74, %50 ]
  %32 = icmp eq i32 %24, 0
  br i1 %32, label %44, label %33

33:
  %34 = add nuw nsw i32 %30, %23
  %35 = zext nneg i32 %34 to i64
  %36 = getelementptr inbounds float, ptr addrspace(1) %0, i64 %35
  %37 = load float, ptr addrspace(1) %36, align 4
  %38 = mul nsw i32 %30, %4
  %39 = add nsw i32 %38, %16
  %40 = sext i32 %39 to i64
  %41 = getelementptr inbounds float, ptr addrspace(1) %1, i64 %40
  %42 = load float, ptr addrspace(1) %41, align 4
  %43 = tail call float @llvm.fmuladd.f32(float %37, float %42, float %31)
  br label %44

44:
  %45 = phi float [ 0.000000e+00, %20 ], [ %29, %28 ], [ %43, %33 ]
  %46 = mul nsw i32 %11, %4
  %47 = add nsw i32 %46, %16
  %48 = sext i32 %47 to i64
  %49 = getelementptr inbounds float, ptr addrspace(1) %2, i64 %48
  store float %45, ptr addrspace(1) %49, align 4
  br label %78

50:
  %51 = phi i32 [ 0, %26 ], [ %75, %50 ]
  %52 = phi float [ 0.000000e+00, %26 ], [ %74, %50 ]
  %53 = phi i32 [ 0, %26 ], [ %76, %50 ]
  %54 = add nuw nsw i32 %51, %23
  %55 = zext nneg i32 %54 to i64
  %56 = getelementptr inbounds float, ptr addrspace(1) %0, i64 %55
  %57 = load float, ptr addrspace(1) %56, align 4
  %58 = mul nsw i32 %51, %4
  %59 = add nsw i32 %58, %16
  %60 = sext i32 %59 to i64
  %61 = getelementptr inbounds float, ptr addrspace(1) %1, i64 %60
  %62 = load float, ptr addrspace(1) %61, align 4
  %63 = tail call float @llvm.fmuladd.f32(float %57, float %62, float %52)
  %64 = or disjoint i32 %51, 1
  %65 = add nuw nsw i32 %64, %23
  %66 = zext nneg i32 %65 to i64
  %67 = getelementptr inbounds float, ptr addrspace(1) %0, i64 %66
  %68 = load float, ptr addrspace(1) %67, align 4
  %69 = mul nsw i32 %64, %4
  %70 = add nsw i32 %69, %16
  %71 = sext i32 %70 to i64
  %72 = getelementptr inbounds float, ptr addrspace(1) %1, i64 %71
  %73 = load float, ptr addrspace(1) %72, align 4
  %74 = tail call float @llvm.fmuladd.f32(float %68, float %73, float %63)
  %75 = add nuw nsw i32 %51, 2
  %76 = add i32 %53, 2
  %77 = icmp eq i32 %76, %27
  br i1 %77, label %28, label %50

78:
  ret void
}
declare float @llvm.fmuladd.f32(float, float, float)
declare noundef i32 @llvm.nvvm.read.ptx.sreg.ctaid.x()
declare noundef i32 @llvm.nvvm.read.ptx.sreg.ctaid.y()
declare noundef i32 @llvm.nvvm.read.ptx.sreg.ntid.x()
declare noundef i32 @llvm.nvvm.read.ptx.sreg.ntid.y()
declare noundef i32 @llvm.nvvm.read.ptx.sreg.tid.x()
declare noundef i32 @llvm.nvvm.read.ptx.sreg.tid.y()
!nvvm.annotations = !{!0}
!0 = !{ptr @matmul, !"kernel", i32 1}
)IR";

// test/Inputs/transpose.cu
const char *TransposeIR = R"IR(
target datalayout = "e-i64:64-i128:128-v16:16-v32:32-n16:32:64"
target triple = "nvptx64-nvidia-cuda"
@_ZZ9transposePfPKfiiE4tile = internal unnamed_addr addrspace(3) global [32 x [33 x float]] undef, align 4
define void @_Z9transposePfPKfii(ptr nocapture noundef writeonly %0, ptr nocapture noundef readonly %1, i32 noundef %2, i32 noundef %3) {
  %5 = tail call noundef range(i32 0, 2147483647) i32 @llvm.nvvm.read.ptx.sreg.ctaid.x()
  %6 = shl i32 %5, 5
  %7 = tail call noundef range(i32 0, 1024) i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %8 = add i32 %6, %7
  %9 = tail call noundef range(i32 0, 65535) i32 @llvm.nvvm.read.ptx.sreg.ctaid.y()
  %10 = shl nuw nsw i32 %9, 5
  %11 = tail call noundef range(i32 0, 1024) i32 @llvm.nvvm.read.ptx.sreg.tid.y()
  %12 = add nuw nsw i32 %10, %11
  %13 = icmp slt i32 %8, %2
  %14 = icmp slt i32 %12, %3
  %15 = and i1 %13, %14
  br i1 %15, label %16, label %25

16:
  %17 = zext nneg i32 %11 to i64
  %18 = zext nneg i32 %7 to i64
  %19 = getelementptr inbounds [32 x [33 x float]], ptr addrspacecast (ptr addrspace(3) @_ZZ9transposePfPKfiiE4tile to ptr), i64 0, i64 %17, i64 %18
  %20 = mul nsw i32 %12, %2
  %21 = add nsw i32 %20, %8
  %22 = sext i32 %21 to i64
  %23 = getelementptr inbounds float, ptr %1, i64 %22
  %24 = load float, ptr %23, align 4
  store float %24, ptr %19, align 4
  br label %25

25:
  tail call void @llvm.nvvm.barrier0()
  %26 = add nuw nsw i32 %10, %7
  %27 = add i32 %6, %11
  %28 = icmp slt i32 %26, %3
  %29 = icmp slt i32 %27, %2
  %30 = and i1 %29, %28
  br i1 %30, label %31, label %40

31:
  %32 = mul nsw i32 %27, %3
  %33 = add nsw i32 %32, %26
  %34 = sext i32 %33 to i64
  %35 = getelementptr inbounds float, ptr %0, i64 %34
  %36 = zext nneg i32 %7 to i64
  %37 = zext nneg i32 %11 to i64
  %38 = getelementptr inbounds [32 x [33 x float]], ptr addrspacecast (ptr addrspace(3) @_ZZ9transposePfPKfiiE4tile to ptr), i64 0, i64 %36, i64 %37
  %39 = load float, ptr %38, align 4
  store float %39, ptr %35, align 4
  br label %40

40:
  ret void
}
declare void @llvm.nvvm.barrier0()
declare noundef i32 @llvm.nvvm.read.ptx.sreg.ctaid.x()
declare noundef i32 @llvm.nvvm.read.ptx.sreg.tid.x()
declare noundef i32 @llvm.nvvm.read.ptx.sreg.ctaid.y()
declare noundef i32 @llvm.nvvm.read.ptx.sreg.tid.y()
!nvvm.annotations = !{!0}
!0 = !{ptr @_Z9transposePfPKfii, !"kernel", i32 1}
)IR";

// test/Inputs/reduction.cu
const char *ReductionIR = R"IR(
target datalayout = "e-i64:64-i128:128-v16:16-v32:32-n16:32:64"
target triple = "nvptx64-nvidia-cuda"
@_ZZ10reduce_sumPKfPfiE5sdata = internal unnamed_addr addrspace(3) global [256 x float] undef, align 4
define void @_Z10reduce_sumPKfPfi(ptr nocapture noundef readonly %0, ptr nocapture noundef writeonly %1, i32 noundef %2) {
  %4 = tail call noundef range(i32 0, 1024) i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %5 = tail call noundef range(i32 0, 2147483647) i32 @llvm.nvvm.read.ptx.sreg.ctaid.x()
  %6 = tail call noundef range(i32 1, 1025) i32 @llvm.nvvm.read.ptx.sreg.ntid.x()
  %7 = shl nuw nsw i32 %6, 1
  %8 = mul i32 %7, %5
  %9 = add i32 %8, %4
  %10 = icmp ult i32 %9, %2
  br i1 %10, label %11, label %15

11:
  %12 = zext i32 %9 to i64
  %13 = getelementptr inbounds float, ptr %0, i64 %12
  %14 = load float, ptr %13, align 4
  br label %15

15:
  %16 = phi float [ %14, %11 ], [ 0.000000e+00, %3 ]
  %17 = add i32 %9, %6
  %18 = icmp ult i32 %17, %2
  br i1 %18, label %19, label %24

19:
  %20 = zext i32 %17 to i64
  %21 = getelementptr inbounds float, ptr %0, i64 %20
  %22 = load float, ptr %21, align 4
  %23 = fadd contract float %16, %22
  br label %24

24:
  %25 = phi float [ %23, %19 ], [ %16, %15 ]
  %26 = zext nneg i32 %4 to i64
  %27 = getelementptr inbounds [256 x float], ptr addrspacecast (ptr addrspace(3) @_ZZ10reduce_sumPKfPfiE5sdata to ptr), i64 0, i64 %26
  store float %25, ptr %27, align 4
  tail call void @llvm.nvvm.barrier0()
  %28 = icmp ugt i32 %6, 65
  br i1 %28, label %32, label %29

29:
  %30 = phi float [ %25, %24 ], [ %44, %43 ]
  %31 = icmp ult i32 %4, 32
  br i1 %31, label %46, label %63

32:
  %33 = phi i32 [ %35, %43 ], [ %6, %24 ]
  %34 = phi float [ %44, %43 ], [ %25, %24 ]
  %35 = lshr i32 %33, 1
  %36 = icmp ult i32 %4, %35
  br i1 %36, label %37, label %43

37:
  %38 = add nuw nsw i32 %35, %4
  %39 = zext nneg i32 %38 to i64
  %40 = getelementptr inbounds [256 x float], ptr addrspacecast (ptr addrspace(3) @_ZZ10reduce_sumPKfPfiE5sdata to ptr), i64 0, i64 %39
  %41 = load float, ptr %40, align 4
  %42 = fadd contract float %34, %41
  store float %42, ptr %27, align 4
  br label %43

43:
  %44 = phi float [ %42, %37 ], [ %34, %32 ]
  tail call void @llvm.nvvm.barrier0()
  %45 = icmp ugt i32 %33, 131
  br i1 %45, label %32, label %29

46:
  %47 = load float, ptr %27, align 4
  %48 = or disjoint i32 %4, 32
  %49 = zext nneg i32 %48 to i64
  %50 = getelementptr inbounds [256 x float], ptr addrspacecast (ptr addrspace(3) @_ZZ10reduce_sumPKfPfiE5sdata to ptr), i64 0, i64 %49
  %51 = load float, ptr %50, align 4
  %52 = fadd contract float %47, %51
  %53 = tail call contract noundef float @llvm.nvvm.shfl.sync.down.f32(i32 -1, float %52, i32 16, i32 31)
  %54 = fadd contract float %52, %53
  %55 = tail call contract noundef float @llvm.nvvm.shfl.sync.down.f32(i32 -1, float %54, i32 8, i32 31)
  %56 = fadd contract float %54, %55
  %57 = tail call contract noundef float @llvm.nvvm.shfl.sync.down.f32(i32 -1, float %56, i32 4, i32 31)
  %58 = fadd contract float %56, %57
  %59 = tail call contract noundef float @llvm.nvvm.shfl.sync.down.f32(i32 -1, float %58, i32 2, i32 31)
  %60 = fadd contract float %58, %59
  %61 = tail call contract noundef float @llvm.nvvm.shfl.sync.down.f32(i32 -1, float %60, i32 1, i32 31)
  %62 = fadd contract float %60, %61
  br label %63

63:
  %64 = phi float [ %30, %29 ], [ %62, %46 ]
  %65 = icmp eq i32 %4, 0
  br i1 %65, label %66, label %69

66:
  %67 = zext nneg i32 %5 to i64
  %68 = getelementptr inbounds float, ptr %1, i64 %67
  store float %64, ptr %68, align 4
  br label %69

69:
  ret void
}
declare void @llvm.nvvm.barrier0()
declare noundef i32 @llvm.nvvm.read.ptx.sreg.tid.x()
declare noundef i32 @llvm.nvvm.read.ptx.sreg.ctaid.x()
declare noundef i32 @llvm.nvvm.read.ptx.sreg.ntid.x()
declare float @llvm.nvvm.shfl.sync.down.f32(i32, float, i32, i32)
!nvvm.annotations = !{!0}
!0 = !{ptr @_Z10reduce_sumPKfPfi, !"kernel", i32 1}
)IR";

// test/Inputs/grid_stride.cu
const char *GridStrideIR = R"IR(
target datalayout = "e-i64:64-i128:128-v16:16-v32:32-n16:32:64"
target triple = "nvptx64-nvidia-cuda"
define void @_Z5saxpyfPKfPfi(float noundef %0, ptr nocapture noundef readonly %1, ptr nocapture noundef %2, i32 noundef %3) {
  %5 = tail call noundef range(i32 0, 2147483647) i32 @llvm.nvvm.read.ptx.sreg.ctaid.x()
  %6 = tail call noundef range(i32 1, 1025) i32 @llvm.nvvm.read.ptx.sreg.ntid.x()
  %7 = mul i32 %5, %6
  %8 = tail call noundef range(i32 0, 1024) i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %9 = add i32 %7, %8
  %10 = icmp slt i32 %9, %3
  br i1 %10, label %11, label %14

11:
  %12 = tail call noundef range(i32 1, -2147483648) i32 @llvm.nvvm.read.ptx.sreg.nctaid.x()
  %13 = mul i32 %6, %12
  br label %15

14:
  ret void

15:
  %16 = phi i32 [ %9, %11 ], [ %24, %15 ]
  %17 = sext i32 %16 to i64
  %18 = getelementptr inbounds float, ptr %1, i64 %17
  %19 = load float, ptr %18, align 4
  %20 = fmul contract float %19, %0
  %21 = getelementptr inbounds float, ptr %2, i64 %17
  %22 = load float, ptr %21, align 4
  %23 = fadd contract float %20, %22
  store float %23, ptr %21, align 4
  %24 = add i32 %16, %13
  %25 = icmp slt i32 %24, %3
  br i1 %25, label %15, label %14
}
declare noundef i32 @llvm.nvvm.read.ptx.sreg.ctaid.x()
declare noundef i32 @llvm.nvvm.read.ptx.sreg.ntid.x()
declare noundef i32 @llvm.nvvm.read.ptx.sreg.tid.x()
declare noundef i32 @llvm.nvvm.read.ptx.sreg.nctaid.x()
!nvvm.annotations = !{!0}
!0 = !{ptr @_Z5saxpyfPKfPfi, !"kernel", i32 1}
)IR";

// test/Inputs/stencil3d.cu
const char *Stencil3dIR = R"IR(
target datalayout = "e-i64:64-i128:128-v16:16-v32:32-n16:32:64"
target triple = "nvptx64-nvidia-cuda"
define void @_Z9stencil3dPKfPfiii(ptr nocapture noundef readonly %0, ptr nocapture noundef writeonly %1, i32 noundef %2, i32 noundef %3, i32 noundef %4) {
  %6 = tail call noundef range(i32 0, 2147483647) i32 @llvm.nvvm.read.ptx.sreg.ctaid.x()
  %7 = tail call noundef range(i32 1, 1025) i32 @llvm.nvvm.read.ptx.sreg.ntid.x()
  %8 = mul i32 %6, %7
  %9 = tail call noundef range(i32 0, 1024) i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %10 = add i32 %8, %9
  %11 = tail call noundef range(i32 0, 65535) i32 @llvm.nvvm.read.ptx.sreg.ctaid.y()
  %12 = tail call noundef range(i32 1, 1025) i32 @llvm.nvvm.read.ptx.sreg.ntid.y()
  %13 = mul nuw nsw i32 %11, %12
  %14 = tail call noundef range(i32 0, 1024) i32 @llvm.nvvm.read.ptx.sreg.tid.y()
  %15 = add nuw nsw i32 %13, %14
  %16 = tail call noundef range(i32 0, 65535) i32 @llvm.nvvm.read.ptx.sreg.ctaid.z()
  %17 = tail call noundef range(i32 1, 65) i32 @llvm.nvvm.read.ptx.sreg.ntid.z()
  %18 = mul nuw nsw i32 %16, %17
  %19 = tail call noundef range(i32 0, 64) i32 @llvm.nvvm.read.ptx.sreg.tid.z()
  %20 = add nuw nsw i32 %18, %19
  %21 = icmp sgt i32 %10, 0
  %22 = icmp ne i32 %15, 0
  %23 = and i1 %21, %22
  %24 = icmp ne i32 %20, 0
  %25 = and i1 %24, %23
  %26 = add nsw i32 %2, -1
  %27 = icmp slt i32 %10, %26
  %28 = select i1 %25, i1 %27, i1 false
  %29 = add nsw i32 %3, -1
  %30 = icmp slt i32 %15, %29
  %31 = select i1 %28, i1 %30, i1 false
  %32 = add nsw i32 %4, -1
  %33 = icmp slt i32 %20, %32
  %34 = select i1 %31, i1 %33, i1 false
  br i1 %34, label %35, label %71

35:
  %36 = zext nneg i32 %20 to i64
  %37 = sext i32 %3 to i64
  %38 = mul nsw i64 %37, %36
  %39 = zext nneg i32 %15 to i64
  %40 = add nsw i64 %38, %39
  %41 = sext i32 %2 to i64
  %42 = mul nsw i64 %40, %41
  %43 = zext nneg i32 %10 to i64
  %44 = add nsw i64 %42, %43
  %45 = mul nsw i64 %37, %41
  %46 = getelementptr inbounds float, ptr %0, i64 %44
  %47 = load float, ptr %46, align 4
  %48 = fmul contract float %47, 0x3FD99999A0000000
  %49 = getelementptr i8, ptr %46, i64 -4
  %50 = load float, ptr %49, align 4
  %51 = getelementptr i8, ptr %46, i64 4
  %52 = load float, ptr %51, align 4
  %53 = fadd contract float %50, %52
  %54 = sub nsw i64 %44, %41
  %55 = getelementptr inbounds float, ptr %0, i64 %54
  %56 = load float, ptr %55, align 4
  %57 = fadd contract float %53, %56
  %58 = getelementptr float, ptr %46, i64 %41
  %59 = load float, ptr %58, align 4
  %60 = fadd contract float %57, %59
  %61 = sub nsw i64 %44, %45
  %62 = getelementptr inbounds float, ptr %0, i64 %61
  %63 = load float, ptr %62, align 4
  %64 = fadd contract float %60, %63
  %65 = getelementptr float, ptr %46, i64 %45
  %66 = load float, ptr %65, align 4
  %67 = fadd contract float %64, %66
  %68 = fmul contract float %67, 0x3FB99999A0000000
  %69 = fadd contract float %48, %68
  %70 = getelementptr inbounds float, ptr %1, i64 %44
  store float %69, ptr %70, align 4
  br label %71

71:
  ret void
}
declare noundef i32 @llvm.nvvm.read.ptx.sreg.ctaid.x()
declare noundef i32 @llvm.nvvm.read.ptx.sreg.ntid.x()
declare noundef i32 @llvm.nvvm.read.ptx.sreg.tid.x()
declare noundef i32 @llvm.nvvm.read.ptx.sreg.ctaid.y()
declare noundef i32 @llvm.nvvm.read.ptx.sreg.ntid.y()
declare noundef i32 @llvm.nvvm.read.ptx.sreg.tid.y()
declare noundef i32 @llvm.nvvm.read.ptx.sreg.ctaid.z()
declare noundef i32 @llvm.nvvm.read.ptx.sreg.ntid.z()
declare noundef i32 @llvm.nvvm.read.ptx.sreg.tid.z()
!nvvm.annotations = !{!0}
!0 = !{ptr @_Z9stencil3dPKfPfiii, !"kernel", i32 1}
)IR";

// test/Inputs/blackscholes.cu
const char *BlackscholesIR = R"IR(
target datalayout = "e-i64:64-i128:128-v16:16-v32:32-n16:32:64"
target triple = "nvptx64-nvidia-cuda"
define void @_Z12blackscholesPfS_PKfS1_S1_ffi(ptr nocapture noundef writeonly %0, ptr nocapture noundef writeonly %1, ptr nocapture noundef readonly %2, ptr nocapture noundef readonly %3, ptr nocapture noundef readonly %4, float noundef %5, float noundef %6, i32 noundef %7) {
  %9 = tail call noundef range(i32 0, 2147483647) i32 @llvm.nvvm.read.ptx.sreg.ctaid.x()
  %10 = tail call noundef range(i32 1, 1025) i32 @llvm.nvvm.read.ptx.sreg.ntid.x()
  %11 = mul i32 %9, %10
  %12 = tail call noundef range(i32 0, 1024) i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %13 = add i32 %11, %12
  %14 = icmp slt i32 %13, %7
  br i1 %14, label %15, label %150

15:
  %16 = sext i32 %13 to i64
  %17 = getelementptr inbounds float, ptr %2, i64 %16
  %18 = load float, ptr %17, align 4
  %19 = getelementptr inbounds float, ptr %3, i64 %16
  %20 = load float, ptr %19, align 4
  %21 = getelementptr inbounds float, ptr %4, i64 %16
  %22 = load float, ptr %21, align 4
  %23 = tail call noundef float @llvm.nvvm.sqrt.approx.f(float %22)
  %24 = fdiv contract float %18, %20
  %25 = fcmp olt float %24, 0x3810000000000000
  %26 = fmul float %24, 0x4160000000000000
  %27 = select i1 %25, float %26, float %24
  %28 = select i1 %25, float -2.300000e+01, float 0.000000e+00
  %29 = bitcast float %27 to i32
  %30 = add i32 %29, -1059760811
  %31 = and i32 %30, -8388608
  %32 = sub i32 %29, %31
  %33 = bitcast i32 %32 to float
  %34 = sitofp i32 %31 to float
  %35 = tail call float @llvm.fma.f32(float %34, float 0x3E80000000000000, float %28)
  %36 = fadd float %33, -1.000000e+00
  %37 = tail call float @llvm.fma.f32(float %36, float 0xBFC0AA04E0000000, float 0x3FC2073EC0000000)
  %38 = tail call float @llvm.fma.f32(float %37, float %36, float 0xBFBF19B980000000)
  %39 = tail call float @llvm.fma.f32(float %38, float %36, float 0x3FC1E52AA0000000)
  %40 = tail call float @llvm.fma.f32(float %39, float %36, float 0xBFC55B1720000000)
  %41 = tail call float @llvm.fma.f32(float %40, float %36, float 0x3FC99DA160000000)
  %42 = tail call float @llvm.fma.f32(float %41, float %36, float 0xBFCFFFE440000000)
  %43 = tail call float @llvm.fma.f32(float %42, float %36, float 0x3FD5554F00000000)
  %44 = tail call float @llvm.fma.f32(float %43, float %36, float -5.000000e-01)
  %45 = fmul float %36, %44
  %46 = tail call float @llvm.fma.f32(float %45, float %36, float %36)
  %47 = tail call float @llvm.fma.f32(float %35, float 0x3FE62E4300000000, float %46)
  %48 = icmp ugt i32 %29, 2139095039
  %49 = tail call float @llvm.fma.f32(float %27, float 0x7FF0000000000000, float 0x7FF0000000000000)
  %50 = select i1 %48, float %49, float %47
  %51 = fcmp oeq float %27, 0.000000e+00
  %52 = select i1 %51, float 0xFFF0000000000000, float %50
  %53 = fmul contract float %6, 5.000000e-01
  %54 = fmul contract float %53, %6
  %55 = fadd contract float %54, %5
  %56 = fmul contract float %55, %22
  %57 = fadd contract float %56, %52
  %58 = fmul contract float %23, %6
  %59 = fdiv contract float %57, %58
  %60 = fsub contract float %59, %58
  %61 = fneg contract float %5
  %62 = fmul contract float %22, %61
  %63 = tail call float @llvm.fma.f32(float %62, float 0x3F777313A0000000, float 5.000000e-01)
  %64 = tail call float @llvm.nvvm.saturate.f(float %63)
  %65 = tail call float @llvm.nvvm.fma.rm.f(float %64, float 2.520000e+02, float 0x4168000020000000)
  %66 = fadd float %65, 0xC168000FE0000000
  %67 = fneg float %66
  %68 = tail call float @llvm.fma.f32(float %62, float 0x3FF7154760000000, float %67)
  %69 = tail call float @llvm.fma.f32(float %62, float 0x3E54AE0C00000000, float %68)
  %70 = bitcast float %65 to i32
  %71 = shl i32 %70, 23
  %72 = bitcast i32 %71 to float
  %73 = tail call float @llvm.nvvm.ex2.approx.ftz.f(float %69)
  %74 = fmul float %73, %72
  %75 = tail call noundef float @llvm.nvvm.fabs.f(float %59)
  %76 = fmul contract float %75, 0x3FCDA67120000000
  %77 = fadd contract float %76, 1.000000e+00
  %78 = fdiv contract float 1.000000e+00, %77
  %79 = fmul contract float %59, -5.000000e-01
  %80 = fmul contract float %59, %79
  %81 = tail call float @llvm.fma.f32(float %80, float 0x3F777313A0000000, float 5.000000e-01)
  %82 = tail call float @llvm.nvvm.saturate.f(float %81)
  %83 = tail call float @llvm.nvvm.fma.rm.f(float %82, float 2.520000e+02, float 0x4168000020000000)
  %84 = fadd float %83, 0xC168000FE0000000
  %85 = fneg float %84
  %86 = tail call float @llvm.fma.f32(float %80, float 0x3FF7154760000000, float %85)
  %87 = tail call float @llvm.fma.f32(float %80, float 0x3E54AE0C00000000, float %86)
  %88 = bitcast float %83 to i32
  %89 = shl i32 %88, 23
  %90 = bitcast i32 %89 to float
  %91 = tail call float @llvm.nvvm.ex2.approx.ftz.f(float %87)
  %92 = fmul float %91, %90
  %93 = fmul contract float %92, 0x3FD9884540000000
  %94 = fmul contract float %78, 0x3FF548CDE0000000
  %95 = fadd contract float %94, 0xBFFD23DD40000000
  %96 = fmul contract float %78, %95
  %97 = fadd contract float %96, 0x3FFC80EF00000000
  %98 = fmul contract float %78, %97
  %99 = fadd contract float %98, 0xBFD6D1F0E0000000
  %100 = fmul contract float %78, %99
  %101 = fadd contract float %100, 0x3FD470BF40000000
  %102 = fmul contract float %78, %101
  %103 = fmul contract float %93, %102
  %104 = fcmp contract ogt float %59, 0.000000e+00
  %105 = fsub contract float 1.000000e+00, %103
  %106 = select contract i1 %104, float %105, float %103
  %107 = fmul contract float %18, %106
  %108 = fmul contract float %20, %74
  %109 = tail call noundef float @llvm.nvvm.fabs.f(float %60)
  %110 = fmul contract float %109, 0x3FCDA67120000000
  %111 = fadd contract float %110, 1.000000e+00
  %112 = fdiv contract float 1.000000e+00, %111
  %113 = fmul contract float %60, -5.000000e-01
  %114 = fmul contract float %60, %113
  %115 = tail call float @llvm.fma.f32(float %114, float 0x3F777313A0000000, float 5.000000e-01)
  %116 = tail call float @llvm.nvvm.saturate.f(float %115)
  %117 = tail call float @llvm.nvvm.fma.rm.f(float %116, float 2.520000e+02, float 0x4168000020000000)
  %118 = fadd float %117, 0xC168000FE0000000
  %119 = fneg float %118
  %120 = tail call float @llvm.fma.f32(float %114, float 0x3FF7154760000000, float %119)
  %121 = tail call float @llvm.fma.f32(float %114, float 0x3E54AE0C00000000, float %120)
  %122 = bitcast float %117 to i32
  %123 = shl i32 %122, 23
  %124 = bitcast i32 %123 to float
  %125 = tail call float @llvm.nvvm.ex2.approx.ftz.f(float %121)
  %126 = fmul float %125, %124
  %127 = fmul contract float %126, 0x3FD9884540000000
  %128 = fmul contract float %112, 0x3FF548CDE0000000
  %129 = fadd contract float %128, 0xBFFD23DD40000000
  %130 = fmul contract float %112, %129
  %131 = fadd contract float %130, 0x3FFC80EF00000000
  %132 = fmul contract float %112, %131
  %133 = fadd contract float %132, 0xBFD6D1F0E0000000
  %134 = fmul contract float %112, %133
  %135 = fadd contract float %134, 0x3FD470BF40000000
  %136 = fmul contract float %112, %135
  %137 = fmul contract float %127, %136
  %138 = fcmp contract ogt float %60, 0.000000e+00
  %139 = fsub contract float 1.000000e+00, %137
  %140 = select contract i1 %138, float %139, float %137
  %141 = fmul contract float %108, %140
  %142 = fsub contract float %107, %141
  %143 = getelementptr inbounds float, ptr %0, i64 %16
  store float %142, ptr %143, align 4
  %144 = fsub contract float 1.000000e+00, %140
  %145 = fmul contract float %108, %144
  %146 = fsub contract float 1.000000e+00, %106
  %147 = fmul contract float %18, %146
  %148 = fsub contract float %145, %147
  %149 = getelementptr inbounds float, ptr %1, i64 %16
  store float %148, ptr %149, align 4
  br label %150

150:
  ret void
}
declare noundef i32 @llvm.nvvm.read.ptx.sreg.ctaid.x()
declare noundef i32 @llvm.nvvm.read.ptx.sreg.ntid.x()
declare noundef i32 @llvm.nvvm.read.ptx.sreg.tid.x()
declare float @llvm.nvvm.fabs.f(float)
declare float @llvm.nvvm.sqrt.approx.f(float)
declare float @llvm.nvvm.saturate.f(float)
declare float @llvm.nvvm.fma.rm.f(float, float, float)
declare float @llvm.nvvm.ex2.approx.ftz.f(float)
declare float @llvm.fma.f32(float, float, float)
!nvvm.annotations = !{!0}
!0 = !{ptr @_Z12blackscholesPfS_PKfS1_S1_ffi, !"kernel", i32 1}
)IR";

// test/Inputs/histogram.cu
const char *HistogramIR = R"IR(
target datalayout = "e-i64:64-i128:128-v16:16-v32:32-n16:32:64"
target triple = "nvptx64-nvidia-cuda"
define void @_Z9histogramPKhPji(ptr nocapture noundef readonly %0, ptr nocapture noundef %1, i32 noundef %2) {
  %4 = tail call noundef range(i32 0, 2147483647) i32 @llvm.nvvm.read.ptx.sreg.ctaid.x()
  %5 = tail call noundef range(i32 1, 1025) i32 @llvm.nvvm.read.ptx.sreg.ntid.x()
  %6 = mul i32 %4, %5
  %7 = tail call noundef range(i32 0, 1024) i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %8 = add i32 %6, %7
  %9 = tail call noundef range(i32 1, -2147483648) i32 @llvm.nvvm.read.ptx.sreg.nctaid.x()
  %10 = mul i32 %5, %9
  %11 = icmp slt i32 %8, %2
  br i1 %11, label %12, label %22

12:
  %13 = phi i32 [ %20, %12 ], [ %8, %3 ]
  %14 = sext i32 %13 to i64
  %15 = getelementptr inbounds i8, ptr %0, i64 %14
  %16 = load i8, ptr %15, align 1
  %17 = zext i8 %16 to i64
  %18 = getelementptr inbounds i32, ptr %1, i64 %17
  %19 = atomicrmw add ptr %18, i32 1 seq_cst, align 4
  %20 = add nsw i32 %13, %10
  %21 = icmp slt i32 %20, %2
  br i1 %21, label %12, label %22

22:
  ret void
}
declare noundef i32 @llvm.nvvm.read.ptx.sreg.ctaid.x()
declare noundef i32 @llvm.nvvm.read.ptx.sreg.ntid.x()
declare noundef i32 @llvm.nvvm.read.ptx.sreg.tid.x()
declare noundef i32 @llvm.nvvm.read.ptx.sreg.nctaid.x()
!nvvm.annotations = !{!0}
!0 = !{ptr @_Z9histogramPKhPji, !"kernel", i32 1}
)IR";

// test/Inputs/pointer_chase.cu
const char *PointerChaseIR = R"IR(
target datalayout = "e-i64:64-i128:128-v16:16-v32:32-n16:32:64"
target triple = "nvptx64-nvidia-cuda"
define void @_Z11gather_rowsPKPfS_i(ptr nocapture noundef readonly %0, ptr nocapture noundef writeonly %1, i32 noundef %2) {
  %4 = tail call noundef range(i32 0, 2147483647) i32 @llvm.nvvm.read.ptx.sreg.ctaid.x()
  %5 = zext nneg i32 %4 to i64
  %6 = getelementptr inbounds ptr, ptr %0, i64 %5
  %7 = load ptr, ptr %6, align 8
  %8 = tail call noundef range(i32 0, 1024) i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %9 = zext nneg i32 %8 to i64
  %10 = getelementptr inbounds float, ptr %7, i64 %9
  %11 = load float, ptr %10, align 4
  %12 = mul i32 %4, %2
  %13 = add i32 %12, %8
  %14 = zext i32 %13 to i64
  %15 = getelementptr inbounds float, ptr %1, i64 %14
  store float %11, ptr %15, align 4
  ret void
}
declare noundef i32 @llvm.nvvm.read.ptx.sreg.ctaid.x()
declare noundef i32 @llvm.nvvm.read.ptx.sreg.tid.x()
!nvvm.annotations = !{!0}
!0 = !{ptr @_Z11gather_rowsPKPfS_i, !"kernel", i32 1}
)IR";

// if (i < n && flag[i] > 0) out[i] = 1.0f; (CUDA, -O2)
const char *CondStoreIR = R"IR(
target datalayout = "e-i64:64-i128:128-v16:16-v32:32-n16:32:64"
target triple = "nvptx64-nvidia-cuda"
define void @_Z10cond_storePKiPfi(ptr nocapture noundef readonly %0, ptr nocapture noundef writeonly %1, i32 noundef %2) {
  %4 = tail call noundef range(i32 0, 2147483647) i32 @llvm.nvvm.read.ptx.sreg.ctaid.x()
  %5 = tail call noundef range(i32 1, 1025) i32 @llvm.nvvm.read.ptx.sreg.ntid.x()
  %6 = mul i32 %4, %5
  %7 = tail call noundef range(i32 0, 1024) i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %8 = add i32 %6, %7
  %9 = icmp slt i32 %8, %2
  br i1 %9, label %10, label %17

10:
  %11 = sext i32 %8 to i64
  %12 = getelementptr inbounds i32, ptr %0, i64 %11
  %13 = load i32, ptr %12, align 4
  %14 = icmp sgt i32 %13, 0
  br i1 %14, label %15, label %17

15:
  %16 = getelementptr inbounds float, ptr %1, i64 %11
  store float 1.000000e+00, ptr %16, align 4
  br label %17

17:
  ret void
}
declare noundef i32 @llvm.nvvm.read.ptx.sreg.ctaid.x()
declare noundef i32 @llvm.nvvm.read.ptx.sreg.ntid.x()
declare noundef i32 @llvm.nvvm.read.ptx.sreg.tid.x()
!nvvm.annotations = !{!0}
!0 = !{ptr @_Z10cond_storePKiPfi, !"kernel", i32 1}
)IR";

// hand-written
const char *GatherIR = R"IR(
target datalayout = "e-i64:64-i128:128-v16:16-v32:32-n16:32:64"
target triple = "nvptx64-nvidia-cuda"
; out[i] = in[idx[i]]: the index of 'in' is loaded from memory.
define void @gather(ptr %out, ptr %in, ptr %idx, i32 %n) {
entry:
  %ctaid = call i32 @llvm.nvvm.read.ptx.sreg.ctaid.x()
  %ntid = call i32 @llvm.nvvm.read.ptx.sreg.ntid.x()
  %tid = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %base = mul i32 %ctaid, %ntid
  %i = add i32 %base, %tid
  %inb = icmp slt i32 %i, %n
  br i1 %inb, label %body, label %exit
body:
  %i64 = sext i32 %i to i64
  %pidx = getelementptr inbounds i32, ptr %idx, i64 %i64
  %j = load i32, ptr %pidx, align 4
  %j64 = sext i32 %j to i64
  %pin = getelementptr inbounds float, ptr %in, i64 %j64
  %v = load float, ptr %pin, align 4
  %pout = getelementptr inbounds float, ptr %out, i64 %i64
  store float %v, ptr %pout, align 4
  br label %exit
exit:
  ret void
}
declare i32 @llvm.nvvm.read.ptx.sreg.ctaid.x()
declare i32 @llvm.nvvm.read.ptx.sreg.ntid.x()
declare i32 @llvm.nvvm.read.ptx.sreg.tid.x()
!nvvm.annotations = !{!0}
!0 = !{ptr @gather, !"kernel", i32 1}
)IR";

// hand-written
const char *Wrap8IR = R"IR(
target datalayout = "e-i64:64-i128:128-v16:16-v32:32-n16:32:64"
target triple = "nvptx64-nvidia-cuda"
; p[(signed char)(i + 100)]: the i8 index wraps once i + 100 > 127.
define void @wrap8(ptr %p) {
entry:
  %ctaid = call i32 @llvm.nvvm.read.ptx.sreg.ctaid.x()
  %ntid = call i32 @llvm.nvvm.read.ptx.sreg.ntid.x()
  %tid = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %base = mul i32 %ctaid, %ntid
  %i = add i32 %base, %tid
  %b = trunc i32 %i to i8
  %x = add i8 %b, 100
  %s = sext i8 %x to i64
  %q = getelementptr inbounds i8, ptr %p, i64 %s
  store i8 0, ptr %q, align 1
  ret void
}
declare i32 @llvm.nvvm.read.ptx.sreg.ctaid.x()
declare i32 @llvm.nvvm.read.ptx.sreg.ntid.x()
declare i32 @llvm.nvvm.read.ptx.sreg.tid.x()
!nvvm.annotations = !{!0}
!0 = !{ptr @wrap8, !"kernel", i32 1}
)IR";

// hand-written
const char *Copy16IR = R"IR(
target datalayout = "e-i64:64-i128:128-v16:16-v32:32-n16:32:64"
target triple = "nvptx64-nvidia-cuda"
; Each thread copies a 16-byte record and clears %len bytes of a scratch row.
define void @copy16(ptr %dst, ptr %src, ptr %scratch, i32 %len) {
entry:
  %ctaid = call i32 @llvm.nvvm.read.ptx.sreg.ctaid.x()
  %ntid = call i32 @llvm.nvvm.read.ptx.sreg.ntid.x()
  %tid = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %base = mul nuw nsw i32 %ctaid, %ntid
  %i = add nuw nsw i32 %base, %tid
  %i64 = zext i32 %i to i64
  %off = shl nuw nsw i64 %i64, 4
  %d = getelementptr inbounds i8, ptr %dst, i64 %off
  %s = getelementptr inbounds i8, ptr %src, i64 %off
  call void @llvm.memcpy.p0.p0.i64(ptr %d, ptr %s, i64 16, i1 false)
  %len64 = sext i32 %len to i64
  %row = mul nsw i64 %i64, 64
  %r = getelementptr inbounds i8, ptr %scratch, i64 %row
  call void @llvm.memset.p0.i64(ptr %r, i8 0, i64 %len64, i1 false)
  ret void
}
declare void @llvm.memcpy.p0.p0.i64(ptr, ptr, i64, i1)
declare void @llvm.memset.p0.i64(ptr, i8, i64, i1)
declare i32 @llvm.nvvm.read.ptx.sreg.ctaid.x()
declare i32 @llvm.nvvm.read.ptx.sreg.ntid.x()
declare i32 @llvm.nvvm.read.ptx.sreg.tid.x()
!nvvm.annotations = !{!0}
!0 = !{ptr @copy16, !"kernel", i32 1}
)IR";

// hand-written
const char *DiamondIR = R"IR(
target datalayout = "e-i64:64-i128:128-v16:16-v32:32-n16:32:64"
target triple = "nvptx64-nvidia-cuda"
; Two phis of one block feed one address: p[a + b] with (a, b) = (tid, 1)
; when tid < n, else (0, ctaid*ntid).
define void @diamond(ptr %p, i32 %n) {
entry:
  %ctaid = call i32 @llvm.nvvm.read.ptx.sreg.ctaid.x()
  %ntid = call i32 @llvm.nvvm.read.ptx.sreg.ntid.x()
  %tid = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %base = mul nuw nsw i32 %ctaid, %ntid
  %c = icmp slt i32 %tid, %n
  br i1 %c, label %left, label %right
left:
  br label %join
right:
  br label %join
join:
  %a = phi i32 [ %tid, %left ], [ 0, %right ]
  %b = phi i32 [ 1, %left ], [ %base, %right ]
  %s = add nuw nsw i32 %a, %b
  %s64 = zext i32 %s to i64
  %q = getelementptr inbounds float, ptr %p, i64 %s64
  store float 0.0, ptr %q, align 4
  ret void
}
declare i32 @llvm.nvvm.read.ptx.sreg.ctaid.x()
declare i32 @llvm.nvvm.read.ptx.sreg.ntid.x()
declare i32 @llvm.nvvm.read.ptx.sreg.tid.x()
!nvvm.annotations = !{!0}
!0 = !{ptr @diamond, !"kernel", i32 1}
)IR";

// hand-written
const char *SkipIR = R"IR(
target datalayout = "e-i64:64-i128:128-v16:16-v32:32-n16:32:64"
target triple = "nvptx64-nvidia-cuda"
; for (i = 0; i != n; ++i) { if (i >= tid) continue; p[tid] = 0; }
; The continue branches straight back to the header (a second latch), so a
; thread with tid == 0 never stores.
define void @skip(ptr %p, i32 %n) {
entry:
  %tid = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  br label %header
header:
  %i = phi i32 [ 0, %entry ], [ %i1, %next ], [ %i1, %body ]
  %done = icmp eq i32 %i, %n
  br i1 %done, label %exit, label %next
next:
  %i1 = add nuw nsw i32 %i, 1
  %c = icmp slt i32 %i, %tid
  br i1 %c, label %body, label %header
body:
  %t64 = zext i32 %tid to i64
  %q = getelementptr inbounds float, ptr %p, i64 %t64
  store float 0.0, ptr %q, align 4
  br label %header
exit:
  ret void
}
declare i32 @llvm.nvvm.read.ptx.sreg.tid.x()
!nvvm.annotations = !{!0}
!0 = !{ptr @skip, !"kernel", i32 1}
)IR";

// A loop with a per-thread trip count (CUDA, -O2):
//   for (k = 0; k < threadIdx.x; ++k) s += in[k * m + blockIdx.x];
//   for (j = 0; j < 3; ++j) out[3 * i + j] = s;
const char *TriIR = R"IR(
target datalayout = "e-i64:64-i128:128-v16:16-v32:32-n16:32:64"
target triple = "nvptx64-nvidia-cuda"
define void @_Z3triPfPKfi(ptr nocapture noundef writeonly %0, ptr nocapture noundef readonly %1, i32 noundef %2) {
  %4 = tail call noundef range(i32 0, 1024) i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %5 = icmp eq i32 %4, 0
  %6 = tail call noundef range(i32 0, 2147483647) i32 @llvm.nvvm.read.ptx.sreg.ctaid.x()
  br i1 %5, label %30, label %7

7:
  %8 = and i32 %4, 3
  %9 = icmp ult i32 %4, 4
  br i1 %9, label %12, label %10

10:
  %11 = and i32 %4, 1020
  br label %44

12:
  %13 = phi float [ poison, %7 ], [ %74, %44 ]
  %14 = phi float [ 0.000000e+00, %7 ], [ %74, %44 ]
  %15 = phi i32 [ 0, %7 ], [ %75, %44 ]
  %16 = icmp eq i32 %8, 0
  br i1 %16, label %30, label %17

17:
  %18 = phi float [ %26, %17 ], [ %14, %12 ]
  %19 = phi i32 [ %27, %17 ], [ %15, %12 ]
  %20 = phi i32 [ %28, %17 ], [ 0, %12 ]
  %21 = mul nsw i32 %19, %2
  %22 = add i32 %21, %6
  %23 = zext i32 %22 to i64
  %24 = getelementptr inbounds float, ptr %1, i64 %23
  %25 = load float, ptr %24, align 4
  %26 = fadd contract float %18, %25
  %27 = add nuw nsw i32 %19, 1
  %28 = add i32 %20, 1
  %29 = icmp eq i32 %28, %8
  br i1 %29, label %30, label %17

30:
  %31 = phi float [ 0.000000e+00, %3 ], [ %13, %12 ], [ %26, %17 ]
  %32 = tail call noundef range(i32 1, 1025) i32 @llvm.nvvm.read.ptx.sreg.ntid.x()
  %33 = mul i32 %6, %32
  %34 = add i32 %33, %4
  %35 = mul nsw i32 %34, 3
  %36 = sext i32 %35 to i64
  %37 = getelementptr inbounds float, ptr %0, i64 %36
  store float %31, ptr %37, align 4
  %38 = sext i32 %35 to i64
  %39 = getelementptr float, ptr %0, i64 %38
  %40 = getelementptr i8, ptr %39, i64 4
  store float %31, ptr %40, align 4
  %41 = sext i32 %35 to i64
  %42 = getelementptr float, ptr %0, i64 %41
  %43 = getelementptr i8, ptr %42, i64 8
  store float %31, ptr %43, align 4
  ret void

44:
  %45 = phi float [ 0.000000e+00, %10 ], [ %74, %44 ]
  %46 = phi i32 [ 0, %10 ], [ %75, %44 ]
  %47 = phi i32 [ 0, %10 ], [ %76, %44 ]
  %48 = mul nsw i32 %46, %2
  %49 = add i32 %48, %6
  %50 = zext i32 %49 to i64
  %51 = getelementptr inbounds float, ptr %1, i64 %50
  %52 = load float, ptr %51, align 4
  %53 = fadd contract float %45, %52
  %54 = or disjoint i32 %46, 1
  %55 = mul nsw i32 %54, %2
  %56 = add i32 %55, %6
  %57 = zext i32 %56 to i64
  %58 = getelementptr inbounds float, ptr %1, i64 %57
  %59 = load float, ptr %58, align 4
  %60 = fadd contract float %53, %59
  %61 = or disjoint i32 %46, 2
  %62 = mul nsw i32 %61, %2
  %63 = add i32 %62, %6
  %64 = zext i32 %63 to i64
  %65 = getelementptr inbounds float, ptr %1, i64 %64
  %66 = load float, ptr %65, align 4
  %67 = fadd contract float %60, %66
  %68 = or disjoint i32 %46, 3
  %69 = mul nsw i32 %68, %2
  %70 = add i32 %69, %6
  %71 = zext i32 %70 to i64
  %72 = getelementptr inbounds float, ptr %1, i64 %71
  %73 = load float, ptr %72, align 4
  %74 = fadd contract float %67, %73
  %75 = add nuw nsw i32 %46, 4
  %76 = add i32 %47, 4
  %77 = icmp eq i32 %76, %11
  br i1 %77, label %12, label %44
}
declare noundef i32 @llvm.nvvm.read.ptx.sreg.tid.x()
declare noundef i32 @llvm.nvvm.read.ptx.sreg.ctaid.x()
declare noundef i32 @llvm.nvvm.read.ptx.sreg.ntid.x()
!nvvm.annotations = !{!0}
!0 = !{ptr @_Z3triPfPKfi, !"kernel", i32 1}
)IR";

//===----------------------------------------------------------------------===//
// Harness
//===----------------------------------------------------------------------===//

struct Analyzed {
  LLVMContext Ctx;
  std::unique_ptr<Module> M;
  std::vector<FootprintClass> Read, Write;
  std::string Text;
  std::string Printed;
};

/// Parses IR, runs the analysis on its kernel and serializes the result.
std::unique_ptr<Analyzed> analyze(const char *IR) {
  auto A = std::make_unique<Analyzed>();
  SMDiagnostic Err;
  A->M = parseAssemblyString(IR, Err, A->Ctx);
  if (!A->M) {
    ADD_FAILURE() << "IR does not parse: " << Err.getMessage().str();
    return nullptr;
  }
  auto Kernels = cleave::getKernels(*A->M);
  if (Kernels.size() != 1) {
    ADD_FAILURE() << "expected one kernel";
    return nullptr;
  }
  Function &F = *Kernels[0];
  PassBuilder PB;
  FunctionAnalysisManager FAM;
  PB.registerFunctionAnalyses(FAM);
  FAM.registerPass([] { return FootprintAnalysis(); });
  auto &FP = FAM.getResult<FootprintAnalysis>(F);
  for (unsigned I = 0; I < F.arg_size(); ++I) {
    A->Read.push_back(FP.readClass(I));
    A->Write.push_back(FP.writeClass(I));
  }
  A->Text = FP.serialize();
  raw_string_ostream OS(A->Printed);
  FP.print(OS, F);
  return A;
}

/// Bytes touched, per argument and direction, as half-open intervals.
struct Touched {
  std::map<unsigned, std::vector<rt::ByteInterval>> R, W;
  void read(unsigned Arg, int64_t Off, int64_t Bytes) {
    R[Arg].push_back({Off, Off + Bytes});
  }
  void write(unsigned Arg, int64_t Off, int64_t Bytes) {
    W[Arg].push_back({Off, Off + Bytes});
  }
};

struct Thread {
  int64_t Bx, By, Bz, Tx, Ty, Tz;
};

/// Calls Fn for every thread of the blocks [First, First+Count).
template <typename Fn> void forEachThread(const rt::LaunchConfig &L, Fn F) {
  for (int64_t B = L.First; B < L.First + L.Count; ++B) {
    int64_t Bx = B % L.Grid[0], By = (B / L.Grid[0]) % L.Grid[1],
            Bz = B / (L.Grid[0] * L.Grid[1]);
    for (int64_t Tz = 0; Tz < L.Block[2]; ++Tz)
      for (int64_t Ty = 0; Ty < L.Block[1]; ++Ty)
        for (int64_t Tx = 0; Tx < L.Block[0]; ++Tx)
          F(Thread{Bx, By, Bz, Tx, Ty, Tz});
  }
}

std::vector<rt::ByteInterval> normalized(std::vector<rt::ByteInterval> V) {
  std::sort(V.begin(), V.end(),
            [](const auto &A, const auto &B) { return A.Lo < B.Lo; });
  std::vector<rt::ByteInterval> Out;
  for (const auto &I : V) {
    if (!Out.empty() && I.Lo <= Out.back().Hi)
      Out.back().Hi = std::max(Out.back().Hi, I.Hi);
    else
      Out.push_back(I);
  }
  return Out;
}

/// Every interval of Small lies inside one of Big (both normalized).
bool covers(const std::vector<rt::ByteInterval> &Big,
            const std::vector<rt::ByteInterval> &Small) {
  size_t J = 0;
  for (const auto &I : Small) {
    while (J < Big.size() && Big[J].Hi < I.Hi)
      ++J;
    if (J == Big.size() || Big[J].Lo > I.Lo)
      return false;
  }
  return true;
}

std::string str(const std::vector<rt::ByteInterval> &V) {
  std::ostringstream OS;
  size_t N = 0;
  for (const auto &I : V) {
    if (++N > 12) {
      OS << " ... (" << V.size() << " intervals)";
      break;
    }
    OS << " [" << I.Lo << ", " << I.Hi << ")";
  }
  return OS.str();
}

std::string str(const rt::LaunchConfig &L) {
  std::ostringstream OS;
  OS << "grid (" << L.Grid[0] << "," << L.Grid[1] << "," << L.Grid[2]
     << ") block (" << L.Block[0] << "," << L.Block[1] << "," << L.Block[2]
     << ") blocks [" << L.First << ", +" << L.Count << ") args";
  for (int64_t A : L.Args)
    OS << ' ' << A;
  return OS.str();
}

using Model = std::function<void(const rt::LaunchConfig &, Touched &)>;
/// The class a launch must get for (argument, write?); nullopt accepts any
/// class (soundness is still checked).
using Expectation = std::function<std::optional<FootprintClass>(
    const rt::LaunchConfig &, unsigned, bool)>;

struct Dims {
  int64_t MaxGrid[3];
  int64_t MaxBlock[3];
};

int64_t pick(std::mt19937_64 &G, int64_t Lo, int64_t Hi) {
  return std::uniform_int_distribution<int64_t>(Lo, Hi)(G);
}

/// A random launch: dimensions, then a block range that often starts and
/// ends inside a row or a plane of the grid.
rt::LaunchConfig randomLaunch(std::mt19937_64 &G, const Dims &D) {
  rt::LaunchConfig L;
  for (unsigned I = 0; I < 3; ++I) {
    L.Grid[I] = pick(G, 1, D.MaxGrid[I]);
    L.Block[I] = pick(G, 1, D.MaxBlock[I]);
  }
  int64_t Total = L.Grid[0] * L.Grid[1] * L.Grid[2];
  switch (pick(G, 0, 3)) {
  case 0: // the whole grid
    L.First = 0;
    L.Count = Total;
    break;
  case 1: // a prefix
    L.First = 0;
    L.Count = pick(G, 0, Total);
    break;
  default:
    L.First = pick(G, 0, Total);
    L.Count = pick(G, 0, Total - L.First);
    break;
  }
  return L;
}

struct Stats {
  unsigned Launches = 0;
  std::map<std::string, unsigned> Classes;
};

/// Evaluates the analysed footprint for L and compares it with the model.
void checkLaunch(const rt::FootprintProgram &P, const rt::LaunchConfig &L,
                 const Model &M, const Expectation &Expect, Stats &S) {
  rt::FootprintResult R;
  rt::Status St = P.evaluate(L, R);
  ASSERT_TRUE(St.Ok) << St.Message << " for " << str(L);
  Touched T;
  M(L, T);
  ++S.Launches;
  for (unsigned Arg = 0; Arg < P.numArgs(); ++Arg) {
    if (!P.isPointerArg(Arg)) {
      EXPECT_EQ(R.find(Arg), nullptr);
      EXPECT_TRUE(T.R[Arg].empty() && T.W[Arg].empty())
          << "the model touches non-pointer argument " << Arg;
      continue;
    }
    const rt::ParamFootprint *PF = R.find(Arg);
    ASSERT_NE(PF, nullptr) << "no footprint for pointer argument " << Arg;
    for (bool Write : {false, true}) {
      FootprintClass Got = Write ? PF->WriteClass : PF->ReadClass;
      const char *Dir = Write ? "write" : "read";
      std::string What =
          std::string(Dir) + " of arg " + std::to_string(Arg) + ", " + str(L);
      if (std::optional<FootprintClass> Want = Expect(L, Arg, Write))
        EXPECT_STREQ(cleave::getFootprintClassName(Got),
                     cleave::getFootprintClassName(*Want))
            << What;
      ++S.Classes[std::string(Dir) + " " + std::to_string(Arg) + " " +
                  cleave::getFootprintClassName(Got)];
      if (Got == FootprintClass::Unknown)
        continue; // the whole buffer: nothing to compare
      std::vector<rt::ByteInterval> Have;
      ASSERT_TRUE(toIntervals(Write ? PF->Writes : PF->Reads, Have));
      auto Truth = normalized(Write ? T.W[Arg] : T.R[Arg]);
      if (Got == FootprintClass::Exact)
        EXPECT_EQ(str(Have), str(Truth)) << "exact " << What;
      else
        EXPECT_TRUE(covers(Have, Truth))
            << "bounded " << What << "\n  footprint" << str(Have)
            << "\n  touched  " << str(Truth);
      if (::testing::Test::HasFailure())
        return;
    }
  }
}

/// Runs NumLaunches random launches of one analysed kernel.
void fuzz(const Analyzed &A, const Dims &D,
          const std::function<std::vector<int64_t>(
              std::mt19937_64 &, const rt::LaunchConfig &)> &Args,
          const Model &M, const Expectation &Expect, unsigned Seed,
          unsigned NumLaunches = 300) {
  rt::FootprintProgram P;
  rt::Status St = rt::FootprintProgram::parse(A.Text, P);
  ASSERT_TRUE(St.Ok) << St.Message << "\n" << A.Text;
  std::mt19937_64 G(Seed);
  Stats S;
  for (unsigned I = 0; I < NumLaunches && !::testing::Test::HasFailure(); ++I) {
    rt::LaunchConfig L = randomLaunch(G, D);
    L.Args = Args(G, L);
    checkLaunch(P, L, M, Expect, S);
  }
  if (::testing::Test::HasFailure())
    std::cerr << A.Printed;
}

// The linear thread index of a 1-D launch, as CUDA computes it (int).
int64_t gid(const rt::LaunchConfig &L, const Thread &T) {
  return static_cast<int32_t>(T.Bx * L.Block[0] + T.Tx);
}

//===----------------------------------------------------------------------===//
// The suite kernels
//===----------------------------------------------------------------------===//

const Dims Grid1D = {{24, 3, 2}, {70, 2, 1}};
const Dims Grid2D = {{6, 6, 2}, {9, 9, 1}};
const Dims Grid3D = {{4, 4, 4}, {5, 4, 4}};

TEST(Footprint, VecAdd) {
  auto A = analyze(VecaddIR);
  ASSERT_TRUE(A);
  EXPECT_EQ(A->Read[0], FootprintClass::Exact);
  EXPECT_EQ(A->Read[1], FootprintClass::Exact);
  EXPECT_EQ(A->Write[2], FootprintClass::Exact);
  fuzz(
      *A, Grid1D,
      [](std::mt19937_64 &G, const rt::LaunchConfig &L) {
        return std::vector<int64_t>{0, 0, 0,
                                    pick(G, -3, L.Grid[0] * L.Block[0] + 5)};
      },
      [](const rt::LaunchConfig &L, Touched &T) {
        forEachThread(L, [&](const Thread &Th) {
          int64_t I = gid(L, Th);
          if (I < L.Args[3]) {
            T.read(0, 4 * I, 4);
            T.read(1, 4 * I, 4);
            T.write(2, 4 * I, 4);
          }
        });
      },
      [](const rt::LaunchConfig &, unsigned, bool) {
        return FootprintClass::Exact;
      },
      1);
}

TEST(Footprint, VecAddOpenCL) {
  auto A = analyze(VecaddCLIR);
  ASSERT_TRUE(A);
  fuzz(
      *A, Grid1D,
      [](std::mt19937_64 &G, const rt::LaunchConfig &L) {
        return std::vector<int64_t>{0, 0, 0,
                                    pick(G, -3, L.Grid[0] * L.Block[0] + 5)};
      },
      [](const rt::LaunchConfig &L, Touched &T) {
        forEachThread(L, [&](const Thread &Th) {
          int64_t I = gid(L, Th);
          if (I < L.Args[3]) {
            T.read(0, 4 * I, 4);
            T.read(1, 4 * I, 4);
            T.write(2, 4 * I, 4);
          }
        });
      },
      [](const rt::LaunchConfig &, unsigned, bool) {
        return FootprintClass::Exact;
      },
      2);
}

/// C[M x N] = A[M x K] * B[K x N]: a row band of A, a column slice of B and
/// a rectangle of C per row of blocks.
void matmulModel(const rt::LaunchConfig &L, Touched &T) {
  int64_t M = L.Args[3], N = L.Args[4], K = L.Args[5];
  forEachThread(L, [&](const Thread &Th) {
    int64_t Row = Th.By * L.Block[1] + Th.Ty;
    int64_t Col = Th.Bx * L.Block[0] + Th.Tx;
    if (Row < M && Col < N) {
      for (int64_t k = 0; k < K; ++k) {
        T.read(0, 4 * (Row * K + k), 4);
        T.read(1, 4 * (k * N + Col), 4);
      }
      T.write(2, 4 * (Row * N + Col), 4);
    }
  });
}

std::vector<int64_t> matmulArgs(std::mt19937_64 &G, const rt::LaunchConfig &L) {
  return {0,
          0,
          0,
          pick(G, -1, L.Grid[1] * L.Block[1] + 3),
          pick(G, -1, L.Grid[0] * L.Block[0] + 3),
          pick(G, -1, 9)};
}

TEST(Footprint, MatMul) {
  auto A = analyze(MatmulIR);
  ASSERT_TRUE(A);
  EXPECT_EQ(A->Read[0], FootprintClass::Exact);
  EXPECT_EQ(A->Read[1], FootprintClass::Exact);
  EXPECT_EQ(A->Write[2], FootprintClass::Exact);
  fuzz(
      *A, Grid2D, matmulArgs, matmulModel,
      [](const rt::LaunchConfig &, unsigned, bool) {
        return FootprintClass::Exact;
      },
      3);
}

TEST(Footprint, MatMulOpenCL) {
  auto A = analyze(MatmulCLIR);
  ASSERT_TRUE(A);
  fuzz(
      *A, Grid2D, matmulArgs, matmulModel,
      [](const rt::LaunchConfig &, unsigned, bool) {
        return FootprintClass::Exact;
      },
      4);
}

TEST(Footprint, MatMulRegions) {
  // A whole row of blocks of a 64x64 product with 16x16 blocks: C comes
  // back as one rectangle, A as one contiguous band and B as one interval
  // (all rows of B, every column).
  auto A = analyze(MatmulIR);
  ASSERT_TRUE(A);
  rt::FootprintProgram P;
  ASSERT_TRUE(rt::FootprintProgram::parse(A->Text, P).Ok);
  rt::LaunchConfig L;
  L.Grid[0] = 4;
  L.Grid[1] = 4;
  L.Block[0] = 16;
  L.Block[1] = 16;
  L.First = 4; // the second row of blocks
  L.Count = 4;
  L.Args = {0, 0, 0, 64, 64, 64};
  rt::FootprintResult R;
  ASSERT_TRUE(P.evaluate(L, R).Ok);
  const rt::ParamFootprint *C = R.find(2);
  ASSERT_TRUE(C && C->WriteClass == rt::FootprintClass::Exact);
  ASSERT_EQ(C->Writes.size(), 1u);
  EXPECT_EQ(C->Writes[0].Base, 4 * 16 * 64);
  EXPECT_EQ(C->Writes[0].Bytes, 4 * 16 * 64);
  const rt::ParamFootprint *AP = R.find(0);
  ASSERT_TRUE(AP && AP->ReadClass == rt::FootprintClass::Exact);
  ASSERT_EQ(AP->Reads.size(), 1u);
  EXPECT_EQ(AP->Reads[0].Base, 4 * 16 * 64);
  EXPECT_EQ(AP->Reads[0].Bytes, 4 * 16 * 64);
  // Half the columns of C: a pitched rectangle.
  L.Grid[0] = 8;
  L.Grid[1] = 2;
  L.Block[0] = 8;
  L.First = 8 + 2;
  L.Count = 4;
  ASSERT_TRUE(P.evaluate(L, R).Ok);
  C = R.find(2);
  ASSERT_EQ(C->Writes.size(), 1u);
  EXPECT_EQ(C->Writes[0].Base, 4 * (16 * 64 + 16));
  EXPECT_EQ(C->Writes[0].Bytes, 4 * 32);
  EXPECT_EQ(C->Writes[0].Rows, 16);
  EXPECT_EQ(C->Writes[0].Pitch, 4 * 64);
  const rt::ParamFootprint *B = R.find(1);
  ASSERT_EQ(B->Reads.size(), 1u);
  EXPECT_EQ(B->Reads[0].Base, 4 * 16);
  EXPECT_EQ(B->Reads[0].Bytes, 4 * 32);
  EXPECT_EQ(B->Reads[0].Rows, 64);
  EXPECT_EQ(B->Reads[0].Pitch, 4 * 64);
}

TEST(Footprint, Transpose) {
  auto A = analyze(TransposeIR);
  ASSERT_TRUE(A);
  EXPECT_EQ(A->Write[0], FootprintClass::Exact);
  EXPECT_EQ(A->Read[1], FootprintClass::Exact);
  fuzz(
      *A, {{4, 4, 2}, {40, 6, 1}},
      [](std::mt19937_64 &G, const rt::LaunchConfig &L) {
        return std::vector<int64_t>{0, 0, pick(G, -1, L.Grid[0] * 32 + 5),
                                    pick(G, -1, L.Grid[1] * 32 + 5)};
      },
      [](const rt::LaunchConfig &L, Touched &T) {
        int64_t W = L.Args[2], H = L.Args[3];
        forEachThread(L, [&](const Thread &Th) {
          int64_t X = Th.Bx * 32 + Th.Tx, Y = Th.By * 32 + Th.Ty;
          if (X < W && Y < H)
            T.read(1, 4 * (Y * W + X), 4);
          X = Th.By * 32 + Th.Tx;
          Y = Th.Bx * 32 + Th.Ty;
          if (X < H && Y < W)
            T.write(0, 4 * (Y * H + X), 4);
        });
      },
      [](const rt::LaunchConfig &, unsigned, bool) {
        return FootprintClass::Exact;
      },
      5);
}

TEST(Footprint, Reduction) {
  auto A = analyze(ReductionIR);
  ASSERT_TRUE(A);
  EXPECT_EQ(A->Read[0], FootprintClass::Exact);
  EXPECT_EQ(A->Write[1], FootprintClass::Exact);
  fuzz(
      *A, Grid1D,
      [](std::mt19937_64 &G, const rt::LaunchConfig &L) {
        return std::vector<int64_t>{
            0, 0, pick(G, -3, 2 * L.Grid[0] * L.Block[0] + 5)};
      },
      [](const rt::LaunchConfig &L, Touched &T) {
        uint32_t N = static_cast<uint32_t>(L.Args[2]);
        forEachThread(L, [&](const Thread &Th) {
          uint32_t Bdx = L.Block[0];
          uint32_t I = Th.Bx * Bdx * 2 + Th.Tx;
          if (I < N)
            T.read(0, 4 * int64_t(I), 4);
          if (I + Bdx < N)
            T.read(0, 4 * int64_t(I + Bdx), 4);
          if (Th.Tx == 0)
            T.write(1, 4 * Th.Bx, 4);
        });
      },
      [](const rt::LaunchConfig &L, unsigned Arg, bool Write) {
        // n < 0 is a huge unsigned bound: the launch-time check refuses it.
        if (Arg == 0 && !Write && L.Args[2] < 0 && L.Count > 0)
          return FootprintClass::Unknown;
        return FootprintClass::Exact;
      },
      6);
}

TEST(Footprint, GridStride) {
  // The trip count of a grid-stride loop is not computable and its i32
  // index may wrap: both buffers are Unknown, which is safe.
  auto A = analyze(GridStrideIR);
  ASSERT_TRUE(A);
  EXPECT_EQ(A->Read[1], FootprintClass::Unknown);
  EXPECT_EQ(A->Read[2], FootprintClass::Unknown);
  EXPECT_EQ(A->Write[2], FootprintClass::Unknown);
  fuzz(
      *A, Grid1D,
      [](std::mt19937_64 &G, const rt::LaunchConfig &L) {
        return std::vector<int64_t>{0, 0, 0,
                                    pick(G, -3, 3 * L.Grid[0] * L.Block[0])};
      },
      [](const rt::LaunchConfig &L, Touched &T) {
        forEachThread(L, [&](const Thread &Th) {
          for (int64_t I = gid(L, Th); I < L.Args[3];
               I += L.Block[0] * L.Grid[0]) {
            T.read(1, 4 * I, 4);
            T.read(2, 4 * I, 4);
            T.write(2, 4 * I, 4);
          }
        });
      },
      [](const rt::LaunchConfig &, unsigned Arg, bool Write) {
        if (Arg == 1 && Write)
          return FootprintClass::Exact; // never written
        return FootprintClass::Unknown;
      },
      7, 60);
}

TEST(Footprint, Stencil3D) {
  auto A = analyze(Stencil3dIR);
  ASSERT_TRUE(A);
  EXPECT_EQ(A->Read[0], FootprintClass::Exact);
  EXPECT_EQ(A->Write[1], FootprintClass::Exact);
  fuzz(
      *A, Grid3D,
      [](std::mt19937_64 &G, const rt::LaunchConfig &L) {
        return std::vector<int64_t>{0, 0,
                                    pick(G, -1, L.Grid[0] * L.Block[0] + 3),
                                    pick(G, -1, L.Grid[1] * L.Block[1] + 3),
                                    pick(G, -1, L.Grid[2] * L.Block[2] + 3)};
      },
      [](const rt::LaunchConfig &L, Touched &T) {
        int64_t Nx = L.Args[2], Ny = L.Args[3], Nz = L.Args[4];
        forEachThread(L, [&](const Thread &Th) {
          int64_t X = Th.Bx * L.Block[0] + Th.Tx;
          int64_t Y = Th.By * L.Block[1] + Th.Ty;
          int64_t Z = Th.Bz * L.Block[2] + Th.Tz;
          if (X < 1 || Y < 1 || Z < 1 || X >= Nx - 1 || Y >= Ny - 1 ||
              Z >= Nz - 1)
            return;
          int64_t Idx = (Z * Ny + Y) * Nx + X, Sy = Nx, Sz = Nx * Ny;
          T.write(1, 4 * Idx, 4);
          for (int64_t D :
               {int64_t(0), int64_t(-1), int64_t(1), -Sy, Sy, -Sz, Sz})
            T.read(0, 4 * (Idx + D), 4);
        });
      },
      [](const rt::LaunchConfig &, unsigned, bool) {
        return FootprintClass::Exact;
      },
      8);
}

TEST(Footprint, BlackScholes) {
  auto A = analyze(BlackscholesIR);
  ASSERT_TRUE(A);
  for (unsigned I : {0u, 1u})
    EXPECT_EQ(A->Write[I], FootprintClass::Exact);
  for (unsigned I : {2u, 3u, 4u})
    EXPECT_EQ(A->Read[I], FootprintClass::Exact);
  fuzz(
      *A, Grid1D,
      [](std::mt19937_64 &G, const rt::LaunchConfig &L) {
        return std::vector<int64_t>{
            0, 0, 0, 0, 0, 0, 0, pick(G, -3, L.Grid[0] * L.Block[0] + 5)};
      },
      [](const rt::LaunchConfig &L, Touched &T) {
        forEachThread(L, [&](const Thread &Th) {
          int64_t I = gid(L, Th);
          if (I >= L.Args[7])
            return;
          for (unsigned In : {2u, 3u, 4u})
            T.read(In, 4 * I, 4);
          T.write(0, 4 * I, 4);
          T.write(1, 4 * I, 4);
        });
      },
      [](const rt::LaunchConfig &, unsigned, bool) {
        return FootprintClass::Exact;
      },
      9);
}

/// Data that the data-dependent kernels below read, the same in the model.
int64_t data(int64_t I) { return (I * 2654435761u >> 7) & 0xff; }

TEST(Footprint, HistogramBins) {
  // bins[data[i]]: only the range of an unsigned char is known, so the bins
  // are Bounded by [0, 256*4); the grid-stride read of data is Unknown.
  auto A = analyze(HistogramIR);
  ASSERT_TRUE(A);
  EXPECT_EQ(A->Read[0], FootprintClass::Unknown);
  EXPECT_EQ(A->Read[1], FootprintClass::Bounded);
  EXPECT_EQ(A->Write[1], FootprintClass::Bounded);
  fuzz(
      *A, Grid1D,
      [](std::mt19937_64 &G, const rt::LaunchConfig &L) {
        return std::vector<int64_t>{0, 0,
                                    pick(G, 0, 2 * L.Grid[0] * L.Block[0])};
      },
      [](const rt::LaunchConfig &L, Touched &T) {
        forEachThread(L, [&](const Thread &Th) {
          for (int64_t I = gid(L, Th); I < L.Args[2];
               I += L.Block[0] * L.Grid[0]) {
            T.read(0, I, 1);
            T.read(1, 4 * data(I), 4);
            T.write(1, 4 * data(I), 4);
          }
        });
      },
      [](const rt::LaunchConfig &L, unsigned Arg, bool Write) {
        if (Arg == 0)
          return Write ? FootprintClass::Exact : FootprintClass::Unknown;
        // The bound applies as soon as one thread enters the loop.
        for (int64_t B = L.First; B < L.First + L.Count; ++B)
          if ((B % L.Grid[0]) * L.Block[0] < L.Args[2])
            return FootprintClass::Bounded;
        return FootprintClass::Exact;
      },
      10, 100);
}

TEST(Footprint, ConditionalStoreIsBounded) {
  auto A = analyze(CondStoreIR);
  ASSERT_TRUE(A);
  EXPECT_EQ(A->Read[0], FootprintClass::Exact);
  EXPECT_EQ(A->Write[1], FootprintClass::Bounded);
  fuzz(
      *A, Grid1D,
      [](std::mt19937_64 &G, const rt::LaunchConfig &L) {
        return std::vector<int64_t>{0, 0,
                                    pick(G, -3, L.Grid[0] * L.Block[0] + 5)};
      },
      [](const rt::LaunchConfig &L, Touched &T) {
        forEachThread(L, [&](const Thread &Th) {
          int64_t I = gid(L, Th);
          if (I < L.Args[2]) {
            T.read(0, 4 * I, 4);
            if (data(I) > 100)
              T.write(1, 4 * I, 4);
          }
        });
      },
      [](const rt::LaunchConfig &L, unsigned Arg, bool Write) {
        if (Arg != 1 || !Write)
          return FootprintClass::Exact;
        // Where no thread passes i < n the store provably does not run.
        for (int64_t B = L.First; B < L.First + L.Count; ++B)
          if ((B % L.Grid[0]) * L.Block[0] < L.Args[2])
            return FootprintClass::Bounded;
        return FootprintClass::Exact;
      },
      11);
}

TEST(Footprint, PointerChase) {
  // Loads through a pointer read from memory reach a buffer nobody can
  // name: every pointer argument's reads are Unknown. The store is exact.
  auto A = analyze(PointerChaseIR);
  ASSERT_TRUE(A);
  EXPECT_EQ(A->Read[0], FootprintClass::Unknown);
  EXPECT_EQ(A->Read[1], FootprintClass::Unknown);
  EXPECT_EQ(A->Write[1], FootprintClass::Exact);
  fuzz(
      *A, Grid1D,
      [](std::mt19937_64 &G, const rt::LaunchConfig &L) {
        return std::vector<int64_t>{0, 0, pick(G, 0, L.Block[0] + 3)};
      },
      [](const rt::LaunchConfig &L, Touched &T) {
        forEachThread(L, [&](const Thread &Th) {
          T.read(0, 8 * Th.Bx, 8);
          uint32_t I = uint32_t(Th.Bx) * uint32_t(L.Args[2]) + Th.Tx;
          T.write(1, 4 * int64_t(I), 4);
        });
      },
      [](const rt::LaunchConfig &, unsigned, bool Write) {
        return Write ? FootprintClass::Exact : FootprintClass::Unknown;
      },
      12);
}

//===----------------------------------------------------------------------===//
// Hand-written kernels for the corner cases
//===----------------------------------------------------------------------===//

TEST(Footprint, IndexLoadedFromMemoryIsUnknown) {
  auto A = analyze(GatherIR);
  ASSERT_TRUE(A);
  EXPECT_EQ(A->Write[0], FootprintClass::Exact);
  EXPECT_EQ(A->Read[1], FootprintClass::Unknown);
  EXPECT_EQ(A->Read[2], FootprintClass::Exact);
  fuzz(
      *A, Grid1D,
      [](std::mt19937_64 &G, const rt::LaunchConfig &L) {
        return std::vector<int64_t>{0, 0, 0,
                                    pick(G, -3, L.Grid[0] * L.Block[0] + 5)};
      },
      [](const rt::LaunchConfig &L, Touched &T) {
        forEachThread(L, [&](const Thread &Th) {
          int64_t I = gid(L, Th);
          if (I < L.Args[3]) {
            T.read(2, 4 * I, 4);
            T.write(0, 4 * I, 4);
          }
        });
      },
      [](const rt::LaunchConfig &, unsigned Arg, bool Write) {
        return Arg == 1 && !Write ? FootprintClass::Unknown
                                  : FootprintClass::Exact;
      },
      13, 100);
}

TEST(Footprint, NarrowIndexWrapsAtLaunchTime) {
  // p[(signed char)(i + 100)]: exact while i + 100 fits in a signed char,
  // Unknown for launches where it wraps.
  auto A = analyze(Wrap8IR);
  ASSERT_TRUE(A);
  EXPECT_EQ(A->Write[0], FootprintClass::Exact);
  fuzz(
      *A, {{8, 2, 1}, {12, 1, 1}},
      [](std::mt19937_64 &, const rt::LaunchConfig &) {
        return std::vector<int64_t>{0};
      },
      [](const rt::LaunchConfig &L, Touched &T) {
        forEachThread(L, [&](const Thread &Th) {
          int8_t X = static_cast<int8_t>(gid(L, Th) + 100);
          T.write(0, X, 1);
        });
      },
      [](const rt::LaunchConfig &L, unsigned, bool Write) {
        if (!Write || L.Count == 0)
          return FootprintClass::Exact;
        // Only blocks x in the range matter; the check spans their threads.
        int64_t MaxBx = 0;
        for (int64_t B = L.First; B < L.First + L.Count; ++B)
          MaxBx = std::max(MaxBx, B % L.Grid[0]);
        return (MaxBx + 1) * L.Block[0] - 1 + 100 > 127
                   ? FootprintClass::Unknown
                   : FootprintClass::Exact;
      },
      14);
}

TEST(Footprint, MemoryIntrinsics) {
  auto A = analyze(Copy16IR);
  ASSERT_TRUE(A);
  EXPECT_EQ(A->Write[0], FootprintClass::Exact);
  EXPECT_EQ(A->Read[1], FootprintClass::Exact);
  EXPECT_EQ(A->Write[2], FootprintClass::Exact);
  fuzz(
      *A, Grid1D,
      [](std::mt19937_64 &G, const rt::LaunchConfig &) {
        return std::vector<int64_t>{0, 0, 0, pick(G, 0, 80)};
      },
      [](const rt::LaunchConfig &L, Touched &T) {
        forEachThread(L, [&](const Thread &Th) {
          int64_t I = gid(L, Th);
          T.write(0, 16 * I, 16);
          T.read(1, 16 * I, 16);
          if (L.Args[3] > 0)
            T.write(2, 64 * I, L.Args[3]);
        });
      },
      [](const rt::LaunchConfig &, unsigned, bool) {
        return FootprintClass::Exact;
      },
      15);
}

TEST(Footprint, PhisSplitByIncomingEdge) {
  // Both phis of the join block take the same edge in each variant; each
  // variant's path condition keeps it exact.
  auto A = analyze(DiamondIR);
  ASSERT_TRUE(A);
  EXPECT_EQ(A->Write[0], FootprintClass::Exact);
  fuzz(
      *A, Grid1D,
      [](std::mt19937_64 &G, const rt::LaunchConfig &L) {
        return std::vector<int64_t>{0, pick(G, -2, L.Block[0] + 2)};
      },
      [](const rt::LaunchConfig &L, Touched &T) {
        forEachThread(L, [&](const Thread &Th) {
          if (Th.Tx < L.Args[1])
            T.write(0, 4 * (Th.Tx + 1), 4);
          else
            T.write(0, 4 * Th.Bx * L.Block[0], 4);
        });
      },
      [](const rt::LaunchConfig &, unsigned, bool) {
        return FootprintClass::Exact;
      },
      16);
}

TEST(Footprint, ContinueEdgeGuardsTheStore) {
  // The continue edge goes straight to the header: its condition guards the
  // store even though the branch's other side stays in the loop. Not
  // affine here, so Bounded; it must never be Exact (tid 0 never stores).
  auto A = analyze(SkipIR);
  ASSERT_TRUE(A);
  EXPECT_EQ(A->Write[0], FootprintClass::Bounded);
  fuzz(
      *A, {{6, 2, 1}, {12, 1, 1}},
      [](std::mt19937_64 &G, const rt::LaunchConfig &) {
        return std::vector<int64_t>{0, pick(G, 0, 6)};
      },
      [](const rt::LaunchConfig &L, Touched &T) {
        forEachThread(L, [&](const Thread &Th) {
          for (int64_t I = 0; I != L.Args[1]; ++I)
            if (I < Th.Tx)
              T.write(0, 4 * Th.Tx, 4);
        });
      },
      [](const rt::LaunchConfig &L, unsigned, bool Write) {
        return Write && L.Count > 0 ? FootprintClass::Bounded
                                    : FootprintClass::Exact;
      },
      17, 100);
}

TEST(Footprint, PerThreadTripCount) {
  // The counter of a loop whose trip count varies per thread is only
  // bounded (and the unrolled copies divide by 4, which bounds less): the
  // reads are Bounded or, where the bounds could wrap, Unknown; always safe.
  // The fully unrolled stores after the loop stay exact.
  auto A = analyze(TriIR);
  ASSERT_TRUE(A);
  EXPECT_EQ(A->Read[1], FootprintClass::Bounded);
  EXPECT_EQ(A->Write[0], FootprintClass::Exact);
  fuzz(
      *A, {{8, 2, 1}, {12, 1, 1}},
      [](std::mt19937_64 &G, const rt::LaunchConfig &) {
        return std::vector<int64_t>{0, 0, pick(G, 0, 5)};
      },
      [](const rt::LaunchConfig &L, Touched &T) {
        forEachThread(L, [&](const Thread &Th) {
          for (int64_t K = 0; K < Th.Tx; ++K)
            T.read(1, 4 * (K * L.Args[2] + Th.Bx), 4);
          for (int64_t J = 0; J < 3; ++J)
            T.write(0, 4 * (3 * gid(L, Th) + J), 4);
        });
      },
      [](const rt::LaunchConfig &, unsigned Arg,
         bool Write) -> std::optional<FootprintClass> {
        if (Arg == 1 && !Write)
          return std::nullopt;
        return FootprintClass::Exact;
      },
      18);
}

TEST(Footprint, PrinterAndSerializedForm) {
  auto A = analyze(VecaddIR);
  ASSERT_TRUE(A);
  EXPECT_NE(A->Printed.find("arg 2: read none, write exact"), std::string::npos)
      << A->Printed;
  EXPECT_EQ(A->Text.rfind("cleave-footprint 1\nkernel _Z6vecaddPKfS0_Pfi\n", 0),
            0u)
      << A->Text;
  // Non-kernels have no footprint.
  LLVMContext Ctx;
  SMDiagnostic Err;
  auto M = parseAssemblyString("define void @f(ptr %p) { store i8 0, ptr %p\n"
                               "ret void }",
                               Err, Ctx);
  ASSERT_TRUE(M);
  PassBuilder PB;
  FunctionAnalysisManager FAM;
  PB.registerFunctionAnalyses(FAM);
  FAM.registerPass([] { return FootprintAnalysis(); });
  auto &FP = FAM.getResult<FootprintAnalysis>(*M->getFunction("f"));
  EXPECT_FALSE(FP.isKernel());
  EXPECT_EQ(FP.serialize(), "");
  EXPECT_EQ(FP.writeClass(0), FootprintClass::Exact);
}

} // namespace
