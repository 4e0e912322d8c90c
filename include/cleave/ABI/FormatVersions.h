//===- FormatVersions.h - Versions of the files both sides read -*- C++ -*-===//
//
// Part of Cleave. Every text or binary format that one layer writes and the
// other reads carries a version; each is defined here once, and both the
// writer and the reader use the constant. A reader refuses any version but
// its own (or, for the device profile, any newer one), naming both.
// Bundles keep their version in BundleFormat.h with the rest of their
// layout. Plain C++17, no LLVM and no runtime headers.
//
//===----------------------------------------------------------------------===//
#ifndef CLEAVE_ABI_FORMATVERSIONS_H
#define CLEAVE_ABI_FORMATVERSIONS_H

namespace cleave {

/// Serialized kernel footprints (docs/footprints.md): the compiler's
/// KernelFootprint::serialize writes the first line, "cleave-footprint 1";
/// the runtime's FootprintProgram::parse reads it.
inline constexpr const char *FootprintMagic = "cleave-footprint";
inline constexpr unsigned FootprintFormatVersion = 1;

/// The record of an instrumented run (docs/analyze.md): the runtime's
/// recorder (runtime/lib/cpu/Instrument.cpp) writes "cleave-instrument 1",
/// `cleave analyze` reads it.
inline constexpr const char *InstrumentRecordMagic = "cleave-instrument";
inline constexpr unsigned InstrumentRecordVersion = 1;

/// Device profiles (docs/calibrate.md): cleave-calibrate writes the schema
/// and version, cleave/rt/DeviceProfile.h reads them (for the runtime's
/// planner and for `cleave analyze`).
inline constexpr const char *DeviceProfileSchema = "cleave-device-profile";
inline constexpr int DeviceProfileSchemaVersion = 1;

} // namespace cleave

#endif
