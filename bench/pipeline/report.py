#!/usr/bin/env python3
"""Transfer pipelining's benchmark report (bench/pipeline/run.sh writes the
input): a markdown table of each kernel's medians per configuration and the
ratios issue 27's targets are stated in, then each target with its verdict.

    report.py pipeline.jsonl [plans.log] > pipeline.md

Configurations (run.sh's labels): (a) host-serial, (b) host-piped,
(c) cpu+gpu0, (d) bound, (e) streams (the best of its chunk counts), and
cpu, gpu0, nvcc, streams-cleave for context. Times are medians of total_ms
(copies in + launch + copies back; the bound's bound_ms). Targets:
  (b) <= 1.05 x (d) for every kernel with more than 8 chunks' worth of
      data: more than 8 waves of blocks (the smallest chunk is a wave; the
      bound's line gives blocks and wave_blocks); plans.log's 'pipelined on
      gpuN in M chunks' is shown beside it;
  (c) >= 1.6 x the best single device (gpu0, host-serial, host-piped, cpu)
      as a geometric mean over the memory-bound kernels, and >= 0.98 x on
      each of them;
  Black-Scholes (a) / (b) >= 1.94 (Luo's speedup over unpipelined);
  (b) <= (e) where (e) exists.
"""
import json
import math
import re
import statistics
import sys

# Every kernel but the matrix products moves more bytes than it computes on.
MEMORY_BOUND = ["vecadd", "stencil1d", "stencil2d", "blackscholes", "sepia",
                "filter"]
SINGLE = ["gpu0", "host-serial", "host-piped", "cpu"]
NAN = float("nan")


def load(path):
    """{(kernel, label): [record, ...]} from the program's JSON lines."""
    rows = {}
    for line in open(path):
        line = line.strip()
        if line.startswith("{"):
            r = json.loads(line)
            rows.setdefault((r["kernel"], r["label"]), []).append(r)
    return rows


def chunk_counts(path):
    """{(config, kernel): most chunks of one pipelined launch} from the
    CLEAVE_LOG=plan output run.sh collects."""
    counts, config, kernel = {}, None, None
    try:
        lines = open(path).read().splitlines()
    except OSError:
        return counts
    for line in lines:
        m = re.match(r"== (plans-\S+):", line)
        if m:
            config = m.group(1)[len("plans-"):]
            continue
        m = re.match(r"pipeline: (\S+) \(", line)
        if m:
            kernel = m.group(1)
            continue
        m = re.search(r"pipelined on \S+ in (\d+) chunks", line)
        if m and config and kernel:
            key = (config, kernel)
            counts[key] = max(counts.get(key, 0), int(m.group(1)))
    return counts


def med(rows, kernel, label):
    """The configuration's time in ms: the median of total_ms (the bound's
    bound_ms; the best chunk count's for the streams labels)."""
    rs = rows.get((kernel, label), [])
    if not rs:
        return NAN
    if label == "bound":
        return rs[0]["bound_ms"]
    return min(statistics.median(r["total_ms"]) for r in rs)


def waves(rows, kernel):
    """The launch's blocks over one wave of the GPU, from the bound's line."""
    rs = rows.get((kernel, "bound"), [])
    if not rs or not rs[0].get("wave_blocks"):
        return NAN
    return rs[0]["blocks"] / rs[0]["wave_blocks"]


def ratio(a, b):
    return a / b if a == a and b == b and b else NAN


def fmt(v, suffix=""):
    return "-" if v != v else f"{v:.2f}{suffix}" if suffix else f"{v:.1f}"


def geomean(vs):
    vs = [v for v in vs if v == v and v > 0]
    return math.exp(sum(map(math.log, vs)) / len(vs)) if vs else NAN


