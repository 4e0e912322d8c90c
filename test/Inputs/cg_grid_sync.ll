; Generated from cg_grid_sync.cu (see there), clang 19.1.7 with CUDA 13.0 headers.
; ModuleID = 'cg_grid_sync.cu'
source_filename = "cg_grid_sync.cu"
target datalayout = "e-i64:64-i128:128-v16:16-v32:32-n16:32:64"
target triple = "nvptx64-nvidia-cuda"

; Function Attrs: convergent mustprogress norecurse nounwind
define dso_local void @_Z13grid_sync_sumPfi(ptr nocapture noundef %0, i32 noundef %1) local_unnamed_addr #0 {
  %3 = tail call noundef i32 asm "mov.u32 $0, %envreg2;", "=r"() #3, !srcloc !8
  %4 = zext i32 %3 to i64
  %5 = tail call noundef i32 asm "mov.u32 $0, %envreg1;", "=r"() #3, !srcloc !9
  %6 = zext i32 %5 to i64
  %7 = shl nuw i64 %6, 32
  %8 = or disjoint i64 %7, %4
  %9 = inttoptr i64 %8 to ptr
  %10 = tail call noundef range(i32 0, 2147483647) i32 @llvm.nvvm.read.ptx.sreg.ctaid.x()
  %11 = tail call noundef range(i32 0, 65535) i32 @llvm.nvvm.read.ptx.sreg.ctaid.y()
  %12 = tail call noundef range(i32 0, 65535) i32 @llvm.nvvm.read.ptx.sreg.ctaid.z()
  %13 = tail call noundef range(i32 1, -2147483648) i32 @llvm.nvvm.read.ptx.sreg.nctaid.x()
  %14 = tail call noundef range(i32 1, 65536) i32 @llvm.nvvm.read.ptx.sreg.nctaid.y()
  %15 = tail call noundef range(i32 1, 65536) i32 @llvm.nvvm.read.ptx.sreg.nctaid.z()
  %16 = mul nuw i32 %12, %14
  %17 = zext i32 %16 to i64
  %18 = zext nneg i32 %13 to i64
  %19 = zext nneg i32 %11 to i64
  %20 = add nuw nsw i64 %17, %19
  %21 = mul nuw nsw i64 %20, %18
  %22 = zext nneg i32 %10 to i64
  %23 = add nuw nsw i64 %21, %22
  %24 = tail call noundef range(i32 1, 1025) i32 @llvm.nvvm.read.ptx.sreg.ntid.x()
  %25 = tail call noundef range(i32 1, 1025) i32 @llvm.nvvm.read.ptx.sreg.ntid.y()
  %26 = mul nuw nsw i32 %24, %25
  %27 = tail call noundef range(i32 1, 65) i32 @llvm.nvvm.read.ptx.sreg.ntid.z()
  %28 = mul nuw nsw i32 %26, %27
  %29 = zext nneg i32 %28 to i64
  %30 = mul i64 %23, %29
  %31 = tail call noundef range(i32 0, 1024) i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %32 = tail call noundef range(i32 0, 1024) i32 @llvm.nvvm.read.ptx.sreg.tid.y()
  %33 = tail call noundef range(i32 0, 64) i32 @llvm.nvvm.read.ptx.sreg.tid.z()
  %34 = mul nuw nsw i32 %33, %25
  %35 = add nuw nsw i32 %34, %32
  %36 = mul nuw nsw i32 %35, %24
  %37 = add nuw nsw i32 %36, %31
  %38 = zext nneg i32 %37 to i64
  %39 = add i64 %30, %38
  %40 = shl i64 %39, 32
  %41 = ashr exact i64 %40, 30
  %42 = getelementptr inbounds i8, ptr %0, i64 %41
  store float 1.000000e+00, ptr %42, align 4, !tbaa !10
  %43 = icmp eq i64 %8, 0
  br i1 %43, label %44, label %45

44:                                               ; preds = %2
  tail call void asm sideeffect "trap;", ""() #4, !srcloc !14
  br label %45

45:                                               ; preds = %2, %44
  %46 = getelementptr inbounds i8, ptr %9, i64 4
  tail call void @llvm.nvvm.barrier.sync(i32 0)
  %47 = add nuw nsw i32 %31, %32
  %48 = sub nsw i32 0, %33
  %49 = icmp eq i32 %47, %48
  br i1 %49, label %50, label %59

50:                                               ; preds = %45
  %51 = add nuw i32 %10, %11
  %52 = sub nsw i32 0, %12
  %53 = icmp eq i32 %51, %52
  %54 = mul i32 %13, %14
  %55 = mul i32 %54, %15
  %56 = sub i32 -2147483647, %55
  %57 = select i1 %53, i32 %56, i32 1
  %58 = tail call i32 asm sideeffect "atom.add.release.gpu.u32 $0,[$1],$2;", "=r,l,r,~{memory}"(ptr nonnull %46, i32 %57) #4, !srcloc !15
  br label %59

59:                                               ; preds = %45, %50
  %60 = phi i32 [ %58, %50 ], [ 0, %45 ]
  br i1 %49, label %61, label %65

