#!/usr/bin/env python3
"""The reorganization benchmark's report (bench/reorganize/run.sh).

  report.py reorganize.jsonl plans-force.log plans-on.log [plans-long.log
      [OUT]] > reorganize.md

Per configuration: the trip counts' coefficient of variation; median kernel
times (cudaEvents around the launch) of nvcc's original and its dynamic
lane refill peer, of Cleave with the step off, and the reorganized kernel
alone (the plan's `measured:` line under reorganize=force, the host's clock
around its launch and wait); the step's inspector and sort; the whole
launch with the step forced and as the model decides, against off; the end
to end time (copies in, launches, copies back) as the model decides against
off; whether the outputs are equal across the Cleave runs (hashes); and the
targets: >= 1.4x kernel time where cv >= 0.5, end to end never more than
1 % slower than the original. Then the splits over gpu0 and the CPU (the
plans-{greedy,balancer,route}.log of OUT): the balancer's split never slower
than the best single device, and ahead of SKMD's greedy split.
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


def long_plans(path):
    """Per (case, round) marker of plans-long.log: the steps run (measured
    lines) and the last reason a launch did not run the step."""
    out = {}
    cur = None
    try:
        lines = open(path).read().splitlines()
    except OSError:
        return out
    for line in lines:
        m = re.match(r"== case (\d+) round (\d+)", line)
        if m:
            cur = out.setdefault(int(m.group(1)), {"steps": [], "why": ""})
            cur["steps"].append(0)
            continue
        if cur is None:
            continue
        if "reorganize: measured:" in line:
            cur["steps"][-1] += 1
        elif "not explored:" in line or "reorganize: not on" in line:
            cur["why"] = line.split(": ", 2)[-1][:90]
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
    print("| kernel | config | cv | nvcc | peer | off | reorganized | kernel gain | inspector + sort | forced step | model's choice | steps run | end to end (on, all in one process) | outputs | kernel target |")
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
        r = lambda a, b: f"{a:.3f} ({b / a:.2f}x)" if a == a and a else "-"
        print(f"| {key[0]} | {key[1]} | {cv:.3f} | {k('nvcc'):.3f} | "
              f"{r(k('peer'), k('nvcc'))} | {k('off'):.3f} | {ro:.3f} | "
              f"{gain:.2f}x | {ins:.3f} | "
              f"{r(k('force', 'launch_ms'), k('off', 'launch_ms'))} | "
              f"{r(k('on', 'launch_ms'), k('off', 'launch_ms'))} | "
              f"{steps}/{len(on_runs)} | {e2e:.3f} | "
              f"{'equal' if len(hashes) == 1 else 'DIFFER'}{'' if ok else ', WRONG'} | "
              f"{'; '.join(t) or '-'} |")
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
          "launch, copies back), every configuration in one process (the "
          "model's verdicts carry over between configurations of one "
          "launch size). outputs: hashes of off, force and on.")
    print()
    failed += splits(rows, sys.argv[5] if len(sys.argv) > 5 else ".")
    print()
    failed += programs(rows, sys.argv[4] if len(sys.argv) > 4 else "")
    print()
    print(f"targets missed: {failed}")


SPLITS = ("greedy", "balancer", "route", "route-force")


def split_plans(path):
    """Per kernel, in order: each launch's ranges (devices working) and
    whether its step was routed over several devices."""
    out = {k: [] for k in KERNELS}
    cur = None
    try:
        lines = open(path).read().splitlines()
    except OSError:
        return out
    for line in lines:
        m = re.match(r"launch (\w+)\(.*split over (\d+) range", line)
        if m:
            cur = None
            if m.group(1) in out:
                cur = {"ranges": int(m.group(2)), "routed": False}
                out[m.group(1)].append(cur)
            continue
        if cur is not None and re.search(r"reorganize: route: .*: "
                                         r"(routed|probing|forced)$", line):
            cur["routed"] = True
    return out


def splits(rows, outdir):
    """The splits' table over gpu0 and the CPU; returns the targets
    missed."""
    by, order = {}, []
    for r in rows:
        if r["label"] not in ("off", "cpu") + SPLITS:
            continue
        key = (r["kernel"], r["config"])
        if key not in order:
            order.append(key)
        by.setdefault(key, {})[r["label"]] = r
    if not any(l in c for c in by.values() for l in ("cpu",) + SPLITS):
        return 0
    plans = {l: split_plans(f"{outdir}/plans-{l}.log") for l in SPLITS}
    per = {}
    for label, plan in plans.items():
        for k in KERNELS:
            at = 0
            for key in [x for x in order if x[0] == k and label in by[x]]:
                n = len(by[key][label]["launch_ms"])
                per[(key, label)] = plan[k][at:at + n]
                at += n
    print("Splits over gpu0 and the CPU, every configuration in one process: "
          "median launch times (ms, the host's clock around launch and "
          "wait). gpu0 is `off`; greedy and balancer: the model policy with "
          "CLEAVE_TUNE=balance forced (the split it kept, or whole on one "
          "device where no split was predicted to gain); route: the step "
          "forced on the model's device, its sorted order routed over both "
          "where the models predict a gain; route-force: routed at every "
          "launch. split/routed: launches run on two devices. Targets: the balancer within 1 % of the best single "
          "device or faster, and ahead of the greedy split (a tie when "
          "both ran the same way within 1 %).")
    print()
    print("| kernel | config | cv | gpu0 | cpu | greedy | balancer | route | route-force | best single | balancer / best | greedy / balancer | split: greedy, balancer | routed: route, route-force | ok | targets |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    failed = ahead = ties = behind = 0
    for key in order:
        c = by[key]
        t = lambda l: med(c[l]["launch_ms"]) if l in c else float("nan")
        best = min((t(l) for l in ("off", "cpu") if t(l) == t(l)),
                   default=float("nan"))
        bal, gre = t("balancer"), t("greedy")
        n = lambda l, f: (f"{sum(1 for x in per.get((key, l), []) if f(x))}"
                          f"/{len(per.get((key, l), []))}")
        split = lambda x: x["ranges"] > 1
        verdict = []
        if bal == bal and best == best:
            ok = bal <= 1.01 * best
            verdict.append("balancer <= best: " + ("yes" if ok else "NO"))
            failed += not ok
        never = all(not split(x) for l in ("greedy", "balancer")
                    for x in per.get((key, l), []))
        if bal == bal and gre == gre:
            if never and per.get((key, "balancer")):
                verdict.append("tie with greedy (neither split)")
                ties += 1
            elif bal < 0.99 * gre:
                verdict.append("ahead of greedy")
                ahead += 1
            elif bal <= 1.01 * gre:
                verdict.append("tie with greedy")
                ties += 1
            else:
                verdict.append("BEHIND greedy")
                behind += 1
        okall = all(r["ok"] for r in c.values())
        f = lambda v: f"{v:.3f}" if v == v else "-"
        print(f"| {key[0]} | {key[1]} | {next(iter(c.values()))['cv']:.3f} | "
              f"{f(t('off'))} | {f(t('cpu'))} | {f(gre)} | {f(bal)} | "
              f"{f(t('route'))} | {f(t('route-force'))} | {f(best)} | "
              f"{f(bal / best if best == best and best else float('nan'))} | "
              f"{f(gre / bal if bal == bal and bal else float('nan'))} | "
              f"{n('greedy', split)}, {n('balancer', split)} | "
              f"{n('route', lambda x: x['routed'])}, "
              f"{n('route-force', lambda x: x['routed'])} | "
              f"{'yes' if okall else 'WRONG'} | {'; '.join(verdict) or '-'} |")
    print()
    print(f"balancer against the greedy split: ahead on {ahead}, tied on "
          f"{ties}, behind on {behind} configuration(s)")
    failed += behind
    return failed


def programs(rows, long_log):
    """The programs' table; returns the targets missed."""
    by, order = {}, []
    for r in rows:
        if not r["label"].endswith(("-p", "-long", "-long-plan")):
            continue
        key = (r["kernel"], r["config"])
        if key not in order:
            order.append(key)
        by.setdefault(key, {}).setdefault(r["label"], []).append(r)
    if not order:
        return 0
    plans = long_plans(long_log)
    # run.sh runs the cases in order: the i-th case of the log is the i-th
    # configuration of the rows.
    cases = sorted(plans)
    print("Programs: each configuration a process of its own. default and on: "
          "end to end over off (medians over the rounds); long: LONG_REPS "
          "launches, on over off, with the launches the model ran the step "
          "for and the last reason it gave for not running it (from a run "
          "with CLEAVE_LOG=plan beside the timed ones). "
          "launches: the sum of the launches' times (host clock around "
          "launch and wait) over off's, without the copies in and out; "
          "after the first: the same without each process's first launch "
          "(which pays for loading code whatever the settings: at 52a0fe4 "
          "default, whose settings are off's, was as much slower there as "
          "on).")
    print()
    print("| kernel | config | cv | off (ms) | default | on | launches: default, on | after the first: default, on | long: off (ms) | long: on | long: launches | long: steps run | long: why not | outputs | end to end <= 1.01 |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    failed = 0
    for case, key in enumerate(order):
        c = by[key]
        e = lambda l: med([r["e2e_ms"] for r in c.get(l, [])])
        ratio = lambda a, b: e(a) / e(b) if e(b) == e(b) and e(b) else float("nan")
        d, o, lo = ratio("default-p", "off-p"), ratio("on-p", "off-p"), ratio("on-long", "off-long")
        # The launches alone (the host's clock around each launch and its
        # wait, summed): what the step changes, without the copies' noise.
        ls = lambda l: med([sum(r["launch_ms"]) for r in c.get(l, [])])
        l2 = lambda l: med([sum(r["launch_ms"][1:]) for r in c.get(l, [])])
        lr2 = lambda a, b: l2(a) / l2(b) if l2(b) == l2(b) and l2(b) else float("nan")
        lr = lambda a, b: ls(a) / ls(b) if ls(b) == ls(b) and ls(b) else float("nan")
        hashes = {r["hash"] for rs in c.values() for r in rs}
        ok = all(r["ok"] for rs in c.values() for r in rs)
        t = []
        for name, v in (("default", d), ("on", o), ("long", lo)):
            if v == v:
                t.append(f"{name}: " + ("yes" if v <= 1.01 else "NO"))
                failed += not v <= 1.01
        p = (plans[cases[case]] if case < len(cases)
             else {"steps": [], "why": ""})
        cv = next(iter(c.values()))[0]["cv"]
        print(f"| {key[0]} | {key[1]} | {cv:.3f} | {e('off-p'):.3f} | {d:.3f} | "
              f"{o:.3f} | {lr('default-p', 'off-p'):.3f}, {lr('on-p', 'off-p'):.3f} | "
              f"{lr2('default-p', 'off-p'):.3f}, {lr2('on-p', 'off-p'):.3f} | "
              f"{e('off-long'):.1f} | {lo:.3f} | {lr('on-long', 'off-long'):.3f} | "
              f"{'/'.join(str(x) for x in p['steps']) or '-'} | {p['why'] or '-'} | "
              f"{'equal' if len(hashes) == 1 else 'DIFFER'}{'' if ok else ', WRONG'} | "
              f"{'; '.join(t)} |")
    return failed


if __name__ == "__main__":
    main()
