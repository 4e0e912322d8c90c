//===- ModelPartitionerTest.cpp - The model policy on synthetic devices ---===//
//
// The planner (cleave/rt/ModelPartitioner.h) with synthetic devices and byte
// functions: the performance cache's round trip and corrupt files, device
// profiles, seeded tables, refinement from timings, and the decisions of
// digest 002 (a transfer-dominated kernel kept on one device, a kernel whose
// best device is the CPU) plus residency making a split pay, and several CPU
// devices sharing one executor.
//
//===----------------------------------------------------------------------===//

#include "cleave/rt/ModelPartitioner.h"

#include "gtest/gtest.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <numeric>
#include <sstream>
#include <string>

#include <dirent.h>
#include <unistd.h>

using namespace cleave::rt;

namespace {

/// A fresh directory under the test's temporary directory.
std::string tempDir(const std::string &Name) {
  const char *T = std::getenv("TMPDIR");
  std::string Dir = std::string(T && *T ? T : "/tmp") + "/cleave-planner-" +
                    Name + "-" + std::to_string(::getpid());
  std::string Cmd = "rm -rf '" + Dir + "'";
  EXPECT_EQ(std::system(Cmd.c_str()), 0);
  return Dir;
}

std::string readFile(const std::string &Path) {
  std::ifstream In(Path);
  std::ostringstream SS;
  SS << In.rdbuf();
  return SS.str();
}

void writeFile(const std::string &Path, const std::string &Text) {
  std::ofstream Out(Path);
  Out << Text;
}

std::vector<std::string> listDir(const std::string &Dir) {
  std::vector<std::string> Names;
  if (DIR *D = ::opendir(Dir.c_str())) {
    while (dirent *E = ::readdir(D))
      if (E->d_name[0] != '.')
        Names.push_back(E->d_name);
    ::closedir(D);
  }
  return Names;
}

PerfKey key(const char *Kernel = "k@00000000", uint64_t Blocks = 4096) {
  PerfKey K;
  K.Kernel = Kernel;
  K.Block[0] = 256;
  K.GridClass = gridClass(Blocks);
  return K;
}

/// An H200-like GPU: 132 SMs x 8 resident blocks, 4000 GB/s DRAM.
SplitDevice gpu(const std::string &Name, double LinkGBps = 10) {
  SplitDevice D;
  D.Name = Name;
  D.Identity = Name + " test GPU";
  D.Gpu = true;
  D.Wave = 132 * 8;
  D.SeedGBps = 4000;
  D.SeedMinWaveMs = 0.002;
  D.FixedMs = 0.06;
  D.LinkGBps = LinkGBps;
  return D;
}

/// A 32-thread CPU streaming 120 GB/s.
SplitDevice cpu(const std::string &Name) {
  SplitDevice D;
  D.Name = Name;
  D.Identity = Name + " test CPU";
  D.Wave = 32;
  D.SeedGBps = 120;
  D.SeedMinWaveMs = 256e-6;
  D.FixedMs = 0.02;
  D.LinkGBps = 10;
  D.SerialGroup = 0;
  return D;
}

uint64_t sum(const std::vector<uint64_t> &V) {
  return std::accumulate(V.begin(), V.end(), uint64_t(0));
}

//===----------------------------------------------------------------------===//
// The performance cache
//===----------------------------------------------------------------------===//

TEST(PerfCache, RecordsAverageAndRoundTrip) {
  PerfCache C;
  EXPECT_FALSE(C.dirty());
  C.record("gpu0 H200", "k|256x1x1|s0|g12", 1056, 100.0);
  C.record("gpu0 H200", "k|256x1x1|s0|g12", 1056, 200.0); // 100 + 0.3 * 100
  C.record("gpu0 H200", "k|256x1x1|s0|g12", 2112, 50.0);
  C.record("cpu0 host", "k|256x1x1|s0|g12", 32, 7.5);
  C.record("cpu0 host", "k|256x1x1|s0|g12", 0, 7.5);     // ignored
  C.record("cpu0 host", "k|256x1x1|s0|g12", 64, -1.0);   // ignored
  C.record("cpu0 host", "k|256x1x1|s0|g12", 64, NAN);    // ignored
  EXPECT_TRUE(C.dirty());
  EXPECT_EQ(C.numTables(), 2u);
  const PerfCache::Rows *R = C.find("gpu0 H200", "k|256x1x1|s0|g12");
  ASSERT_TRUE(R);
  ASSERT_EQ(R->size(), 2u);
  EXPECT_DOUBLE_EQ(R->at(1056).BlocksPerMs, 130.0);
  EXPECT_EQ(R->at(1056).Samples, 2u);
  EXPECT_EQ(C.find("cpu0 host", "k|256x1x1|s0|g12")->size(), 1u);
  EXPECT_EQ(C.find("gpu1", "k|256x1x1|s0|g12"), nullptr);

  PerfCache D;
  ASSERT_TRUE(D.parse(C.serialize()).ok());
  EXPECT_FALSE(D.dirty());
  EXPECT_EQ(D.serialize(), C.serialize());
  EXPECT_DOUBLE_EQ(D.find("gpu0 H200", "k|256x1x1|s0|g12")->at(1056).BlocksPerMs,
                   130.0);

  // Through a file, atomically: nothing but the file is left behind.
  std::string Dir = tempDir("roundtrip");
  std::string Path = Dir + "/a/b/perf.json";
  ASSERT_TRUE(C.save(Path).ok()) << C.save(Path).message();
  EXPECT_FALSE(C.dirty());
  EXPECT_EQ(listDir(Dir + "/a/b"), std::vector<std::string>{"perf.json"});
  PerfCache E;
  ASSERT_TRUE(E.load(Path).ok());
  EXPECT_EQ(E.serialize(), C.serialize());
  // A missing file is an empty cache.
  PerfCache F;
  EXPECT_TRUE(F.load(Dir + "/none.json").ok());
  EXPECT_EQ(F.numTables(), 0u);
}

TEST(PerfCache, KeepsAtMostMaxRowsPerTable) {
  PerfCache C;
  for (uint64_t B = 1; B <= PerfCache::MaxRows + 10; ++B)
    C.record("gpu0", "k", B * 100, 1.0);
  EXPECT_EQ(C.find("gpu0", "k")->size(), PerfCache::MaxRows);
}

TEST(PerfCache, RefusesMalformedTextAndKeepsItsContents) {
  PerfCache C;
  C.record("gpu0", "k", 1056, 10.0);
  std::string Before = C.serialize();
  for (const char *Bad :
       {"", "{", "[1, 2]", "{\"schema\": \"other\", \"version\": 1}",
        "{\"schema\": \"cleave-perf-cache\", \"version\": 2, \"devices\": {}}",
        "{\"schema\": \"cleave-perf-cache\", \"version\": 1}",
        "{\"schema\": \"cleave-perf-cache\", \"version\": 1, \"devices\": "
        "{\"gpu0\": {\"k\": [[1, 2]]}}}",
        "{\"schema\": \"cleave-perf-cache\", \"version\": 1, \"devices\": "
        "{\"gpu0\": {\"k\": [[\"1\", 2, 1]]}}}",
        "{\"schema\": \"cleave-perf-cache\", \"version\": 1, \"devices\": "
        "{\"gpu0\": {\"k\": [[0, 2, 1]]}}}",
        "{\"schema\": \"cleave-perf-cache\", \"version\": 1, \"devices\": "
        "{\"gpu0\": {\"k\": [[4, -2, 1]]}}}",
        "{\"schema\": \"cleave-perf-cache\", \"version\": 1, \"devices\": "
        "{\"gpu0\": 3}}"}) {
    Result R = C.parse(Bad);
    EXPECT_FALSE(R.ok()) << Bad;
    EXPECT_EQ(R.code(), ErrorCode::InvalidValue) << Bad;
    EXPECT_NE(R.message().find("performance cache"), std::string::npos);
    EXPECT_EQ(C.serialize(), Before) << Bad;
  }
}

// The cache's folder is Options::CacheDir (OptionsTest.CacheDirectory).
TEST(PerfCache, OneFilePerProfileAndDeviceSet) {
  DeviceProfile P;
  std::string F1 = perfCacheFile("/c", P, {"gpu0 H200", "cpu0 host"});
  std::string F2 = perfCacheFile("/c", P, {"gpu0 H100", "cpu0 host"});
  EXPECT_EQ(F1.rfind("/c/perf-defaults-", 0), 0u) << F1;
  EXPECT_NE(F1, F2);
  EXPECT_EQ(perfCacheFile("", P, {"gpu0"}), "");
}

TEST(ModelPartitioner, CorruptCacheIsReportedOnceAndRewritten) {
  std::string Dir = tempDir("corrupt");
  ASSERT_EQ(std::system(("mkdir -p '" + Dir + "'").c_str()), 0);
  std::string Path = Dir + "/perf.json";
  writeFile(Path, "{\"schema\": \"cleave-perf-cache\", \"vers");
  testing::internal::CaptureStderr();
  {
    ModelPartitioner P(DeviceProfile(), Path);
    EXPECT_EQ(P.cache().numTables(), 0u);
    P.record(gpu("gpu0"), key(), 2000, 1.0);
    ASSERT_TRUE(P.flush().ok());
  }
  std::string Err = testing::internal::GetCapturedStderr();
  EXPECT_NE(Err.find("ignoring the performance cache"), std::string::npos)
      << Err;
  EXPECT_NE(Err.find(Path), std::string::npos) << Err;
  EXPECT_EQ(std::count(Err.begin(), Err.end(), '\n'), 1) << Err;
  // Rewritten as a valid cache holding the measurement (row 2112: the wave
  // multiple at or above 2000 blocks, 2000 blocks/ms).
  PerfCache C;
  ASSERT_TRUE(C.load(Path).ok()) << readFile(Path);
  const PerfCache::Rows *R = C.find("gpu0 test GPU", key().text());
  ASSERT_TRUE(R);
  EXPECT_DOUBLE_EQ(R->at(2112).BlocksPerMs, 2000.0);

  // A second planner reads it back: the table's row is measured.
  ModelPartitioner Q(DeviceProfile(), Path);
  SplitRequest Req;
  Req.Key = key();
  Req.TotalBlocks = 4096;
  Req.Devices = {gpu("gpu0")};
  SplitDeviceReport Rep;
  PerfTable T = Q.table(Req, 0, &Rep);
  EXPECT_EQ(Rep.MeasuredRows, 1u);
  EXPECT_DOUBLE_EQ(T.throughput(2112), 2000.0);
}

//===----------------------------------------------------------------------===//
// Device profiles
//===----------------------------------------------------------------------===//

const char *SmallProfile = R"({
  "schema": "cleave-device-profile", "schema_version": 1,
  "date": "2026-11-21T15:08:35Z", "host": {"name": "vm"},
  "gpus": [
    {"index": 0, "name": "NVIDIA H200", "sm_count": 132,
     "max_threads_per_sm": 2048, "max_blocks_per_sm": 32,
     "shared_bytes_per_sm": 233472,
     "bandwidth": {"dram": {"read_gbps": {"median": 4269.7, "min": 4200}}},
     "launch": {"roundtrip_us": {"median": 7.6}},
     "sync": {"stream_sync_idle_us": {"median": 1.4}}},
    {"index": 1, "name": "NVIDIA H200", "sm_count": 132,
     "bandwidth": {"dram": {"error": "out of memory"}}}
  ],
  "host_links": {
    "alone": [{"gpu": 0, "pinned": {"h2d_gbps": 55.4, "d2h_gbps": 55.3},
               "pageable": {"h2d_gbps": {"median": 10.0},
                            "d2h_gbps": {"median": 18.5}}}],
    "states": [{"name": "S/S", "total_send_gbps": 110.3},
               {"name": "R/R", "total_receive_gbps": 110.4},
               {"name": "S/R", "total_send_gbps": 55}],
    "peer": [{"src": 0, "dst": 1, "gbps": {"median": 388.3}}]
  },
  "cpu": {"threads": 32, "memory_bandwidth": {"by_threads": [
    {"threads": 1, "gbps": {"median": 13.7}},
    {"threads": 16, "gbps": {"median": 92.9}},
    {"threads": 32, "gbps": {"median": 129.0}}]}}
})";

