//===- WavefrontPreamble.cpp - Helpers the tiled wavefronts' code calls ---===//
//
// Part of Cleave (docs/tile.md). The text placed once at the top of a file
// with tiled nests: the arrays' device copies and the persistent kernel's
// helpers, and the tile-size cache of nests with several candidates.
//
//===----------------------------------------------------------------------===//
#include "cleave/Tile/WavefrontEmitter.h"

namespace cleave::tile {

std::string wavefrontPreamble() {
  return R"(#include <cstdint>
#include <cstdio>
#include <cstdlib>

// cleave tile: the bytes [lo, hi) that one array's accesses cover, and its
// device copy (the copy starts at the array's first element when that comes
// first, so that the pointer the kernel gets lies inside the copy).
struct __cleave_tile_span {
  uintptr_t lo = UINTPTR_MAX, hi = 0;
  template <typename T> void add(const T *p) {
    lo = (uintptr_t)p < lo ? (uintptr_t)p : lo;
    hi = (uintptr_t)(p + 1) > hi ? (uintptr_t)(p + 1) : hi;
  }
  bool overlaps(const __cleave_tile_span &o) const {
    return lo < o.hi && o.lo < hi;
  }
  uintptr_t from(const void *base) const {
    return (uintptr_t)base < lo ? (uintptr_t)base : lo;
  }
  bool toDevice(const void *base, char **dev) const {
    size_t n = hi - from(base);
    return cudaMalloc((void **)dev, n) == cudaSuccess &&
           cudaMemcpy(*dev, (const void *)from(base), n,
                      cudaMemcpyHostToDevice) == cudaSuccess;
  }
  // The device copy's contents again from the host (a tile-size sweep runs
  // each candidate on the same inputs).
  bool reload(const void *base, char *dev) const {
    return cudaMemcpy(dev, (const void *)from(base), hi - from(base),
                      cudaMemcpyHostToDevice) == cudaSuccess;
  }
  // The host's array is half written when this fails: nothing can undo it.
  void toHost(const void *base, const char *dev) const {
    if (cudaMemcpy((void *)from(base), dev, hi - from(base),
                   cudaMemcpyDeviceToHost) != cudaSuccess) {
      fprintf(stderr, "cleave tile: copying a tiled nest's results back "
                      "failed\n");
      abort();
    }
  }
};

// cleave tile's persistent wavefronts (docs/tile.md): the tile that ticket k
// names in wavefront order over trows x tcols tiles. Anti-diagonal d = bi +
// bj holds the tiles bi = max(0, d - tcols + 1) .. min(d, trows - 1), in that
// order; its length grows by one up to m = min(trows, tcols), stays m, and
// shrinks by one to 1, so the first and the last m - 1 diagonals are
// triangles of m (m - 1) / 2 tiles each.
__host__ __device__ inline void __cleave_tile_of(long long k, long long trows,
                                                 long long tcols,
                                                 long long *bi, long long *bj) {
  const long long m = trows < tcols ? trows : tcols;
  const long long tri = m * (m - 1) / 2, total = trows * tcols;
  long long d, pos;
  if (k < tri || k >= total - tri) {
    // In a triangle, counted from its corner: the diagonal d of length d + 1
    // with d (d + 1) / 2 <= kk < (d + 1) (d + 2) / 2.
    const bool tail = k >= tri;
    const long long kk = tail ? total - 1 - k : k;
    long long lo = 0, hi = m - 1;
    while (lo < hi) {
      const long long mid = (lo + hi + 1) / 2;
      if (mid * (mid + 1) / 2 <= kk)
        lo = mid;
      else
        hi = mid - 1;
    }
    d = lo;
    pos = kk - d * (d + 1) / 2;
    if (tail) {
      pos = d - pos;
      d = trows + tcols - 2 - d;
    }
  } else {
    d = m - 1 + (k - tri) / m;
    pos = (k - tri) % m;
  }
  *bi = (d < tcols ? 0 : d - tcols + 1) + pos;
  *bj = d - *bi;
}

// The persistent kernel's spin-waits back off (digest 001 section 8): on
// sm_70 and later the waiting thread sleeps, 32 ns at first, twice as long
// each time up to 512 ns, so that it leaves the SM's issue slots to the
// blocks computing. The wait it adds is at most 512 ns after the flag is
// set, a few percent of a tile. Elsewhere (the host compile, older GPUs) it
// is an empty spin; Cleave's CPU variants drop the sleep (docs/cpu-backend.md).
__device__ inline void __cleave_tile_backoff(unsigned *ns) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 700
  *ns = *ns == 0 ? 32 : (*ns < 512 ? 2 * *ns : 512);
  __nanosleep(*ns);
#else
  (void)ns;
#endif
}

// The persistent kernel's grid: the blocks of `threads` threads that the
// device holds at once (at least one), and at most twice the longest
// anti-diagonal of trows x tcols tiles: no more tiles than that are ever
// ready at once, and blocks beyond it would only spin on flags. Queries
// that fail leave one block per SM or one block: fewer blocks only run
// slower.
inline long long __cleave_tile_resident(const void *kernel, int threads,
                                        long long trows, long long tcols) {
  int dev = 0, sms = 1, perSm = 1;
  if (cudaGetDevice(&dev) != cudaSuccess ||
      cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev) !=
          cudaSuccess || sms < 1)
    sms = 1;
  if (cudaOccupancyMaxActiveBlocksPerMultiprocessor(&perSm, kernel, threads,
                                                    0) != cudaSuccess ||
      perSm < 1)
    perSm = 1;
  (void)cudaGetLastError();
  const long long grid = (long long)sms * perSm;
  const long long useful = 2 * (trows < tcols ? trows : tcols);
  return grid < useful ? grid : useful;
}

