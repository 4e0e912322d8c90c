//===- ReadFileTest.cpp - Files the runtime reads -------------------------===//
//
// Part of Cleave. A device profile or performance cache named by the user
// that is a FIFO (which blocked the program forever), /dev/zero (which
// filled its memory) or a directory is refused with a message, at once.
//
//===----------------------------------------------------------------------===//
#include "../../runtime/lib/support/ReadFile.h"
#include "cleave/rt/DeviceProfile.h"
#include "cleave/rt/PerfCache.h"

#include "gtest/gtest.h"

#include <cstdio>
#include <cstdlib>
#include <string>
#include <sys/stat.h>
#include <unistd.h>

using namespace cleave::rt;

namespace {

class ReadFileTest : public ::testing::Test {
protected:
  void SetUp() override {
    char Tmpl[] = "/tmp/cleave-readfile-XXXXXX";
    ASSERT_NE(mkdtemp(Tmpl), nullptr);
    Dir = Tmpl;
    Fifo = Dir + "/fifo";
    ASSERT_EQ(mkfifo(Fifo.c_str(), 0600), 0);
  }
  void TearDown() override {
    ::unlink(Fifo.c_str());
    ::unlink((Dir + "/small").c_str());
    ::rmdir(Dir.c_str());
  }
  std::string Dir, Fifo;
};

TEST_F(ReadFileTest, OnlyRegularFilesWithinTheBound) {
  std::string Text;
  for (const std::string &P : {Fifo, std::string("/dev/zero"), Dir}) {
    Result R = readRegularFile(P, MaxConfigFileBytes, Text);
    EXPECT_EQ(R.code(), ErrorCode::InvalidValue) << P;
    EXPECT_NE(R.message().find("not a regular file"), std::string::npos)
        << R.message();
  }
  std::string Small = Dir + "/small";
  FILE *F = std::fopen(Small.c_str(), "w");
  ASSERT_NE(F, nullptr);
  std::fputs("0123456789", F);
  std::fclose(F);
  ASSERT_TRUE(readRegularFile(Small, 10, Text).ok());
  EXPECT_EQ(Text, "0123456789");
  Result R = readRegularFile(Small, 9, Text);
  EXPECT_NE(R.message().find("larger than 9 bytes"), std::string::npos)
      << R.message();
  bool Missing = false;
  EXPECT_FALSE(readRegularFile(Dir + "/none", 10, Text, &Missing).ok());
  EXPECT_TRUE(Missing);
}

TEST_F(ReadFileTest, ProfilesAndCachesThatAreNoFilesAreRefused) {
  for (const std::string &P : {Fifo, std::string("/dev/zero")}) {
    DeviceProfile Prof;
    Result R = loadDeviceProfile(P, Prof);
    EXPECT_FALSE(R.ok()) << P;
    EXPECT_NE(R.message().find("not a regular file"), std::string::npos)
        << R.message();
    PerfCache Cache;
    R = Cache.load(P);
    EXPECT_FALSE(R.ok()) << P;
    EXPECT_NE(R.message().find("not a regular file"), std::string::npos)
        << R.message();
  }
  // A cache that does not exist yet is an empty one.
  PerfCache Cache;
  EXPECT_TRUE(Cache.load(Dir + "/none.json").ok());
}

} // namespace
