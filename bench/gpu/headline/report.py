#!/usr/bin/python3
"""The headline benchmark's report (issue 6 §5), run here on the JSON lines
bench/gpu/headline/run.sh wrote on the GPU machine.

For each kernel, mode and device set: the speedup of each policy over the
best single device (the faster of `gpu0` and `cpu` under `even`, same mode:
in host mode both include their transfers). Policies: `even`, `model`, and
`best static` (the fastest median among `even` and the CLEAVE_SPLIT sweep,
with the weights that won). Geomeans per device set and policy; the
smallest speedup of each (the target is no kernel below 0.98x); the model's
plan (blocks per device). Writes a markdown file and a PNG plot.

  bench/gpu/headline/report.py headline.jsonl [-o PREFIX]
      PREFIX.md and PREFIX.png (default: the input without .jsonl)
"""
import argparse
import json
import math
import sys
from collections import defaultdict

SET_ORDER = ["gpu0", "cpu", "cpu+gpu0", "2gpu", "cpu+2gpu", "4gpu", "cpu+4gpu"]
MULTI = [s for s in SET_ORDER if s not in ("gpu0", "cpu")]
POLICIES = ["even", "model", "best static"]
MODES = ["resident", "host", "pinned"]
# BENCHMARKS.md: geomean targets (data resident unless named).
TARGETS = {("2gpu", "resident"): 1.9, ("cpu+2gpu", "resident"): 1.9,
           ("2gpu", "host"): 1.6, ("cpu+2gpu", "host"): 1.6,
           ("2gpu", "pinned"): 1.6, ("cpu+2gpu", "pinned"): 1.6,
           ("4gpu", "resident"): 3.7, ("cpu+4gpu", "resident"): 3.7}


def geomean(xs):
    xs = [x for x in xs if x and x > 0]
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else None


def load(path):
    rows, wrong = [], []
    for n, line in enumerate(open(path), 1):
        line = line.strip()
        if not line:
            continue
        try:
            d = json.loads(line)
        except json.JSONDecodeError as e:
            sys.exit(f"{path}:{n}: not JSON: {e}")
        for key in ("kernel", "mode", "set", "policy", "status"):
            if key not in d:
                sys.exit(f"{path}:{n}: no '{key}'")
        if d["status"] != "ok" or "median_ms" not in d:
            wrong.append(d)
        else:
            rows.append(d)
    return rows, wrong


def analyse(rows):
    """(kernel, mode, set) -> {policy: (median, row)}; best static folded."""
    cell = defaultdict(dict)
    for d in rows:
        key = (d["kernel"], d["mode"], d["set"])
        pol = d["policy"]
        if pol.startswith("split:") or pol == "even":
            best = cell[key].get("best static")
            if best is None or d["median_ms"] < best[0]:
                cell[key]["best static"] = (d["median_ms"], d)
        if pol in ("even", "model"):
            cell[key][pol] = (d["median_ms"], d)
    base = {}
    for (k, m, s), pols in cell.items():
        if s in ("gpu0", "cpu") and "even" in pols:
            t = pols["even"][0]
            if (k, m) not in base or t < base[(k, m)][0]:
                base[(k, m)] = (t, s)
    return cell, base


def fmt(x, digits=2):
    return "-" if x is None else f"{x:.{digits}f}"


def blocks_text(d):
    plan = d.get("plan") or {}
    b = plan.get("blocks") or {}
    return " ".join(f"{dev}:{n}" for dev, n in b.items()) or "-"


