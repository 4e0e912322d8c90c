#!/usr/bin/env python3
"""The multi-GPU host-link benchmark's report (bench/linkstates/run.sh writes
the input): per kernel and GPU count N, the medians of serial-N
(unpipelined) and piped-N (pipelined), the link bound and the planner's
prediction that bin/linkbound computes from the profile's host-link states
and the bound line (one GPU's kernel time, blocks and bytes), and the
targets of issue 32: piped-N within 1.10x of its link bound; serial-1 /
piped-4 >= 3.0.

    report.py --linkbound BIN --profile P --gpus "2 4" [--dry] linkstates.jsonl
"""
import argparse
import json
import statistics
import subprocess

NAN = float("nan")


def load(path):
    rows = {}
    for line in open(path):
        line = line.strip()
        if line.startswith("{"):
            r = json.loads(line)
            rows.setdefault((r["kernel"], r["label"]), []).append(r)
    return rows


def median_ms(rows, kernel, label):
    rs = rows.get((kernel, label), [])
    if not rs or not all(r.get("ok") for r in rs):
        return NAN
    return statistics.median(r["median_total_ms"] for r in rs)


def planner(args, bound, n):
    """bin/linkbound's JSON for the first n GPUs, or None."""
    k = bound["kernel_ms"]
    k = statistics.median(k) if isinstance(k, list) else k
    cmd = [args.linkbound, "--profile", args.profile,
           "--gpus", ",".join(str(i) for i in range(n)),
           "--blocks", str(bound["blocks"]), "--wave", str(bound["wave_blocks"]),
           "--kernel-ms", str(k), "--send-bytes", str(bound["send_bytes"]),
           "--receive-bytes", str(bound["receive_bytes"])]
    p = subprocess.run(cmd, capture_output=True, text=True)
    try:
        return json.loads(p.stdout)
    except ValueError:
        return None


def fmt(x, spec=".1f"):
    return "-" if x != x else format(x, spec)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--linkbound", required=True)
    ap.add_argument("--profile", required=True)
    ap.add_argument("--gpus", required=True)
    ap.add_argument("--dry", action="store_true",
                    help="CPU devices and a canned bound: no verdicts")
    ap.add_argument("jsonl")
    args = ap.parse_args()
    rows = load(args.jsonl)
    counts = [int(n) for n in args.gpus.split()]
    kernels = sorted({k for (k, label) in rows if label.startswith("serial")})
    print("| kernel | N | serial-1 ms | serial-N ms | piped-N ms | link bound ms "
          "| planner ms | piped / bound | serial-1 / piped |")
    print("|---|---|---|---|---|---|---|---|---|")
    verdicts, ok = [], True
    for kernel in kernels:
        one = median_ms(rows, kernel, "serial-1")
        bound = rows.get((kernel, "bound"), [None])[0]
        for n in counts:
            serial = median_ms(rows, kernel, f"serial-{n}")
            piped = median_ms(rows, kernel, f"piped-{n}")
            plan = planner(args, bound, n) if bound and "send_bytes" in bound \
                else None
            lb = plan["link_bound_ms"] if plan and not plan["missing"] else NAN
            pred = plan["predicted_ms"] if plan and not plan["missing"] else NAN
            print(f"| {kernel} | {n} | {fmt(one)} | {fmt(serial)} | {fmt(piped)} "
                  f"| {fmt(lb)} | {fmt(pred)} | {fmt(piped / lb, '.2f')} "
                  f"| {fmt(one / piped, '.2f')} |")
            if lb == lb and piped == piped:
                good = piped <= 1.10 * lb
                ok &= good
                verdicts.append(f"- {kernel}, {n} GPUs: piped {piped / lb:.2f}x "
                                f"the link bound (target <= 1.10): "
                                f"{'met' if good else 'MISSED'}")
            if n == 4 and one == one and piped == piped:
                good = one / piped >= 3.0
                ok &= good
                verdicts.append(f"- {kernel}, 4 GPUs: {one / piped:.2f}x over one "
                                f"GPU unpipelined (target >= 3.0): "
                                f"{'met' if good else 'MISSED'}")
            if plan and plan["missing"]:
                verdicts.append(f"- {kernel}, {n} GPUs: the planner refused: "
                                f"{plan['missing']}")
    print()
    if args.dry:
        print("DRY run: CPU devices stand for the GPUs and the bound line is "
              "canned; the table checks the script, not the targets.")
    elif verdicts:
        print("\n".join(verdicts))
    else:
        print("- no kernel has a link bound")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
