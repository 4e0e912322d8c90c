//===- ApiMemoryTest.cpp - cudaMalloc, cudaMemcpy*, cudaMemset, pinned ----===//
//
// Part of Cleave. The memory functions of the CUDA-runtime subset, through
// the public API: every copy kind, pointers inside allocations, 2-D copies,
// memset, pinned memory and asynchronous copies, and the bad inputs that
// must give CUDA's error codes (out of range, double free, use after free,
// null pointers, wrong kinds) without becoming sticky.
//
//===----------------------------------------------------------------------===//
#if __has_include(<cuda_runtime_api.h>)
#include "ApiTestUtil.h"

#include <cstring>
#include <numeric>
#include <vector>

using namespace cleave_api_test;

namespace {

std::vector<int> iota(size_t N, int First = 0) {
  std::vector<int> V(N);
  std::iota(V.begin(), V.end(), First);
  return V;
}

TEST_P(ApiTest, MallocAndFree) {
  void *P = nullptr;
  ASSERT_EQ(cudaMalloc(&P, 1000), cudaSuccess);
  EXPECT_NE(P, nullptr);
  void *Q = nullptr;
  ASSERT_EQ(cudaMalloc(&Q, 3 << 20), cudaSuccess); // mmap'ed host copy
  EXPECT_NE(Q, nullptr);
  EXPECT_EQ(cudaFree(P), cudaSuccess);
  EXPECT_EQ(cudaFree(Q), cudaSuccess);
  // Zero bytes: success and a null pointer, as CUDA does.
  void *Z = &P;
  EXPECT_EQ(cudaMalloc(&Z, 0), cudaSuccess);
  EXPECT_EQ(Z, nullptr);
  EXPECT_EQ(cudaFree(nullptr), cudaSuccess);
  EXPECT_EQ(cudaMalloc(nullptr, 16), cudaErrorInvalidValue);
  EXPECT_EQ(cudaGetLastError(), cudaErrorInvalidValue);
}

TEST_P(ApiTest, CopiesOfEveryKind) {
  const size_t N = 1000;
  std::vector<int> Host = iota(N), Back(N, -1);
  int *A, *B;
  ASSERT_EQ(cudaMalloc(&A, N * sizeof(int)), cudaSuccess);
  ASSERT_EQ(cudaMalloc(&B, N * sizeof(int)), cudaSuccess);

  ASSERT_EQ(cudaMemcpy(A, Host.data(), N * sizeof(int), cudaMemcpyHostToDevice),
            cudaSuccess);
  ASSERT_EQ(cudaMemcpy(B, A, N * sizeof(int), cudaMemcpyDeviceToDevice),
            cudaSuccess);
  ASSERT_EQ(cudaMemcpy(Back.data(), B, N * sizeof(int), cudaMemcpyDeviceToHost),
            cudaSuccess);
  EXPECT_EQ(Back, Host);

  // cudaMemcpyDefault tells the sides apart by looking the pointers up.
  std::vector<int> Other = iota(N, 5000);
  ASSERT_EQ(cudaMemcpy(A, Other.data(), N * sizeof(int), cudaMemcpyDefault),
            cudaSuccess);
  ASSERT_EQ(cudaMemcpy(B, A, N * sizeof(int), cudaMemcpyDefault), cudaSuccess);
  std::fill(Back.begin(), Back.end(), -1);
  ASSERT_EQ(cudaMemcpy(Back.data(), B, N * sizeof(int), cudaMemcpyDefault),
            cudaSuccess);
  EXPECT_EQ(Back, Other);

  // Host to host.
  std::vector<int> H2(N, 0);
  ASSERT_EQ(
      cudaMemcpy(H2.data(), Host.data(), N * sizeof(int), cudaMemcpyHostToHost),
      cudaSuccess);
  EXPECT_EQ(H2, Host);

  // Pointers inside allocations, and an overlapping device-to-device copy
  // (memmove semantics).
  ASSERT_EQ(cudaMemcpy(A + 100, Host.data(), 50 * sizeof(int),
                       cudaMemcpyHostToDevice),
            cudaSuccess);
  ASSERT_EQ(
      cudaMemcpy(A + 110, A + 100, 50 * sizeof(int), cudaMemcpyDeviceToDevice),
      cudaSuccess);
  std::vector<int> Part(50);
  ASSERT_EQ(cudaMemcpy(Part.data(), A + 110, 50 * sizeof(int),
                       cudaMemcpyDeviceToHost),
            cudaSuccess);
  EXPECT_EQ(Part, iota(50));
  EXPECT_EQ(cudaFree(A), cudaSuccess);
  EXPECT_EQ(cudaFree(B), cudaSuccess);
  EXPECT_EQ(cudaGetLastError(), cudaSuccess);
}

TEST_P(ApiTest, BadCopiesReturnCodesThatAreNotSticky) {
  int *A;
  ASSERT_EQ(cudaMalloc(&A, 1000 * sizeof(int)), cudaSuccess);
  std::vector<int> Host = iota(2000);

  // Past the end of the allocation.
  EXPECT_EQ(cudaMemcpy(A + 900, Host.data(), 200 * sizeof(int),
                       cudaMemcpyHostToDevice),
            cudaErrorInvalidValue);
  EXPECT_NE(lastMessage().find("destination"), std::string::npos)
      << lastMessage();
  // Peek keeps it, Get returns and clears it.
  EXPECT_EQ(cudaPeekAtLastError(), cudaErrorInvalidValue);
  EXPECT_EQ(cudaPeekAtLastError(), cudaErrorInvalidValue);
  EXPECT_EQ(cudaGetLastError(), cudaErrorInvalidValue);
  EXPECT_EQ(cudaGetLastError(), cudaSuccess);
  EXPECT_EQ(cudaPeekAtLastError(), cudaSuccess);
  // Not sticky: the next good call succeeds.
  EXPECT_EQ(
      cudaMemcpy(A, Host.data(), 1000 * sizeof(int), cudaMemcpyHostToDevice),
      cudaSuccess);

  // A host pointer where the kind says device, both ways.
  EXPECT_EQ(
      cudaMemcpy(Host.data(), Host.data() + 1000, 16, cudaMemcpyHostToDevice),
      cudaErrorInvalidValue);
  EXPECT_EQ(
      cudaMemcpy(Host.data(), Host.data() + 1000, 16, cudaMemcpyDeviceToHost),
      cudaErrorInvalidValue);
  EXPECT_EQ(cudaMemcpy(A, Host.data(), 16, cudaMemcpyDeviceToDevice),
            cudaErrorInvalidValue);
  // Not a cudaMemcpyKind.
  EXPECT_EQ(cudaMemcpy(A, Host.data(), 16, static_cast<cudaMemcpyKind>(7)),
            cudaErrorInvalidMemcpyDirection);
  // Null pointers.
  EXPECT_EQ(cudaMemcpy(nullptr, A, 16, cudaMemcpyDeviceToHost),
            cudaErrorInvalidValue);
  EXPECT_EQ(cudaMemcpy(A, nullptr, 16, cudaMemcpyHostToDevice),
            cudaErrorInvalidValue);
  EXPECT_EQ(cudaMemset(nullptr, 0, 16), cudaErrorInvalidValue);
  // Zero bytes is fine whatever the pointers.
  EXPECT_EQ(cudaMemcpy(nullptr, nullptr, 0, cudaMemcpyDeviceToHost),
            cudaSuccess);

  // The data survived every refused call.
  std::vector<int> Back(1000);
  ASSERT_EQ(
      cudaMemcpy(Back.data(), A, 1000 * sizeof(int), cudaMemcpyDeviceToHost),
      cudaSuccess);
  EXPECT_EQ(Back, iota(1000));
  EXPECT_EQ(cudaFree(A), cudaSuccess);
  (void)cudaGetLastError();
}

TEST_P(ApiTest, BadFreesAndUseAfterFree) {
  char *A;
  ASSERT_EQ(cudaMalloc(&A, 4096), cudaSuccess);
  char Host[64] = {};
  EXPECT_EQ(cudaFree(A + 8), cudaErrorInvalidValue); // inside an allocation
  EXPECT_EQ(cudaFree(Host), cudaErrorInvalidValue);  // never allocated
  EXPECT_EQ(cudaFree(A), cudaSuccess);
  EXPECT_EQ(cudaFree(A), cudaErrorInvalidValue); // double free
  EXPECT_NE(lastMessage().find("free"), std::string::npos) << lastMessage();
  // Use after free.
  EXPECT_EQ(cudaMemcpy(A, Host, 64, cudaMemcpyHostToDevice),
            cudaErrorInvalidValue);
  EXPECT_EQ(cudaMemcpy(Host, A, 64, cudaMemcpyDeviceToHost),
            cudaErrorInvalidValue);
  EXPECT_EQ(cudaMemset(A, 0, 64), cudaErrorInvalidValue);
  EXPECT_EQ(cudaMemcpyAsync(Host, A, 64, cudaMemcpyDeviceToHost, 0),
            cudaErrorInvalidValue);
  EXPECT_EQ(cudaGetLastError(), cudaErrorInvalidValue);
  EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess);
}

