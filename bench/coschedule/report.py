#!/usr/bin/env python3
"""Co-scheduling's benchmark report (bench/coschedule/run.sh): throughput
(launches per second, median batch) per mix, stream count and configuration,
and the ratios against issue 28's targets: the co-scheduler (cosched) at least
1.15x plain concurrent streams (streams: CLEAVE_TUNE=coschedule=off) on the
mix and all mixes, and never below 0.98x on any. nvcc's own streams are shown
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


print("| mix | streams | nvcc-serial | nvcc-streams | serial | streams | "
      "cosched | cosched / streams | cosched / nvcc-streams | target | ok |")
print("|---|---|---|---|---|---|---|---|---|---|---|")
verdicts = []
for m in mixes:
    for s in streams:
        v = {l: tput(m, s, l) for l in ("nvcc-streams", "streams", "cosched")}
        ns, se = tput(m, 1, "nvcc-serial"), tput(m, 1, "serial")
        ratio = v["cosched"] / v["streams"] if v["streams"] else float("nan")
        vs_nvcc = (v["cosched"] / v["nvcc-streams"]
                   if v["nvcc-streams"] else float("nan"))
        need = 1.15 if m in ("mix", "all") else 0.98
        met = ratio >= need
        verdicts.append(met)
        good = all(ok(m, x, l) is not False for x, l in
                   ((1, "nvcc-serial"), (1, "serial"), (s, "nvcc-streams"),
                    (s, "streams"), (s, "cosched")))
        print(f"| {m} | {s} | {ns:.1f} | {v['nvcc-streams']:.1f} | {se:.1f} | "
              f"{v['streams']:.1f} | {v['cosched']:.1f} | {ratio:.3f}x | "
              f"{vs_nvcc:.3f}x | >= {need:.2f}x: {'met' if met else 'NOT met'} "
              f"| {good} |")
print()
print("Launches per second (median of the timed batches); serial runs use one "
      "stream, so their columns repeat for every stream count.")
print(f"Targets met: {sum(verdicts)} of {len(verdicts)}.")
