//===- cleave-calibrate.cpp - Device profiler for Cleave's models ---------===//
//
// Part of Cleave (no LLVM: it runs on GPU machines that have none). Measures
// what Luo's model and the partitioner need (issue 6 §1, docs/calibrate.md)
// and writes one JSON profile:
//
//   cleave-calibrate [--device=all|cpu|gpu|gpuN[,...]] [--quick] [-o FILE]
//
// Progress goes to stderr; the profile to FILE (stdout by default). With no
// CUDA driver or no GPU the tool says so and still profiles the CPU.
//
//===----------------------------------------------------------------------===//
#include "CpuCalibrate.h"
#include "Profile.h"
#include "PtxKernels.h"
#ifdef CLEAVE_CALIBRATE_HAVE_CUDA
#include "GpuCalibrate.h"
#endif

#include <sys/stat.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>
#include <string>
#include <vector>

using namespace cleave::calibrate;

namespace {

void usage(std::FILE *To) {
  std::fprintf(
      To,
      "usage: cleave-calibrate [options]\n"
      "Measures the GPUs, their host links and the CPU, and writes a JSON\n"
      "device profile (docs/calibrate.md).\n\n"
      "  --device=LIST         what to profile, comma-separated: all (the\n"
      "                        default: every GPU and the CPU), cpu, gpu\n"
      "                        (every GPU), gpuN (CUDA ordinal N)\n"
      "  --quick               fewer repetitions and smaller sizes (about\n"
      "                        2 minutes on a 4-GPU machine)\n"
      "  -o FILE               write the profile to FILE (default: stdout)\n"
      "  --cuda-library=PATH   the libcuda to load (default:\n"
      "                        $CLEAVE_CUDA_LIBRARY or libcuda.so.1)\n"
      "  --emit-ptx=DIR        write the calibration kernels' PTX to DIR and\n"
      "                        exit (to inspect them with ptxas)\n"
      "  --version             print the version and commit\n"
      "  -h, --help            this text\n");
}

[[noreturn]] void fail(const std::string &Msg) {
  std::fprintf(stderr, "cleave-calibrate: error: %s\n", Msg.c_str());
  std::exit(1);
}

struct Options {
  bool Quick = false;
  bool Cpu = false;
  bool AllGpus = false;
  std::vector<int> Gpus;
  std::string DeviceText = "all";
  std::string Output = "-";
  std::string Library;
  std::string EmitPtx;
};

void parseDevices(const std::string &Text, Options &O) {
  O.DeviceText = Text;
  size_t Pos = 0;
  while (Pos <= Text.size()) {
    size_t Comma = Text.find(',', Pos);
    std::string Item = Text.substr(
        Pos, Comma == std::string::npos ? std::string::npos : Comma - Pos);
    Pos = Comma == std::string::npos ? Text.size() + 1 : Comma + 1;
    if (Item == "all") {
      O.Cpu = true;
      O.AllGpus = true;
    } else if (Item == "cpu") {
      O.Cpu = true;
    } else if (Item == "gpu") {
      O.AllGpus = true;
    } else if (Item.size() > 3 && Item.compare(0, 3, "gpu") == 0 &&
               Item.find_first_not_of("0123456789", 3) == std::string::npos) {
      int N = std::atoi(Item.c_str() + 3);
      for (int G : O.Gpus)
        if (G == N)
          fail("--device=" + Text + ": gpu" + std::to_string(N) +
               " is named twice");
      O.Gpus.push_back(N);
    } else {
      fail("--device=" + Text + ": unknown device '" + Item +
           "' (expected all, cpu, gpu or gpuN)");
    }
  }
}

Options parseOptions(int Argc, char **Argv) {
  Options O;
  const char *Env = std::getenv("CLEAVE_CUDA_LIBRARY");
  O.Library = Env && *Env ? Env : "libcuda.so.1";
  bool SawDevice = false;
  for (int I = 1; I < Argc; ++I) {
    std::string A = Argv[I];
    auto Value = [&](const char *Prefix) -> const char * {
      size_t N = std::strlen(Prefix);
      return A.compare(0, N, Prefix) == 0 ? Argv[I] + N : nullptr;
    };
    if (A == "-h" || A == "--help") {
      usage(stdout);
      std::exit(0);
    } else if (A == "--version") {
      Json H = profileHeader(false, "");
      std::printf("cleave-calibrate %s (commit %s)\n",
                  H["tool"]["version"].get<std::string>().c_str(),
                  H["tool"]["commit"].get<std::string>().c_str());
      std::exit(0);
    } else if (A == "--quick") {
      O.Quick = true;
    } else if (const char *V = Value("--device=")) {
      SawDevice = true;
      parseDevices(V, O);
    } else if (A == "-o") {
      if (++I >= Argc)
        fail("-o needs a file name");
      O.Output = Argv[I];
    } else if (const char *V = Value("-o")) {
      O.Output = V;
    } else if (const char *V = Value("--cuda-library=")) {
      O.Library = V;
    } else if (const char *V = Value("--emit-ptx=")) {
      O.EmitPtx = V;
    } else {
      usage(stderr);
      fail("unknown option '" + A + "'");
    }
  }
  if (!SawDevice)
    parseDevices("all", O);
  return O;
}

void writeFile(const std::string &Path, const std::string &Text) {
  std::ofstream Out(Path);
  Out << Text;
  if (!Out)
    fail("cannot write " + Path);
}

void emitPtx(const std::string &Dir) {
  mkdir(Dir.c_str(), 0777);
  for (const InstrClass &C : instructionClasses())
    writeFile(Dir + "/instr_" + C.Name + ".ptx", instructionPairPtx(C));
  writeFile(Dir + "/utility.ptx", utilityPtx());
  for (auto [Kc, Km] : {std::pair<unsigned, unsigned>{64, 0}, {64, 1}, {16, 1},
                        {16, 0}, {4, 1}, {4, 0}})
    writeFile(Dir + "/cpd_" + std::to_string(Kc) + "_" + std::to_string(Km) +
                  ".ptx",
              cpdPtx(Kc, Km));
  std::fprintf(stderr, "cleave-calibrate: wrote the kernels' PTX to %s\n",
               Dir.c_str());
}

} // namespace

