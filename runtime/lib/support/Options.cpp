//===- Options.cpp - Parsing the runtime's environment variables ----------===//
//
// Part of Cleave's runtime (no LLVM). See cleave/rt/Options.h. The one file
// of the runtime that reads `CLEAVE_*` variables (processOptions), so each
// variable has one parser and one message for a value it cannot use.
//
//===----------------------------------------------------------------------===//
#include "cleave/rt/Options.h"

#include "Text.h"
#include "cleave/rt/CpuExecutor.h"
#include "cleave/rt/Fault.h"

#include <climits>
#include <cstdio>
#include <cstdlib>
#include <initializer_list>
#include <set>

namespace cleave {
namespace rt {

unsigned TuneOptions::busyWaitUs(unsigned Cores) const {
  if (SpinUsGiven)
    return SpinUs;
  // The driver spins likewise while the host has cores to spare, and a
  // wake-up after a longer wait cost 0.1-0.3 ms on the GPU machines.
  return Cores >= 8 ? 20000u : SpinUs;
}

RegistryOptions registryOptions(const Options &O) {
  RegistryOptions R;
  if (!O.CudaLibrary.empty()) {
    R.CudaLibrary = O.CudaLibrary;
    R.LibraryMustLoad = true;
  }
  R.CpuThreads = O.CpuThreads;
  R.PeerCopyKernels = O.Tune.PeerCopyKernels;
  return R;
}

namespace {

/// One word of a one-of value and what it sets.
template <class T> struct Word {
  const char *Text;
  T Value;
};

/// "a, b or c".
template <class T> std::string wordList(std::initializer_list<Word<T>> Ws) {
  std::string S;
  size_t I = 0;
  for (const Word<T> &W : Ws) {
    if (I)
      S += I + 1 == Ws.size() ? " or " : ", ";
    S += W.Text;
    ++I;
  }
  return S;
}

/// Calls \p Each on every non-empty, trimmed item of the comma-separated
/// list \p Text.
template <class Fn> void forEachItem(std::string_view Text, Fn Each) {
  while (true) {
    size_t Comma = Text.find(',');
    std::string_view Item = trim(Text.substr(0, Comma));
    if (!Item.empty())
      Each(Item);
    if (Comma == std::string_view::npos)
      return;
    Text.remove_prefix(Comma + 1);
  }
}

/// Reads typed values and collects what it cannot use. A setting's "name"
/// is how its messages spell it: a variable (CLEAVE_LOG) or a key of
/// CLEAVE_TUNE ("CLEAVE_TUNE: spin_us").
class Reader {
public:
  Reader(const EnvLookup &Env, std::vector<std::string> &Warnings)
      : Env(Env), Warnings(Warnings) {}

  /// \p Var's value, trimmed; nullopt when unset or blank.
  std::optional<std::string_view> get(const char *Var) const {
    const char *V = Env(Var);
    if (!V)
      return std::nullopt;
    std::string_view S = trim(V);
    if (S.empty())
      return std::nullopt;
    return S;
  }

  void warn(const std::string &Line) {
    Warnings.push_back("cleave: warning: " + Line);
  }

  /// `NAME=VALUE: Why; using Default`.
  void badValue(std::string_view Name, std::string_view Value,
                const std::string &Why, const std::string &Default) {
    warn(std::string(Name) + "=" + std::string(Value) + ": " + Why +
         "; using " + Default);
  }

  /// An item of the list \p Name that names nothing; reported once per
  /// list and word.
  void unknownWord(std::string_view Name, std::string_view Item,
                   const std::string &Known) {
    if (Reported.insert(std::string(Name) + '\0' + std::string(Item)).second)
      warn(std::string(Name) + ": unknown word '" + std::string(Item) +
           "' (known: " + Known + ")");
  }

