//===- BundleFormat.h - The kernel bundle's bytes, both sides ---*- C++ -*-===//
//
// Part of Cleave. What the compiler's bundle writer (lib/Bundle) and the
// runtime's bundle reader (runtime/lib/program/Bundle.cpp) must agree on byte for
// byte: the header constants, the numeric codes of every enumeration stored
// in a bundle, the checksum, and the little-endian encoders and the
// bounds-checked decoder of the primitive fields. Plain C++17, no LLVM and no
// runtime headers, so that both layers include this one file instead of each
// keeping a copy (docs/bundle.md). The enumerations that are facts of their
// own (parameter roles, combine operations) have their own headers here.
//
// The layout of the payload is documented in docs/bundle.md; the writer and
// the reader each follow it once.
//
//===----------------------------------------------------------------------===//
#ifndef CLEAVE_ABI_BUNDLEFORMAT_H
#define CLEAVE_ABI_BUNDLEFORMAT_H

#include "cleave/ABI/BundleCodes.h"
#include "cleave/ABI/CombineOp.h"
#include "cleave/ABI/ParamRole.h"

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

namespace cleave {
namespace bundle {

/// "CLVBNDL" and a NUL: the first eight bytes of every bundle.
inline constexpr char Magic[8] = {'C', 'L', 'V', 'B', 'N', 'D', 'L', '\0'};
/// Bumped whenever a reader of the previous version would misread a bundle.
inline constexpr uint32_t FormatVersion = 6;
/// The oldest version a reader accepts. Version 6 only appends the co-run
/// table after the kernels, so a version-5 bundle is read as one whose
/// kernels have no co-run inputs (docs/bundle.md, "Versioning").
inline constexpr uint32_t MinFormatVersion = 5;
/// The first version with the co-run table.
inline constexpr uint32_t CoRunTableVersion = 6;
/// magic[8], u32 version, u32 flags (0), u64 payload size, u64 checksum.
inline constexpr size_t HeaderSize = 32;
inline constexpr size_t VersionOffset = 8;
inline constexpr size_t FlagsOffset = 12;
inline constexpr size_t PayloadSizeOffset = 16;
inline constexpr size_t ChecksumOffset = 24;

// Numeric codes stored in the payload: the enumerations of BundleCodes.h,
// and the values of cleave::ParamRole and cleave::CombineOp (ParamRole.h,
// CombineOp.h).
using cleave::CombineOp;
using cleave::NumCombineOps;
using cleave::ParamRole;

// Flag bits.
inline constexpr uint8_t ParamRoleIsGuess = 1; ///< the pointer escapes
inline constexpr uint8_t KernelCanSplit = 1;
inline constexpr uint8_t KernelCanRunOnCPU = 2;
inline constexpr uint8_t IssueForbidsSplit = 1;
inline constexpr uint8_t IssueForbidsCPU = 2;
inline constexpr uint8_t VariableRead = 1;
inline constexpr uint8_t VariableWritten = 2;

/// 64-bit FNV-1a, continued from \p Hash. Not cryptographic: it detects
/// corruption (any change confined to one byte always changes the hash,
/// since each step is a bijection of the state), not tampering.
inline constexpr uint64_t FNVOffsetBasis = 0xcbf29ce484222325ULL;
inline uint64_t fnv1a64(const void *Data, size_t Size,
                        uint64_t Hash = FNVOffsetBasis) {
  const auto *P = static_cast<const unsigned char *>(Data);
  for (size_t I = 0; I < Size; ++I) {
    Hash ^= P[I];
    Hash *= 0x100000001b3ULL;
  }
  return Hash;
}

/// The checksum stored at ChecksumOffset: FNV-1a over the header's first 24
/// bytes (magic, version, flags, payload size), then the payload.
inline uint64_t bundleChecksum(const unsigned char *Header,
                               const unsigned char *Payload,
                               uint64_t PayloadSize) {
  uint64_t H = fnv1a64(Header, ChecksumOffset);
  return fnv1a64(Payload, static_cast<size_t>(PayloadSize), H);
}

/// Appends little-endian fields to a byte string.
class ByteWriter {
public:
  std::string Bytes;

