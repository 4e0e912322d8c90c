//===- ServeTest.cpp - cleave-serve's wire and sessions --------------------===//
//
// Part of Cleave's runtime tests. What the lit tests of test/Serve cannot
// show from a well-behaved client: the shared memory's seals, the messages'
// descriptors, and a session that refuses a client which skips or fakes
// its hello (docs/serve.md).
//
//===----------------------------------------------------------------------===//

#if __has_include(<cuda_runtime_api.h>)
#include "ApiTestUtil.h"

#include "../../runtime/lib/serve/Session.h"
#include "../../runtime/lib/serve/Wire.h"

#include "gtest/gtest.h"

#include <sys/mman.h>
#include <sys/socket.h>
#include <thread>
#include <unistd.h>

using namespace cleave::rt;
using namespace cleave::rt::serve;

namespace {

TEST(ServeWire, SealedMemoryCannotChangeSizeAndIsRecognized) {
  int Fd = sealedMemory("test", 8192);
  ASSERT_GE(Fd, 0);
  EXPECT_TRUE(isSealedMemory(Fd, 8192));
  EXPECT_FALSE(isSealedMemory(Fd, 8193));
  EXPECT_NE(::ftruncate(Fd, 4096), 0); // a client cannot shrink it
  EXPECT_TRUE(isSealedMemory(Fd, 8192));
  ::close(Fd);
  int Plain = ::memfd_create("plain", 0);
  ASSERT_GE(Plain, 0);
  ASSERT_EQ(::ftruncate(Plain, 8192), 0);
  EXPECT_FALSE(isSealedMemory(Plain, 8192));
  ::close(Plain);
  // With contents: written before the seals, and no longer writable.
  const char Text[] = "image";
  Fd = sealedMemory("image", sizeof(Text), Text);
  ASSERT_GE(Fd, 0);
  char Back[sizeof(Text)] = {};
  EXPECT_EQ(::pread(Fd, Back, sizeof(Back), 0), ssize_t(sizeof(Back)));
  EXPECT_STREQ(Back, Text);
  EXPECT_LT(::pwrite(Fd, "x", 1, 0), 0);
  ::close(Fd);
}

TEST(ServeWire, MessagesCarryTheirPayloadAndDescriptors) {
  int S[2];
  ASSERT_EQ(::socketpair(AF_UNIX, SOCK_STREAM, 0, S), 0);
  int A = sealedMemory("a", 4096), B = sealedMemory("b", 8192);
  Writer W;
  W.put(uint32_t(7)).str("name").put(Endpoint{Space::Pinned, 42});
  ASSERT_TRUE(sendMessage(S[0], uint32_t(Op::Copy), W.data(), {A, B}));
  uint32_t Code = 0;
  std::string Payload;
  std::vector<int> Fds;
  ASSERT_TRUE(receiveMessage(S[1], Code, Payload, Fds));
  EXPECT_EQ(Code, uint32_t(Op::Copy));
  Reader R(Payload);
  EXPECT_EQ(R.get<uint32_t>(), 7u);
  EXPECT_EQ(R.str(), "name");
  Endpoint E = R.get<Endpoint>();
  EXPECT_EQ(E.Where, Space::Pinned);
  EXPECT_EQ(E.Value, 42u);
  EXPECT_TRUE(R.ok());
  (void)R.get<uint64_t>(); // past the end
  EXPECT_FALSE(R.ok());
  ASSERT_EQ(Fds.size(), 2u);
  EXPECT_TRUE(isSealedMemory(Fds[0], 4096));
  EXPECT_TRUE(isSealedMemory(Fds[1], 8192));
  for (int Fd : {A, B, Fds[0], Fds[1], S[0], S[1]})
    ::close(Fd);
}

/// One request to a session and its reply's code and message.
std::pair<int, std::string> ask(int Sock, Op O, const std::string &Payload,
                                const std::vector<int> &Fds = {}) {
  uint32_t Code;
  std::string Reply;
  std::vector<int> Got;
  if (!sendMessage(Sock, uint32_t(O), Payload, Fds) ||
      !receiveMessage(Sock, Code, Reply, Got))
    return {-1, "no reply"};
  Reader R(Reply);
  int C = R.get<int32_t>();
  return {C, R.str()};
}

TEST(ServeSession, RefusesRequestsBeforeHelloAndUnsealedStaging) {
  cleave_api_test::restart("cpu");
  int S[2];
  ASSERT_EQ(::socketpair(AF_UNIX, SOCK_STREAM, 0, S), 0);
  Session Server(1, S[1]);
  bool KeepGoing = false;
  std::thread T([&] { KeepGoing = Server.run(); });

  auto [C1, M1] = ask(S[0], Op::Malloc, Writer().put(uint64_t(64)).data());
  EXPECT_EQ(C1, int(ErrorCode::InitializationError)) << M1;

  int Plain = ::memfd_create("plain", 0);
  ASSERT_EQ(::ftruncate(Plain, 4096), 0);
  Writer Hello;
  Hello.put(int64_t(::getpid())).put(uint64_t(4096));
  auto [C2, M2] = ask(S[0], Op::Hello, Hello.data(), {Plain});
  EXPECT_EQ(C2, int(ErrorCode::InvalidValue));
  EXPECT_NE(M2.find("sealed"), std::string::npos) << M2;
  // Sealed but smaller than it says.
  int Small = sealedMemory("small", 1024);
  auto [C3, M3] = ask(S[0], Op::Hello, Hello.data(), {Small});
  EXPECT_EQ(C3, int(ErrorCode::InvalidValue)) << M3;
  ::close(Plain);
  ::close(Small);

  ::close(S[0]); // the client goes: the session ends, the server goes on
  T.join();
  EXPECT_TRUE(KeepGoing);
  ::close(S[1]);
  api::Runtime::reset();
}

} // namespace
#endif
