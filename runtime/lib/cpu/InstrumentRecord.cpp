//===- InstrumentRecord.cpp - Reading an instrumented run's record --------===//
//
// Part of Cleave's runtime (no LLVM). See cleave/rt/InstrumentRecord.h; the
// writer is Recorder::write in Instrument.cpp, beside this file. Lines:
//
//   launch K grid X Y Z block X Y Z shared S launches N sampled M
//   block B threads T requests R sectors S distinct-sectors D
//         distinct-segments G overflow O
//   warp W lanes L
//   site ID COUNT
//   mem ID REQUESTS LANES BYTES SECTORS SEGMENTS 0xMIN 0xMAX
//   trace LEN TRUNCATED ID...
//   end
//
//===----------------------------------------------------------------------===//
#include "cleave/rt/InstrumentRecord.h"

#include "cleave/ABI/FormatVersions.h"

#include <algorithm>
#include <charconv>

namespace cleave {
namespace rt {
namespace record {

namespace {

/// The line's words (separated by single or repeated spaces).
std::vector<std::string_view> words(std::string_view Line) {
  std::vector<std::string_view> W;
  size_t I = 0;
  while (I < Line.size()) {
    size_t J = Line.find(' ', I);
    if (J == std::string_view::npos)
      J = Line.size();
    if (J > I)
      W.push_back(Line.substr(I, J - I));
    I = J + 1;
  }
  return W;
}

/// Word \p I of \p F as a number: decimal, or hexadecimal after "0x" (the
/// recorder writes addresses so).
bool number(const std::vector<std::string_view> &F, size_t I, uint64_t &V) {
  if (I >= F.size())
    return false;
  std::string_view W = F[I];
  int Base = 10;
  if (W.size() > 2 && W[0] == '0' && W[1] == 'x') {
    W.remove_prefix(2);
    Base = 16;
  }
  const char *B = W.data(), *E = B + W.size();
  auto [P, Ec] = std::from_chars(B, E, V, Base);
  return Ec == std::errc() && P == E && B != E;
}

/// Reads one line into the records; false when it is not a record line.
bool readLine(const std::vector<std::string_view> &F,
              std::vector<LaunchRecord> &Out) {
  auto U = [&](size_t I, uint64_t &V) { return number(F, I, V); };
  uint64_t V[2];
  if (F[0] == "launch") {
    LaunchRecord L;
    if (F.size() != 16)
      return false;
    L.Kernel = std::string(F[1]);
    for (unsigned I = 0; I < 3; ++I) {
      if (!U(3 + I, V[0]) || !U(7 + I, V[1]))
        return false;
      L.Grid[I] = unsigned(V[0]);
      L.Block[I] = unsigned(V[1]);
    }
    if (!U(11, L.Shared) || !U(13, L.Launches))
      return false;
    Out.push_back(std::move(L));
    return true;
  }
  if (F[0] == "block") {
    BlockRecord B;
    uint64_t T, O;
    if (Out.empty() || F.size() != 14 || !U(1, B.Block) || !U(3, T) ||
        !U(5, B.Requests) || !U(7, B.Sectors) || !U(9, B.DistinctSectors) ||
        !U(11, B.DistinctSegments) || !U(13, O))
      return false;
    B.Threads = unsigned(T);
    B.Overflow = O != 0;
    Out.back().Blocks.push_back(std::move(B));
    return true;
  }
  if (F[0] == "warp") {
    if (Out.empty() || Out.back().Blocks.empty() || !U(3, V[0]))
      return false;
    WarpRecord W;
    W.Lanes = unsigned(V[0]);
    Out.back().Blocks.back().Warps.push_back(std::move(W));
    return true;
  }
  if (F[0] == "end")
    return true;
  if (F[0] != "site" && F[0] != "mem" && F[0] != "trace")
    return false;
  if (Out.empty() || Out.back().Blocks.empty() ||
      Out.back().Blocks.back().Warps.empty())
    return false;
  WarpRecord &W = Out.back().Blocks.back().Warps.back();
  if (F[0] == "site") {
    if (!U(1, V[0]) || !U(2, V[1]))
      return false;
    W.Sites.push_back({uint32_t(V[0]), V[1]});
    return true;
  }
  if (F[0] == "mem") {
    WarpRecord::Mem M;
    uint64_t S;
    if (F.size() != 9 || !U(1, S) || !U(2, M.Requests) || !U(3, M.Lanes) ||
        !U(4, M.Bytes) || !U(5, M.Sectors) || !U(6, M.Segments) ||
        !U(7, M.Min) || !U(8, M.Max))
      return false;
    M.Site = uint32_t(S);
    W.Mems.push_back(M);
    return true;
  }
  uint64_t Len, Trunc;
  if (!U(1, Len) || !U(2, Trunc) || Len != F.size() - 3)
    return false;
  W.Truncated = Trunc != 0;
  for (size_t I = 0; I < Len; ++I) {
    if (!U(3 + I, V[0]))
      return false;
    W.Trace.push_back(uint32_t(V[0]));
  }
  return true;
}

} // namespace

Status parseInstrumentRecord(std::string_view Text,
                             std::vector<LaunchRecord> &Out) {
  Out.clear();
  std::string Head = std::string(InstrumentRecordMagic) + " " +
                     std::to_string(InstrumentRecordVersion);
  size_t LineNo = 0;
  bool First = true;
  while (!Text.empty()) {
    size_t End = Text.find('\n');
    std::string_view Line = Text.substr(0, End);
    Text.remove_prefix(End == std::string_view::npos ? Text.size() : End + 1);
    ++LineNo;
    if (Line.empty())
      continue;
    if (First) {
      First = false;
      if (Line != Head)
        return Status::error("not an instrumentation record of this version "
                             "(it must start with '" +
                             Head + "')");
      continue;
    }
    std::vector<std::string_view> F = words(Line);
    if (!F.empty() && !readLine(F, Out)) {
      Out.clear();
      return Status::error("line " + std::to_string(LineNo) + ": " +
                           std::string(Line));
    }
  }
  if (First)
    return Status::error("not an instrumentation record of this version "
                         "(it is empty)");
  for (LaunchRecord &L : Out)
    std::stable_sort(L.Blocks.begin(), L.Blocks.end(),
                     [](const BlockRecord &A, const BlockRecord &B) {
                       return A.Block < B.Block;
                     });
  return Status::success();
}

} // namespace record
} // namespace rt
} // namespace cleave