  /// A whole number from \p Min to \p Max (digits only), else \p Default
  /// with a message; \p DefaultText says what the default is.
  uint64_t number(std::string_view Name, std::string_view Text, uint64_t Min,
                  uint64_t Max, uint64_t Default,
                  const std::string &DefaultText) {
    uint64_t N = 0;
    bool Ok = !Text.empty();
    for (char C : Text) {
      if (C < '0' || C > '9' || N > (UINT64_MAX - 9) / 10) {
        Ok = false;
        break;
      }
      N = N * 10 + uint64_t(C - '0');
    }
    if (Ok && N >= Min && N <= Max)
      return N;
    badValue(Name, Text,
             "not a whole number from " + std::to_string(Min) + " to " +
                 std::to_string(Max),
             DefaultText);
    return Default;
  }

  /// One of \p Ws, else \p Default (named \p DefaultText) with a message.
  template <class T>
  T oneOf(std::string_view Name, std::string_view Text,
          std::initializer_list<Word<T>> Ws, T Default,
          const char *DefaultText) {
    for (const Word<T> &W : Ws)
      if (Text == W.Text)
        return W.Value;
    badValue(Name, Text, "expected " + wordList(Ws), DefaultText);
    return Default;
  }

  /// on/off (or 1/0).
  bool onOff(std::string_view Name, std::string_view Text, bool Default) {
    return oneOf<bool>(
        Name, Text, {{"on", true}, {"off", false}, {"1", true}, {"0", false}},
        Default, Default ? "on" : "off");
  }

private:
  const EnvLookup &Env;
  std::vector<std::string> &Warnings;
  std::set<std::string> Reported;
};

void parseLog(Reader &R, LogOptions &L) {
  std::optional<std::string_view> V = R.get("CLEAVE_LOG");
  if (!V)
    return;
  forEachItem(*V, [&](std::string_view W) {
    if (W == "plan")
      L.Plan = true;
    else if (W == "time")
      L.Time = true;
    else if (W == "phases")
      L.Phases = true;
    else if (W == "devices")
      L.Devices = true;
    else if (W == "errors")
      L.Errors = true;
    else if (W == "all")
      L = {true, true, true, true, true};
    else
      R.unknownWord("CLEAVE_LOG", W,
                    "plan, time, phases, devices, errors, all");
  });
}

void parseCheck(Reader &R, Options &O) {
  std::optional<std::string_view> V = R.get("CLEAVE_CHECK");
  if (!V)
    return;
  forEachItem(*V, [&](std::string_view W) {
    if (W == "memory")
      O.MemoryChecks = true;
    else if (W == "off" || W == "none")
      O.MemoryChecks = false;
    else
      R.unknownWord("CLEAVE_CHECK", W, "memory, off, none");
  });
}

void parseTuneKey(Reader &R, std::string_view Key, std::string_view Value,
                  TuneOptions &T) {
  std::string Name = "CLEAVE_TUNE: " + std::string(Key);
  if (Key == "spin_us") {
    T.SpinUs = unsigned(R.number(Name, Value, 0, TuneOptions::MaxSpinUs,
                                 TuneOptions::DefaultSpinUs,
                                 std::to_string(TuneOptions::DefaultSpinUs)));
    T.SpinUsGiven = true;
  } else if (Key == "issue") {
    T.Issue = R.oneOf<IssueMode>(Name, Value,
                                 {{"auto", IssueMode::Auto},
                                  {"parallel", IssueMode::Parallel},
                                  {"serial", IssueMode::Serial}},
                                 IssueMode::Auto, "auto");
  } else if (Key == "defer") {
    T.Defer = R.onOff(Name, Value, true);
  } else if (Key == "swap") {
    T.Swap = R.onOff(Name, Value, true);
  } else if (Key == "rebase") {
    T.Rebase = R.onOff(Name, Value, true);
  } else if (Key == "coschedule") {
    T.CoSchedule = R.oneOf<CoScheduleMode>(Name, Value,
                                           {{"on", CoScheduleMode::On},
                                            {"off", CoScheduleMode::Off},
                                            {"always", CoScheduleMode::Always}},
                                           CoScheduleMode::Off, "off");
  } else if (Key == "green") {
    T.Green = R.oneOf<GreenMode>(Name, Value,
                                 {{"auto", GreenMode::Auto},
                                  {"off", GreenMode::Off},
                                  {"always", GreenMode::Always}},
                                 GreenMode::Auto, "auto");
  } else if (Key == "coratio") {
    unsigned A = 0, B = 0;
    char Colon = 0, Extra = 0;
    std::string V(Value);
    if (std::sscanf(V.c_str(), "%u%c%u%c", &A, &Colon, &B, &Extra) == 3 &&
        Colon == ':' && A >= 1 && B >= 1 && A <= 64 && B <= 64) {
      T.CoRatio[0] = A;
      T.CoRatio[1] = B;
    } else {
      R.badValue(Name, Value, "expected A:B, each 1 to 64",
                 "the model's ratio");
    }
  } else if (Key == "peer_copy") {
    T.PeerCopyKernels = R.oneOf<bool>(
        Name, Value, {{"kernel", true}, {"dma", false}}, true, "kernel");
  } else if (Key == "host_copies") {
    T.DirectHostCopies = R.oneOf<bool>(
        Name, Value, {{"direct", true}, {"shadow", false}}, true, "direct");
  } else if (Key == "pin_host") {
    T.PinHost = R.oneOf<HostPinning>(Name, Value,
                                     {{"reused", HostPinning::Reused},
                                      {"always", HostPinning::Always},
                                      {"off", HostPinning::Off}},
                                     HostPinning::Reused, "reused");
  } else if (Key == "pipeline") {
    T.Pipeline = R.oneOf<PipelineMode>(
        Name, Value,
        {{"on", PipelineMode::On},
         {"off", PipelineMode::Off},
         {"host", PipelineMode::Host},
         {"host-serial", PipelineMode::HostSerial}},
        PipelineMode::On, "on");
  } else if (Key == "reorganize") {
    T.Reorganize = R.oneOf<ReorganizeMode>(Name, Value,
                                           {{"on", ReorganizeMode::On},
                                            {"off", ReorganizeMode::Off},
                                            {"force", ReorganizeMode::Force}},
                                           ReorganizeMode::Off, "off");
  } else if (Key == "route") {
    T.Route = R.oneOf<RouteMode>(Name, Value,
                                 {{"on", RouteMode::On},
                                  {"off", RouteMode::Off},
                                  {"force", RouteMode::Force}},
                                 RouteMode::Off, "off");
  } else if (Key == "balance") {
    T.Balance = R.oneOf<BalanceMode>(Name, Value,
                                     {{"auto", BalanceMode::Auto},
                                      {"greedy", BalanceMode::Greedy},
                                      {"balancer", BalanceMode::Balancer}},
                                     BalanceMode::Auto, "auto");
  } else {
    R.unknownWord("CLEAVE_TUNE", Key,
                  "spin_us, issue, defer, swap, rebase, coschedule, green, "
                  "coratio, peer_copy, host_copies, pin_host, pipeline, "
                  "reorganize, route, balance");
  }
}

void parseTune(Reader &R, TuneOptions &T) {
  std::optional<std::string_view> V = R.get("CLEAVE_TUNE");
  if (!V)
    return;
  forEachItem(*V, [&](std::string_view Item) {
    size_t Eq = Item.find('=');
    if (Eq == std::string_view::npos) {
      R.warn("CLEAVE_TUNE: '" + std::string(Item) +
             "' is not key=value; ignored");
      return;
    }
    parseTuneKey(R, trim(Item.substr(0, Eq)), trim(Item.substr(Eq + 1)), T);
  });
}

/// The performance cache's folder (Options::CacheDir).
std::string cacheDir(Reader &R) {
  if (std::optional<std::string_view> D = R.get("CLEAVE_CACHE_DIR"))
    return *D == "off" || *D == "none" ? std::string() : std::string(*D);
  if (std::optional<std::string_view> X = R.get("XDG_CACHE_HOME");
      X && X->front() == '/')
    return std::string(*X) + "/cleave";
  if (std::optional<std::string_view> H = R.get("HOME"))
    return std::string(*H) + "/.cache/cleave";
  return "";
}

/// The variables of the A/B switches before they were keys of CLEAVE_TUNE:
/// a benchmark script that still sets one would silently measure the
/// default, so each is reported.
void reportRetired(Reader &R) {
  static const std::pair<const char *, const char *> Retired[] = {
      {"CLEAVE_SPIN_US", "spin_us"},
      {"CLEAVE_ISSUE", "issue"},
      {"CLEAVE_DEFER", "defer"},
      {"CLEAVE_SWAP", "swap"},
      {"CLEAVE_REBASE", "rebase"},
      {"CLEAVE_PEER_COPY", "peer_copy"},
      {"CLEAVE_HOST_COPIES", "host_copies"},
      {"CLEAVE_PIN_HOST", "pin_host"}};
  for (const auto &[Var, Key] : Retired)
    if (std::optional<std::string_view> V = R.get(Var))
      R.warn(std::string(Var) + " is not read; use CLEAVE_TUNE=" + Key + "=" +
             std::string(*V));
}

} // namespace

Options parseOptions(const EnvLookup &Env, std::vector<std::string> &Warnings,
                     unsigned Cores) {
  Options O;
  Reader R(Env, Warnings);
  if (std::optional<std::string_view> V = R.get("CLEAVE_DEVICES"))
    O.Devices = std::string(*V);
  if (std::optional<std::string_view> V = R.get("CLEAVE_PARTITION")) {
    PartitionPolicy P;
    if (parsePartitionPolicy(*V, P))
      O.Partition = P;
    else
      R.badValue("CLEAVE_PARTITION", *V,
                 "expected even, proportional, single or model", "model");
  }
  if (std::optional<std::string_view> V = R.get("CLEAVE_SPLIT"))
    O.Split = std::string(*V);
  parseLog(R, O.Log);
  if (std::optional<std::string_view> V = R.get("CLEAVE_CPU_THREADS"))
    O.CpuThreads = unsigned(
        R.number("CLEAVE_CPU_THREADS", *V, 1, MaxCpuThreads, 0,
                 std::to_string(Cores) + " (the cores this process may use)"));
  if (std::optional<std::string_view> V = R.get("CLEAVE_CUDA_LIBRARY"))
    O.CudaLibrary = std::string(*V);
  if (std::optional<std::string_view> V = R.get("CLEAVE_PROFILE"))
    O.ProfilePath = std::string(*V);
  if (std::optional<std::string_view> V = R.get("CLEAVE_KERNEL_PROFILE"))
    O.KernelProfilePath = std::string(*V);
  O.CacheDir = cacheDir(R);
  if (std::optional<std::string_view> V = R.get("CLEAVE_FAULT")) {
    // Checked here, so that a malformed rule is reported with the others;
    // the runtime configures the process's injector when it starts.
    FaultInjector Check;
    Result Ok = Check.configure(*V);
    if (Ok.ok())
      O.Fault = std::string(*V);
    else
      R.badValue("CLEAVE_FAULT", *V, Ok.message(), "no fault injection");
  }
  parseCheck(R, O);
  if (std::optional<std::string_view> V = R.get("CLEAVE_ANALYZE_SM_COUNT"))
    O.AnalyzeSmCount = unsigned(R.number("CLEAVE_ANALYZE_SM_COUNT", *V, 1,
                                         INT_MAX, 0, "the devices' count"));
  if (std::optional<std::string_view> V = R.get("CLEAVE_INSTRUMENT_OUT"))
    O.InstrumentOut = std::string(*V);
  if (std::optional<std::string_view> V = R.get("CLEAVE_INSTRUMENT_BLOCKS"))
    O.InstrumentBlocks =
        unsigned(R.number("CLEAVE_INSTRUMENT_BLOCKS", *V, 1, 1024, 3, "3"));
  parseTune(R, O.Tune);
  reportRetired(R);
  return O;
}

const Options &processOptions() {
  static const Options *O = [] {
    std::vector<std::string> Warnings;
    auto *Parsed = new Options(parseOptions(
        [](const char *Var) -> const char * { return std::getenv(Var); },
        Warnings, defaultCpuThreads()));
    for (const std::string &W : Warnings)
      std::fprintf(stderr, "%s\n", W.c_str());
    return Parsed;
  }();
  return *O;
}

} // namespace rt
} // namespace cleave
