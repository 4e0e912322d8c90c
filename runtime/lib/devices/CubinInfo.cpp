//===- CubinInfo.cpp - A kernel's resources read from a cubin -------------===//
//
// Part of Cleave's runtime (no LLVM). See CubinInfo.h. Every offset and
// size is checked against the image before it is read: a truncated or
// foreign image gives false, never a read out of bounds.
//
//===----------------------------------------------------------------------===//
#include "cleave/rt/CubinInfo.h"

#include <cstring>

using namespace cleave::rt;

namespace {

/// Little-endian ELF64 fields (cubins are little-endian ELF64).
struct Reader {
  std::string_view Data;
  bool has(uint64_t Off, uint64_t Size) const {
    return Off <= Data.size() && Size <= Data.size() - Off;
  }
  template <class T> T get(uint64_t Off) const {
    T V;
    std::memcpy(&V, Data.data() + Off, sizeof(T));
    return V;
  }
};

struct Section {
  uint32_t Name = 0, Type = 0, Link = 0;
  uint64_t Offset = 0, Size = 0, EntrySize = 0;
};

constexpr uint32_t SymTabType = 2;      // SHT_SYMTAB
constexpr uint8_t AttrFrameSize = 0x11; // EIATTR_FRAME_SIZE
constexpr uint8_t AttrRegCount = 0x2f;  // EIATTR_REGCOUNT
// .nv.info entry formats: no value, a byte, a half word, a sized value.
constexpr uint8_t FmtNone = 1, FmtByte = 2, FmtHalf = 3, FmtSized = 4;

} // namespace

bool cleave::rt::readCubinKernelResources(std::string_view Cubin,
                                          std::string_view Entry,
                                          CubinKernelResources &Out) {
  Out = CubinKernelResources();
  Reader R{Cubin};
  // ELF64 (class 2), little-endian (data 1).
  if (!R.has(0, 64) ||
      Cubin.substr(0, 4) != "\x7f"
                            "ELF" ||
      Cubin[4] != 2 || Cubin[5] != 1)
    return false;
  uint64_t ShOff = R.get<uint64_t>(0x28);
  uint16_t ShEntSize = R.get<uint16_t>(0x3a), ShNum = R.get<uint16_t>(0x3c),
           ShStrNdx = R.get<uint16_t>(0x3e);
  if (ShEntSize < 64 || ShStrNdx >= ShNum ||
      !R.has(ShOff, uint64_t(ShEntSize) * ShNum))
    return false;
  auto SectionAt = [&](unsigned I) {
    uint64_t H = ShOff + uint64_t(I) * ShEntSize;
    Section S;
    S.Name = R.get<uint32_t>(H);
    S.Type = R.get<uint32_t>(H + 4);
    S.Offset = R.get<uint64_t>(H + 0x18);
    S.Size = R.get<uint64_t>(H + 0x20);
    S.Link = R.get<uint32_t>(H + 0x28);
    S.EntrySize = R.get<uint64_t>(H + 0x38);
    return S;
  };
  // A NUL-terminated name at Off of the string table S.
  auto NameAt = [&](const Section &S, uint64_t Off) -> std::string_view {
    if (Off >= S.Size || !R.has(S.Offset, S.Size))
      return {};
    std::string_view Table = Cubin.substr(S.Offset, S.Size);
    size_t End = Table.find('\0', Off);
    return End == std::string_view::npos ? std::string_view()
                                         : Table.substr(Off, End - Off);
  };
  Section Names = SectionAt(ShStrNdx);
  Section SymTab, Info;
  bool HaveSymTab = false, HaveInfo = false;
  for (unsigned I = 0; I < ShNum; ++I) {
    Section S = SectionAt(I);
    if (S.Type == SymTabType && !HaveSymTab) {
      SymTab = S;
      HaveSymTab = true;
    } else if (NameAt(Names, S.Name) == ".nv.info") {
      Info = S;
      HaveInfo = true;
    }
  }
  if (!HaveSymTab || !HaveInfo || SymTab.EntrySize < 24 ||
      !R.has(SymTab.Offset, SymTab.Size) || !R.has(Info.Offset, Info.Size))
    return false;
  // The kernel's symbol index; the symbol table's names are in the string
  // table its sh_link names.
  if (SymTab.Link >= ShNum)
    return false;
  Section Strings = SectionAt(SymTab.Link);
  uint64_t Symbol = 0;
  bool Found = false;
  for (uint64_t I = 0; I < SymTab.Size / SymTab.EntrySize && !Found; ++I)
    if (NameAt(Strings, R.get<uint32_t>(SymTab.Offset +
                                        I * SymTab.EntrySize)) == Entry) {
      Symbol = I;
      Found = true;
    }
  if (!Found)
    return false;
  // The entries that name that symbol.
  bool HaveRegisters = false;
  for (uint64_t P = Info.Offset, End = Info.Offset + Info.Size; P + 2 <= End;) {
    uint8_t Fmt = uint8_t(Cubin[P]), Attr = uint8_t(Cubin[P + 1]);
    if (Fmt == FmtNone) {
      P += 2;
      continue;
    }
    if (P + 4 > End)
      return false;
    if (Fmt == FmtByte || Fmt == FmtHalf) {
      P += 4;
      continue;
    }
    if (Fmt != FmtSized)
      return false; // a format this reader does not know
    uint16_t Size = R.get<uint16_t>(P + 2);
    if (P + 4 + Size > End)
      return false;
    if (Size == 8 && R.get<uint32_t>(P + 4) == Symbol) {
      uint32_t Value = R.get<uint32_t>(P + 8);
      if (Attr == AttrRegCount) {
        Out.Registers = Value;
        HaveRegisters = true;
      } else if (Attr == AttrFrameSize) {
        Out.FrameBytes = Value;
      }
    }
    P += 4 + Size;
  }
  return HaveRegisters;
}