TEST(DeviceProfile, ReadsWhatThePlannerUses) {
  DeviceProfile P;
  ASSERT_TRUE(parseDeviceProfile(SmallProfile, P).ok());
  EXPECT_TRUE(P.FromFile);
  EXPECT_EQ(P.Tag, "vm-2026-11-21T15:08:35Z");
  ASSERT_EQ(P.Gpus.size(), 2u);
  const GpuProfile *G = P.gpu(0);
  ASSERT_TRUE(G);
  EXPECT_EQ(G->SMs, 132u);
  EXPECT_DOUBLE_EQ(G->DramGBps, 4269.7);
  EXPECT_DOUBLE_EQ(G->PinnedH2DGBps, 55.4);
  EXPECT_DOUBLE_EQ(G->PageableH2DGBps, 10.0);
  EXPECT_DOUBLE_EQ(G->PageableD2HGBps, 18.5);
  EXPECT_DOUBLE_EQ(G->LaunchRoundTripUs, 7.6);
  EXPECT_DOUBLE_EQ(G->SyncUs, 1.4);
  EXPECT_DOUBLE_EQ(G->PeerGBps.at(1), 388.3);
  EXPECT_DOUBLE_EQ(P.gpu(1)->DramGBps, 0.0); // its measurement failed
  EXPECT_EQ(P.gpu(2), nullptr);
  EXPECT_DOUBLE_EQ(P.AggregateH2DGBps, 110.3);
  EXPECT_DOUBLE_EQ(P.AggregateD2HGBps, 110.4);
  EXPECT_EQ(P.Cpu.Threads, 32u);
  EXPECT_DOUBLE_EQ(P.Cpu.TriadGBps, 129.0);
  EXPECT_DOUBLE_EQ(P.Cpu.TriadOneThreadGBps, 13.7);
}