  void u8(uint8_t V) { Bytes.push_back(static_cast<char>(V)); }
  void u32(uint32_t V) {
    for (int I = 0; I < 4; ++I)
      u8(static_cast<uint8_t>(V >> (8 * I)));
  }
  void u64(uint64_t V) {
    for (int I = 0; I < 8; ++I)
      u8(static_cast<uint8_t>(V >> (8 * I)));
  }
  /// IEEE-754 binary64, as the u64 of its bits.
  void f64(double V) {
    uint64_t Bits;
    std::memcpy(&Bits, &V, sizeof(Bits));
    u64(Bits);
  }
  /// u32 length, then the bytes (short text: names, reasons).
  void str(std::string_view S) {
    u32(static_cast<uint32_t>(S.size()));
    Bytes.append(S.data(), S.size());
  }
  /// u64 length, then the bytes (PTX, cubins, footprint text).
  void blob(std::string_view S) {
    u64(S.size());
    Bytes.append(S.data(), S.size());
  }
  /// Overwrites 8 bytes at Offset (header fields known last).
  void patchU64(size_t Offset, uint64_t V) {
    for (int I = 0; I < 8; ++I)
      Bytes[Offset + I] = static_cast<char>(V >> (8 * I));
  }
};

/// Reads little-endian fields from a byte range, never past its end. After
/// the first failure every read fails and Ok stays false, so a decoder can
/// read a whole record and check once.
class ByteReader {
public:
  ByteReader(const unsigned char *Data, size_t Size) : P(Data), N(Size) {}

  bool Ok = true;

  size_t offset() const { return Pos; }
  size_t remaining() const { return N - Pos; }

  bool u8(uint8_t &V) {
    if (!take(1))
      return false;
    V = P[Pos - 1];
    return true;
  }
  bool u32(uint32_t &V) {
    if (!take(4))
      return false;
    V = 0;
    for (int I = 0; I < 4; ++I)
      V |= uint32_t(P[Pos - 4 + I]) << (8 * I);
    return true;
  }
  bool u64(uint64_t &V) {
    if (!take(8))
      return false;
    V = 0;
    for (int I = 0; I < 8; ++I)
      V |= uint64_t(P[Pos - 8 + I]) << (8 * I);
    return true;
  }
  /// A binary64; only finite values, so a decoder checks ranges alone.
  bool f64(double &V) {
    uint64_t Bits = 0;
    if (!u64(Bits))
      return false;
    std::memcpy(&V, &Bits, sizeof(V));
    if (!std::isfinite(V))
      return Ok = false;
    return true;
  }
  bool str(std::string &S) {
    uint32_t Len = 0;
    return u32(Len) && bytes(Len, S);
  }
  bool blob(std::string &S) {
    uint64_t Len = 0;
    return u64(Len) && bytes(Len, S);
  }
  /// A count of records that each take at least MinBytes: refuses counts the
  /// remaining bytes cannot hold, so a corrupt count never drives a huge
  /// allocation.
  bool count(uint32_t &C, size_t MinBytes) {
    if (!u32(C))
      return false;
    if (MinBytes && C > remaining() / MinBytes)
      return Ok = false;
    return true;
  }

private:
  bool take(uint64_t K) {
    if (!Ok || K > remaining())
      return Ok = false;
    Pos += static_cast<size_t>(K);
    return true;
  }
  bool bytes(uint64_t Len, std::string &S) {
    if (!take(Len))
      return false;
    S.assign(reinterpret_cast<const char *>(P + Pos - Len),
             static_cast<size_t>(Len));
    return true;
  }

  const unsigned char *P;
  size_t N;
  size_t Pos = 0;
};

} // namespace bundle
} // namespace cleave

#endif
