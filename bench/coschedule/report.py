#!/usr/bin/env python3
"""Co-scheduling's benchmark report (bench/coschedule/run.sh): throughput
(launches per second, median batch) per mix, stream count and configuration,
and the ratios against issue 28's targets, for the co-scheduler on (cosched:
CLEAVE_TUNE=coschedule=on), with every pair on an SM split (cosched-green)
and for the runtime's default (default): at least 1.15x plain concurrent
streams (streams: CLEAVE_TUNE=coschedule=off) on the mix and all mixes,
never below 0.98x on any, and within 5 % of the oracle (the best of the
oracle-RATIO rows: every pair at a forced ratio) where it was run. Files
without some rows (older runs) report what they have. nvcc's own streams are
shown beside, as CUDA's concurrency without Cleave. The plan logs given
after the results (CLEAVE_LOG=plan runs) give the model's predicted against
measured co-run times (`co-run A + B: predicted P ms, measured M ms`): their
mean absolute error, against the target of 15 %.

    report.py coschedule.jsonl [plans-*.log ...] > coschedule.md
"""
import json
import os
import re
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


def oracle(mix, s):
    best = [r["launches_per_s"] for (m, x, l), r in rows.items()
            if m == mix and x == s and l.startswith("oracle-")]
    return max(best) if best else float("nan")


def ok(mix, s, label):
    r = rows.get((mix, s, label))
    return r["ok"] if r else None


CONFIGS = [("cosched", "CLEAVE_TUNE=coschedule=on"),
           ("cosched-green", "CLEAVE_TUNE=coschedule=on,green=always"),
           ("default", "the runtime's default")]


def table(label, what):
    print(f"### {label} ({what}) against streams (coschedule=off)")
    print()
    print("| mix | streams | nvcc-serial | nvcc-streams | serial | streams | "
          f"{label} | {label} / streams | {label} / nvcc-streams | target | "
          f"oracle | {label} / oracle | ok |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
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
            orc = oracle(m, s)
            if orc == orc:
                vs_orc = v[label] / orc
                near = vs_orc >= 0.95
                verdicts.append(near)
                orc_text = (f"{orc:.1f} | {vs_orc:.3f}x (>= 0.95x: "
                            f"{'met' if near else 'NOT met'})")
            else:
                orc_text = "- | -"
            print(f"| {m} | {s} | {ns:.1f} | {v['nvcc-streams']:.1f} | "
                  f"{se:.1f} | {v['streams']:.1f} | {v[label]:.1f} | "
                  f"{ratio:.3f}x | {vs_nvcc:.3f}x | >= {need:.2f}x: "
                  f"{'met' if met else 'NOT met'} | {orc_text} | {good} |")
    print()
    print(f"Targets met ({label}): {sum(verdicts)} of {len(verdicts)}.")
    print()


for label, what in CONFIGS:
    if any(k[2] == label for k in rows):
        table(label, what)
print("Launches per second (median of the timed batches); serial runs use one "
      "stream, so their columns repeat for every stream count. The oracle is "
      "the best of the runs at a forced per-SM ratio (oracle-RATIO rows); "
      "'-' where it was not run.")
print()

CORUN = re.compile(r"co-run (.+): predicted ([0-9.]+) ms, measured ([0-9.]+) ms")
errors = {}
for path in sys.argv[2:]:
    name = os.path.basename(path)
    config = name.split("-")[1] if name.count("-") >= 2 else name
    for line in open(path, errors="replace"):
        m = CORUN.search(line)
        if m and float(m.group(3)) > 0:
            p, t = float(m.group(2)), float(m.group(3))
            errors.setdefault(config, []).append(abs(p - t) / t)
if sys.argv[2:]:
    print("### The model's co-run time (CLEAVE_LOG=plan runs)")
    print()
    print("| configuration | pairs timed | mean absolute error | "
          "target (<= 15 %) |")
    print("|---|---|---|---|")
    for config, errs in sorted(errors.items()):
        mae = 100 * sum(errs) / len(errs)
        print(f"| {config} | {len(errs)} | {mae:.1f} % | "
              f"{'met' if mae <= 15 else 'NOT met'} |")
    if not errors:
        print("| (none) | 0 | - | no pair of both launches timed |")
    print()
    print("Each pair decision's predicted time (its remaining blocks at the "
          "profile's SM clock) against the host time from the decision to "
          "the second launch's return (docs/coschedule.md, \"Explain it\").")