TEST(DeviceProfile, FieldsOfTheWrongTypeAreReportedNotReadAsZero) {
  DeviceProfile Good;
  ASSERT_TRUE(parseDeviceProfile(SmallProfile, Good).ok());
  EXPECT_TRUE(Good.TypeErrors.empty()); // {"error": ...} is no type error

  const char *Typo = R"({
    "schema": "cleave-device-profile", "schema_version": 1,
    "gpus": [{"index": 0, "sm_count": "132", "async_engines": "3",
              "bandwidth": {"dram": {"read_gbps": {"median": "4269"}}}}],
    "host_links": {
      "alone": [{"gpu": 0, "pinned": {"h2d_gbps": true, "d2h_gbps": 55}}],
      "peer": [{"src": 0, "dst": 1, "gbps": [388]}]},
    "cpu": {"threads": {"min": 3}, "memory_bandwidth": {"by_threads": [
      {"threads": 1, "gbps": 13.7}]}}
  })";
  DeviceProfile P;
  ASSERT_TRUE(parseDeviceProfile(Typo, P).ok());
  EXPECT_EQ(P.TypeErrors,
            (std::vector<std::string>{
                "gpus[0].sm_count is a string, not a number",
                "gpus[0].async_engines is a string, not a number",
                "gpus[0].bandwidth.dram.read_gbps.median is a string, not a "
                "number",
                "host_links.alone[0].pinned.h2d_gbps is a boolean, not a "
                "number",
                "host_links.peer[0].gbps is an array, not a number",
                "cpu.threads is an object, not a number"}));
  ASSERT_TRUE(P.gpu(0));
  EXPECT_EQ(P.gpu(0)->SMs, 0u); // missing: the planner's defaults apply
  EXPECT_DOUBLE_EQ(P.gpu(0)->DramGBps, 0.0);
  EXPECT_DOUBLE_EQ(P.gpu(0)->PinnedH2DGBps, 0.0);
  EXPECT_DOUBLE_EQ(P.gpu(0)->PinnedD2HGBps, 55.0);
  EXPECT_TRUE(P.gpu(0)->PeerGBps.empty());
  EXPECT_EQ(P.Cpu.Threads, 0u);
}

TEST(DeviceProfile, RefusesWhatIsNotAProfile) {
  DeviceProfile P;
  for (const char *Bad :
       {"", "nope", "[]", "{\"schema\": \"x\", \"schema_version\": 1}",
        "{\"schema\": \"cleave-device-profile\", \"schema_version\": 2}",
        "{\"schema\": \"cleave-device-profile\", \"schema_version\": 1}"}) {
    Result R = parseDeviceProfile(Bad, P);
    EXPECT_EQ(R.code(), ErrorCode::InvalidValue) << Bad;
  }
  Result R = loadDeviceProfile("/nonexistent/p.json", P);
  EXPECT_EQ(R.code(), ErrorCode::InvalidValue);
  EXPECT_NE(R.message().find("/nonexistent/p.json"), std::string::npos);
}

TEST(DeviceProfile, ReadsTheCommittedProfiles) {
  // The source tree's profiles/ (unittests/CMakeLists.txt names the tree:
  // __FILE__ is relative to the build directory under ccache).
  DeviceProfile P;
  Result R = loadDeviceProfile(
      std::string(CLEAVE_TEST_SOURCE_ROOT) + "/profiles/h200x4-all.json", P);
  ASSERT_TRUE(R.ok()) << R.message();
  ASSERT_EQ(P.Gpus.size(), 4u);
  for (const GpuProfile &G : P.Gpus) {
    EXPECT_EQ(G.SMs, 132u);
    EXPECT_GT(G.DramGBps, 3000);
    EXPECT_GT(G.PageableH2DGBps, 1);
    EXPECT_GT(G.PinnedH2DGBps, 40);
    EXPECT_GT(G.LaunchRoundTripUs, 1);
    EXPECT_EQ(G.PeerGBps.size(), 3u);
  }
  // digest 000 §3.4's all-at-once states: 152 GB/s to, 130 from the GPUs.
  EXPECT_NEAR(P.AggregateH2DGBps, 152.5, 1);
  EXPECT_NEAR(P.AggregateD2HGBps, 130.1, 1);
  EXPECT_GT(P.Cpu.TriadGBps, P.Cpu.TriadOneThreadGBps);
}

