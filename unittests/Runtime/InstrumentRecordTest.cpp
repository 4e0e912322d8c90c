//===- InstrumentRecordTest.cpp - Reading the CPU recorder's record ------===//
//
// Part of Cleave. cleave::rt::record::parseInstrumentRecord on records in
// the recorder's format (runtime/lib/cpu/Instrument.cpp writes them; the
// lit tests of `cleave analyze` read real ones): every field, the blocks in
// index order, and a refusal naming the line for anything else.
//
//===----------------------------------------------------------------------===//
#include "cleave/rt/InstrumentRecord.h"

#include "cleave/ABI/FormatVersions.h"

#include "gtest/gtest.h"

#include <string>

namespace {

using namespace cleave::rt::record;

std::string head() {
  return std::string(cleave::InstrumentRecordMagic) + " " +
         std::to_string(cleave::InstrumentRecordVersion) + "\n";
}

const char *Body =
    "launch _Z3fooPf grid 4 2 1 block 64 1 1 shared 128 launches 3 sampled 2\n"
    "block 7 threads 64 requests 10 sectors 20 distinct-sectors 18 "
    "distinct-segments 5 overflow 0\n"
    "warp 0 lanes 32\n"
    "site 1048577 4\n"
    "mem 1048578 2 64 256 8 2 0x7f1c1af00000 0x7f1c1af0007f\n"
    "trace 3 0 1048577 1048577 1048579\n"
    "end\n"
    "block 0 threads 64 requests 1 sectors 2 distinct-sectors 2 "
    "distinct-segments 1 overflow 1\n"
    "warp 1 lanes 32\n"
    "trace 0 1\n"
    "end\n";

TEST(InstrumentRecord, ReadsEveryField) {
  std::vector<LaunchRecord> R;
  cleave::rt::Status S = parseInstrumentRecord(head() + Body, R);
  ASSERT_TRUE(S) << S.Message;
  ASSERT_EQ(R.size(), 1u);
  const LaunchRecord &L = R[0];
  EXPECT_EQ(L.Kernel, "_Z3fooPf");
  EXPECT_EQ(L.Grid[0], 4u);
  EXPECT_EQ(L.Grid[1], 2u);
  EXPECT_EQ(L.Block[0], 64u);
  EXPECT_EQ(L.Shared, 128u);
  EXPECT_EQ(L.Launches, 3u);
  ASSERT_EQ(L.Blocks.size(), 2u);
  // By index, not in the order the recorder finished them.
  EXPECT_EQ(L.Blocks[0].Block, 0u);
  EXPECT_TRUE(L.Blocks[0].Overflow);
  ASSERT_EQ(L.Blocks[0].Warps.size(), 1u);
  EXPECT_TRUE(L.Blocks[0].Warps[0].Truncated);
  EXPECT_TRUE(L.Blocks[0].Warps[0].Trace.empty());
  const BlockRecord &B = L.Blocks[1];
  EXPECT_EQ(B.Block, 7u);
  EXPECT_EQ(B.Threads, 64u);
  EXPECT_EQ(B.Requests, 10u);
  EXPECT_EQ(B.Sectors, 20u);
  EXPECT_EQ(B.DistinctSectors, 18u);
  EXPECT_EQ(B.DistinctSegments, 5u);
  EXPECT_FALSE(B.Overflow);
  ASSERT_EQ(B.Warps.size(), 1u);
  const WarpRecord &W = B.Warps[0];
  EXPECT_EQ(W.Lanes, 32u);
  ASSERT_EQ(W.Sites.size(), 1u);
  EXPECT_EQ(W.Sites[0].first, 1048577u);
  EXPECT_EQ(W.Sites[0].second, 4u);
  ASSERT_EQ(W.Mems.size(), 1u);
  EXPECT_EQ(W.Mems[0].Site, 1048578u);
  EXPECT_EQ(W.Mems[0].Lanes, 64u);
  EXPECT_EQ(W.Mems[0].Min, 0x7f1c1af00000u);
  EXPECT_EQ(W.Mems[0].Max, 0x7f1c1af0007fu);
  EXPECT_EQ(W.Trace, (std::vector<uint32_t>{1048577, 1048577, 1048579}));
  EXPECT_FALSE(W.Truncated);
}

TEST(InstrumentRecord, AnEmptyRunHasNoLaunches) {
  std::vector<LaunchRecord> R;
  EXPECT_TRUE(parseInstrumentRecord(head(), R));
  EXPECT_TRUE(R.empty());
}

TEST(InstrumentRecord, RefusesAnotherVersion) {
  std::vector<LaunchRecord> R;
  std::string Other = std::string(cleave::InstrumentRecordMagic) + " " +
                      std::to_string(cleave::InstrumentRecordVersion + 1) +
                      "\n" + Body;
  cleave::rt::Status S = parseInstrumentRecord(Other, R);
  EXPECT_FALSE(S);
  EXPECT_NE(S.Message.find("not an instrumentation record of this version"),
            std::string::npos)
      << S.Message;
  EXPECT_FALSE(parseInstrumentRecord("", R));
}

TEST(InstrumentRecord, NamesTheFirstLineItCannotRead) {
  for (auto [Bad, Line] : std::initializer_list<std::pair<const char *, int>>{
           {"warp 0 lanes 32\n", 2},     // before any block
           {"launch k grid 1 1 1\n", 2}, // too few words
           {"frobnicate 1\n", 2},        // unknown line
           {"launch k grid 1 1 1 block 1 1 1 shared x launches 1 sampled 0\n",
            2}}) {
    std::vector<LaunchRecord> R;
    cleave::rt::Status S = parseInstrumentRecord(head() + Bad, R);
    EXPECT_FALSE(S) << Bad;
    EXPECT_EQ(S.Message.rfind("line " + std::to_string(Line) + ": ", 0), 0u)
        << S.Message;
    EXPECT_TRUE(R.empty());
  }
  // A trace whose length disagrees with its entries.
  std::string Text = head() + Body;
  Text.replace(Text.find("trace 3 0"), 9, "trace 4 0");
  std::vector<LaunchRecord> R;
  cleave::rt::Status S = parseInstrumentRecord(Text, R);
  EXPECT_FALSE(S);
  EXPECT_EQ(S.Message.rfind("line 7: trace 4 0", 0), 0u) << S.Message;
}

} // namespace
