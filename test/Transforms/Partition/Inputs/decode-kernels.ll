; Kernels that store the block indices they read, one per subset of
; {x, y, z}, for decode-exhaustive.test.
target datalayout = "e-i64:64-i128:128-v16:16-v32:32-n16:32:64"
target triple = "nvptx64-nvidia-cuda"
define void @k_xyz(ptr %out) {
  %x = call i32 @llvm.nvvm.read.ptx.sreg.ctaid.x()
  %px = getelementptr i32, ptr %out, i64 0
  store i32 %x, ptr %px
  %y = call i32 @llvm.nvvm.read.ptx.sreg.ctaid.y()
  %py = getelementptr i32, ptr %out, i64 1
  store i32 %y, ptr %py
  %z = call i32 @llvm.nvvm.read.ptx.sreg.ctaid.z()
  %pz = getelementptr i32, ptr %out, i64 2
  store i32 %z, ptr %pz
  ret void
}
define void @k_x(ptr %out) {
  %x = call i32 @llvm.nvvm.read.ptx.sreg.ctaid.x()
  %px = getelementptr i32, ptr %out, i64 0
  store i32 %x, ptr %px
  ret void
}
define void @k_y(ptr %out) {
  %y = call i32 @llvm.nvvm.read.ptx.sreg.ctaid.y()
  %py = getelementptr i32, ptr %out, i64 1
  store i32 %y, ptr %py
  ret void
}
define void @k_z(ptr %out) {
  %z = call i32 @llvm.nvvm.read.ptx.sreg.ctaid.z()
  %pz = getelementptr i32, ptr %out, i64 2
  store i32 %z, ptr %pz
  ret void
}
define void @k_xz(ptr %out) {
  %x = call i32 @llvm.nvvm.read.ptx.sreg.ctaid.x()
  %px = getelementptr i32, ptr %out, i64 0
  store i32 %x, ptr %px
  %z = call i32 @llvm.nvvm.read.ptx.sreg.ctaid.z()
  %pz = getelementptr i32, ptr %out, i64 2
  store i32 %z, ptr %pz
  ret void
}
define void @k_yz(ptr %out) {
  %y = call i32 @llvm.nvvm.read.ptx.sreg.ctaid.y()
  %py = getelementptr i32, ptr %out, i64 1
  store i32 %y, ptr %py
  %z = call i32 @llvm.nvvm.read.ptx.sreg.ctaid.z()
  %pz = getelementptr i32, ptr %out, i64 2
  store i32 %z, ptr %pz
  ret void
}
define void @k_xy(ptr %out) {
  %x = call i32 @llvm.nvvm.read.ptx.sreg.ctaid.x()
  %px = getelementptr i32, ptr %out, i64 0
  store i32 %x, ptr %px
  %y = call i32 @llvm.nvvm.read.ptx.sreg.ctaid.y()
  %py = getelementptr i32, ptr %out, i64 1
  store i32 %y, ptr %py
  ret void
}
declare i32 @llvm.nvvm.read.ptx.sreg.ctaid.x()
declare i32 @llvm.nvvm.read.ptx.sreg.ctaid.y()
declare i32 @llvm.nvvm.read.ptx.sreg.ctaid.z()
!nvvm.annotations = !{!0, !1, !2, !3, !4, !5, !6}
!0 = !{ptr @k_xyz, !"kernel", i32 1}
!1 = !{ptr @k_x, !"kernel", i32 1}
!2 = !{ptr @k_y, !"kernel", i32 1}
!3 = !{ptr @k_z, !"kernel", i32 1}
!4 = !{ptr @k_xz, !"kernel", i32 1}
!5 = !{ptr @k_yz, !"kernel", i32 1}
!6 = !{ptr @k_xy, !"kernel", i32 1}
