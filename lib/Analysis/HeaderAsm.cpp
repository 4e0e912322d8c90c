//===- HeaderAsm.cpp - Inline PTX of CUDA's own headers -------------------===//
//
// Part of Cleave. The strings are those of CUDA 13's headers as Clang 19
// prints them into IR ($N operands, %% collapsed): cooperative_groups/
// details/{helpers,memory,invoke}.h, crt/sm_70_rt.hpp and
// cccl/cuda/__ptx/instructions/generated/{get_sreg,bfind}.h. The fp16/bf16
// headers' arithmetic blocks go through parsePtxArithmetic (HeaderAsmPtx.cpp).
//
//===----------------------------------------------------------------------===//
#include "cleave/Analysis/HeaderAsm.h"

#include "llvm/ADT/StringSwitch.h"
#include "llvm/IR/InlineAsm.h"
#include "llvm/IR/IntrinsicsNVPTX.h"

using namespace llvm;

namespace cleave {

static constexpr StringLiteral ReservedSharedAsm =
    "{\n\t .reg .u32 start;\n\t .reg .u64 extended;\n\t mov.u32 start, "
    "%reserved_smem_offset_1;\n\t cvt.u64.u32 extended, start;\n\t "
    "cvta.shared.u64 $0, extended;\n\t}";
static constexpr StringLiteral ElectAsm =
    "{\n\t .reg .pred p;\n\t  elect.sync $0|p, $2;\n\t @p mov.s32 $1, 1;\n\t}";

std::optional<HeaderAsm> matchHeaderAsm(const CallBase &CB) {
  const auto *IA = dyn_cast<InlineAsm>(CB.getCalledOperand());
  if (!IA)
    return std::nullopt;
  StringRef Asm = IA->getAsmString(), Cons = IA->getConstraintString();
  if (Cons == "=r") {
    StringRef Reg = Asm;
    if (Reg.consume_front("mov.u32 $0, %") && Reg.consume_back(";")) {
      Intrinsic::ID ID =
          StringSwitch<Intrinsic::ID>(Reg)
              .Case("laneid", Intrinsic::nvvm_read_ptx_sreg_laneid)
              .Case("lanemask_eq", Intrinsic::nvvm_read_ptx_sreg_lanemask_eq)
              .Case("lanemask_le", Intrinsic::nvvm_read_ptx_sreg_lanemask_le)
              .Case("lanemask_lt", Intrinsic::nvvm_read_ptx_sreg_lanemask_lt)
              .Case("lanemask_ge", Intrinsic::nvvm_read_ptx_sreg_lanemask_ge)
              .Case("lanemask_gt", Intrinsic::nvvm_read_ptx_sreg_lanemask_gt)
              .Default(Intrinsic::not_intrinsic);
      if (ID != Intrinsic::not_intrinsic)
        return HeaderAsm{HeaderAsmKind::SpecialRegister, ID};
    }
    return std::nullopt;
  }
  if (Asm == ReservedSharedAsm && Cons == "=l" && CB.getType()->isIntegerTy(64))
    return HeaderAsm{HeaderAsmKind::ReservedShared};
  if (Asm == "nanosleep.u32 $0;" && Cons == "r")
    return HeaderAsm{HeaderAsmKind::Sleep};
  if (Asm == ElectAsm && Cons == "=r,=r,r,0,1")
    return HeaderAsm{HeaderAsmKind::Elect};
  if (Cons == "=r,r" || Cons == "=r,l") {
    unsigned Bits = Cons == "=r,r" ? 32 : 64;
    std::string Width = Bits == 32 ? "u32" : "u64";
    if (Asm == "bfind." + Width + " $0, $1;")
      return HeaderAsm{HeaderAsmKind::BitFind, Intrinsic::not_intrinsic, Bits,
                       false};
    if (Asm == "bfind.shiftamt." + Width + " $0, $1;")
      return HeaderAsm{HeaderAsmKind::BitFind, Intrinsic::not_intrinsic, Bits,
                       true};
  }
  if (std::optional<LibdeviceAsm> L = matchLibdeviceAsm(*IA))
    return HeaderAsm{HeaderAsmKind::Libdevice, Intrinsic::not_intrinsic, 0,
                     false, *L};
  if (std::shared_ptr<const PtxBlock> P = parsePtxArithmetic(CB))
    return HeaderAsm{HeaderAsmKind::Arithmetic, Intrinsic::not_intrinsic, 0,
                     false, {}, std::move(P)};
  return std::nullopt;
}

bool isDeadAsm(const CallBase &CB) {
  const auto *IA = dyn_cast<InlineAsm>(CB.getCalledOperand());
  return IA && !IA->hasSideEffects() && CB.use_empty() &&
         CB.doesNotAccessMemory();
}

} // namespace cleave
