//===- CubinInfoTest.cpp - Registers and frames read from a cubin ---------===//
//
// Part of Cleave. readCubinKernelResources on a small ELF64 image built
// here the way ptxas lays a cubin out (a symbol table, its string table,
// and a .nv.info section of attribute entries keyed by symbol index): the
// kernel's entries are found among other kernels' and other formats, and
// every truncation or foreign image gives false without reading out of
// bounds. test/Runtime/Api/kernel-resources.test compares real cubins with
// `ptxas -v`.
//
//===----------------------------------------------------------------------===//
#include "cleave/rt/CubinInfo.h"

#include "gtest/gtest.h"

#include <cstring>
#include <string>
#include <vector>

using namespace cleave::rt;

namespace {

template <class T> void put(std::string &S, size_t Off, T V) {
  if (S.size() < Off + sizeof(T))
    S.resize(Off + sizeof(T));
  std::memcpy(&S[Off], &V, sizeof(T));
}

/// A cubin-like ELF64: sections null, .shstrtab, .strtab, .symtab,
/// .nv.info; symbols null, "other" (1), "kern" (2).
std::string makeCubin(const std::string &Info) {
  std::string ShStr =
      std::string("\0.shstrtab\0.strtab\0.symtab\0.nv.info\0", 37);
  std::string Str = std::string("\0other\0kern\0", 12);
  std::string Sym(3 * 24, '\0');
  put<uint32_t>(Sym, 24, 1); // "other"
  put<uint32_t>(Sym, 48, 7); // "kern"
  std::string Out(64, '\0');
  Out.replace(0, 4,
              "\x7f"
              "ELF");
  Out[4] = 2; // ELF64
  Out[5] = 1; // little-endian
  struct Sec {
    uint32_t Name, Type, Link;
    std::string Data;
    uint64_t EntSize;
  };
  std::vector<Sec> Secs = {{0, 0, 0, "", 0},
                           {1, 3, 0, ShStr, 0},
                           {11, 3, 0, Str, 0},
                           {19, 2, 2, Sym, 24},
                           {27, 0x70000000, 0, Info, 0}};
  std::vector<uint64_t> Offsets;
  for (const Sec &S : Secs) {
    Offsets.push_back(Out.size());
    Out += S.Data;
  }
  uint64_t ShOff = Out.size();
  for (size_t I = 0; I < Secs.size(); ++I) {
    uint64_t H = ShOff + I * 64;
    put<uint32_t>(Out, H, Secs[I].Name);
    put<uint32_t>(Out, H + 4, Secs[I].Type);
    put<uint64_t>(Out, H + 0x18, Offsets[I]);
    put<uint64_t>(Out, H + 0x20, Secs[I].Data.size());
    put<uint32_t>(Out, H + 0x28, Secs[I].Link);
    put<uint64_t>(Out, H + 0x38, Secs[I].EntSize);
  }
  put<uint64_t>(Out, 0x28, ShOff);
  put<uint16_t>(Out, 0x3a, 64);
  put<uint16_t>(Out, 0x3c, uint16_t(Secs.size()));
  put<uint16_t>(Out, 0x3e, 1);
  return Out;
}

/// One sized (format 4) .nv.info entry: attribute, symbol, value.
std::string entry(uint8_t Attr, uint32_t Symbol, uint32_t Value) {
  std::string E(12, '\0');
  E[0] = 4;
  E[1] = char(Attr);
  put<uint16_t>(E, 2, 8);
  put<uint32_t>(E, 4, Symbol);
  put<uint32_t>(E, 8, Value);
  return E;
}

TEST(CubinInfo, RegistersAndFrameOfTheNamedKernel) {
  std::string Info = entry(0x2f, 1, 40) + std::string("\x03\x1b\xff\x00", 4) +
                     entry(0x2f, 2, 28) + entry(0x11, 1, 8) +
                     entry(0x11, 2, 64) + entry(0x12, 2, 64);
  std::string Cubin = makeCubin(Info);
  CubinKernelResources R;
  ASSERT_TRUE(readCubinKernelResources(Cubin, "kern", R));
  EXPECT_EQ(R.Registers, 28u);
  EXPECT_EQ(R.FrameBytes, 64u);
  ASSERT_TRUE(readCubinKernelResources(Cubin, "other", R));
  EXPECT_EQ(R.Registers, 40u);
  EXPECT_EQ(R.FrameBytes, 8u);
  // No such kernel; a kernel without a register count.
  EXPECT_FALSE(readCubinKernelResources(Cubin, "missing", R));
  EXPECT_FALSE(
      readCubinKernelResources(makeCubin(entry(0x11, 2, 64)), "kern", R));
  // An entry format this reader does not know stops it.
  EXPECT_FALSE(readCubinKernelResources(
      makeCubin(std::string("\x09\x2f\x00\x00", 4) + entry(0x2f, 2, 28)),
      "kern", R));
}

TEST(CubinInfo, TruncatedOrForeignImagesAreRefused) {
  std::string Cubin = makeCubin(entry(0x2f, 2, 28));
  CubinKernelResources R;
  // Every prefix of the image: false or the right answer (the reader
  // checks every offset against the image before it reads).
  for (size_t N = 0; N < Cubin.size(); ++N)
    if (readCubinKernelResources(std::string_view(Cubin).substr(0, N), "kern",
                                 R))
      EXPECT_EQ(R.Registers, 28u) << N;
  EXPECT_FALSE(readCubinKernelResources("", "kern", R));
  EXPECT_FALSE(readCubinKernelResources(std::string(200, 'x'), "kern", R));
  std::string BigEndian = Cubin;
  BigEndian[5] = 2;
  EXPECT_FALSE(readCubinKernelResources(BigEndian, "kern", R));
  std::string BadOffset = Cubin;
  put<uint64_t>(BadOffset, 0x28, ~uint64_t(0) - 10);
  EXPECT_FALSE(readCubinKernelResources(BadOffset, "kern", R));
}

} // namespace
