#!/usr/bin/env python3
"""The reorganization benchmark's report (bench/reorganize/run.sh).

  report.py reorganize.jsonl plans-force.log plans-on.log > reorganize.md

Per configuration: the trip counts' coefficient of variation; median kernel
times (cudaEvents around the launch) of nvcc's original and its dynamic
lane refill peer, of Cleave with the step off, and the reorganized kernel
alone (the plan's `measured:` line under reorganize=force, the host's clock
around its launch and wait); the step's inspector and sort; the whole
launch with the step forced and as the model decides, against off; the end
to end time (copies in, launches, copies back) as the model decides against
off; whether the outputs are equal across the Cleave runs (hashes); and the
targets: >= 1.4x kernel time where cv >= 0.5, end to end never more than
1 % slower than the original.
"""
import json
import re
import statistics
import sys

KERNELS = ("bootstrap", "option", "spmv")


def launches(path):
    """Per kernel, in order: each launch's measured step parts (or None
    when the step did not run) and its decision lines."""
    out = {k: [] for k in KERNELS}
    cur = None
    try:
        lines = open(path).read().splitlines()
    except OSError:
        return out
    for line in lines:
        m = re.match(r"launch (\w+)\(", line)
        if m:
            cur = None
            if m.group(1) in out:
                cur = {"measured": None, "why": ""}
                out[m.group(1)].append(cur)
            continue
        if cur is None:
            continue
        m = re.search(r"reorganize: measured: inspector ([\d.]+) \+ sort "
                      r"([\d.]+) \+ reorganized ([\d.]+) ms", line)
        if m:
            cur["measured"] = tuple(float(x) for x in m.groups())
        elif "reorganize: not on" in line or "the original timed" in line:
            cur["why"] = line.split("reorganize: ", 1)[1]
    return out


def med(v):
    v = [x for x in v if x == x]
    return statistics.median(v) if v else float("nan")


def main():
    rows = [json.loads(l) for l in open(sys.argv[1]) if l.startswith("{")]
    plans = {"force": launches(sys.argv[2]), "on": launches(sys.argv[3])}
    by = {}
    order = []
    for r in rows:
        key = (r["kernel"], r["config"])
        if key not in order:
            order.append(key)
        by.setdefault(key, {})[r["label"]] = r
    # Each configuration's launches, in the program's order, REPS each.
    per = {}
    for label, plan in plans.items():
        for k in KERNELS:
            cfgs = [key for key in order if key[0] == k and label in by[key]]
            reps = [len(by[key][label]["kernel_ms"]) for key in cfgs]
            at = 0
            for key, n in zip(cfgs, reps):
                per[(key, label)] = plan[k][at:at + n]
                at += n
    print("| kernel | config | cv | nvcc | peer | off | reorganized | kernel gain | inspector + sort | forced step | model's choice | steps run | end to end | outputs | targets |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    failed = 0
    for key in order:
        c = by[key]
        k = lambda l, f="kernel_ms": med(c[l][f]) if l in c else float("nan")
        ms = [x["measured"] for x in per.get((key, "force"), []) if x["measured"]]
        ro = med([x[2] for x in ms])
        ins = med([x[0] + x[1] for x in ms])
        on_runs = per.get((key, "on"), [])
        steps = sum(1 for x in on_runs if x["measured"])
        cv = next(iter(c.values()))["cv"]
        gain = k("off") / ro if ro == ro and ro else float("nan")
        e2e = (c["on"]["e2e_ms"] / c["off"]["e2e_ms"]
               if "on" in c and "off" in c else float("nan"))
        hashes = {c[l]["hash"] for l in ("off", "force", "on") if l in c}
        ok = all(r["ok"] for r in c.values())
        t = []
        if cv >= 0.5:
            t.append("kernel >= 1.4x: " + ("yes" if gain >= 1.4 else "NO"))
            failed += not gain >= 1.4
        t.append("end to end <= 1.01: " + ("yes" if e2e <= 1.01 else "NO"))
        failed += not e2e <= 1.01
        r = lambda a, b: f"{a:.3f} ({b / a:.2f}x)" if a == a and a else "-"
        print(f"| {key[0]} | {key[1]} | {cv:.3f} | {k('nvcc'):.3f} | "
              f"{r(k('peer'), k('nvcc'))} | {k('off'):.3f} | {ro:.3f} | "
              f"{gain:.2f}x | {ins:.3f} | "
              f"{r(k('force', 'launch_ms'), k('off', 'launch_ms'))} | "
              f"{r(k('on', 'launch_ms'), k('off', 'launch_ms'))} | "
              f"{steps}/{len(on_runs)} | {e2e:.3f} | "
              f"{'equal' if len(hashes) == 1 else 'DIFFER'}{'' if ok else ', WRONG'} | "
              f"{'; '.join(t)} |")
    print()
    print("Times in ms, medians over the launches. nvcc, peer and off: kernel "
          "time (cudaEvents around the launch; Cleave's includes what the "
          "engine queues on the stream). reorganized: the reorganized kernel "
          "alone under reorganize=force, inspector + sort: the step's other "
          "parts (host clock around launch and wait, from CLEAVE_LOG=plan). "
          "kernel gain: off over reorganized. forced step and model's choice: "
          "the whole launch on the host's clock (launch to event done), with "
          "the speedup over off. steps run: launches the model ran the step "
          "for. end to end: the model's run over off (copies in, every "
          "launch, copies back). outputs: hashes of off, force and on.")
    print()
    print(f"targets missed: {failed}")


if __name__ == "__main__":
    main()
