//===- BundleTest.cpp - Kernel bundles: compiler writes, runtime reads ----===//
//
// Part of Cleave. A small device module (inline IR below) goes through the
// compiler's bundle writer and comes back through the runtime's reader with
// every field it should have. Then the reader is fed the same bytes broken
// in every way we can think of: another version, a bad checksum, every
// truncation, random bit flips, and corrupt payloads with a recomputed
// checksum (which get past the checksum and test the decoder's bounds). Each
// must be refused with a status, and nothing may crash.
//
//===----------------------------------------------------------------------===//
#include "../BundleFromIR.h"
#include "../TestInputs.h"
#include "cleave/ABI/BundleFormat.h"
#include "cleave/Bundle/BundleWriter.h"
#include "cleave/rt/Bundle.h"
#include "cleave/rt/Footprint.h"

#include "llvm/AsmParser/Parser.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm/Support/SourceMgr.h"
#include "gtest/gtest.h"

#include <cstdio>
#include <random>

using namespace cleave::rt;
namespace fmt = cleave::bundle;

namespace {

// vecadd: splittable, merge kernel, CPU variant. hist: global atomics whose
// results are unused: a combined output, no merge kernel. tiled: static shared memory and a __constant__
// variable. withasm: inline PTX keeps it GPU-only.
const std::string DeviceIR = std::string(R"IR(
target datalayout = "e-i64:64-i128:128-v16:16-v32:32-n16:32:64"
target triple = "nvptx64-nvidia-cuda"

@factor = addrspace(4) externally_initialized constant float 2.0, align 4
@tile = internal addrspace(3) global [64 x float] undef, align 4

define ptx_kernel void @vecadd(ptr noundef readonly %a, ptr noundef readonly %b, ptr noundef writeonly %c, i32 noundef %n) #0 {
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
  %pa = getelementptr inbounds float, ptr %a, i64 %idx
  %pb = getelementptr inbounds float, ptr %b, i64 %idx
  %pc = getelementptr inbounds float, ptr %c, i64 %idx
  %va = load float, ptr %pa, align 4
  %vb = load float, ptr %pb, align 4
  %s = fadd float %va, %vb
  store float %s, ptr %pc, align 4
  br label %exit
exit:
  ret void
}

)IR") + cleave::test::testInput("hist.ll") + R"IR(
define ptx_kernel void @tiled(ptr noundef readonly %in, ptr noundef writeonly %out) #0 {
entry:
  %bid = call i32 @llvm.nvvm.read.ptx.sreg.ctaid.x()
  %tid = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %m = shl i32 %bid, 6
  %i = add i32 %m, %tid
  %idx = zext i32 %i to i64
  %pin = getelementptr inbounds float, ptr %in, i64 %idx
  %v = load float, ptr %pin, align 4
  %t = zext i32 %tid to i64
  %slot = getelementptr inbounds [64 x float], ptr addrspace(3) @tile, i64 0, i64 %t
  store float %v, ptr addrspace(3) %slot, align 4
  call void @llvm.nvvm.barrier0()
  %r = sub i32 63, %tid
  %rt = zext i32 %r to i64
  %rslot = getelementptr inbounds [64 x float], ptr addrspace(3) @tile, i64 0, i64 %rt
  %w = load float, ptr addrspace(3) %rslot, align 4
  %f = load float, ptr addrspace(4) @factor, align 4
  %p = fmul float %w, %f
  %pout = getelementptr inbounds float, ptr %out, i64 %idx
  store float %p, ptr %pout, align 4
  ret void
}

define ptx_kernel void @withasm(ptr noundef writeonly %out) #0 {
entry:
  %tid = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %lane = call i32 asm "brev.b32 $0, $1;", "=r,r"(i32 %tid)
  %idx = zext i32 %tid to i64
  %p = getelementptr inbounds i32, ptr %out, i64 %idx
  store i32 %lane, ptr %p, align 4
  ret void
}

declare i32 @llvm.nvvm.read.ptx.sreg.ctaid.x()
declare i32 @llvm.nvvm.read.ptx.sreg.ntid.x()
declare i32 @llvm.nvvm.read.ptx.sreg.tid.x()
declare void @llvm.nvvm.barrier0()

attributes #0 = { "target-cpu"="sm_90" "target-features"="+ptx85,+sm_90" }
)IR";

