//===- KernelProfileTest.cpp - `cleave analyze`'s report as model inputs --===//
//
// Part of Cleave. The runtime's reader of `cleave analyze --json`
// (KernelProfile.h) on a report the tool wrote (unittests/Inputs/
// analyze-vecadd.json: examples/vecadd.cu -- 65536), its errors, and the
// co-scheduler taking a launch's model inputs from it (CoRunGate.h).
//
//===----------------------------------------------------------------------===//
#include "CoRunTestKernels.h"
#include "cleave/rt/CoRunGate.h"
#include "cleave/rt/KernelProfile.h"
#include "cleave/rt/Options.h"

#include "gtest/gtest.h"

using namespace cleave::rt;
using namespace cleave_corun_test;

namespace {

TEST(KernelProfile, ReadsTheReportCleaveAnalyzeWrites) {
  KernelProfile P;
  std::string Path =
      std::string(CLEAVE_TEST_SOURCE_ROOT) + "/unittests/Inputs/analyze-vecadd.json";
  Result R = loadKernelProfile(Path, P);
  ASSERT_TRUE(R.ok()) << R.toString();
  ASSERT_EQ(P.Entries.size(), 1u);
  const KernelProfileEntry &E = P.Entries[0];
  EXPECT_EQ(E.Kernel, "_Z6vecaddPKfS0_Pfi");
  EXPECT_EQ(E.Grid[0], 256u);
  EXPECT_EQ(E.Block[0], 256u);
  EXPECT_EQ(E.Stats.Blocks, 256u);
  EXPECT_EQ(E.Stats.ThreadsPerBlock, 256u);
  // 15 instructions per warp, 3 of them global requests of 32 lanes x 4 B.
  double Instr = 0;
  for (double C : E.Stats.Count)
    Instr += C;
  EXPECT_DOUBLE_EQ(Instr, 15);
  EXPECT_DOUBLE_EQ(E.Stats.Count[unsigned(cleave::InstrClass::GlobalLoad)], 2);
  EXPECT_DOUBLE_EQ(E.Stats.Requests, 3);
  EXPECT_DOUBLE_EQ(E.Stats.SectorsPerRequest, 4);
  EXPECT_DOUBLE_EQ(E.Stats.BytesPerLane, 4);
  EXPECT_EQ(E.Resources.Registers, 12u);
  corun::KernelModelInput In;
  ASSERT_TRUE(
      corun::kernelInputs(E.Stats, E.Resources, model::GpuParams(), In).ok());
  EXPECT_DOUBLE_EQ(In.MemRatio, 3.0 / 15);
  EXPECT_DOUBLE_EQ(In.CoalescedFraction, 1);
  EXPECT_DOUBLE_EQ(In.InstrPerBlock, 15 * 8);

  // The entry of the launch's grid, else the closest grid of the kernel,
  // block and shared memory.
  uint32_t Grid[3] = {4096, 1, 1}, Block[3] = {256, 1, 1};
  EXPECT_EQ(P.find("_Z6vecaddPKfS0_Pfi", Grid, Block, 0), &E);
  Block[0] = 128;
  EXPECT_EQ(P.find("_Z6vecaddPKfS0_Pfi", Grid, Block, 0), nullptr);
  Block[0] = 256;
  EXPECT_EQ(P.find("_Z6vecaddPKfS0_Pfi", Grid, Block, 16), nullptr);
  EXPECT_EQ(P.find("vecadd", Grid, Block, 0), nullptr);
}

/// A report of one entry for engine_test's kernel \p Kernel (grid, block),
/// with \p Classes and \p Memory as the tool writes them.
std::string report(const std::string &Kernel, const std::string &Grid,
                   const std::string &Block, const std::string &Classes,
                   const std::string &Memory) {
  return R"({"tool": "cleave analyze", "schema_version": 1, "kernels": [
    {"kernel": ")" +
         Kernel + R"(", "grid": )" + Grid + R"(, "block": )" + Block +
         R"(, "dynamic_shared_bytes": 0, "registers": 16,
     "static_shared_bytes": 0, "per_warp": {"classes": )" +
         Classes + R"(}, "memory": )" + Memory + "}]}";
}

TEST(KernelProfile, RefusesWhatIsNotAReport) {
  KernelProfile P;
  auto Fails = [&](const std::string &Text, const std::string &Why) {
    Result R = parseKernelProfile(Text, P);
    EXPECT_FALSE(R.ok()) << Text;
    EXPECT_NE(R.message().find(Why), std::string::npos) << R.message();
  };
  std::string Mem = R"({"requests_per_warp": 2})";
  Fails("[]", "not a JSON object");
  Fails(R"({"schema_version": 1, "kernels": []})", "not a report");
  Fails(R"({"tool": "cleave analyze", "schema_version": 2, "kernels": []})",
        "schema_version");
  Fails(report("tr", "[1, 1024, 1]", "[64, 1]", R"({"int": 4})", Mem),
        "kernels[0].block is not an array of 3");
  Fails(report("tr", "[1, 1024, 1]", "[64, 1, 1]", R"({"warp.magic": 4})",
               Mem),
        "unknown instruction class 'warp.magic'");
  Fails(report("tr", "[1, 1024, 1]", "[64, 1, 1]", R"({"int": "4"})", Mem),
        "kernels[0].per_warp.classes.int is a string, not a number");
  EXPECT_TRUE(parseKernelProfile(report("tr", "[1, 1024, 1]", "[64, 1, 1]",
                                        R"({"int": 4})", Mem),
                                 P)
                  .ok());
  EXPECT_FALSE(loadKernelProfile("/nonexistent/report.json", P).ok());
}

TEST(KernelProfile, TheCoSchedulerTakesItsInputsFromTheReport) {
  std::unique_ptr<DeviceRegistry> Reg;
  ASSERT_TRUE(DeviceRegistry::create("cpu", Reg, RegistryOptions{"none"}).ok());
  BufferManager Bufs(Reg->devices());
  CpuExecutor Exec(1);
  Engine E(Bufs, Exec, PartitionPolicy::Even, Options());
  ASSERT_TRUE(E.addProgram(bundleBytes().data(), bundleBytes().size(),
                           cpuSymbols())
                  .ok());
  // tr measured at a memory ratio of 2 / 10 with uncoalesced stores; keep
  // not in the report.
  auto P = std::make_shared<KernelProfile>();
  ASSERT_TRUE(
      parseKernelProfile(
          report("tr", "[1, 1024, 1]", "[64, 1, 1]",
                 R"({"int": 8, "ld.global": 1, "st.global": 1})",
                 R"({"requests_per_warp": 2, "lanes_per_request": 32,
                     "bytes_per_lane": 4, "sectors_per_request": 18})"),
          *P)
          .ok());
  KernelLaunchRequest TR;
  TR.Kernel = E.findKernel("tr");
  TR.Grid[1] = 1024;
  TR.Block[0] = 64;
  std::optional<corun::KernelModelInput> M = measuredModelInput(E, TR, *P);
  ASSERT_TRUE(M);
  EXPECT_DOUBLE_EQ(M->MemRatio, 0.2);
  EXPECT_DOUBLE_EQ(M->InstrPerBlock, 20);
  // 18 sectors a request: halfway between 4 (coalesced) and 32.
  EXPECT_DOUBLE_EQ(M->CoalescedFraction, 0.5);
  KernelLaunchRequest KR;
  KR.Kernel = E.findKernel("keep");
  KR.Grid[0] = 256;
  KR.Block[0] = 64;
  EXPECT_FALSE(measuredModelInput(E, KR, *P));

  // Through the gate: the plan says which inputs a launch was weighed
  // with (tr's measured, keep's the bundle's estimate).
  CoRunGateOptions O;
  O.Hold = CoRunGateOptions::HoldRule::Predicted;
  O.Measured = P;
  O.LogPlan = true;
  testing::internal::CaptureStderr();
  CoRunGate Logged(E, O);
  EXPECT_TRUE(Logged.passesThrough(TR, 1));
  EXPECT_TRUE(Logged.passesThrough(KR, 2));
  std::string Log = testing::internal::GetCapturedStderr();
  EXPECT_NE(Log.find("passes through: tr: no modeled launch of another "
                     "stream (inputs measured)"),
            std::string::npos)
      << Log;
  EXPECT_NE(Log.find("passes through: keep: the model's prediction is not "
                     "made yet (inputs estimate)"),
            std::string::npos)
      << Log;
}

} // namespace
