#!/usr/bin/env python3
"""Summary table of a cpu-vs-pocl JSON-lines file (bench/cpu/run.sh).

Speedups are time ratios from the same run: "Cleave/PoCL" = PoCL median /
Cleave median (> 1: Cleave is faster), likewise "Cleave/OpenMP". The geomean
is over the kernels where all three variants produced a correct result.
"""
import argparse
import json
import math
import sys


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("jsonl")
    ap.add_argument("--command", default="")
    ap.add_argument("--uptime-before", default="")
    ap.add_argument("--uptime-after", default="")
    a = ap.parse_args()
    rows = [json.loads(l) for l in open(a.jsonl) if l.strip()]
    if not rows:
        sys.exit("no results")
    r0 = rows[0]
    out = []
    p = out.append
    p("# Cleave CPU variant vs PoCL vs OpenMP\n")
    p("- raw results: `%s` (one JSON line per kernel, variant and thread count, every repetition)" % a.jsonl.split("/")[-1])
    p("- command: `%s`" % (a.command or r0.get("command", "")))
    p("- git commit: `%s`%s" % (r0.get("git_commit"), " (working tree differs in lib/, runtime/, tools/, include/ or bench/cpu/)" if r0.get("git_dirty") else ""))
    p("- device: %s, %s cores; host %s; %s" % (r0["device"]["cpu"], r0["device"]["cores"], r0.get("host"), r0.get("date")))
    pocl = next((r.get("pocl") for r in rows if r.get("pocl")), "?")
    p("- PoCL: %s" % pocl)
    if a.uptime_before:
        p("- machine load (uptime) before: `%s`" % a.uptime_before.strip())
        p("- machine load (uptime) after: `%s`" % a.uptime_after.strip())
    loads = [r["loadavg_before"][0] for r in rows if "loadavg_before" in r] + \
        [r["loadavg_after"][0] for r in rows if "loadavg_after" in r]
    cores = r0["device"]["cores"]
    if loads:
        p("- 1-minute load average seen during the run (per kernel, before/after; it includes the benchmark's own threads, at most %d): %.2f to %.2f on %s cores" % (max(r["threads"] for r in rows), min(loads), max(loads), cores))
        if max(loads) > max(r["threads"] for r in rows) + 0.5:
            p("- **WARNING: the machine was not idle** (other processes, e.g. compilations, "
              "were running): variants were interleaved repetition by repetition so the ratios "
              "stay comparable, but absolute times are inflated and runs with as many threads "
              "as cores competed with that load; repeat on an idle machine before drawing "
              "conclusions from single kernels")
    p("- times: median of the timed repetitions (after 2 warm-up runs), spread = (max-min)/median; "
      "speedup = other's median / Cleave's median (> 1: Cleave faster)\n")
    by = {}
    for r in rows:
        by[(r["threads"], r["kernel"], r["variant"])] = r
    threads = sorted({r["threads"] for r in rows})
    kernels = []
    for r in rows:
        if r["kernel"] not in kernels:
            kernels.append(r["kernel"])
    geo = {}
    for t in threads:
        p("## %d thread%s\n" % (t, "" if t == 1 else "s"))
        p("| kernel | reps | Cleave ms (spread) | PoCL ms (spread) | OpenMP ms (spread) | Cleave/PoCL | Cleave/OpenMP |")
        p("|---|---:|---:|---:|---:|---:|---:|")
        lp, lo, lpmin, lomin = [], [], [], []
        for k in kernels:
            v = {n: by.get((t, k, n)) for n in ("cleave-cpu", "pocl", "openmp")}
            if all(x is None for x in v.values()):
                continue

            def cell(x):
                if x is None:
                    return "-"
                if x.get("status") != "ok":
                    return "WRONG"
                sp = (x["max_ms"] - x["min_ms"]) / x["median_ms"] * 100
                return "%.2f (%.0f%%)" % (x["median_ms"], sp)

            ok = lambda x: x is not None and x.get("status") == "ok"
            rp = ro = "-"
            if ok(v["cleave-cpu"]) and ok(v["pocl"]):
                s = v["pocl"]["median_ms"] / v["cleave-cpu"]["median_ms"]
                rp = "%.2f×" % s
                lp.append(s)
                lpmin.append(v["pocl"]["min_ms"] / v["cleave-cpu"]["min_ms"])
            if ok(v["cleave-cpu"]) and ok(v["openmp"]):
                s = v["openmp"]["median_ms"] / v["cleave-cpu"]["median_ms"]
                ro = "%.2f×" % s
                lo.append(s)
                lomin.append(v["openmp"]["min_ms"] / v["cleave-cpu"]["min_ms"])
            reps = next((x["reps"] for x in v.values() if ok(x)), "-")
            p("| %s | %s | %s | %s | %s | %s | %s |" % (k, reps, cell(v["cleave-cpu"]), cell(v["pocl"]), cell(v["openmp"]), rp, ro))
        g = lambda l: math.exp(sum(map(math.log, l)) / len(l)) if l else float("nan")
        geo[t] = (g(lp), g(lo), len(lp), len(lo))
        p("| **geomean** | | | | | **%.2f×** (%d kernels) | **%.2f×** (%d kernels) |" % (geo[t][0], geo[t][2], geo[t][1], geo[t][3]))
        p("| geomean of the fastest repetitions (less sensitive to load) | | | | | %.2f× | %.2f× |\n" % (g(lpmin), g(lomin)))
    p("Target (BENCHMARKS.md): Cleave/PoCL geomean ≥ 1.2×. Measured: " +
      ", ".join("%.2f× at %d thread%s" % (geo[t][0], t, "" if t == 1 else "s") for t in threads) + ".")
    print("\n".join(out))


if __name__ == "__main__":
    main()