61:                                               ; preds = %59, %61
  %62 = tail call i32 asm sideeffect "ld.acquire.gpu.u32 $0,[$1];", "=r,l,~{memory}"(ptr nonnull %46) #4, !srcloc !16
  %63 = xor i32 %62, %60
  %64 = icmp slt i32 %63, 0
  br i1 %64, label %65, label %61, !llvm.loop !17

65:                                               ; preds = %61, %59
  %66 = trunc i64 %39 to i32
  tail call void @llvm.nvvm.barrier.sync(i32 0)
  %67 = add nsw i32 %66, 1
  %68 = srem i32 %67, %1
  %69 = sext i32 %68 to i64
  %70 = getelementptr inbounds float, ptr %0, i64 %69
  %71 = load float, ptr %70, align 4, !tbaa !10
  %72 = load float, ptr %42, align 4, !tbaa !10
  %73 = fadd contract float %71, %72
  store float %73, ptr %42, align 4, !tbaa !10
  ret void
}

; Function Attrs: mustprogress nocallback nofree nosync nounwind speculatable willreturn memory(none)
declare noundef i32 @llvm.nvvm.read.ptx.sreg.ctaid.x() #1

; Function Attrs: mustprogress nocallback nofree nosync nounwind speculatable willreturn memory(none)
declare noundef i32 @llvm.nvvm.read.ptx.sreg.ctaid.y() #1

; Function Attrs: mustprogress nocallback nofree nosync nounwind speculatable willreturn memory(none)
declare noundef i32 @llvm.nvvm.read.ptx.sreg.ctaid.z() #1

; Function Attrs: mustprogress nocallback nofree nosync nounwind speculatable willreturn memory(none)
declare noundef i32 @llvm.nvvm.read.ptx.sreg.nctaid.x() #1

; Function Attrs: mustprogress nocallback nofree nosync nounwind speculatable willreturn memory(none)
declare noundef i32 @llvm.nvvm.read.ptx.sreg.nctaid.y() #1

; Function Attrs: mustprogress nocallback nofree nosync nounwind speculatable willreturn memory(none)
declare noundef i32 @llvm.nvvm.read.ptx.sreg.nctaid.z() #1

; Function Attrs: mustprogress nocallback nofree nosync nounwind speculatable willreturn memory(none)
declare noundef i32 @llvm.nvvm.read.ptx.sreg.ntid.x() #1

; Function Attrs: mustprogress nocallback nofree nosync nounwind speculatable willreturn memory(none)
declare noundef i32 @llvm.nvvm.read.ptx.sreg.ntid.y() #1

; Function Attrs: mustprogress nocallback nofree nosync nounwind speculatable willreturn memory(none)
declare noundef i32 @llvm.nvvm.read.ptx.sreg.ntid.z() #1

; Function Attrs: mustprogress nocallback nofree nosync nounwind speculatable willreturn memory(none)
declare noundef i32 @llvm.nvvm.read.ptx.sreg.tid.x() #1

; Function Attrs: mustprogress nocallback nofree nosync nounwind speculatable willreturn memory(none)
declare noundef i32 @llvm.nvvm.read.ptx.sreg.tid.y() #1

; Function Attrs: mustprogress nocallback nofree nosync nounwind speculatable willreturn memory(none)
declare noundef i32 @llvm.nvvm.read.ptx.sreg.tid.z() #1

; Function Attrs: convergent nocallback nounwind
declare void @llvm.nvvm.barrier.sync(i32) #2

attributes #0 = { convergent mustprogress norecurse nounwind "frame-pointer"="all" "no-trapping-math"="true" "stack-protector-buffer-size"="8" "target-cpu"="sm_90" "target-features"="+ptx85,+sm_90" "uniform-work-group-size"="true" }
attributes #1 = { mustprogress nocallback nofree nosync nounwind speculatable willreturn memory(none) }
attributes #2 = { convergent nocallback nounwind }
attributes #3 = { convergent nounwind memory(none) }
attributes #4 = { convergent nounwind }

!llvm.module.flags = !{!0, !1, !2, !3}
!nvvm.annotations = !{!4}
!llvm.ident = !{!5, !6}
!nvvmir.version = !{!7}

!0 = !{i32 2, !"SDK Version", [2 x i32] [i32 12, i32 5]}
!1 = !{i32 1, !"wchar_size", i32 4}
!2 = !{i32 4, !"nvvm-reflect-ftz", i32 0}
!3 = !{i32 7, !"frame-pointer", i32 2}
!4 = !{ptr @_Z13grid_sync_sumPfi, !"kernel", i32 1}
!5 = !{!"Debian clang version 19.1.7 (3~deb12u1)"}
!6 = !{!"clang version 3.8.0 (tags/RELEASE_380/final)"}
!7 = !{i32 2, i32 0}
!8 = !{i64 2162766231}
!9 = !{i64 2162765906}
!10 = !{!11, !11, i64 0}
!11 = !{!"float", !12, i64 0}
!12 = !{!"omnipotent char", !13, i64 0}
!13 = !{!"Simple C++ TBAA"}
!14 = !{i64 4819151}
!15 = !{i64 2162833218}
!16 = !{i64 2162845886}
!17 = distinct !{!17, !18}
!18 = !{!"llvm.loop.mustprogress"}
