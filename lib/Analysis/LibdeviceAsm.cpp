//===- LibdeviceAsm.cpp - Inline PTX of CUDA's libdevice ------------------===//
//
// Part of Cleave. The strings are those of CUDA 13's libdevice.10.bc
// (llvm-dis prints them with \0A\09 for "\n\t"); spaces, including the
// trailing ones, matter.
//
//===----------------------------------------------------------------------===//
#include "cleave/Analysis/LibdeviceAsm.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/IR/InlineAsm.h"

using namespace llvm;

namespace cleave {

static constexpr StringLiteral MadWide32Asm =
    "{\n"
    "\tmad.lo.cc.u32   $0, $2, $3, $4;\n"
    "\tmadc.hi.u32     $1, $2, $3,  0;\n"
    "\t}";

static constexpr StringLiteral MadWide64Asm =
    "{\n"
    "\t.reg .u32 r0, r1, r2, r3, alo, ahi, blo, bhi, clo, chi;\n"
    "\tmov.b64         {alo,ahi}, $2;    \n"
    "\tmov.b64         {blo,bhi}, $3;    \n"
    "\tmov.b64         {clo,chi}, $4;    \n"
    "\tmad.lo.cc.u32   r0, alo, blo, clo;\n"
    "\tmadc.hi.cc.u32  r1, alo, blo, chi;\n"
    "\tmadc.hi.u32     r2, alo, bhi,   0;\n"
    "\tmad.lo.cc.u32   r1, alo, bhi,  r1;\n"
    "\tmadc.hi.cc.u32  r2, ahi, blo,  r2;\n"
    "\tmadc.hi.u32     r3, ahi, bhi,   0;\n"
    "\tmad.lo.cc.u32   r1, ahi, blo,  r1;\n"
    "\tmadc.lo.cc.u32  r2, ahi, bhi,  r2;\n"
    "\taddc.u32        r3,  r3,   0;     \n"
    "\tmov.b64         $0, {r0,r1};      \n"
    "\tmov.b64         $1, {r2,r3};      \n"
    "\t}";

static constexpr StringLiteral MulWide64Asm =
    "{\n"
    "\t.reg .u32 r0, r1, r2, r3, alo, ahi, blo, bhi;\n"
    "\tmov.b64         {alo,ahi}, $2;   \n"
    "\tmov.b64         {blo,bhi}, $3;   \n"
    "\tmul.lo.u32      r0, alo, blo;    \n"
    "\tmul.hi.u32      r1, alo, blo;    \n"
    "\tmad.lo.cc.u32   r1, alo, bhi, r1;\n"
    "\tmadc.hi.u32     r2, alo, bhi,  0;\n"
    "\tmad.lo.cc.u32   r1, ahi, blo, r1;\n"
    "\tmadc.hi.cc.u32  r2, ahi, blo, r2;\n"
    "\tmadc.hi.u32     r3, ahi, bhi,  0;\n"
    "\tmad.lo.cc.u32   r2, ahi, bhi, r2;\n"
    "\taddc.u32        r3, r3,  0;      \n"
    "\tmov.b64         $0, {r0,r1};     \n"
    "\tmov.b64         $1, {r2,r3};     \n"
    "\t}";

/// The 128-bit add and subtract differ in their four carry instructions.
static std::string wide128Asm(const std::string &Op) {
  std::string Cc = Op + ".cc.u32      ", Cc2 = Op + "c.cc.u32     ",
              Last = Op + "c.u32        ";
  return "{\n"
         "\t.reg .u32 r0, r1, r2, r3, a0, a1, a2, a3, b0, b1, b2, b3;\n"
         "\tmov.b64         {a0,a1}, $2;\n"
         "\tmov.b64         {a2,a3}, $3;\n"
         "\tmov.b64         {b0,b1}, $4;\n"
         "\tmov.b64         {b2,b3}, $5;\n"
         "\t" +
         Cc + "r0, a0, b0; \n\t" + Cc2 + "r1, a1, b1; \n\t" + Cc2 +
         "r2, a2, b2; \n\t" + Last +
         "r3, a3, b3; \n"
         "\tmov.b64         $0, {r0,r1};\n"
         "\tmov.b64         $1, {r2,r3};\n"
         "\t}";
}

static constexpr StringLiteral SelectEquAsm =
    "{ .reg .pred __$$temp3;\n"
    "  setp.equ.f64 __$$temp3, $1, $2;\n"
    "  selp.f64 $0, $3, $4, __$$temp3;}";

/// sub.<rnd>[.ftz].<type> $0, $1, $2; for the forms with an exact host
/// equivalent (the f64 directed roundings are not among them).
static std::optional<LibdeviceAsm> matchSub(StringRef Asm, StringRef Cons) {
  if (!Asm.consume_front("sub.r") || Asm.empty())
    return std::nullopt;
  char Rounding = Asm.front();
  if (StringRef("nzmp").find(Rounding) == StringRef::npos)
    return std::nullopt;
  Asm = Asm.drop_front();
  bool Ftz = Asm.consume_front(".ftz");
  if (Asm == ".f32 $0, $1, $2;" && Cons == "=f,f,f")
    return LibdeviceAsm{LibdeviceAsmKind::Sub, Rounding, Ftz, 32};
  if (Asm == ".f64 $0, $1, $2;" && Cons == "=d,d,d" && !Ftz && Rounding == 'n')
    return LibdeviceAsm{LibdeviceAsmKind::Sub, Rounding, false, 64};
  return std::nullopt;
}

std::optional<LibdeviceAsm> matchLibdeviceAsm(const InlineAsm &IA) {
  StringRef Asm = IA.getAsmString(), Cons = IA.getConstraintString();
  auto Is = [](LibdeviceAsmKind K) { return LibdeviceAsm{K}; };
  if (Asm == "rcp.approx.ftz.f32 $0,$1;" && Cons == "=f,f")
    return Is(LibdeviceAsmKind::RcpApproxFtz);
  if (Asm == "rsqrt.approx.ftz.f64 $0, $1;" && Cons == "=d,d")
    return Is(LibdeviceAsmKind::RsqrtApproxFtz);
  if (Asm == MadWide32Asm && Cons == "=r,=r,r,r,r")
    return Is(LibdeviceAsmKind::MadWide32);
  if (Asm == MadWide64Asm && Cons == "=l,=l,l,l,l")
    return Is(LibdeviceAsmKind::MadWide64);
  if (Asm == MulWide64Asm && Cons == "=l,=l,l,l")
    return Is(LibdeviceAsmKind::MulWide64);
  if (Cons == "=l,=l,l,l,l,l" && Asm == wide128Asm("add"))
    return Is(LibdeviceAsmKind::Add128);
  if (Cons == "=l,=l,l,l,l,l" && Asm == wide128Asm("sub"))
    return Is(LibdeviceAsmKind::Sub128);
  if (Asm == SelectEquAsm && Cons == "=d,d,d,d,d")
    return Is(LibdeviceAsmKind::SelectEqu);
  return matchSub(Asm, Cons);
}

} // namespace cleave