/// The bundle of DeviceIR, written once (PTX only: the test needs no
/// ptxas).
const std::string &bundleBytes() {
  static const std::string Bytes =
      cleave::test::bundleFromIR(DeviceIR.c_str(), "bundle_test.cu");
  return Bytes;
}

BundleStatus parseBytes(const std::string &S, Bundle &B) {
  return Bundle::parse(S.data(), S.size(), B);
}

/// Rewrites the header's payload size and checksum to match the bytes, so
/// that corruption of the payload reaches the decoder.
void reseal(std::string &S) {
  fmt::ByteWriter W;
  W.Bytes = S;
  W.patchU64(fmt::PayloadSizeOffset, S.size() - fmt::HeaderSize);
  const auto *P = reinterpret_cast<const unsigned char *>(W.Bytes.data());
  W.patchU64(fmt::ChecksumOffset,
             fmt::bundleChecksum(P, P + fmt::HeaderSize,
                                 S.size() - fmt::HeaderSize));
  S = W.Bytes;
}

TEST(Bundle, RoundTrip) {
  const std::string &Bytes = bundleBytes();
  ASSERT_FALSE(Bytes.empty());
  Bundle B;
  BundleStatus S = parseBytes(Bytes, B);
  ASSERT_TRUE(S) << S.Message;
  EXPECT_EQ(B.Source, "bundle_test.cu");
  EXPECT_EQ(B.Producer.rfind("cleave ", 0), 0u);
  ASSERT_EQ(B.Kernels.size(), 4u);

  // One PTX module with every kernel and variant.
  const BundleImage *PTX = B.findImage(ImageKind::PTX, "sm_90");
  ASSERT_NE(PTX, nullptr);
  EXPECT_NE(PTX->Data.find(".entry vecadd"), std::string::npos);
  EXPECT_NE(PTX->Data.find(".entry __cleave_pr_vecadd"), std::string::npos);
  EXPECT_NE(PTX->Data.find(".entry __cleave_merge_vecadd"), std::string::npos);
  EXPECT_EQ(B.findImage(ImageKind::Cubin, "sm_90"), nullptr);

  const BundleKernel *V = B.findKernel("vecadd");
  ASSERT_NE(V, nullptr);
  EXPECT_EQ(V->Language, SourceLanguage::CUDA);
  ASSERT_EQ(V->Params.size(), 4u);
  EXPECT_EQ(V->Params[0].Kind, ParamKind::Pointer);
  EXPECT_EQ(V->Params[0].Size, 8u);
  EXPECT_EQ(V->Params[0].Role, ParamRole::Read);
  EXPECT_EQ(V->Params[2].Role, ParamRole::Write);
  EXPECT_EQ(V->Params[3].Kind, ParamKind::Scalar);
  EXPECT_EQ(V->Params[3].Size, 4u);
  EXPECT_EQ(V->Params[3].Role, ParamRole::NotPointer);
  EXPECT_TRUE(V->CanSplit);
  EXPECT_TRUE(V->CanRunOnCPU);
  EXPECT_TRUE(V->Issues.empty());
  EXPECT_EQ(V->variant(VariantKind::Original).Entry, "vecadd");
  EXPECT_EQ(V->variant(VariantKind::Partition).Entry, "__cleave_pr_vecadd");
  EXPECT_EQ(V->variant(VariantKind::Merge).Entry, "__cleave_merge_vecadd");
  EXPECT_EQ(V->variant(VariantKind::CPU).Entry, "__cleave_cpu_vecadd");
  // The runtime finds CPU code by the descriptor names the bundle gives.
  EXPECT_EQ(V->variant(VariantKind::CPU).CpuDescriptor,
            "__cleave_cpu_vecadd_desc");
  EXPECT_EQ(V->variant(VariantKind::Merge).CpuDescriptor,
            "__cleave_cpu___cleave_merge_vecadd_desc");
  EXPECT_EQ(V->variant(VariantKind::Partition).CpuDescriptor, "");
  EXPECT_EQ(V->SwappedTwin, "");
  EXPECT_EQ(V->MergeOutputs, std::vector<uint32_t>{2});
  EXPECT_EQ(V->StaticSharedBytes, 0u);
  // The footprints are the runtime evaluator's input.
  FootprintProgram FP;
  Status FS = FootprintProgram::parse(V->Footprints, FP);
  EXPECT_TRUE(FS) << FS.Message;

  const BundleKernel *H = B.findKernel("hist");
  ASSERT_NE(H, nullptr);
  EXPECT_TRUE(H->CanSplit);
  EXPECT_TRUE(H->Issues.empty());
  ASSERT_EQ(H->Combined.size(), 1u);
  EXPECT_EQ(H->Combined[0].Arg, 1u);
  EXPECT_EQ(H->Combined[0].Op, CombineOp::Add);
  EXPECT_EQ(H->Combined[0].Bytes, 4u);
  EXPECT_TRUE(H->variant(VariantKind::Partition).Present);
  const BundleVariant &HM = H->variant(VariantKind::Merge);
  EXPECT_FALSE(HM.Present);
  EXPECT_NE(HM.Reason.find("atomic"), std::string::npos) << HM.Reason;
  EXPECT_TRUE(H->variant(VariantKind::CPU).Present);
  EXPECT_EQ(H->Params[1].Role, ParamRole::ReadWrite);

  const BundleKernel *T = B.findKernel("tiled");
  ASSERT_NE(T, nullptr);
  EXPECT_EQ(T->StaticSharedBytes, 256u);
  ASSERT_EQ(B.Variables.size(), 1u);
  EXPECT_EQ(B.Variables[0].Name, "factor");
  EXPECT_EQ(B.Variables[0].Space, VariableSpace::Constant);
  EXPECT_EQ(B.Variables[0].Size, 4u);
  EXPECT_EQ(B.Variables[0].CpuSymbol, "__cleave_cpu_var_factor");
  ASSERT_EQ(T->Variables.size(), 1u);
  EXPECT_EQ(T->Variables[0].Variable, 0u);
  EXPECT_TRUE(T->Variables[0].Read);
  EXPECT_FALSE(T->Variables[0].Written);
  EXPECT_TRUE(V->Variables.empty());

  const BundleKernel *A = B.findKernel("withasm");
  ASSERT_NE(A, nullptr);
  EXPECT_FALSE(A->CanRunOnCPU);
  const BundleVariant &AC = A->variant(VariantKind::CPU);
  EXPECT_FALSE(AC.Present);
  EXPECT_EQ(AC.CpuDescriptor, "");
  EXPECT_NE(AC.Reason.find("stays GPU-only"), std::string::npos) << AC.Reason;
  EXPECT_NE(AC.Reason.find("inline"), std::string::npos) << AC.Reason;

  EXPECT_EQ(B.findKernel("nope"), nullptr);
  EXPECT_EQ(B.Version, fmt::FormatVersion);
  std::string Text = B.describe();
  EXPECT_NE(Text.find("kernel vecadd\n"), std::string::npos);
  EXPECT_NE(Text.find("  variant cpu: none: "), std::string::npos);
}