//===----------------------------------------------------------------------===//
// Tables: seeded, then refined
//===----------------------------------------------------------------------===//

TEST(ModelPartitioner, SeedsWaveAlignedRowsFromTheRoofline) {
  SplitDevice G = gpu("gpu0");
  // One wave of 1056 blocks moving 3072 bytes each at 4000 GB/s: 0.811 us,
  // under the 2 us floor; 64 KiB each: 17.3 us.
  EXPECT_DOUBLE_EQ(seedMs(G, 3072, 1056), 0.002);
  double Wave = 1056.0 * 65536 / 4000e6;
  EXPECT_NEAR(seedMs(G, 65536, 1056), Wave, 1e-12);
  EXPECT_NEAR(seedMs(G, 65536, 1), Wave, 1e-12);        // a partial wave
  EXPECT_NEAR(seedMs(G, 65536, 1057), 2 * Wave, 1e-12); // whole waves
  EXPECT_EQ(seedMs(G, 65536, 0), 0.0);

  ModelPartitioner P(DeviceProfile(), "");
  SplitRequest R;
  R.Key = key();
  R.TotalBlocks = 20000; // 19 waves
  R.BytesPerBlock = 65536;
  R.Devices = {G};
  SplitDeviceReport Rep;
  PerfTable T = P.table(R, 0, &Rep);
  EXPECT_EQ(Rep.MeasuredRows, 0u);
  EXPECT_EQ(Rep.SeededRows, T.size());
  std::vector<uint64_t> Want = {1056, 2112, 4224, 8448, 16896, 20064};
  ASSERT_EQ(T.size(), Want.size());
  for (size_t I = 0; I < Want.size(); ++I) {
    EXPECT_EQ(T.rows()[I].first, Want[I]);
    EXPECT_NEAR(T.rows()[I].second, 1056 / Wave, 1e-6); // flat roofline
  }
  EXPECT_DOUBLE_EQ(Rep.Scale, 1.0);
}

TEST(ModelPartitioner, RefinesRowsFromMeasuredRangesAndRescalesTheSeed) {
  ModelPartitioner P(DeviceProfile(), "");
  SplitDevice G = gpu("gpu0");
  SplitRequest R;
  R.Key = key();
  R.TotalBlocks = 4224; // 4 waves
  R.BytesPerBlock = 65536;
  R.Devices = {G};
  double Seed = 1056 / seedMs(G, 65536, 1056);

  // The kernel runs at half the seed's speed: 2000 blocks (row 2112) in the
  // time the seed gives 1000.
  double Ms = 2000 / (Seed / 2);
  P.record(G, R.Key, 2000, Ms);
  SplitDeviceReport Rep;
  PerfTable T = P.table(R, 0, &Rep);
  EXPECT_EQ(Rep.MeasuredRows, 1u);
  EXPECT_EQ(Rep.SeededRows, 2u); // 1056 and 4224
  EXPECT_NEAR(T.throughput(2112), Seed / 2, 1e-9);
  // The measured row at 2112 says the seed is 2x optimistic there: every
  // seeded row is halved.
  double Scale = 0.5;
  EXPECT_NEAR(Rep.Scale, Scale, 1e-12);
  EXPECT_NEAR(T.throughput(1056), Seed * Scale, 1e-9);
  EXPECT_NEAR(T.throughput(4224), Seed * Scale, 1e-9);

  // Later measurements of the same row average in (weight 0.3).
  P.record(G, R.Key, 2112, 2112 / Seed);
  T = P.table(R, 0, &Rep);
  EXPECT_NEAR(T.throughput(2112), Seed / 2 + 0.3 * (Seed - Seed / 2), 1e-9);
  EXPECT_EQ(P.cache().find(G.Identity, R.Key.text())->at(2112).Samples, 2u);

  // Another key (block size) is another table.
  SplitRequest Other = R;
  Other.Key.Block[0] = 128;
  P.table(Other, 0, &Rep);
  EXPECT_EQ(Rep.MeasuredRows, 0u);
  // Nonsense timings are ignored.
  P.record(G, R.Key, 100, 0);
  P.record(G, R.Key, 100, -1);
  P.record(G, R.Key, 0, 1);
  EXPECT_EQ(P.cache().find(G.Identity, R.Key.text())->size(), 1u);
}

//===----------------------------------------------------------------------===//
// Decisions
//===----------------------------------------------------------------------===//

/// A request over \p Devs for a grid of \p N blocks moving \p BytesPerBlock
/// per block, each device missing the bytes \p Missing gives.
SplitRequest request(std::vector<SplitDevice> Devs, uint64_t N,
                    double BytesPerBlock,
                    std::function<double(size_t, uint64_t, uint64_t)> Missing) {
  SplitRequest R;
  R.Key = key("k@1", N);
  R.TotalBlocks = N;
  R.BytesPerBlock = BytesPerBlock;
  R.Devices = std::move(Devs);
  R.MissingBytes = [Missing](size_t D, uint64_t First, uint64_t Count,
                             ShareBytes &B) {
    B.Raw = B.Effective = Missing(D, First, Count);
  };
  return R;
}

