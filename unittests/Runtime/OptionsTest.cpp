//===- OptionsTest.cpp - Parsing the runtime's environment ----------------===//
//
// Part of Cleave. parseOptions on given environments (never the process's):
// every kind of value, the range checks, unknown words reported once, and
// CLEAVE_TUNE's keys.
//
//===----------------------------------------------------------------------===//
#include "cleave/rt/Options.h"

#include "gtest/gtest.h"

#include <map>
#include <string>
#include <vector>

using namespace cleave::rt;

namespace {

struct Parsed {
  Options O;
  std::vector<std::string> Warnings;
  /// Every warning, one per line.
  std::string all() const {
    std::string S;
    for (const std::string &W : Warnings)
      S += W + "\n";
    return S;
  }
};

Parsed parse(std::map<std::string, std::string> Env, unsigned Cores = 8) {
  Parsed P;
  P.O = parseOptions(
      [&](const char *Var) -> const char * {
        auto It = Env.find(Var);
        return It == Env.end() ? nullptr : It->second.c_str();
      },
      P.Warnings, Cores);
  return P;
}

TEST(Options, AnEmptyEnvironmentGivesTheDefaults) {
  Parsed P = parse({});
  EXPECT_TRUE(P.Warnings.empty()) << P.all();
  const Options &O = P.O;
  EXPECT_EQ(O.Devices, "");
  EXPECT_FALSE(O.Partition);
  EXPECT_EQ(O.Split, "");
  EXPECT_FALSE(O.Log.Plan || O.Log.Time || O.Log.Phases || O.Log.Devices ||
               O.Log.Errors);
  EXPECT_EQ(O.CpuThreads, 0u);
  EXPECT_EQ(O.CudaLibrary, "");
  EXPECT_EQ(O.ProfilePath, "");
  EXPECT_EQ(O.CacheDir, "");
  EXPECT_EQ(O.Fault, "");
  EXPECT_FALSE(O.MemoryChecks);
  EXPECT_EQ(O.AnalyzeSmCount, 0u);
  EXPECT_EQ(O.InstrumentOut, "");
  EXPECT_EQ(O.InstrumentBlocks, 3u);
  EXPECT_EQ(O.Tune.SpinUs, 200u);
  EXPECT_FALSE(O.Tune.SpinUsGiven);
  EXPECT_EQ(O.Tune.Issue, IssueMode::Auto);
  EXPECT_TRUE(O.Tune.Defer && O.Tune.Swap && O.Tune.Rebase &&
              O.Tune.PeerCopyKernels && O.Tune.DirectHostCopies);
  EXPECT_EQ(O.Tune.PinHost, HostPinning::Reused);
  EXPECT_EQ(O.Tune.Pipeline, PipelineMode::On);
}

TEST(Options, StringsAreTakenTrimmed) {
  Parsed P = parse({{"CLEAVE_DEVICES", " cpu,gpu1 "},
                    {"CLEAVE_CUDA_LIBRARY", "/opt/libcuda.so"},
                    {"CLEAVE_PROFILE", "h200.json"},
                    {"CLEAVE_SPLIT", "1,3"},
                    {"CLEAVE_INSTRUMENT_OUT", "/tmp/rec"}});
  EXPECT_TRUE(P.Warnings.empty()) << P.all();
  EXPECT_EQ(P.O.Devices, "cpu,gpu1");
  EXPECT_EQ(P.O.CudaLibrary, "/opt/libcuda.so");
  EXPECT_EQ(P.O.ProfilePath, "h200.json");
  EXPECT_EQ(P.O.Split, "1,3");
  EXPECT_EQ(P.O.InstrumentOut, "/tmp/rec");
}

TEST(Options, PartitionPolicies) {
  EXPECT_EQ(*parse({{"CLEAVE_PARTITION", "even"}}).O.Partition,
            PartitionPolicy::Even);
  EXPECT_EQ(*parse({{"CLEAVE_PARTITION", "proportional"}}).O.Partition,
            PartitionPolicy::Proportional);
  EXPECT_EQ(*parse({{"CLEAVE_PARTITION", "single"}}).O.Partition,
            PartitionPolicy::SingleDevice);
  EXPECT_EQ(*parse({{"CLEAVE_PARTITION", "model"}}).O.Partition,
            PartitionPolicy::Model);
  Parsed Bad = parse({{"CLEAVE_PARTITION", "fastest"}});
  EXPECT_FALSE(Bad.O.Partition);
  ASSERT_EQ(Bad.Warnings.size(), 1u);
  EXPECT_EQ(Bad.Warnings[0],
            "cleave: warning: CLEAVE_PARTITION=fastest: expected even, "
            "proportional, single or model; using model");
}

TEST(Options, LogWords) {
  Parsed P = parse({{"CLEAVE_LOG", "plan, phases"}});
  EXPECT_TRUE(P.Warnings.empty()) << P.all();
  EXPECT_TRUE(P.O.Log.Plan);
  EXPECT_TRUE(P.O.Log.Phases);
  EXPECT_FALSE(P.O.Log.Time || P.O.Log.Devices || P.O.Log.Errors);
  Parsed All = parse({{"CLEAVE_LOG", "all"}});
  EXPECT_TRUE(All.O.Log.Plan && All.O.Log.Time && All.O.Log.Phases &&
              All.O.Log.Devices && All.O.Log.Errors);
}

TEST(Options, UnknownWordsAreReportedOnceEach) {
  Parsed P = parse({{"CLEAVE_LOG", "plan,foo,time,foo,bar"},
                    {"CLEAVE_CHECK", "memory,foo"}});
  EXPECT_TRUE(P.O.Log.Plan);
  EXPECT_TRUE(P.O.Log.Time);
  EXPECT_TRUE(P.O.MemoryChecks);
  ASSERT_EQ(P.Warnings.size(), 3u) << P.all();
  EXPECT_EQ(P.Warnings[0],
            "cleave: warning: CLEAVE_LOG: unknown word 'foo' (known: plan, "
            "time, phases, devices, errors, all)");
  EXPECT_EQ(P.Warnings[1],
            "cleave: warning: CLEAVE_LOG: unknown word 'bar' (known: plan, "
            "time, phases, devices, errors, all)");
  EXPECT_EQ(P.Warnings[2], "cleave: warning: CLEAVE_CHECK: unknown word "
                           "'foo' (known: memory, off, none)");
}

TEST(Options, MemoryChecks) {
  EXPECT_TRUE(parse({{"CLEAVE_CHECK", "memory"}}).O.MemoryChecks);
  EXPECT_FALSE(parse({{"CLEAVE_CHECK", "off"}}).O.MemoryChecks);
  EXPECT_FALSE(parse({{"CLEAVE_CHECK", "none"}}).O.MemoryChecks);
  Parsed Bad = parse({{"CLEAVE_CHECK", "bogus"}});
  EXPECT_FALSE(Bad.O.MemoryChecks);
  EXPECT_EQ(Bad.Warnings.size(), 1u);
}

TEST(Options, CpuThreadsInRangeAreTaken) {
  for (const char *Good : {"1", "4096", "16"}) {
    Parsed P = parse({{"CLEAVE_CPU_THREADS", Good}});
    EXPECT_TRUE(P.Warnings.empty()) << P.all();
    EXPECT_EQ(P.O.CpuThreads, std::stoul(Good));
  }
}

TEST(Options, CpuThreadsOutOfRangeFallBackToTheCores) {
  // 4294967296 once wrapped to 0 threads and divided by it; 10^7 threads
  // exhausted memory.
  for (const char *Bad :
       {"0", "4097", "10000000", "4294967296", "18446744073709551616",
        "99999999999999999999", "-1", "+4", "4x", "four", "4.0"}) {
    Parsed P = parse({{"CLEAVE_CPU_THREADS", Bad}}, 8);
    EXPECT_EQ(P.O.CpuThreads, 0u) << Bad;
    ASSERT_EQ(P.Warnings.size(), 1u) << Bad;
    EXPECT_EQ(P.Warnings[0],
              "cleave: warning: CLEAVE_CPU_THREADS=" + std::string(Bad) +
                  ": not a whole number from 1 to 4096; "
                  "using 8 (the cores this process may use)");
  }
}

TEST(Options, BlankValuesAreUnset) {
  Parsed P = parse({{"CLEAVE_CPU_THREADS", "  "},
                    {"CLEAVE_PARTITION", ""},
                    {"CLEAVE_LOG", " "}});
  EXPECT_TRUE(P.Warnings.empty()) << P.all();
  EXPECT_EQ(P.O.CpuThreads, 0u);
  EXPECT_FALSE(P.O.Partition);
}

TEST(Options, SmallNumbers) {
  Parsed P = parse({{"CLEAVE_ANALYZE_SM_COUNT", "132"},
                    {"CLEAVE_INSTRUMENT_BLOCKS", "1024"}});
  EXPECT_TRUE(P.Warnings.empty()) << P.all();
  EXPECT_EQ(P.O.AnalyzeSmCount, 132u);
  EXPECT_EQ(P.O.InstrumentBlocks, 1024u);
  Parsed Bad = parse(
      {{"CLEAVE_ANALYZE_SM_COUNT", "0"}, {"CLEAVE_INSTRUMENT_BLOCKS", "1025"}});
  EXPECT_EQ(Bad.O.AnalyzeSmCount, 0u);
  EXPECT_EQ(Bad.O.InstrumentBlocks, 3u);
  ASSERT_EQ(Bad.Warnings.size(), 2u) << Bad.all();
  EXPECT_EQ(Bad.Warnings[1], "cleave: warning: CLEAVE_INSTRUMENT_BLOCKS=1025: "
                             "not a whole number from 1 to 1024; using 3");
}

TEST(Options, CacheDirectory) {
  EXPECT_EQ(parse({{"CLEAVE_CACHE_DIR", "/c"}, {"HOME", "/h"}}).O.CacheDir,
            "/c");
  EXPECT_EQ(parse({{"CLEAVE_CACHE_DIR", "off"}, {"HOME", "/h"}}).O.CacheDir,
            "");
  EXPECT_EQ(parse({{"CLEAVE_CACHE_DIR", "none"}}).O.CacheDir, "");
  EXPECT_EQ(parse({{"XDG_CACHE_HOME", "/x"}, {"HOME", "/h"}}).O.CacheDir,
            "/x/cleave");
  // A relative XDG_CACHE_HOME is invalid (XDG base directory spec).
  EXPECT_EQ(parse({{"XDG_CACHE_HOME", "x"}, {"HOME", "/h"}}).O.CacheDir,
            "/h/.cache/cleave");
  EXPECT_EQ(parse({}).O.CacheDir, "");
}

TEST(Options, FaultRulesAreCheckedWhenParsed) {
  Parsed P = parse({{"CLEAVE_FAULT", "gpu0:alloc:2"}});
  EXPECT_TRUE(P.Warnings.empty()) << P.all();
  EXPECT_EQ(P.O.Fault, "gpu0:alloc:2");
  Parsed Bad = parse({{"CLEAVE_FAULT", "gpu0:alloc"}});
  EXPECT_EQ(Bad.O.Fault, "");
  ASSERT_EQ(Bad.Warnings.size(), 1u);
  EXPECT_NE(Bad.Warnings[0].find("cleave: warning: CLEAVE_FAULT=gpu0:alloc: "
                                 "fault rule 'gpu0:alloc': not three fields"),
            std::string::npos)
      << Bad.Warnings[0];
  EXPECT_NE(Bad.Warnings[0].find("; using no fault injection"),
            std::string::npos);
}

TEST(Options, TuneKeys) {
  Parsed P =
      parse({{"CLEAVE_TUNE", "spin_us=0, issue=serial,defer=off,swap=off,"
                             "rebase=0,peer_copy=dma,host_copies=shadow,"
                             "pin_host=always"}});
  EXPECT_TRUE(P.Warnings.empty()) << P.all();
  const TuneOptions &T = P.O.Tune;
  EXPECT_EQ(T.SpinUs, 0u);
  EXPECT_TRUE(T.SpinUsGiven);
  EXPECT_EQ(T.Issue, IssueMode::Serial);
  EXPECT_FALSE(T.Defer);
  EXPECT_FALSE(T.Swap);
  EXPECT_FALSE(T.Rebase);
  EXPECT_FALSE(T.PeerCopyKernels);
  EXPECT_FALSE(T.DirectHostCopies);
  EXPECT_EQ(T.PinHost, HostPinning::Always);
  EXPECT_EQ(
      parse({{"CLEAVE_TUNE", "issue=parallel,pin_host=off"}}).O.Tune.Issue,
      IssueMode::Parallel);
  EXPECT_EQ(parse({{"CLEAVE_TUNE", "pin_host=off"}}).O.Tune.PinHost,
            HostPinning::Off);
  EXPECT_EQ(parse({{"CLEAVE_TUNE", "pipeline=off"}}).O.Tune.Pipeline,
            PipelineMode::Off);
  EXPECT_EQ(parse({{"CLEAVE_TUNE", "pipeline=host"}}).O.Tune.Pipeline,
            PipelineMode::Host);
  EXPECT_EQ(parse({{"CLEAVE_TUNE", "pipeline=host-serial"}}).O.Tune.Pipeline,
            PipelineMode::HostSerial);
  EXPECT_EQ(parse({}).O.Tune.Reorganize, ReorganizeMode::Off);
  EXPECT_EQ(parse({{"CLEAVE_TUNE", "reorganize=on"}}).O.Tune.Reorganize,
            ReorganizeMode::On);
  EXPECT_EQ(parse({{"CLEAVE_TUNE", "reorganize=off"}}).O.Tune.Reorganize,
            ReorganizeMode::Off);
  EXPECT_EQ(parse({{"CLEAVE_TUNE", "reorganize=force"}}).O.Tune.Reorganize,
            ReorganizeMode::Force);
  EXPECT_EQ(parse({{"CLEAVE_TUNE", "reorganize=maybe"}}).O.Tune.Reorganize,
            ReorganizeMode::Off);
  EXPECT_EQ(parse({}).O.Tune.Route, RouteMode::Off);
  EXPECT_EQ(parse({{"CLEAVE_TUNE", "route=on"}}).O.Tune.Route, RouteMode::On);
  EXPECT_EQ(parse({{"CLEAVE_TUNE", "route=force"}}).O.Tune.Route,
            RouteMode::Force);
  EXPECT_EQ(parse({}).O.Tune.Balance, BalanceMode::Auto);
  EXPECT_EQ(parse({{"CLEAVE_TUNE", "balance=greedy"}}).O.Tune.Balance,
            BalanceMode::Greedy);
  EXPECT_EQ(parse({{"CLEAVE_TUNE", "balance=balancer"}}).O.Tune.Balance,
            BalanceMode::Balancer);
  Parsed Bad = parse({{"CLEAVE_TUNE", "pipeline=maybe"}});
  EXPECT_EQ(Bad.O.Tune.Pipeline, PipelineMode::On);
  EXPECT_FALSE(Bad.Warnings.empty());
  // The last of a repeated key wins.
  EXPECT_EQ(parse({{"CLEAVE_TUNE", "spin_us=5,spin_us=7"}}).O.Tune.SpinUs, 7u);
  // The co-scheduler's SM splits and forced ratio.
  EXPECT_EQ(parse({}).O.Tune.Green, GreenMode::Auto);
  EXPECT_EQ(parse({{"CLEAVE_TUNE", "green=always"}}).O.Tune.Green,
            GreenMode::Always);
  EXPECT_EQ(parse({{"CLEAVE_TUNE", "green=off"}}).O.Tune.Green, GreenMode::Off);
  Parsed Ratio = parse({{"CLEAVE_TUNE", "coratio=3:1"}});
  EXPECT_TRUE(Ratio.Warnings.empty()) << Ratio.all();
  EXPECT_EQ(Ratio.O.Tune.CoRatio[0], 3u);
  EXPECT_EQ(Ratio.O.Tune.CoRatio[1], 1u);
  for (const char *V : {"coratio=3", "coratio=0:1", "coratio=1:2:3",
                        "coratio=1:65", "coratio=a:b"}) {
    Parsed R = parse({{"CLEAVE_TUNE", V}});
    EXPECT_EQ(R.O.Tune.CoRatio[0], 0u) << V;
    ASSERT_EQ(R.Warnings.size(), 1u) << V;
    EXPECT_NE(R.Warnings[0].find("expected A:B, each 1 to 64; using the "
                                 "model's ratio"),
              std::string::npos)
        << R.Warnings[0];
  }
}

TEST(Options, TuneValuesOfTheWrongTypeKeepTheDefault) {
  Parsed P = parse({{"CLEAVE_TUNE", "spin_us=fast,swap=all,issue=2,"
                                    "spin_us=100001"}});
  EXPECT_EQ(P.O.Tune.SpinUs, 200u);
  EXPECT_TRUE(P.O.Tune.Swap);
  EXPECT_EQ(P.O.Tune.Issue, IssueMode::Auto);
  ASSERT_EQ(P.Warnings.size(), 4u) << P.all();
  EXPECT_EQ(P.Warnings[0], "cleave: warning: CLEAVE_TUNE: spin_us=fast: not "
                           "a whole number from 0 to 100000; using 200");
  EXPECT_EQ(P.Warnings[1], "cleave: warning: CLEAVE_TUNE: swap=all: expected "
                           "on, off, 1 or 0; using on");
  EXPECT_EQ(P.Warnings[2], "cleave: warning: CLEAVE_TUNE: issue=2: expected "
                           "auto, parallel or serial; using auto");
  EXPECT_EQ(P.Warnings[3], "cleave: warning: CLEAVE_TUNE: spin_us=100001: "
                           "not a whole number from 0 to 100000; using 200");
}

TEST(Options, UnknownTuneKeysAreReportedOnce) {
  Parsed P = parse({{"CLEAVE_TUNE", "spn_us=0,spn_us=1,defer"}});
  EXPECT_EQ(P.O.Tune.SpinUs, 200u);
  EXPECT_TRUE(P.O.Tune.Defer);
  ASSERT_EQ(P.Warnings.size(), 2u) << P.all();
  EXPECT_EQ(P.Warnings[0],
            "cleave: warning: CLEAVE_TUNE: unknown word 'spn_us' (known: "
            "spin_us, issue, defer, swap, rebase, coschedule, green, "
            "coratio, peer_copy, host_copies, pin_host, pipeline, "
            "reorganize, route, balance)");
  EXPECT_EQ(P.Warnings[1],
            "cleave: warning: CLEAVE_TUNE: 'defer' is not key=value; ignored");
}

TEST(Options, RetiredSwitchVariablesAreReported) {
  Parsed P = parse({{"CLEAVE_SWAP", "off"}, {"CLEAVE_SPIN_US", "0"}});
  EXPECT_TRUE(P.O.Tune.Swap);
  EXPECT_EQ(P.O.Tune.SpinUs, 200u);
  ASSERT_EQ(P.Warnings.size(), 2u) << P.all();
  EXPECT_EQ(P.Warnings[0], "cleave: warning: CLEAVE_SPIN_US is not read; use "
                           "CLEAVE_TUNE=spin_us=0");
  EXPECT_EQ(P.Warnings[1], "cleave: warning: CLEAVE_SWAP is not read; use "
                           "CLEAVE_TUNE=swap=off");
}

TEST(Options, BusyWaits) {
  TuneOptions T;
  EXPECT_EQ(T.busyWaitUs(4), 200u);
  EXPECT_EQ(T.busyWaitUs(8), 20000u);
  T.SpinUs = 0;
  T.SpinUsGiven = true;
  EXPECT_EQ(T.busyWaitUs(64), 0u);
}

} // namespace