TEST(Bundle, Deterministic) {
  // The writer's output depends on the module only: a second module parsed
  // from the same text gives the same bytes.
  std::string Again = cleave::test::bundleFromIR(DeviceIR.c_str(), "bundle_test.cu");
  ASSERT_FALSE(Again.empty());
  EXPECT_EQ(Again, bundleBytes());
}

TEST(Bundle, CarriesTheCoRunModelsInputs) {
  Bundle B;
  ASSERT_TRUE(parseBytes(bundleBytes(), B));
  // vecadd: two loads and a store, neighbouring lanes 4 bytes apart (four
  // sectors a request), under the bounds check; the estimate weighs the
  // guarded block by the branch's static probability.
  const BundleKernel *V = B.findKernel("vecadd");
  ASSERT_TRUE(V && V->CoRun);
  const BundleCoRun &C = *V->CoRun;
  double Loads = C.PerThread[unsigned(InstrClass::GlobalLoad)];
  double Stores = C.PerThread[unsigned(InstrClass::GlobalStore)];
  EXPECT_GT(Loads, 0);
  EXPECT_DOUBLE_EQ(Loads, 2 * Stores);
  EXPECT_GT(C.PerThread[unsigned(InstrClass::Fp32)], 0);
  EXPECT_DOUBLE_EQ(C.BytesPerLane, 4);
  EXPECT_DOUBLE_EQ(C.SectorsPerRequest, 4);
  // withasm stores at a stride of 4 bytes too; hist's atomics go through a
  // loaded index: one sector per lane.
  const BundleKernel *H = B.findKernel("hist");
  ASSERT_TRUE(H && H->CoRun);
  EXPECT_GT(H->CoRun->SectorsPerRequest, 4);
  EXPECT_NE(B.describe().find("  co-run inputs per thread:"),
            std::string::npos);
}