TEST_P(ApiTest, Memset) {
  unsigned char *A;
  ASSERT_EQ(cudaMalloc(&A, 256), cudaSuccess);
  ASSERT_EQ(cudaMemset(A, 0x11, 256), cudaSuccess);
  ASSERT_EQ(cudaMemset(A + 16, 0xab, 32), cudaSuccess);
  EXPECT_EQ(cudaMemset(A + 250, 0, 7), cudaErrorInvalidValue);
  std::vector<unsigned char> Back(256);
  ASSERT_EQ(cudaMemcpy(Back.data(), A, 256, cudaMemcpyDeviceToHost),
            cudaSuccess);
  for (size_t I = 0; I < 256; ++I)
    ASSERT_EQ(Back[I], (I >= 16 && I < 48) ? 0xab : 0x11) << I;
  // Asynchronous on a stream, then read after synchronizing.
  cudaStream_t S;
  ASSERT_EQ(cudaStreamCreate(&S), cudaSuccess);
  ASSERT_EQ(cudaMemsetAsync(A, 0x7f, 128, S), cudaSuccess);
  ASSERT_EQ(cudaStreamSynchronize(S), cudaSuccess);
  ASSERT_EQ(cudaMemcpy(Back.data(), A, 256, cudaMemcpyDeviceToHost),
            cudaSuccess);
  EXPECT_EQ(Back[0], 0x7f);
  EXPECT_EQ(Back[127], 0x7f);
  EXPECT_EQ(Back[128], 0x11);
  EXPECT_EQ(cudaStreamDestroy(S), cudaSuccess);
  EXPECT_EQ(cudaFree(A), cudaSuccess);
  (void)cudaGetLastError();
}