// The ticket counts to tiles + grid in 32 bits.
#define __CLEAVE_TILE_MAX_PERSISTENT_TILES (1ll << 30)
#ifndef CLEAVE_TILE_PERSISTENT_MIN_DIAGONALS
#define CLEAVE_TILE_PERSISTENT_MIN_DIAGONALS 8
#endif

)";
}

std::string wavefrontTunerPreamble() {
  return R"cleave(#include <chrono>
#include <cstring>
#include <fstream>
#include <mutex>
#include <string>
#include <sys/stat.h>
#include <vector>

// cleave tile's tile sizes (docs/tile.md, "Tile sizes"): the candidate that
// a sweep found fastest for a nest (its key), a problem shape and a device,
// kept for the process and in the file tile-sizes.txt of the cache
// directory ($CLEAVE_CACHE_DIR, else $XDG_CACHE_HOME/cleave, else
// $HOME/.cache/cleave; CLEAVE_CACHE_DIR=off keeps it in the process only),
// one line per sweep, the last one for a key, shape and device winning:
//   KEY <tab> NI <tab> NJ <tab> DEVICE <tab> ROWS <tab> COLS <tab> MS
// Built with -DCLEAVE_TILE_AUTOTUNE=0, the nests take the model's choice
// and never sweep. CLEAVE_TILE_LOG=1 prints each choice on stderr.
struct __cleave_tile_choice {
  std::string key;
  long long ni, nj;
  std::string device;
  int rows, cols;
};

inline double __cleave_tile_now_ms() {
  return std::chrono::duration<double, std::milli>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

inline std::string __cleave_tile_cache_dir() {
  const char *dir = getenv("CLEAVE_CACHE_DIR");
  if (dir && *dir)
    return strcmp(dir, "off") == 0 ? std::string() : std::string(dir);
  if (const char *xdg = getenv("XDG_CACHE_HOME"); xdg && *xdg)
    return std::string(xdg) + "/cleave";
  if (const char *home = getenv("HOME"); home && *home)
    return std::string(home) + "/.cache/cleave";
  return std::string();
}

inline std::string __cleave_tile_device() {
  int dev = 0;
  cudaDeviceProp p;
  if (cudaGetDevice(&dev) != cudaSuccess ||
      cudaGetDeviceProperties(&p, dev) != cudaSuccess) {
    (void)cudaGetLastError();
    return "unknown device";
  }
  return std::string(p.name) + " (" + std::to_string(p.multiProcessorCount) +
         " SMs)";
}

// Host threads that run tiled nests at once share the choices.
inline std::mutex &__cleave_tile_lock() {
  static std::mutex m;
  return m;
}

// The choices of this process, the cache file's first.
inline std::vector<__cleave_tile_choice> &__cleave_tile_choices() {
  static std::vector<__cleave_tile_choice> choices = [] {
    std::vector<__cleave_tile_choice> v;
    const std::string dir = __cleave_tile_cache_dir();
    std::ifstream in(dir.empty() ? std::string() : dir + "/tile-sizes.txt");
    std::string line;
    while (std::getline(in, line)) {
      std::vector<std::string> f;
      for (size_t at = 0;;) {
        const size_t tab = line.find('\t', at);
        f.push_back(line.substr(at, tab - at));
        if (tab == std::string::npos)
          break;
        at = tab + 1;
      }
      if (f.size() == 7)
        v.push_back({f[0], atoll(f[1].c_str()), atoll(f[2].c_str()), f[3],
                     atoi(f[4].c_str()), atoi(f[5].c_str())});
    }
    return v;
  }();
  return choices;
}

inline bool __cleave_tile_log() {
  const char *log = getenv("CLEAVE_TILE_LOG");
  return log && *log && strcmp(log, "0") != 0;
}

// The candidate (an index into sizes) cached for this nest, shape and
// device; -1 when there is none and the caller sweeps.
inline int __cleave_tile_tuned(const char *key, long long ni, long long nj,
                               int n, const int (*sizes)[2]) {
#if defined(CLEAVE_TILE_AUTOTUNE) && !CLEAVE_TILE_AUTOTUNE
  (void)key, (void)ni, (void)nj, (void)n, (void)sizes;
  return 0;
#else
  const std::string device = __cleave_tile_device();
  std::lock_guard<std::mutex> hold(__cleave_tile_lock());
  const std::vector<__cleave_tile_choice> &v = __cleave_tile_choices();
  for (size_t k = v.size(); k-- > 0;) {
    if (v[k].key != key || v[k].ni != ni || v[k].nj != nj ||
        v[k].device != device)
      continue;
    for (int c = 0; c < n; ++c)
      if (sizes[c][0] == v[k].rows && sizes[c][1] == v[k].cols) {
        if (__cleave_tile_log())
          fprintf(stderr, "cleave tile: %s %lldx%lld on %s: %d x %d (cached)\n",
                  key, ni, nj, device.c_str(), sizes[c][0], sizes[c][1]);
        return c;
      }
  }
  return -1;
#endif
}

// Keeps the sweep's fastest candidate for this process and in the cache
// file (its directory made if need be; a cache that cannot be written only
// means sweeping again next run).
inline void __cleave_tile_remember(const char *key, long long ni, long long nj,
                                   int n, const int (*sizes)[2], int best,
                                   double ms) {
  const std::string device = __cleave_tile_device();
  std::lock_guard<std::mutex> hold(__cleave_tile_lock());
  __cleave_tile_choices().push_back(
      {key, ni, nj, device, sizes[best][0], sizes[best][1]});
  if (__cleave_tile_log())
    fprintf(stderr,
            "cleave tile: %s %lldx%lld on %s: %d x %d (swept %d sizes, "
            "%.3f ms)\n",
            key, ni, nj, device.c_str(), sizes[best][0], sizes[best][1], n, ms);
  const std::string dir = __cleave_tile_cache_dir();
  if (dir.empty())
    return;
  for (size_t at = 1; at <= dir.size(); ++at)
    if (at == dir.size() || dir[at] == '/')
      mkdir(dir.substr(0, at).c_str(), 0777);
  if (FILE *f = fopen((dir + "/tile-sizes.txt").c_str(), "a")) {
    fprintf(f, "%s\t%lld\t%lld\t%s\t%d\t%d\t%.3f\n", key, ni, nj,
            device.c_str(), sizes[best][0], sizes[best][1], ms);
    fclose(f);
  }
}

)cleave";
}

} // namespace cleave::tile