TEST(Bundle, ReadsVersion5AsWithoutCoRunInputs) {
  // A version-5 bundle is a version-6 one without the co-run table at the
  // end of the payload: it reads the same, with no co-run inputs.
  std::string S = bundleBytes();
  Bundle New;
  ASSERT_TRUE(parseBytes(S, New));
  size_t Table = 4;
  for (const BundleKernel &K : New.Kernels)
    Table += 1 + (K.CoRun ? 4 + 8 * (NumInstrClasses + 2) : 0);
  ASSERT_GT(S.size(), fmt::HeaderSize + Table);
  std::string Old = S.substr(0, S.size() - Table);
  for (int I = 0; I < 4; ++I)
    Old[fmt::VersionOffset + I] = char(fmt::MinFormatVersion >> (8 * I));
  reseal(Old);
  Bundle B;
  BundleStatus St = parseBytes(Old, B);
  ASSERT_TRUE(St) << St.Message;
  EXPECT_EQ(B.Version, 5u);
  ASSERT_EQ(B.Kernels.size(), New.Kernels.size());
  for (const BundleKernel &K : B.Kernels)
    EXPECT_FALSE(K.CoRun) << K.Name;
  // Everything else is as in the version-6 bundle.
  for (BundleKernel &K : New.Kernels)
    K.CoRun.reset();
  New.Version = B.Version;
  EXPECT_EQ(B.describe(), New.describe());
  // The table itself is required from version 6 on.
  std::string Cut = Old;
  for (int I = 0; I < 4; ++I)
    Cut[fmt::VersionOffset + I] = char(fmt::FormatVersion >> (8 * I));
  reseal(Cut);
  EXPECT_EQ(parseBytes(Cut, B).Code, BundleErrc::Malformed);
}

TEST(Bundle, RefusesOtherVersion) {
  std::string S = bundleBytes();
  ASSERT_FALSE(S.empty());
  for (uint32_t V : {0u, fmt::MinFormatVersion - 1, fmt::FormatVersion + 1,
                     0xffffffffu}) {
    std::string T = S;
    for (int I = 0; I < 4; ++I)
      T[fmt::VersionOffset + I] = char(V >> (8 * I));
    reseal(T); // a well-formed bundle of another version
    Bundle B;
    BundleStatus St = parseBytes(T, B);
    EXPECT_EQ(St.Code, BundleErrc::Version);
    EXPECT_NE(St.Message.find("format version " + std::to_string(V)),
              std::string::npos)
        << St.Message;
    EXPECT_TRUE(B.Kernels.empty());
  }
  std::string T = S;
  T[fmt::FlagsOffset] = 1;
  Bundle B;
  EXPECT_EQ(parseBytes(T, B).Code, BundleErrc::Version);
}

TEST(Bundle, RefusesBadChecksum) {
  std::string S = bundleBytes();
  ASSERT_FALSE(S.empty());
  S[S.size() / 2] ^= 0x10;
  Bundle B;
  BundleStatus St = parseBytes(S, B);
  EXPECT_EQ(St.Code, BundleErrc::Checksum);
  EXPECT_NE(St.Message.find("checksum"), std::string::npos);
  S = bundleBytes();
  S[fmt::ChecksumOffset] ^= 1;
  EXPECT_EQ(parseBytes(S, B).Code, BundleErrc::Checksum);
}

TEST(Bundle, RefusesNonBundles) {
  Bundle B;
  EXPECT_EQ(Bundle::parse(nullptr, 0, B).Code, BundleErrc::NotBundle);
  std::string Elf = "\x7f" "ELF" + std::string(60, '\0');
  EXPECT_EQ(parseBytes(Elf, B).Code, BundleErrc::NotBundle);
  EXPECT_EQ(Bundle::load("/nonexistent/x.clvb", B).Code, BundleErrc::Io);
  EXPECT_EQ(Bundle::load("/", B).Code, BundleErrc::Io);
  std::string Extra = bundleBytes() + "x";
  EXPECT_EQ(parseBytes(Extra, B).Code, BundleErrc::Malformed);
}

TEST(Bundle, RefusesEveryTruncation) {
  const std::string &S = bundleBytes();
  ASSERT_FALSE(S.empty());
  Bundle B;
  for (size_t L = 0; L < S.size(); ++L) {
    BundleStatus St = Bundle::parse(S.data(), L, B);
    ASSERT_FALSE(St) << "accepted a bundle cut at " << L;
    ASSERT_EQ(St.Code, L < fmt::HeaderSize ? BundleErrc::NotBundle
                                           : BundleErrc::Truncated)
        << L;
    ASSERT_TRUE(B.Kernels.empty());
  }
}

