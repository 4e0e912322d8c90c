//===- AnalyzeProfile.cpp - The device profile for the models ---------------===//
//
// Part of Cleave's driver (docs/analyze.md, docs/calibrate.md).
//
//===----------------------------------------------------------------------===//
#include "AnalyzeData.h"

#include "cleave/rt/DeviceProfile.h"

#include "cleave/Analysis/InstructionMix.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <cassert>
#include <cmath>
#include <limits>
#include <unordered_map>

using namespace llvm;

namespace cleave {
namespace analyze {

/// The model's numbers for GPU \p GpuIndex of the profile at \p Path, read
/// by the runtime's reader (the planner reads the same file with it).
Expected<model::GpuParams> loadProfile(StringRef Path, unsigned GpuIndex,
                                       rt::GpuProfile &Link) {
  rt::DeviceProfile Profile;
  rt::Result R = rt::loadDeviceProfile(Path.str(), Profile);
  if (!R.ok())
    return makeError(R.message());
  if (GpuIndex >= Profile.GpuEntries)
    return makeError("--gpu-index=" + Twine(GpuIndex) + ": the profile '" +
                     Path + "' has " + Twine(Profile.GpuEntries) + " GPU(s)");
  const rt::GpuProfile *G = nullptr;
  for (const rt::GpuProfile &X : Profile.Gpus)
    if (X.Entry == GpuIndex)
      G = &X;
  if (!G)
    return makeError("the profile '" + Path + "' (gpus[" + Twine(GpuIndex) +
                     "]) holds a failed measurement, not a GPU");
  if (!G->ModelMissing.empty())
    return makeError("the profile '" + Path + "' (gpus[" + Twine(GpuIndex) +
                     "]) has no usable '" + G->ModelMissing +
                     "' (docs/calibrate.md lists the fields)");
  Link = *G;
  model::GpuParams P = G->Model;
  P.Issue = model::hopperIssueCosts();
  return P;
}

} // namespace analyze
} // namespace cleave
