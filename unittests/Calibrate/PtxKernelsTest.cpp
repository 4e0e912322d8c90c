//===- PtxKernelsTest.cpp - The calibration kernels' PTX ------------------===//
//
// Structure checks always; with CUDA's ptxas available, every module is
// assembled for sm_90 and each paired kernel is checked to differ by the
// instructions under test: the test kernel's SASS must be larger than the
// base's by at least one instruction per added PTX instruction (within the
// 128-byte padding of a code section), so ptxas folded nothing away. The
// only expected exception is mov (copy propagation removes it, and the
// profile says so).
//
//===----------------------------------------------------------------------===//
#include "PtxKernels.h"

#include <gtest/gtest.h>

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <elf.h>
#include <fstream>
#include <map>
#include <sstream>

using namespace cleave::calibrate;

namespace {

size_t count(const std::string &Hay, const std::string &Needle) {
  size_t N = 0;
  for (size_t At = Hay.find(Needle); At != std::string::npos;
       At = Hay.find(Needle, At + 1))
    ++N;
  return N;
}

std::string ptxas() {
  if (const char *E = std::getenv("CLEAVE_PTXAS"))
    return E;
  for (const char *P : {"/usr/local/cuda/bin/ptxas", "/usr/bin/ptxas"})
    if (access(P, X_OK) == 0)
      return P;
  return "";
}

/// Sizes of the ".text.<kernel>" sections of a cubin (an ELF64 file).
std::map<std::string, size_t> textSizes(const std::string &Path) {
  std::ifstream In(Path, std::ios::binary);
  std::stringstream S;
  S << In.rdbuf();
  std::string B = S.str();
  std::map<std::string, size_t> Out;
  if (B.size() < sizeof(Elf64_Ehdr))
    return Out;
  Elf64_Ehdr H;
  std::memcpy(&H, B.data(), sizeof(H));
  if (H.e_shoff + size_t(H.e_shnum) * sizeof(Elf64_Shdr) > B.size())
    return Out;
  std::vector<Elf64_Shdr> Sh(H.e_shnum);
  std::memcpy(Sh.data(), B.data() + H.e_shoff, H.e_shnum * sizeof(Elf64_Shdr));
  const char *Names = B.data() + Sh[H.e_shstrndx].sh_offset;
  for (const Elf64_Shdr &X : Sh) {
    std::string Name = Names + X.sh_name;
    if (Name.rfind(".text.", 0) == 0)
      Out[Name.substr(6)] = X.sh_size;
  }
  return Out;
}

} // namespace

TEST(PtxKernelsTest, PairsDifferOnlyByTheInstructionUnderTest) {
  ASSERT_FALSE(instructionClasses().empty());
  for (const InstrClass &C : instructionClasses()) {
    std::string Ptx = instructionPairPtx(C);
    SCOPED_TRACE(C.Name);
    EXPECT_EQ(count(Ptx, ".visible .entry base("), 1u);
    EXPECT_EQ(count(Ptx, ".visible .entry test("), 1u);
    size_t Base = Ptx.find(".entry base("), Test = Ptx.find(".entry test(");
    std::string BaseText = Ptx.substr(Base, Test - Base);
    std::string TestText = Ptx.substr(Test);
    // The first instruction of the step under test appears Unroll times in
    // the test kernel and never in the base kernel.
    std::string Line = std::string(C.Op).substr(0, std::string(C.Op).find(';'));
    if (Line.find("{K}") == std::string::npos) {
      EXPECT_EQ(count(TestText, Line), C.Unroll);
      EXPECT_EQ(count(BaseText, Line), 0u);
    }
    EXPECT_EQ(count(TestText, "%clock64"), 2u);
    EXPECT_GT(C.PerStep, 0u);
    EXPECT_GT(C.Unroll, 0u);
  }
}

TEST(PtxKernelsTest, AssembleWithPtxasAndNothingIsFolded) {
  std::string Ptxas = ptxas();
  if (Ptxas.empty())
    GTEST_SKIP() << "no ptxas (CUDA toolkit) on this machine";
  char Dir[] = "/tmp/cleave-calibrate-test-XXXXXX";
  ASSERT_NE(mkdtemp(Dir), nullptr);
  auto Assemble = [&](const std::string &Name, const std::string &Ptx) {
    std::string In = std::string(Dir) + "/" + Name + ".ptx";
    std::string Out = std::string(Dir) + "/" + Name + ".cubin";
    std::ofstream(In) << Ptx;
    std::string Cmd =
        Ptxas + " -arch=sm_90 " + In + " -o " + Out + " 2>" + Out + ".log";
    int Rc = std::system(Cmd.c_str());
    std::ifstream Log(Out + ".log");
    std::stringstream L;
    L << Log.rdbuf();
    EXPECT_EQ(Rc, 0) << Name << ": " << L.str();
    return textSizes(Out);
  };
  for (const InstrClass &C : instructionClasses()) {
    SCOPED_TRACE(C.Name);
    auto Sizes = Assemble(std::string("instr_") + C.Name,
                          instructionPairPtx(C));
    ASSERT_TRUE(Sizes.count("base") && Sizes.count("test"));
    long Added = (long(Sizes["test"]) - long(Sizes["base"])) / 16;
    long Expected = long(C.Unroll) * C.PerStep;
    if (std::string(C.Name) == "mov.b32")
      EXPECT_EQ(Added, 0); // copy propagation, as the profile notes
    else
      EXPECT_GE(Added, Expected - 8) << "ptxas folded the chain";
  }
  auto Util = Assemble("utility", utilityPtx());
  for (const char *K : {"empty", "spin", "chase_ca", "chase_cg", "read_v4",
                        "copy_v4"})
    EXPECT_TRUE(Util.count(K)) << K;
  for (auto [Kc, Km] : {std::pair<unsigned, unsigned>{64, 0}, {16, 1}}) {
    auto Cpd = Assemble("cpd_" + std::to_string(Kc) + "_" + std::to_string(Km),
                        cpdPtx(Kc, Km));
    EXPECT_TRUE(Cpd.count("cpd"));
    // Every FMA of the chain survives.
    EXPECT_GE(long(Cpd["cpd"] / 16), long(Kc));
  }
  std::string Rm = std::string("rm -rf ") + Dir;
  EXPECT_EQ(std::system(Rm.c_str()), 0);
}
