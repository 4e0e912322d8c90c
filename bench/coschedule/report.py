#!/usr/bin/env python3
"""Co-scheduling's benchmark report (bench/coschedule/run.sh): throughput
(launches per second, median batch) per mix, stream count and configuration,
and the ratios against issue 28's targets, for the co-scheduler on (cosched:
CLEAVE_TUNE=coschedule=on) and for the runtime's default (default): at least
1.15x plain concurrent streams (streams: CLEAVE_TUNE=coschedule=off) on the
mix and all mixes, and never below 0.98x on any. Files without a default row
(older runs) report cosched alone. nvcc's own streams are shown
beside, as CUDA's concurrency without Cleave.

    report.py coschedule.jsonl > coschedule.md
"""
import json
import sys

rows = {}
for line in open(sys.argv[1]):
    line = line.strip()
    if line.startswith("{"):
        r = json.loads(line)
        rows[(r["mix"], r["streams"], r["label"])] = r

mixes = [m for m in ("ci", "mi", "mix", "all") if any(k[0] == m for k in rows)]
streams = sorted({k[1] for k in rows if k[1] > 1})


def tput(mix, s, label):
    r = rows.get((mix, s, label))
    return r["launches_per_s"] if r else float("nan")


def ok(mix, s, label):
    r = rows.get((mix, s, label))
    return r["ok"] if r else None


CONFIGS = [("cosched", "CLEAVE_TUNE=coschedule=on"),
           ("default", "the runtime's default")]


def table(label, what):
    print(f"### {label} ({what}) against streams (coschedule=off)")
    print()
    print("| mix | streams | nvcc-serial | nvcc-streams | serial | streams | "
          f"{label} | {label} / streams | {label} / nvcc-streams | target | ok |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    verdicts = []
    for m in mixes:
        for s in streams:
            if (m, s, label) not in rows:
                continue
            v = {l: tput(m, s, l) for l in ("nvcc-streams", "streams", label)}
            ns, se = tput(m, 1, "nvcc-serial"), tput(m, 1, "serial")
            ratio = v[label] / v["streams"] if v["streams"] else float("nan")
            vs_nvcc = (v[label] / v["nvcc-streams"]
                       if v["nvcc-streams"] else float("nan"))
            need = 1.15 if m in ("mix", "all") else 0.98
            met = ratio >= need
            verdicts.append(met)
            good = all(ok(m, x, l) is not False for x, l in
                       ((1, "nvcc-serial"), (1, "serial"), (s, "nvcc-streams"),
                        (s, "streams"), (s, label)))
            print(f"| {m} | {s} | {ns:.1f} | {v['nvcc-streams']:.1f} | "
                  f"{se:.1f} | {v['streams']:.1f} | {v[label]:.1f} | "
                  f"{ratio:.3f}x | {vs_nvcc:.3f}x | >= {need:.2f}x: "
                  f"{'met' if met else 'NOT met'} | {good} |")
    print()
    print(f"Targets met ({label}): {sum(verdicts)} of {len(verdicts)}.")
    print()


for label, what in CONFIGS:
    if any(k[2] == label for k in rows):
        table(label, what)
print("Launches per second (median of the timed batches); serial runs use one "
      "stream, so their columns repeat for every stream count. The oracle "
      "(every pair and ratio pre-run) is not measured.")