TEST(ModelPartitioner, TransferDominatedKernelStaysOnOneDevice) {
  // Two GPUs behind one host link (the aggregate is one GPU's bandwidth),
  // data on the host; every range needs a whole 256 MB input (a matrix
  // every block reads) plus its slice: splitting doubles the bytes moved,
  // for little compute.
  const uint64_t N = 65536;
  SplitRequest R = request({gpu("gpu0"), gpu("gpu1")}, N, 4096,
                          [](size_t, uint64_t, uint64_t Count) {
                            return 256e6 + 4096.0 * double(Count);
                          });
  R.AggregateH2DGBps = 12;
  ModelPartitioner P(DeviceProfile(), "");
  SplitResult Res = P.split(R);
  ASSERT_EQ(sum(Res.Blocks), N);
  EXPECT_TRUE(Res.Blocks[0] == N || Res.Blocks[1] == N)
      << Res.Blocks[0] << " " << Res.Blocks[1];
  EXPECT_DOUBLE_EQ(Res.Decision.PredictedMs, Res.Decision.SingleDeviceMs);
  // The byte cost was fitted from the two evaluations exactly.
  EXPECT_NEAR(Res.Devices[0].In.Fixed, 256e6, 1);
  EXPECT_NEAR(Res.Devices[0].In.PerBlock, 4096, 1e-6);
  std::string Log = Res.describe(R);
  EXPECT_NE(Log.find("splitting does not pay"), std::string::npos) << Log;
  EXPECT_NE(Log.find("seeded"), std::string::npos) << Log;

  // The same kernel with its input resident everywhere splits.
  SplitRequest Resident =
      request({gpu("gpu0"), gpu("gpu1")}, N, 4096,
              [](size_t, uint64_t, uint64_t) { return 0.0; });
  Resident.Key = key("k@2", N);
  Res = P.split(Resident);
  EXPECT_GT(Res.Blocks[0], N / 3);
  EXPECT_GT(Res.Blocks[1], N / 3);
}

TEST(ModelPartitioner, TheLogNamesWhatAShareHandsToItsNextReader) {
  // Resident data over two GPUs; gpu1's share writes 1 MB that the
  // buffer's last reader read elsewhere (ShareBytes::Out): its line says
  // so, gpu0's says its writes stay there.
  const uint64_t N = 65536;
  SplitRequest R = request({gpu("gpu0"), gpu("gpu1")}, N, 4096,
                          [](size_t, uint64_t, uint64_t) { return 0.0; });
  R.MissingBytes = [](size_t D, uint64_t, uint64_t, ShareBytes &B) {
    if (D == 1)
      B.Out = 1e6;
  };
  ModelPartitioner P(DeviceProfile(), "");
  SplitResult Res = P.split(R);
  ASSERT_GT(Res.Blocks[0], 0u);
  ASSERT_GT(Res.Blocks[1], 0u);
  std::string Log = Res.describe(R);
  size_t G1 = Log.find("  gpu1:");
  ASSERT_NE(G1, std::string::npos) << Log;
  EXPECT_NE(Log.find("bytes out 1.00 MB (to the next reader's device)", G1),
            std::string::npos)
      << Log;
  EXPECT_NE(Log.substr(0, G1).find("bytes out 0 (writes stay there)"),
            std::string::npos)
      << Log;
}

TEST(ModelPartitioner, KernelWhoseBestDeviceIsTheCpu) {
  // Data on the host, a streaming kernel (64 KiB per block): the GPU must
  // pull every byte over a 10 GB/s link, the CPU streams it in place at
  // 120 GB/s.
  const uint64_t N = 16384;
  const double PerBlock = 65536;
  SplitRequest R = request({cpu("cpu0"), gpu("gpu0")}, N, PerBlock,
                          [&](size_t D, uint64_t, uint64_t Count) {
                            return D == 0 ? 0.0 : PerBlock * double(Count);
                          });
  ModelPartitioner P(DeviceProfile(), "");
  SplitResult Res = P.split(R);
  ASSERT_EQ(sum(Res.Blocks), N);
  EXPECT_EQ(Res.Decision.BaseDevice, 0u); // the CPU
  // The GPU may take a share its link can feed while the CPU works, never
  // the larger one.
  EXPECT_GT(Res.Blocks[0], Res.Blocks[1]);
  EXPECT_LE(Res.Decision.PredictedMs, Res.Decision.SingleDeviceMs);
  std::string Log = Res.describe(R);
  EXPECT_NE(Log.find("single device cpu0"), std::string::npos) << Log;
}

TEST(ModelPartitioner, APipelinedGpuIsChargedItsOverlapNotTheSum) {
  // Data on the host (the issue's stencil3d): the GPU must pull 1 GiB over
  // a 10 GB/s link (107 ms) and run 107 ms on it; the CPU streams it in
  // place in 179 ms. Send then run, the GPU takes 214 ms and the CPU wins;
  // pipelined, the GPU's send overlaps its run and it takes TPSM's plan,
  // under 1.3 times 107 ms: the GPU is the best single device, and the
  // CPU's share beside it is computed in place.
  const uint64_t N = 16384;
  const double PerBlock = 65536;
  SplitDevice Cpu = cpu("cpu0"), Gpu = gpu("gpu0");
  Cpu.SeedGBps = 6;
  Gpu.SeedGBps = 10;
  auto Missing = [&](size_t D, uint64_t, uint64_t Count) {
    return D == 0 ? 0.0 : PerBlock * double(Count);
  };
  ModelPartitioner P(DeviceProfile(), "");
  SplitResult Serial = P.split(request({Cpu, Gpu}, N, PerBlock, Missing));
  EXPECT_EQ(Serial.Decision.BaseDevice, 0u) << Serial.describe(
      request({Cpu, Gpu}, N, PerBlock, Missing));
  EXPECT_EQ(Serial.Devices[1].PipelineFactor, 0);

  tpsm::LinkRates L;
  L.SendAlone = L.ReceiveAlone = L.SendBoth = L.ReceiveBoth = 10e9;
  L.StepSync = 10e-6;
  Gpu.PipelineLinks = L;
  Gpu.PipelineMinBytes = 8 << 20;
  SplitRequest R = request({Cpu, Gpu}, N, PerBlock, Missing);
  R.Key = key("k@piped", N);
  SplitResult Piped = P.split(R);
  std::string Log = Piped.describe(R);
  EXPECT_EQ(Piped.Decision.BaseDevice, 1u) << Log;
  EXPECT_GE(Piped.Devices[1].PipelineFactor, 1.0) << Log;
  EXPECT_LT(Piped.Devices[1].PipelineFactor, 1.3) << Log;
  EXPECT_LT(Piped.Devices[1].SingleMs, 0.65 * Serial.Devices[1].SingleMs)
      << Log;
  EXPECT_LT(Piped.Devices[1].SingleMs, Piped.Devices[0].SingleMs) << Log;
  EXPECT_LE(Piped.Decision.PredictedMs, Piped.Decision.SingleDeviceMs);
  EXPECT_NE(Log.find("pipelined (transfers overlap its run)"),
            std::string::npos)
      << Log;
}