int main(int Argc, char **Argv) {
  Options O = parseOptions(Argc, Argv);
  if (!O.EmitPtx.empty()) {
    emitPtx(O.EmitPtx);
    return 0;
  }
  auto T0 = std::chrono::steady_clock::now();
  Json Profile = profileHeader(O.Quick, O.DeviceText);
  bool WantGpus = O.AllGpus || !O.Gpus.empty();

#ifdef CLEAVE_CALIBRATE_HAVE_CUDA
  if (WantGpus) {
    // A GPU named explicitly must exist; "all" and "gpu" take what is there.
    if (!O.Gpus.empty()) {
      std::string Why;
      int Count = countGpus(O.Library, Why);
      if (Count < 0)
        fail("--device=" + O.DeviceText + ": no CUDA driver: " + Why);
      for (int G : O.Gpus)
        if (G >= Count)
          fail("--device=" + O.DeviceText + ": there is no gpu" +
               std::to_string(G) + ": " + std::to_string(Count) +
               " GPU(s) found" +
               (Count ? ", gpu0..gpu" + std::to_string(Count - 1) : ""));
    }
    GpuOptions G;
    G.Quick = O.Quick;
    G.Gpus = O.Gpus;
    G.AllGpus = O.AllGpus;
    G.Library = O.Library;
    Json R = calibrateGpus(G);
    for (auto &KV : R.items())
      Profile[KV.key()] = KV.value();
  }
#else
  if (WantGpus) {
    if (!O.Gpus.empty())
      fail("--device=" + O.DeviceText +
           ": this build has no GPU support (cuda.h was not found when it "
           "was configured)");
    std::fprintf(stderr, "cleave-calibrate: built without cuda.h; profiling "
                         "no GPU\n");
    Profile["cuda"] = {{"available", false},
                       {"error", "built without GPU support (no cuda.h)"}};
  }
#endif
  if (!Profile.contains("gpus"))
    Profile["gpus"] = Json::array();

  if (O.Cpu) {
    try {
      Profile["cpu"] = calibrateCpu(O.Quick);
    } catch (const std::exception &E) {
      Profile["cpu"] = errorJson(std::string("CPU profile: ") + E.what());
    }
  }
  double Sec = std::chrono::duration<double>(std::chrono::steady_clock::now() -
                                             T0)
                   .count();
  Profile["elapsed_seconds"] = Sec;

  std::string Text = Profile.dump(2) + "\n";
  if (O.Output == "-") {
    std::fwrite(Text.data(), 1, Text.size(), stdout);
  } else {
    writeFile(O.Output, Text);
    std::fprintf(stderr, "cleave-calibrate: wrote %s (%.0f s)\n",
                 O.Output.c_str(), Sec);
  }
  return 0;
}
