//===- BundleFromIR.h - Test helper: a kernel bundle from inline IR -*- C++ -*-===//
//
// Part of Cleave's unit tests. The bundle tests, the engine tests and the
// API tests each write their kernels as NVPTX IR text; this turns such a
// text into the bytes `cleave compile --emit=bundle` would write (PTX only,
// no ptxas), optionally renaming kernels first so that two modules can hold
// the same code under other names. Empty on failure, with the parser's or
// the writer's message on stderr.
//
//===----------------------------------------------------------------------===//
#ifndef CLEAVE_UNITTESTS_BUNDLEFROMIR_H
#define CLEAVE_UNITTESTS_BUNDLEFROMIR_H

#include "cleave/Bundle/BundleWriter.h"

#include "llvm/AsmParser/Parser.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

#include <map>
#include <string>

namespace cleave {
namespace test {

/// @hist(data, bins, n): bins[data[i]] += 1 with a global atomicrmw whose
/// result is unused (a combined output), for the engine tests' modules;
/// the module around it declares the ctaid.x, ntid.x and tid.x reads and
/// attributes #0.
inline constexpr const char *HistIR =
    R"IR(define ptx_kernel void @hist(ptr noundef readonly %data, ptr noundef %bins, i32 noundef %n) #0 {
entry:
  %bid = call i32 @llvm.nvvm.read.ptx.sreg.ctaid.x()
  %bdim = call i32 @llvm.nvvm.read.ptx.sreg.ntid.x()
  %tid = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %m = mul i32 %bid, %bdim
  %i = add i32 %m, %tid
  %in = icmp slt i32 %i, %n
  br i1 %in, label %body, label %exit
body:
  %idx = sext i32 %i to i64
  %pd = getelementptr inbounds i8, ptr %data, i64 %idx
  %d = load i8, ptr %pd, align 1
  %bin = zext i8 %d to i64
  %pbin = getelementptr inbounds i32, ptr %bins, i64 %bin
  %old = atomicrmw add ptr %pbin, i32 1 monotonic, align 4
  br label %exit
exit:
  ret void
}
)IR";

inline std::string
bundleFromIR(const char *IR, const char *SourceName,
             const std::map<std::string, std::string> &Rename = {}) {
  llvm::LLVMContext Ctx;
  llvm::SMDiagnostic Err;
  std::unique_ptr<llvm::Module> M = llvm::parseAssemblyString(IR, Err, Ctx);
  if (!M) {
    Err.print(SourceName, llvm::errs());
    return std::string();
  }
  for (const auto &[From, To] : Rename)
    if (llvm::Function *F = M->getFunction(From))
      F->setName(To);
  M->setSourceFileName(SourceName);
  llvm::Expected<BuiltBundle> B = cleave::writeBundle(*M, BundleOptions());
  if (!B) {
    llvm::errs() << llvm::toString(B.takeError()) << "\n";
    return std::string();
  }
  return std::move(B->Bytes);
}

} // namespace test
} // namespace cleave

#endif