TEST(ModelPartitioner, ASplitPredictedToLoseIsNeverTaken) {
  // Two equal GPUs, nothing to move: an even split is in force. Then each
  // split costs the host half a launch: the even split, within
  // ModelPartitioner::HoldGain of the best single device but above it, is
  // not held; the launch runs whole.
  const uint64_t N = 65536;
  SplitRequest R = request({gpu("gpu0"), gpu("gpu1")}, N, 65536,
                          [](size_t, uint64_t, uint64_t) { return 0.0; });
  ModelPartitioner P(DeviceProfile(), "");
  SplitResult First = P.split(R);
  ASSERT_GT(First.Blocks[0], 0u);
  ASSERT_GT(First.Blocks[1], 0u);
  R.SplitMs = 0.505 * First.Decision.SingleDeviceMs;
  SplitResult Then = P.split(R);
  std::string Log = Then.describe(R);
  EXPECT_TRUE(Then.Blocks[0] == N || Then.Blocks[1] == N) << Log;
  EXPECT_FALSE(Then.Held) << Log;
  EXPECT_LE(Then.Decision.PredictedMs, Then.Decision.SingleDeviceMs) << Log;
}

TEST(ModelPartitioner, AMeasuredLossIsCorrectedAtTheNextDecision) {
  // Two equal GPUs, nothing to move, 1.1 ms on one: an even split. A
  // launch of it measured within ModelPartitioner::LossTolerance of the
  // single device's prediction changes nothing; one measured at twice that
  // makes the next decision the single device, once.
  const uint64_t N = 65536;
  SplitRequest R = request({gpu("gpu0"), gpu("gpu1")}, N, 65536,
                          [](size_t, uint64_t, uint64_t) { return 0.0; });
  ModelPartitioner P(DeviceProfile(), "");
  SplitResult First = P.split(R);
  ASSERT_GT(First.Blocks[0], 0u);
  ASSERT_GT(First.Blocks[1], 0u);
  double Single = First.Decision.SingleDeviceMs;
  ASSERT_GE(Single, ModelPartitioner::MinJudgedMs);
  EXPECT_FALSE(P.recordOutcome(R.Key, Single * 1.05));
  EXPECT_GT(P.split(R).Blocks[1], 0u);
  EXPECT_TRUE(P.recordOutcome(R.Key, Single * 2));
  SplitResult Then = P.split(R);
  std::string Log = Then.describe(R);
  EXPECT_TRUE(Then.CorrectedLoss);
  EXPECT_TRUE(Then.Blocks[0] == N || Then.Blocks[1] == N) << Log;
  EXPECT_NE(Log.find("the last split measured"), std::string::npos) << Log;
  // A decision on one device is not a split: nothing to judge.
  EXPECT_FALSE(P.recordOutcome(R.Key, Single * 2));
  SplitResult Again = P.split(R);
  EXPECT_FALSE(Again.CorrectedLoss);
}

TEST(ModelPartitioner, ASharePlacedWithItsDataCostsNothing) {
  // Four equal GPUs, each holding the data of its quarter of the grid (the
  // last decision's): a share at the anchor misses nothing, the whole grid
  // misses the other three quarters. The fitted cost must be 0 at the
  // anchor and exact at the whole grid -- a line through both points would
  // charge the anchor a quarter of the others' bytes it does not need.
  const uint64_t N = 65536, Q = N / 4;
  const double PerBlock = 4096;
  auto Outside = [&](size_t D, uint64_t First, uint64_t Count) {
    uint64_t Lo = D * Q, Hi = Lo + Q;
    uint64_t In = First + Count <= Lo || First >= Hi
                      ? 0
                      : std::min(First + Count, Hi) - std::max(First, Lo);
    return PerBlock * double(Count - In);
  };
  SplitRequest R = request({gpu("gpu0"), gpu("gpu1"), gpu("gpu2"),
                           gpu("gpu3")},
                          N, PerBlock, Outside);
  for (SplitDevice &D : R.Devices)
    D.Identity = "one model"; // one shared table
  ModelPartitioner P(DeviceProfile(), "");
  SplitResult First = P.split(R); // no anchors yet: shares by throughput
  ASSERT_EQ(sum(First.Blocks), N);
  SplitResult Res = P.split(R);
  for (size_t D = 0; D < 4; ++D) {
    EXPECT_EQ(Res.Blocks[D], Q) << D;
    const ByteCost &C = Res.Devices[D].In;
    EXPECT_DOUBLE_EQ(C.at(Q), 0.0) << D;
    EXPECT_DOUBLE_EQ(C.at(N), PerBlock * double(N - Q)) << D;
  }
  EXPECT_NEAR(Res.Decision.PredictedMs, Res.Devices[0].PredictedMs, 1e-9);
}