TEST_P(ApiTest, Copies2D) {
  // A 7 x 5 rectangle of ints between a host array (pitch 10 ints) and a
  // device array (pitch 16 ints), then back into a packed host array.
  const size_t W = 7, H = 5, HostPitch = 10, DevPitch = 16;
  std::vector<int> Host = iota(HostPitch * (H + 1));
  int *D;
  ASSERT_EQ(cudaMalloc(&D, DevPitch * H * sizeof(int)), cudaSuccess);
  ASSERT_EQ(cudaMemset(D, 0xff, DevPitch * H * sizeof(int)), cudaSuccess);
  ASSERT_EQ(cudaMemcpy2D(D, DevPitch * sizeof(int), Host.data(),
                         HostPitch * sizeof(int), W * sizeof(int), H,
                         cudaMemcpyHostToDevice),
            cudaSuccess);
  std::vector<int> Packed(W * H, 0);
  ASSERT_EQ(cudaMemcpy2D(Packed.data(), W * sizeof(int), D,
                         DevPitch * sizeof(int), W * sizeof(int), H,
                         cudaMemcpyDeviceToHost),
            cudaSuccess);
  for (size_t Y = 0; Y < H; ++Y)
    for (size_t X = 0; X < W; ++X)
      ASSERT_EQ(Packed[Y * W + X], int(Y * HostPitch + X)) << X << "," << Y;
  // The padding between rows was not touched.
  std::vector<int> Whole(DevPitch * H);
  ASSERT_EQ(cudaMemcpy(Whole.data(), D, Whole.size() * sizeof(int),
                       cudaMemcpyDeviceToHost),
            cudaSuccess);
  EXPECT_EQ(Whole[W], -1);
  EXPECT_EQ(Whole[DevPitch - 1], -1);

  // Device to device, asynchronously on a stream.
  int *E;
  ASSERT_EQ(cudaMalloc(&E, W * H * sizeof(int)), cudaSuccess);
  cudaStream_t S;
  ASSERT_EQ(cudaStreamCreate(&S), cudaSuccess);
  ASSERT_EQ(cudaMemcpy2DAsync(E, W * sizeof(int), D, DevPitch * sizeof(int),
                              W * sizeof(int), H, cudaMemcpyDeviceToDevice, S),
            cudaSuccess);
  ASSERT_EQ(cudaStreamSynchronize(S), cudaSuccess);
  std::vector<int> Packed2(W * H);
  ASSERT_EQ(cudaMemcpy(Packed2.data(), E, Packed2.size() * sizeof(int),
                       cudaMemcpyDeviceToHost),
            cudaSuccess);
  EXPECT_EQ(Packed2, Packed);

  // A pitch smaller than the width; a rectangle that overruns the buffer.
  EXPECT_EQ(cudaMemcpy2D(D, 4, Host.data(), 40, 8, 2, cudaMemcpyHostToDevice),
            cudaErrorInvalidPitchValue);
  EXPECT_EQ(cudaMemcpy2D(D, DevPitch * sizeof(int), Host.data(),
                         HostPitch * sizeof(int), W * sizeof(int), H + 1,
                         cudaMemcpyHostToDevice),
            cudaErrorInvalidValue);
  EXPECT_EQ(cudaMemcpy2DAsync(E, W * sizeof(int), D, DevPitch * sizeof(int),
                              W * sizeof(int), H + 1, cudaMemcpyDeviceToDevice,
                              S),
            cudaErrorInvalidValue);
  EXPECT_EQ(cudaStreamDestroy(S), cudaSuccess);
  EXPECT_EQ(cudaFree(D), cudaSuccess);
  EXPECT_EQ(cudaFree(E), cudaSuccess);
  (void)cudaGetLastError();
}