def main():
    rows = load(sys.argv[1])
    counts = chunk_counts(sys.argv[2]) if len(sys.argv) > 2 else {}
    order = MEMORY_BOUND + ["matmul_sh", "matmul_rh"]
    kernels = [k for k in order if any(kk == k for kk, _ in rows)]
    kernels += sorted({k for k, _ in rows} - set(kernels))
    labels = ["nvcc", "gpu0", "cpu", "host-serial", "host-piped", "cpu+gpu0",
              "bound", "streams", "streams-cleave"]
    print("| kernel | sizes | nvcc | gpu0 | cpu | (a) serial | (b) piped | "
          "(c) cpu+gpu0 | (d) bound | (e) streams | streams under Cleave | "
          "chunks (b) | (b)/(d) | (b) launch+down/(d) | best single | "
          "best/(c) | (a)/(b) | (e)/(b) | ok |")
    print("|" + "---|" * 19)
    res = {}
    for k in kernels:
        t = {l: med(rows, k, l) for l in labels}
        single = {l: t[l] for l in SINGLE if t[l] == t[l]}
        best = min(single, key=single.get) if single else None
        piped = rows.get((k, "host-piped"), [])
        ld = (statistics.median([a + b for a, b in zip(piped[0]["launch_ms"],
                                                       piped[0]["download_ms"])])
              if piped else NAN)
        ok = all(r["ok"] for (kk, _), rs in rows.items() if kk == k for r in rs)
        size = next((rs[0]["sizes"] for (kk, _), rs in rows.items() if kk == k), "")
        n = counts.get(("host-piped", k))
        r = res[k] = {
            "bd": ratio(t["host-piped"], t["bound"]),
            "best_c": ratio(single[best], t["cpu+gpu0"]) if best else NAN,
            "ab": ratio(t["host-serial"], t["host-piped"]),
            "eb": ratio(t["streams"], t["host-piped"]),
            "chunks": n, "ok": ok, "waves": waves(rows, k)}
        print(f"| {k} | {size} | {fmt(t['nvcc'])} | {fmt(t['gpu0'])} | "
              f"{fmt(t['cpu'])} | {fmt(t['host-serial'])} | "
              f"{fmt(t['host-piped'])} | {fmt(t['cpu+gpu0'])} | "
              f"{fmt(t['bound'])} | {fmt(t['streams'])} | "
              f"{fmt(t['streams-cleave'])} | {n if n else '?'} | "
              f"{fmt(r['bd'], 'x')} | {fmt(ratio(ld, t['bound']), 'x')} | "
              f"{best or '-'} {fmt(single.get(best, NAN))} | "
              f"{fmt(r['best_c'], 'x')} | {fmt(r['ab'], 'x')} | "
              f"{fmt(r['eb'], 'x')} | {ok} |")
    print()
    print("Medians in ms of total_ms (copies in + launch + copies back; the "
          "bound: max(send, kernel, receive) on pinned memory, each timed "
          "alone by events); (e) and streams under Cleave: the best of 8, 16 "
          "and 32 chunks on 4 streams. 'launch+down' is (b) without its "
          "copies in, which under pipeline=host only land in the runtime's "
          "host copies. 'chunks (b)': the most chunks of one pipelined "
          "launch in plans.log.")
    print()
    print("## Targets (issue 27)")
    print()

    def verdict(good):
        return "**met**" if good else "**not met**"

    checked = [k for k in kernels if res[k]["waves"] > 8
               and res[k]["bd"] == res[k]["bd"]]
    unknown = [k for k in kernels if res[k]["waves"] != res[k]["waves"]]
    line = ", ".join(f"{k} {res[k]['bd']:.2f}x ({res[k]['waves']:.0f} waves)"
                     for k in checked) or "none"
    print(f"- (b) within 1.05x of (d) with more than 8 waves of blocks: {line}"
          + (f" -> {verdict(all(res[k]['bd'] <= 1.05 for k in checked))}"
             if checked else " -> not checked")
          + (f" (waves unknown: {', '.join(unknown)})"
             if unknown else ""))
    mb = [k for k in MEMORY_BOUND if k in res and res[k]["best_c"] == res[k]["best_c"]]
    g = geomean([res[k]["best_c"] for k in mb])
    low = min((res[k]["best_c"] for k in mb), default=NAN)
    print(f"- (c) over the best single device, memory-bound kernels "
          f"({', '.join(mb) or 'none'}): geomean {fmt(g, 'x')} (target 1.6x) "
          f"-> {verdict(g >= 1.6) if g == g else 'not checked'}; lowest "
          f"{fmt(low, 'x')} (target 0.98x) -> "
          f"{verdict(low >= 0.98) if low == low else 'not checked'}")
    bs = res.get("blackscholes", {}).get("ab", NAN)
    print(f"- Black-Scholes (a)/(b): {fmt(bs, 'x')} (target 1.94x) -> "
          f"{verdict(bs >= 1.94) if bs == bs else 'not checked'}")
    peers = [k for k in kernels if res[k]["eb"] == res[k]["eb"]]
    line = ", ".join(f"{k} {res[k]['eb']:.2f}x" for k in peers) or "none"
    print(f"- (b) never slower than (e), (e)/(b) >= 1: {line} -> "
          + (verdict(all(res[k]["eb"] >= 1 for k in peers)) if peers
             else "not checked"))
    own = [(k, ratio(med(rows, k, "streams-cleave"), med(rows, k, "streams")))
           for k in kernels]
    own = [(k, r) for k, r in own if r == r]
    line = ", ".join(f"{k} {r:.2f}x" for k, r in own) or "none"
    print(f"- a program that pipelines itself, under Cleave on gpu0 against "
          f"nvcc's build (streams under Cleave / (e), at most 1 is not "
          f"slower): {line}")
    bad = [k for k in kernels if not res[k]["ok"]]
    print(f"- every program's result checked: "
          f"{'all PASS' if not bad else 'FAIL: ' + ', '.join(bad)}")


if __name__ == "__main__":
    main()