TEST(ModelPartitioner, RepeatedLaunchesMoveDataToTheFasterDevice) {
  // The data of a streaming kernel lies on the host (the CPU's copy) while
  // it keeps being launched, and the GPU must pull whatever share it takes.
  // The first decision is SKMD's: the CPU, in place. Once the kernel has
  // been launched often enough that moving the data to the GPU is repaid
  // by what the GPU saves per launch, the steady-state decision wins and
  // says so. The bytes the GPU misses stay the same: the test plays a
  // program whose data never moves (what the engine would see if the
  // planner kept choosing the CPU).
  const uint64_t N = 16384;
  const double PerBlock = 65536;
  SplitRequest R = request({cpu("cpu0"), gpu("gpu0")}, N, PerBlock,
                          [&](size_t D, uint64_t, uint64_t Count) {
                            return D == 0 ? 0.0 : PerBlock * double(Count);
                          });
  ModelPartitioner P(DeviceProfile(), "");
  SplitResult First = P.split(R);
  EXPECT_FALSE(First.SteadyState);
  EXPECT_GT(First.Blocks[0], First.Blocks[1]);
  unsigned Launch = 1;
  SplitResult Res = First;
  for (; Launch < 1000 && !Res.SteadyState; ++Launch)
    Res = P.split(R);
  ASSERT_TRUE(Res.SteadyState) << "never moved after " << Launch;
  EXPECT_GT(Launch, 2u); // not at once: the move costs more than a launch
  EXPECT_GT(Res.Blocks[1], Res.Blocks[0]);
  std::string Log = Res.describe(R);
  EXPECT_NE(Log.find("planned for the steady state"), std::string::npos)
      << Log;
  // A problem that did not move keeps the decision without a new search.
  SplitResult Again = P.split(R);
  EXPECT_TRUE(Again.Reused);
  EXPECT_EQ(Again.Blocks, Res.Blocks);
}

TEST(ModelPartitioner, ASmallGainKeepsTheDecisionInForce) {
  // Two GPUs, nothing to move. A GPU measured 4 % faster would take about
  // 1 % more of the blocks, for a gain under ModelPartitioner::HoldGain: the
  // decision in force stays (its data is where it ran). 30 % faster moves
  // the split.
  const uint64_t N = 65536;
  SplitRequest R = request({gpu("gpu0"), gpu("gpu1")}, N, 4096,
                          [](size_t, uint64_t, uint64_t) { return 0.0; });
  ModelPartitioner P(DeviceProfile(), "");
  SplitResult First = P.split(R);
  ASSERT_EQ(sum(First.Blocks), N);
  EXPECT_NEAR(double(First.Blocks[0]), N / 2.0, N * 0.02);
  // Measured: gpu0 at 10^5 blocks/ms, gpu1 Speed times that.
  auto Measure = [&](double Speed) {
    for (uint64_t B = N / 8; B <= N; B += N / 8) {
      P.record(R.Devices[0], R.Key, B, double(B) / 1e5);
      P.record(R.Devices[1], R.Key, B, double(B) / (1e5 * Speed));
    }
  };
  Measure(1.0);
  SplitResult Equal = P.split(R);
  EXPECT_NEAR(double(Equal.Blocks[0]), N / 2.0, N * 0.02);
  First = Equal;
  for (int I = 0; I < 10; ++I) // past ModelPartitioner::ReuseTolerance
    Measure(1.04);
  SplitResult Small = P.split(R);
  EXPECT_TRUE(Small.Held);
  EXPECT_FALSE(Small.Reused);
  EXPECT_EQ(Small.Blocks, First.Blocks);
  EXPECT_NE(Small.describe(R).find("the decision in force, kept"),
            std::string::npos)
      << Small.describe(R);
  for (int I = 0; I < 20; ++I) // the rows average over measurements
    Measure(1.3);
  SplitResult Large = P.split(R);
  EXPECT_FALSE(Large.Held);
  EXPECT_GT(Large.Blocks[1], First.Blocks[1] + N / 20);
}

TEST(ModelPartitioner, ResidencyMakesASplitPay) {
  // A matmul-like kernel on two GPUs behind one host link: each range reads
  // its slice of A (4 KiB per block) and all of B (64 MB). From the host, a
  // split moves B twice through the shared link and does not pay; with B
  // on both GPUs and each half of A where the last split left it, nothing
  // moves and the split halves the time.
  const uint64_t N = 8192;
  const double PerBlock = 4096, BBytes = 64e6;
  auto FromHost = [&](size_t, uint64_t, uint64_t Count) {
    return BBytes + PerBlock * double(Count);
  };
  auto Resident = [&](size_t D, uint64_t First, uint64_t Count) {
    // gpu0 holds A's blocks [0, N/2), gpu1 [N/2, N); both hold B.
    uint64_t Lo = D == 0 ? 0 : N / 2, Hi = D == 0 ? N / 2 : N;
    uint64_t End = First + Count;
    uint64_t Held = End > Lo && First < Hi
                        ? std::min(End, Hi) - std::max(First, Lo)
                        : 0;
    return PerBlock * double(Count - Held);
  };
  SplitDevice G0 = gpu("gpu0"), G1 = gpu("gpu1");
  // About 0.5 ms per wave of 1056 blocks: 4 ms of compute in all.
  G0.SeedGBps = G1.SeedGBps = 1056 * PerBlock / 0.5e6;

  ModelPartitioner P(DeviceProfile(), "");
  SplitRequest Host = request({G0, G1}, N, PerBlock, FromHost);
  Host.AggregateH2DGBps = 10;
  SplitResult A = P.split(Host);
  EXPECT_TRUE(A.Blocks[0] == N || A.Blocks[1] == N)
      << A.Blocks[0] << " " << A.Blocks[1];
  EXPECT_NE(A.describe(Host).find("splitting does not pay"),
            std::string::npos);

  SplitRequest Res = request({G0, G1}, N, PerBlock, Resident);
  Res.Key = key("k@resident", N);
  Res.AggregateH2DGBps = 10;
  SplitResult B = P.split(Res);
  ASSERT_EQ(sum(B.Blocks), N);
  EXPECT_NEAR(double(B.Blocks[0]), N / 2.0, N / 16.0);
  EXPECT_LT(B.Decision.PredictedMs, 0.7 * B.Decision.SingleDeviceMs);
  // What its share is missing: a sliver at most.
  EXPECT_LT(B.Devices[0].InBytes, 0.15 * PerBlock * double(N / 2));
  std::string Log = B.describe(Res);
  EXPECT_NE(Log.find("split over 2 devices"), std::string::npos) << Log;

  // The decision is remembered: the next plan of the table anchors there.
  SplitResult C = P.split(Res);
  EXPECT_EQ(C.Blocks, B.Blocks);
}

