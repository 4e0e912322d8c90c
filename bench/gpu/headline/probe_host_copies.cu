// Probe for the host-mode design (bench/results/probe-host-copies/): how
// fast, on the GPU machine, each way of moving a program's pageable host
// array to and from the GPUs is, alone and on every GPU at once:
//
//   memcpy      a parallel host-to-host copy (what cudaMemcpy into a
//               buffer's host copy costs today), T threads;
//   pinned      DMA from/to page-locked memory (a pinned host copy);
//   staged      through a small ring of pinned staging chunks, each filled
//               (emptied) by T threads while the other chunks' DMA runs:
//               the program's memory crosses host DRAM once;
//   piped       into a pinned host copy in chunks, each chunk's DMA issued
//               as soon as it is copied (the copy and the DMA overlap).
//
// threads/gpu=0 rows: the staging chunks copied by oneTBB tasks of 1 MiB,
// as the runtime does (built with -DPROBE_TBB). Built here by
// probe-host-copies.sh --build DIR (with oneTBB), run there by
// probe-host-copies.sh [DIR].
#include <cuda_runtime.h>
#include <omp.h>
#ifdef PROBE_TBB
#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>
#endif

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <vector>

#define CK(x)                                                                  \
  do {                                                                         \
    cudaError_t e_ = (x);                                                      \
    if (e_ != cudaSuccess) {                                                   \
      std::fprintf(stderr, "%s:%d %s\n", __FILE__, __LINE__,                   \
                   cudaGetErrorString(e_));                                    \
      std::exit(1);                                                            \
    }                                                                          \
  } while (0)