TEST_P(ApiTest, PinnedMemory) {
  const size_t N = 1 << 16;
  int *Pinned = nullptr, *Pinned2 = nullptr;
  ASSERT_EQ(cudaMallocHost(reinterpret_cast<void **>(&Pinned), N * sizeof(int)),
            cudaSuccess);
  ASSERT_EQ(cudaHostAlloc(reinterpret_cast<void **>(&Pinned2), N * sizeof(int),
                          cudaHostAllocPortable),
            cudaSuccess);
  for (size_t I = 0; I < N; ++I)
    Pinned[I] = int(I * 3);
  int *D;
  ASSERT_EQ(cudaMalloc(&D, N * sizeof(int)), cudaSuccess);
  cudaStream_t S;
  ASSERT_EQ(cudaStreamCreate(&S), cudaSuccess);
  // Pinned to device and back, asynchronously, ordered on one stream.
  ASSERT_EQ(
      cudaMemcpyAsync(D, Pinned, N * sizeof(int), cudaMemcpyHostToDevice, S),
      cudaSuccess);
  ASSERT_EQ(
      cudaMemcpyAsync(Pinned2, D, N * sizeof(int), cudaMemcpyDeviceToHost, S),
      cudaSuccess);
  ASSERT_EQ(cudaStreamSynchronize(S), cudaSuccess);
  EXPECT_EQ(std::memcmp(Pinned, Pinned2, N * sizeof(int)), 0);

  EXPECT_EQ(cudaFreeHost(Pinned + 1), cudaErrorInvalidValue);
  int Stack = 0;
  EXPECT_EQ(cudaFreeHost(&Stack), cudaErrorInvalidValue);
  EXPECT_EQ(cudaHostAlloc(reinterpret_cast<void **>(&Pinned2), 64,
                          cudaHostAllocMapped),
            cudaErrorNotSupported);
  EXPECT_EQ(cudaHostAlloc(reinterpret_cast<void **>(&Pinned2), 64, 0x80),
            cudaErrorInvalidValue);
  EXPECT_EQ(cudaFreeHost(Pinned), cudaSuccess);
  EXPECT_EQ(cudaFreeHost(Pinned), cudaErrorInvalidValue); // double free
  EXPECT_EQ(cudaStreamDestroy(S), cudaSuccess);
  EXPECT_EQ(cudaFree(D), cudaSuccess);
  (void)cudaGetLastError();
}