TEST(ModelPartitioner, CpuDevicesShareOneExecutor) {
  // Three CPU devices (cpu0 in place, cpu1 and cpu2 with memory of their
  // own): they run one after the other on the same cores, so moving blocks
  // away from cpu0 only adds copies.
  const uint64_t N = 4096;
  SplitRequest R = request({cpu("cpu0"), cpu("cpu1"), cpu("cpu2")}, N, 4096,
                          [](size_t D, uint64_t, uint64_t Count) {
                            return D == 0 ? 0.0 : 4096.0 * double(Count);
                          });
  ModelPartitioner P(DeviceProfile(), "");
  SplitResult Res = P.split(R);
  EXPECT_EQ(Res.Blocks, (std::vector<uint64_t>{N, 0, 0}));

  // Without the serial group the same tables would split (the partitioner
  // would believe in three sets of cores).
  for (SplitDevice &D : R.Devices)
    D.SerialGroup = -1;
  R.MissingBytes = nullptr;
  R.Key = key("k@nogroup", N);
  Res = P.split(R);
  EXPECT_GT(Res.Blocks[1] + Res.Blocks[2], 0u);
}

TEST(ModelPartitioner, UnsplittableKernelRunsWholeOnTheBestDevice) {
  const uint64_t N = 4096;
  SplitRequest R = request({cpu("cpu0"), gpu("gpu0")}, N, 65536,
                          [](size_t, uint64_t, uint64_t) { return 0.0; });
  R.Splittable = false;
  R.WhyWhole = "the kernel cannot be split";
  ModelPartitioner P(DeviceProfile(), "");
  SplitResult Res = P.split(R);
  EXPECT_EQ(Res.Blocks, (std::vector<uint64_t>{0, N}));
  std::string Log = Res.describe(R);
  EXPECT_NE(Log.find("whole on gpu0"), std::string::npos) << Log;
  EXPECT_NE(Log.find("cannot be split"), std::string::npos) << Log;
}

TEST(ModelPartitioner, MeasurementsChangeTheDecision) {
  // Two equal GPUs with resident data split evenly; once gpu1 measures 3x
  // slower than its seed, it gets about a quarter.
  const uint64_t N = 1056 * 16;
  SplitRequest R = request({gpu("gpu0"), gpu("gpu1")}, N, 65536,
                          [](size_t, uint64_t, uint64_t) { return 0.0; });
  ModelPartitioner P(DeviceProfile(), "");
  SplitResult A = P.split(R);
  EXPECT_NEAR(double(A.Blocks[0]), N / 2.0, N / 32.0);
  SplitDevice G1 = R.Devices[1];
  SplitDevice G0 = R.Devices[0];
  for (uint64_t B = 1056; B <= N; B *= 2) {
    P.record(G0, R.Key, B, seedMs(G0, 65536, B));
    P.record(G1, R.Key, B, 3 * seedMs(G1, 65536, B));
  }
  SplitResult B = P.split(R);
  EXPECT_NEAR(double(B.Blocks[1]), N / 4.0, N / 16.0);
  std::string Log = B.describe(R);
  EXPECT_NE(Log.find("measured (1 sample(s))"), std::string::npos) << Log;
}

TEST(ModelPartitioner, AnUnmeasuredGpuTakesTheScaleMeasuredOnAnother) {
  // gpu0 measured the kernel at a third of its seed; gpu1 (another model,
  // its own table) has run nothing. Its seed alone would make it 3x faster
  // than gpu0 and give it three quarters; with gpu0's scale it is its
  // equal.
  const uint64_t N = 1056 * 16;
  SplitDevice G0 = gpu("gpu0"), G1 = gpu("gpu1");
  SplitRequest R = request({G0, G1}, N, 65536,
                          [](size_t, uint64_t, uint64_t) { return 0.0; });
  ModelPartitioner P(DeviceProfile(), "");
  for (uint64_t B = 1056; B <= N; B *= 2)
    P.record(G0, R.Key, B, 3 * seedMs(G0, 65536, B));
  SplitDeviceReport Rep;
  PerfTable T = P.table(R, 1, &Rep);
  EXPECT_EQ(Rep.MeasuredRows, 0u);
  EXPECT_TRUE(Rep.ScaleBorrowed);
  EXPECT_NEAR(Rep.Scale, 1.0 / 3, 1e-9);
  SplitResult D = P.split(R);
  EXPECT_NEAR(double(D.Blocks[1]), N / 2.0, N / 16.0) << D.describe(R);
  std::string Log = D.describe(R);
  EXPECT_NE(Log.find("(as measured elsewhere)"), std::string::npos) << Log;
  // A CPU takes nothing from the GPUs' measurements.
  R.Devices.push_back(cpu("cpu0"));
  P.table(R, 2, &Rep);
  EXPECT_FALSE(Rep.ScaleBorrowed);
  EXPECT_EQ(Rep.Scale, 1.0);
}

TEST(Partitioner, SerialGroupMembersAddTheirComputeTimes) {
  PartitionProblem P;
  P.TotalBlocks = 100;
  for (const char *N : {"cpu0", "cpu1", "gpu0"}) {
    DeviceCost C;
    C.Name = N;
    C.Perf.set(100, 10.0); // 10 blocks/ms
    C.SerialGroup = N[0] == 'c' ? 0 : -1;
    P.Devices.push_back(C);
  }
  std::vector<double> Ms;
  double T = predictPartition(P, {30, 20, 50}, Ms);
  EXPECT_DOUBLE_EQ(Ms[0], 5.0); // 3 + 2 ms, one after the other
  EXPECT_DOUBLE_EQ(Ms[1], 5.0);
  EXPECT_DOUBLE_EQ(Ms[2], 5.0);
  EXPECT_DOUBLE_EQ(T, 5.0);
  T = predictPartition(P, {30, 0, 70}, Ms);
  EXPECT_DOUBLE_EQ(Ms[0], 3.0);
  EXPECT_DOUBLE_EQ(T, 7.0);
}

} // namespace
