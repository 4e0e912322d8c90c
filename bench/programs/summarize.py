#!/usr/bin/env python3
"""The corpus benchmark's table from runner.py's JSON lines (one or more
files: the shards of a run). Markdown on stdout.

  summarize.py programs-bench.jsonl [more.jsonl ...] > programs-bench.md

Ratios are Cleave's median over the baseline's median for the same program
(> 1: Cleave slower): `time` is the program's own time_ms (cudaEvents), `wall`
the process's wall time. The baseline is nvcc's build where the file has it,
else (a dry run) the first variant. Only configurations whose runs all passed
enter a ratio or a geomean.
"""
import json
import math
import sys

# design/BENCHMARKS.md: Cleave on gpu0 within 1.05x of nvcc warm, 1.10x cold;
# the CPU added never costs more than 2 % over gpu0 alone.
TARGETS = {("gpu0", "warm"): 1.05, ("gpu0", "cold"): 1.10}
CPU_ADDED_LIMIT = 1.02


def geomean(values):
    return math.exp(sum(math.log(v) for v in values) / len(values)) if values else None


def fmt_ratio(r):
    return "-" if r is None else f"{r:.2f}"


def load(paths):
    lines = []
    for path in paths:
        with open(path) as f:
            lines.extend(json.loads(l) for l in f if l.strip())
    return lines


def medians(lines):
    """{(program, variant, cache): line} for lines that passed with times."""
    out = {}
    for l in lines:
        if l["status"] == "pass" and "median_ms" in l:
            out[(l["program"], l["variant"], l["cache"])] = l
    return out


def ratio(a, b, key):
    if a is None or b is None or not b.get(key):
        return None
    return a[key] / b[key]


def main(paths):
    lines = load(paths)
    if not lines:
        sys.exit("summarize: no lines")
    ok = medians(lines)
    programs = list(dict.fromkeys(l["program"] for l in lines))
    variants = list(dict.fromkeys(l["variant"] for l in lines))
    baseline = "nvcc" if "nvcc" in variants else variants[0]
    base_cache = "none" if baseline == "nvcc" else "warm"
    columns = [(v, c) for v in variants if v != baseline for c in ("warm", "cold")]
    if baseline != "nvcc":
        columns = [("%s" % baseline, "cold")] + columns
    first = lines[0]
    print("# Program corpus: Cleave against %s\n" % (
        "nvcc" if baseline == "nvcc" else "the %s variant (dry run)" % baseline))
    print("commit %s%s, device %s, %s, scale %s, files: %s\n" % (
        first["git_commit"][:12], " (dirty)" if first.get("git_dirty") else "",
        first["device"], first["date"], first["scale"], ", ".join(paths)))
    print("Each cell: median time_ms ratio / median wall-time ratio over %s "
          "(%s) of the same program; > 1 is slower. A dash: that "
          "configuration did not pass (see the end).\n" % (baseline, base_cache))
    head = ["program", f"{baseline} time_ms", f"{baseline} wall ms"] + [
        f"{v} {c}" for v, c in columns]
    print("| " + " | ".join(head) + " |")
    print("|" + "---|" * len(head))
    per_column = {col: ([], []) for col in columns}
    for prog in programs:
        base = ok.get((prog, baseline, base_cache))
        row = [prog, "-" if base is None else f"{base['median_ms']:.3f}",
               "-" if base is None else f"{base['median_wall_ms']:.0f}"]
        for col in columns:
            other = ok.get((prog, col[0], col[1]))
            rt, rw = ratio(other, base, "median_ms"), ratio(other, base, "median_wall_ms")
            if rt is not None and rt > 0:
                per_column[col][0].append(rt)
            if rw is not None and rw > 0:
                per_column[col][1].append(rw)
            row.append("-" if rt is None and rw is None else
                       f"{fmt_ratio(rt)} / {fmt_ratio(rw)}")
        print("| " + " | ".join(row) + " |")
    geo = ["geomean", "", ""]
    for col in columns:
        t, w = per_column[col]
        geo.append(f"{fmt_ratio(geomean(t))} / {fmt_ratio(geomean(w))} (n={len(t)})")
    print("| " + " | ".join(geo) + " |\n")

    for (variant, cache), limit in TARGETS.items():
        if (variant, cache) in per_column and baseline == "nvcc":
            t = per_column[(variant, cache)][0]
            within = sum(1 for r in t if r <= limit)
            print(f"- target {variant} {cache} <= {limit:.2f}x nvcc (time_ms): "
                  f"{within} of {len(t)} programs")
    cpu_added = [v for v in variants if v not in (baseline, "gpu0")]
    if "gpu0" in variants and cpu_added:
        print("\n## The CPU added against gpu0 alone (warm, time_ms ratio; "
              f"target <= {CPU_ADDED_LIMIT:.2f})\n")
        print("| program | " + " | ".join(f"{v} / gpu0" for v in cpu_added) + " |")
        print("|---|" + "---|" * len(cpu_added))
        over = {v: [] for v in cpu_added}
        for prog in programs:
            g = ok.get((prog, "gpu0", "warm"))
            cells = []
            for v in cpu_added:
                r = ratio(ok.get((prog, v, "warm")), g, "median_ms")
                if r is not None:
                    over[v].append(r)
                cells.append(fmt_ratio(r) + (" (over)" if r and r > CPU_ADDED_LIMIT else ""))
            print(f"| {prog} | " + " | ".join(cells) + " |")
        print("| geomean | " + " | ".join(fmt_ratio(geomean(over[v])) for v in cpu_added) + " |")

    bad = [l for l in lines if l["status"] != "pass"]
    print(f"\n## Not run or not passing ({len(bad)})\n")
    for l in bad:
        note = (l.get("note") or "").strip().splitlines()
        print(f"- {l['program']} {l['variant']} {l['cache']}: {l['status']}"
              + (f": {note[-1][:200]}" if note else ""))


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    main(sys.argv[1:])