TEST_P(ApiTest, AsyncCopyFromPageableMemoryIsDoneOnReturn) {
  // CUDA: a copy from pageable memory has read the host buffer when
  // cudaMemcpyAsync returns, so the program may overwrite it at once.
  const size_t N = 1 << 18;
  std::vector<int> Host = iota(N);
  int *D;
  ASSERT_EQ(cudaMalloc(&D, N * sizeof(int)), cudaSuccess);
  cudaStream_t S;
  ASSERT_EQ(cudaStreamCreateWithFlags(&S, cudaStreamNonBlocking), cudaSuccess);
  ASSERT_EQ(cudaMemcpyAsync(D, Host.data(), N * sizeof(int),
                            cudaMemcpyHostToDevice, S),
            cudaSuccess);
  std::fill(Host.begin(), Host.end(), -7);
  // And a copy into pageable memory is complete on return too.
  std::vector<int> Back(N, 0);
  ASSERT_EQ(cudaMemcpyAsync(Back.data(), D, N * sizeof(int),
                            cudaMemcpyDeviceToHost, S),
            cudaSuccess);
  EXPECT_EQ(Back, iota(N));
  EXPECT_EQ(cudaStreamDestroy(S), cudaSuccess);
  EXPECT_EQ(cudaFree(D), cudaSuccess);
}

TEST_P(ApiTest, PitchedMemory) {
  // cudaMallocPitch: rows at the virtual device's texture alignment.
  const size_t W = 37 * sizeof(int), H = 9;
  int *D = nullptr;
  size_t Pitch = 0;
  ASSERT_EQ(cudaMallocPitch(reinterpret_cast<void **>(&D), &Pitch, W, H),
            cudaSuccess);
  cudaDeviceProp P;
  ASSERT_EQ(cudaGetDeviceProperties(&P, 0), cudaSuccess);
  EXPECT_GE(Pitch, W);
  EXPECT_EQ(Pitch % P.textureAlignment, 0u);
  // The whole of it is one allocation.
  ASSERT_EQ(cudaMemset(D, 0x11, Pitch * H), cudaSuccess);

  // cudaMemset2D writes the rectangle only.
  ASSERT_EQ(cudaMemset2D(D, Pitch, 0x22, W, H), cudaSuccess);
  std::vector<unsigned char> Whole(Pitch * H);
  ASSERT_EQ(cudaMemcpy(Whole.data(), D, Whole.size(), cudaMemcpyDeviceToHost),
            cudaSuccess);
  for (size_t Y = 0; Y < H; ++Y)
    for (size_t X = 0; X < Pitch; ++X)
      ASSERT_EQ(Whole[Y * Pitch + X], X < W ? 0x22 : 0x11) << X << "," << Y;

  // Host -> pitched -> pitched -> host, and host -> host.
  std::vector<int> Host = iota(37 * H);
  ASSERT_EQ(
      cudaMemcpy2D(D, Pitch, Host.data(), W, W, H, cudaMemcpyHostToDevice),
      cudaSuccess);
  int *E = nullptr;
  size_t PitchE = 0;
  ASSERT_EQ(cudaMallocPitch(reinterpret_cast<void **>(&E), &PitchE, W, H),
            cudaSuccess);
  cudaStream_t S;
  ASSERT_EQ(cudaStreamCreate(&S), cudaSuccess);
  ASSERT_EQ(cudaMemset2DAsync(E, PitchE, 0, W, H, S), cudaSuccess);
  ASSERT_EQ(
      cudaMemcpy2DAsync(E, PitchE, D, Pitch, W, H, cudaMemcpyDeviceToDevice, S),
      cudaSuccess);
  std::vector<int> Back(37 * H, -1);
  ASSERT_EQ(cudaMemcpy2D(Back.data(), W, E, PitchE, W, H, cudaMemcpyDefault),
            cudaSuccess);
  EXPECT_EQ(Back, Host);
  std::vector<int> Copy(37 * H, -1);
  ASSERT_EQ(
      cudaMemcpy2D(Copy.data(), W, Host.data(), W, W, H, cudaMemcpyHostToHost),
      cudaSuccess);
  EXPECT_EQ(Copy, Host);

  // A pitch below the width; a rectangle past the allocation.
  EXPECT_EQ(cudaMemset2D(D, W - 4, 0, W, 2), cudaErrorInvalidPitchValue);
  EXPECT_EQ(cudaMemset2D(D, Pitch, 0, W, H + 1), cudaErrorInvalidValue);
  EXPECT_EQ(cudaMallocPitch(nullptr, &Pitch, W, H), cudaErrorInvalidValue);
  EXPECT_EQ(cudaStreamDestroy(S), cudaSuccess);
  EXPECT_EQ(cudaFree(D), cudaSuccess);
  EXPECT_EQ(cudaFree(E), cudaSuccess);
  (void)cudaGetLastError();
}