static double now() {
  return std::chrono::duration<double>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// threads > 0: an OpenMP team of that many threads; <= 0: oneTBB tasks, as
// the runtime's hostCopy does (runtime/lib/cpu/HostCopy.cpp): 0 its
// default (1 MiB tasks, auto partitioner), -1 simple partitioner of 1 MiB
// tasks, -2 static partitioner, -3 simple partitioner of 256 KiB tasks.
static void pcopy(void *d, const void *s, size_t n, int threads) {
#ifdef PROBE_TBB
  if (threads <= 0) {
    size_t Grain = threads == -3 ? size_t(256) << 10 : size_t(1) << 20;
    size_t chunks = (n + Grain - 1) / Grain;
    auto body = [&](const tbb::blocked_range<size_t> &r) {
      size_t lo = r.begin() * Grain;
      size_t hi = std::min(n, r.end() * Grain);
      std::memcpy((char *)d + lo, (const char *)s + lo, hi - lo);
    };
    tbb::blocked_range<size_t> all(0, chunks);
    if (threads == 0)
      tbb::parallel_for(all, body);
    else if (threads == -2)
      tbb::parallel_for(all, body, tbb::static_partitioner());
    else
      tbb::parallel_for(all, body, tbb::simple_partitioner());
    return;
  }
#endif
#pragma omp parallel for num_threads(threads) schedule(static)
  for (int t = 0; t < threads; ++t) {
    size_t lo = n * t / threads, hi = n * (t + 1) / threads;
    std::memcpy((char *)d + lo, (const char *)s + lo, hi - lo);
  }
}

struct Gpu {
  int dev;
  char *dbuf;
  std::vector<char *> stage;
  std::vector<cudaEvent_t> ev;
  cudaStream_t st;
};

static size_t Bytes = size_t(1) << 30;

// One GPU's share [lo, hi) of the host array, H2D (dir 0) or D2H (1).
static void staged(Gpu &g, char *user, size_t lo, size_t hi, size_t chunk,
                   int nbuf, int threads, int dir) {
  cudaSetDevice(g.dev);
  if (dir == 0) {
    for (size_t off = lo, i = 0; off < hi; off += chunk, ++i) {
      int b = i % nbuf;
      size_t n = std::min(chunk, hi - off);
      CK(cudaEventSynchronize(g.ev[b]));
      pcopy(g.stage[b], user + off, n, threads);
      CK(cudaMemcpyAsync(g.dbuf + (off - lo), g.stage[b], n,
                         cudaMemcpyHostToDevice, g.st));
      CK(cudaEventRecord(g.ev[b], g.st));
    }
  } else {
    std::vector<size_t> offs;
    for (size_t off = lo; off < hi; off += chunk)
      offs.push_back(off);
    size_t issued = 0;
    for (size_t i = 0; i < offs.size(); ++i) {
      while (issued < offs.size() && issued < i + nbuf) {
        int b = issued % nbuf;
        size_t n = std::min(chunk, hi - offs[issued]);
        CK(cudaMemcpyAsync(g.stage[b], g.dbuf + (offs[issued] - lo), n,
                           cudaMemcpyDeviceToHost, g.st));
        CK(cudaEventRecord(g.ev[b], g.st));
        ++issued;
      }
      int b = i % nbuf;
      CK(cudaEventSynchronize(g.ev[b]));
      pcopy(user + offs[i], g.stage[b], std::min(chunk, hi - offs[i]),
            threads);
    }
  }
  CK(cudaStreamSynchronize(g.st));
}

static void piped(Gpu &g, char *user, char *pinned, size_t lo, size_t hi,
                  size_t chunk, int threads, int dir) {
  cudaSetDevice(g.dev);
  if (dir == 0) {
    for (size_t off = lo; off < hi; off += chunk) {
      size_t n = std::min(chunk, hi - off);
      pcopy(pinned + off, user + off, n, threads);
      CK(cudaMemcpyAsync(g.dbuf + (off - lo), pinned + off, n,
                         cudaMemcpyHostToDevice, g.st));
    }
    CK(cudaStreamSynchronize(g.st));
  } else {
    std::vector<cudaEvent_t> evs;
    for (size_t off = lo; off < hi; off += chunk) {
      cudaEvent_t e;
      CK(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
      size_t n = std::min(chunk, hi - off);
      CK(cudaMemcpyAsync(pinned + off, g.dbuf + (off - lo), n,
                         cudaMemcpyDeviceToHost, g.st));
      CK(cudaEventRecord(e, g.st));
      evs.push_back(e);
    }
    size_t i = 0;
    for (size_t off = lo; off < hi; off += chunk, ++i) {
      CK(cudaEventSynchronize(evs[i]));
      pcopy(user + off, pinned + off, std::min(chunk, hi - off), threads);
      cudaEventDestroy(evs[i]);
    }
  }
}

static void pinnedDma(Gpu &g, char *pinned, size_t lo, size_t hi, int dir) {
  cudaSetDevice(g.dev);
  if (dir == 0)
    CK(cudaMemcpyAsync(g.dbuf, pinned + lo, hi - lo, cudaMemcpyHostToDevice,
                       g.st));
  else
    CK(cudaMemcpyAsync(pinned + lo, g.dbuf, hi - lo, cudaMemcpyDeviceToHost,
                       g.st));
  CK(cudaStreamSynchronize(g.st));
}

template <class F> static double best(F f) {
  double b = 1e30;
  for (int r = 0; r < 5; ++r) {
    double t0 = now();
    f();
    b = std::min(b, now() - t0);
  }
  return b;
}

int main() {
  int ngpu = 0;
  CK(cudaGetDeviceCount(&ngpu));
  int cores = std::thread::hardware_concurrency();
  std::printf("# %d GPUs, %d host threads, %zu MiB array\n", ngpu, cores,
              Bytes >> 20);
  char *user = (char *)std::malloc(Bytes), *user2 = (char *)std::malloc(Bytes);
  std::memset(user, 1, Bytes);
  std::memset(user2, 2, Bytes);
  char *pinned;
  CK(cudaHostAlloc(&pinned, Bytes, cudaHostAllocPortable));
  std::memset(pinned, 3, Bytes);
  size_t maxChunk = size_t(64) << 20;
  std::vector<Gpu> gs(ngpu);
  for (int d = 0; d < ngpu; ++d) {
    CK(cudaSetDevice(d));
    gs[d].dev = d;
    CK(cudaMalloc(&gs[d].dbuf, Bytes));
    CK(cudaStreamCreateWithFlags(&gs[d].st, cudaStreamNonBlocking));
    for (int b = 0; b < 4; ++b) {
      char *s;
      CK(cudaHostAlloc(&s, maxChunk, cudaHostAllocPortable));
      gs[d].stage.push_back(s);
      cudaEvent_t e;
      CK(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
      CK(cudaEventRecord(e, gs[d].st));
      gs[d].ev.push_back(e);
    }
  }
  auto gbps = [](double s) { return double(Bytes) / s / 1e9; };
  for (int t : {8, 16, cores})
    std::printf("memcpy threads=%d: %.1f GB/s\n", t,
                gbps(best([&] { pcopy(user2, user, Bytes, t); })));
  // Each run moves the whole array, split evenly over G GPUs.
  for (int G = 1; G <= ngpu; ++G) {
    auto over = [&](auto fn) {
      std::vector<std::thread> th;
      for (int d = 0; d < G; ++d)
        th.emplace_back([&, d] { fn(gs[d], Bytes * d / G, Bytes * (d + 1) / G); });
      for (auto &x : th)
        x.join();
    };
    for (int dir = 0; dir < 2; ++dir) {
      const char *D = dir ? "d2h" : "h2d";
      std::printf("G=%d %s pinned: %.1f GB/s\n", G, D, gbps(best([&] {
                    over([&](Gpu &g, size_t lo, size_t hi) {
                      pinnedDma(g, pinned, lo, hi, dir);
                    });
                  })));
      for (size_t chunkMB : {8, 32})
        for (int nbuf : {2, 4})
          for (int t : {0, -1, -2, -3, 8, 16}) {
            if (t * G > cores)
              continue;
#ifndef PROBE_TBB
            if (t <= 0)
              continue;
#endif
            if (t <= 0 && (chunkMB != 8 || nbuf != 4))
              continue;
            std::printf("G=%d %s staged chunk=%zuMiB bufs=%d threads/gpu=%d: "
                        "%.1f GB/s\n",
                        G, D, chunkMB, nbuf, t, gbps(best([&] {
                          over([&](Gpu &g, size_t lo, size_t hi) {
                            staged(g, user, lo, hi, chunkMB << 20, nbuf, t,
                                   dir);
                          });
                        })));
          }
      for (size_t chunkMB : {16, 64})
        for (int t : {8, 16}) {
          if (t * G > cores)
            continue;
          std::printf("G=%d %s piped chunk=%zuMiB threads/gpu=%d: %.1f GB/s\n",
                      G, D, chunkMB, t, gbps(best([&] {
                        over([&](Gpu &g, size_t lo, size_t hi) {
                          piped(g, user, pinned, lo, hi, chunkMB << 20, t, dir);
                        });
                      })));
        }
      std::fflush(stdout);
    }
  }
  // Today's host mode for comparison: memcpy into the host copy (all
  // threads), then pinned DMA of each GPU's share.
  for (int G = 1; G <= ngpu; ++G) {
    std::printf("G=%d h2d today (memcpy then pinned DMA): %.1f GB/s\n", G,
                gbps(best([&] {
                  pcopy(pinned, user, Bytes, cores);
                  std::vector<std::thread> th;
                  for (int d = 0; d < G; ++d)
                    th.emplace_back([&, d] {
                      pinnedDma(gs[d], pinned, Bytes * d / G,
                                Bytes * (d + 1) / G, 0);
                    });
                  for (auto &x : th)
                    x.join();
                })));
  }
  return 0;
}