def report(path, prefix):
    rows, wrong = load(path)
    if not rows:
        sys.exit(f"{path}: no measured lines")
    cell, base = analyse(rows)
    kernels = sorted({d["kernel"] for d in rows},
                     key=[d["kernel"] for d in rows].index)
    sets = [s for s in SET_ORDER if any(d["set"] == s for d in rows)]
    sets += sorted({d["set"] for d in rows} - set(sets))
    multi = [s for s in sets if s not in ("gpu0", "cpu")]
    first = rows[0]
    out = []
    out.append("# Headline benchmark: speedup over the best single device\n")
    out.append(f"Input: `{path}`; commit {first.get('git_commit', '?')}, host "
               f"{first.get('host', '?')}; devices "
               f"{', '.join(max((d.get('device_names') or [] for d in rows), key=len))}.")
    if any(d.get("small") for d in rows):
        out.append("\n**Small sizes (--small): a check of the pipeline, not a "
                   "performance result.**")
    out.append("\nSpeedup = median of the best single device (the faster of "
               "`gpu0` and `cpu`, same mode) / median of the configuration; "
               "> 1 is faster. `host`: inputs start on the host and outputs "
               "return to it, transfers included on both sides; `pinned`: "
               "the same with the program's host arrays page-locked "
               "(cudaMallocHost). "
               "`best static` is the fastest of `even` and the CLEAVE_SPLIT "
               "sweep.\n")

    speed = {}  # (mode, set, policy) -> {kernel: speedup}
    for mode in MODES:
        if not any(k[1] == mode for k in cell):
            continue
        out.append(f"\n## Mode `{mode}`\n")
        out.append("Best single device per kernel: " + ", ".join(
            f"{k} {base[(k, mode)][1]} {base[(k, mode)][0]:.3f} ms"
            for k in kernels if (k, mode) in base) + ".\n")
        head = "| kernel | " + " | ".join(
            f"{s} {p}" for s in multi for p in POLICIES) + " |"
        out.append(head)
        out.append("|" + "---|" * (1 + len(multi) * len(POLICIES)))
        for k in kernels:
            b = base.get((k, mode))
            cells = []
            for s in multi:
                for p in POLICIES:
                    v = cell.get((k, mode, s), {}).get(p)
                    x = b[0] / v[0] if (b and v) else None
                    speed.setdefault((mode, s, p), {})[k] = x
                    cells.append(fmt(x))
            out.append(f"| {k} | " + " | ".join(cells) + " |")
        out.append("| **geomean** | " + " | ".join(
            fmt(geomean(speed.get((mode, s, p), {}).values()))
            for s in multi for p in POLICIES) + " |")
        out.append("| min | " + " | ".join(
            fmt(min([x for x in speed.get((mode, s, p), {}).values() if x],
                    default=None))
            for s in multi for p in POLICIES) + " |")

        out.append(f"\n### Splits and plans (`{mode}`)\n")
        out.append("| kernel | set | best static (weights) | model plan (blocks) "
                   "| model summary |")
        out.append("|---|---|---|---|---|")
        for k in kernels:
            for s in multi:
                c = cell.get((k, mode, s), {})
                bs = c.get("best static")
                bs_text = "-"
                if bs:
                    pol = bs[1]["policy"]
                    bs_text = ("even" if pol == "even" else pol[len("split:"):]) \
                        + f" {bs[0]:.3f} ms"
                m = c.get("model")
                out.append(f"| {k} | {s} | {bs_text} | "
                           f"{blocks_text(m[1]) if m else '-'} | "
                           f"{(m[1].get('plan') or {}).get('summary', '-') if m else '-'} |")

    out.append("\n## Targets (BENCHMARKS.md)\n")
    out.append("| device set | mode | target geomean | even | model | best static |")
    out.append("|---|---|---|---|---|---|")
    for (s, mode), t in TARGETS.items():
        if s not in multi:
            continue
        out.append(f"| {s} | {mode} | {t} | " + " | ".join(
            fmt(geomean(speed.get((mode, s, p), {}).values()))
            for p in POLICIES) + " |")
    if wrong:
        out.append("\n## Wrong results (not in any ratio)\n")
        for d in wrong:
            out.append(f"- {d['kernel']} {d['mode']} on {d['set']} "
                       f"({d['policy']}): status {d['status']}")
    text = "\n".join(out) + "\n"
    with open(prefix + ".md", "w") as f:
        f.write(text)
    plot(speed, kernels, multi, prefix + ".png")
    return text


def plot(speed, kernels, multi, path):
    try:
        import matplotlib
    except ImportError:
        sys.exit("report.py: no matplotlib for " + sys.executable +
                 " (Debian: apt-get install python3-matplotlib, then run "
                 "/usr/bin/python3 report.py)")
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    modes = [m for m in MODES if any(k[0] == m for k in speed)]
    fig, axes = plt.subplots(len(modes), len(POLICIES),
                             figsize=(6 * len(POLICIES), 4 * len(modes)),
                             squeeze=False, sharey=True)
    labels = kernels + ["geomean"]
    width = 0.8 / max(1, len(multi))
    for r, mode in enumerate(modes):
        for c, pol in enumerate(POLICIES):
            ax = axes[r][c]
            for i, s in enumerate(multi):
                vals = speed.get((mode, s, pol), {})
                ys = [vals.get(k) or 0 for k in kernels]
                ys.append(geomean(vals.values()) or 0)
                xs = [j + (i - (len(multi) - 1) / 2) * width
                      for j in range(len(labels))]
                ax.bar(xs, ys, width, label=s)
            ax.axhline(1.0, color="black", linewidth=0.8)
            ax.set_title(f"{mode}, {pol}")
            ax.set_xticks(range(len(labels)))
            ax.set_xticklabels(labels, rotation=45, ha="right", fontsize=8)
            if c == 0:
                ax.set_ylabel("speedup over best single device")
            ax.grid(axis="y", alpha=0.3)
    axes[0][0].legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("jsonl")
    ap.add_argument("-o", "--output", help="output prefix (.md and .png)")
    a = ap.parse_args()
    prefix = a.output or (a.jsonl[:-len(".jsonl")] if a.jsonl.endswith(".jsonl")
                          else a.jsonl)
    print(report(a.jsonl, prefix), end="")


if __name__ == "__main__":
    main()