TEST_P(ApiTest, HostRegister) {
  const size_t N = 1 << 16;
  std::vector<int> Host = iota(N);
  ASSERT_EQ(cudaHostRegister(Host.data(), N * sizeof(int), 0), cudaSuccess);
  // Registered memory takes part in asynchronous copies like pinned memory.
  int *D;
  ASSERT_EQ(cudaMalloc(&D, N * sizeof(int)), cudaSuccess);
  cudaStream_t S;
  ASSERT_EQ(cudaStreamCreate(&S), cudaSuccess);
  ASSERT_EQ(cudaMemcpyAsync(D, Host.data(), N * sizeof(int),
                            cudaMemcpyHostToDevice, S),
            cudaSuccess);
  ASSERT_EQ(cudaMemsetAsync(D, 0, 16 * sizeof(int), S), cudaSuccess);
  ASSERT_EQ(cudaMemcpyAsync(Host.data(), D, N * sizeof(int),
                            cudaMemcpyDeviceToHost, S),
            cudaSuccess);
  ASSERT_EQ(cudaStreamSynchronize(S), cudaSuccess);
  std::vector<int> Expect = iota(N);
  std::fill(Expect.begin(), Expect.begin() + 16, 0);
  EXPECT_EQ(Host, Expect);

  // Overlaps, frees and unregistrations CUDA refuses.
  EXPECT_EQ(cudaHostRegister(Host.data() + 8, 64, 0),
            cudaErrorHostMemoryAlreadyRegistered);
  EXPECT_EQ(cudaFreeHost(Host.data()), cudaErrorInvalidValue);
  EXPECT_EQ(cudaHostUnregister(Host.data() + 8),
            cudaErrorHostMemoryNotRegistered);
  EXPECT_EQ(cudaHostUnregister(Host.data()), cudaSuccess);
  EXPECT_EQ(cudaHostUnregister(Host.data()), cudaErrorHostMemoryNotRegistered);
  void *Pinned;
  ASSERT_EQ(cudaMallocHost(&Pinned, 4096), cudaSuccess);
  EXPECT_EQ(cudaHostRegister(Pinned, 64, 0),
            cudaErrorHostMemoryAlreadyRegistered);
  EXPECT_EQ(cudaHostUnregister(Pinned), cudaErrorHostMemoryNotRegistered);
  EXPECT_EQ(cudaFreeHost(Pinned), cudaSuccess);
  // Device access to host memory is not provided; bad arguments.
  EXPECT_EQ(cudaHostRegister(Host.data(), 64, cudaHostRegisterMapped),
            cudaErrorNotSupported);
  EXPECT_EQ(cudaHostRegister(Host.data(), 64, 0x40), cudaErrorInvalidValue);
  EXPECT_EQ(cudaHostRegister(nullptr, 64, 0), cudaErrorInvalidValue);
  EXPECT_EQ(cudaHostRegister(Host.data(), 0, 0), cudaErrorInvalidValue);
  // A registration still there at a reset is dropped with the runtime.
  ASSERT_EQ(cudaHostRegister(Host.data(), 64, cudaHostRegisterPortable),
            cudaSuccess);
  EXPECT_EQ(cudaStreamDestroy(S), cudaSuccess);
  EXPECT_EQ(cudaFree(D), cudaSuccess);
  (void)cudaGetLastError();
}

INSTANTIATE_TEST_SUITE_P(Devices, ApiTest,
                         ::testing::Values("cpu", "cpu,cpu,cpu"));

} // namespace
#endif