TEST(Bundle, RefusesEveryTruncatedPayloadWithValidChecksum) {
  // Cut the payload and fix the header: the decoder itself must notice. Every
  // length through the metadata, a stride through the image bytes.
  const std::string &S = bundleBytes();
  ASSERT_FALSE(S.empty());
  Bundle Good;
  ASSERT_TRUE(parseBytes(S, Good));
  size_t ImageBytes = 0;
  for (const BundleImage &I : Good.Images)
    ImageBytes += I.Data.size();
  Bundle B;
  for (size_t L = fmt::HeaderSize; L < S.size();) {
    std::string T = S.substr(0, L);
    reseal(T);
    BundleStatus St = parseBytes(T, B);
    ASSERT_EQ(St.Code, BundleErrc::Malformed) << L << ": " << St.Message;
    ASSERT_TRUE(B.Kernels.empty());
    bool InImages = L > fmt::HeaderSize + 64 && L < fmt::HeaderSize + ImageBytes;
    L += InImages ? 97 : 1;
  }
}

TEST(Bundle, SurvivesBitFlips) {
  const std::string &S = bundleBytes();
  ASSERT_FALSE(S.empty());
  std::mt19937_64 Rng(12345);
  Bundle B;
  for (int Iter = 0; Iter < 3000; ++Iter) {
    std::string T = S;
    int Flips = 1 + Iter % 3;
    for (int F = 0; F < Flips; ++F) {
      size_t Bit = Rng() % (T.size() * 8);
      T[Bit / 8] ^= char(1 << (Bit % 8));
    }
    BundleStatus St = parseBytes(T, B);
    if (Flips == 1) // FNV-1a catches every change confined to one byte
      ASSERT_FALSE(St) << "a one-bit flip went unnoticed";
    if (!St)
      ASSERT_TRUE(B.Kernels.empty());
  }
}

TEST(Bundle, DecoderSurvivesCorruptPayloads) {
  // Corruption that the checksum does not catch (resealed): every outcome
  // is either a clean decode or Malformed, never a crash.
  const std::string &S = bundleBytes();
  ASSERT_FALSE(S.empty());
  Bundle Good;
  ASSERT_TRUE(parseBytes(S, Good));
  std::mt19937_64 Rng(777);
  // Corrupt mostly the metadata after the images, where the structure is.
  size_t ImageEnd = fmt::HeaderSize + 64;
  for (const BundleImage &I : Good.Images)
    ImageEnd += I.Data.size();
  ImageEnd = std::min(ImageEnd, S.size() - 1);
  Bundle B;
  int Malformed = 0;
  for (int Iter = 0; Iter < 3000; ++Iter) {
    std::string T = S;
    int Changes = 1 + Iter % 4;
    for (int C = 0; C < Changes; ++C) {
      size_t Lo = Iter % 5 == 0 ? fmt::HeaderSize : ImageEnd;
      size_t Pos = Lo + Rng() % (T.size() - Lo);
      // Bytes that make lengths and counts huge, or small, or random.
      static const unsigned char Values[] = {0x00, 0xff, 0x7f, 0x80, 0x01};
      T[Pos] = Iter % 2 ? char(Values[Rng() % 5]) : char(Rng());
    }
    reseal(T);
    BundleStatus St = parseBytes(T, B);
    if (!St) {
      ASSERT_EQ(St.Code, BundleErrc::Malformed) << St.Message;
      ASSERT_TRUE(B.Kernels.empty());
      ++Malformed;
    } else {
      (void)B.describe(); // whatever decoded must print
    }
  }
  EXPECT_GT(Malformed, 100);
}

TEST(Bundle, LoadsFromFile) {
  const std::string &S = bundleBytes();
  ASSERT_FALSE(S.empty());
  std::string Path = testing::TempDir() + "bundle_test.clvb";
  FILE *F = std::fopen(Path.c_str(), "wb");
  ASSERT_NE(F, nullptr);
  std::fwrite(S.data(), 1, S.size(), F);
  std::fclose(F);
  Bundle B;
  BundleStatus St = Bundle::load(Path.c_str(), B);
  EXPECT_TRUE(St) << St.Message;
  EXPECT_EQ(B.Kernels.size(), 4u);
  std::remove(Path.c_str());
}

} // namespace
