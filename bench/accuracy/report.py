#!/usr/bin/env python3
"""The accuracy report (issue 6 §3): predicted against measured kernel times.

Joins bench/accuracy/predict.sh's predictions.jsonl with measure.sh's
measured.jsonl files (one per GPU) by GPU and (kernel, grid, block), for the
configurations suite.txt counts (`"counts": true` in the predictions), and
prints a markdown table per GPU (measured median, and per mode the predicted
time and the signed error) with the mean absolute percentage error per GPU
and per mode; --json writes the same as one document.

  report.py PREDICTIONS.jsonl MEASURED.jsonl [MEASURED.jsonl ...]
            [--json OUT.json] [--field seconds|kernel_seconds]
            [--target 10] [--min-kernels 12]

A MEASURED argument may be written GPU=PATH (GPU as in the predictions'
"gpu", e.g. h100x1=measured-h100.jsonl); otherwise its lines' "device"
(nvidia-smi's name) is matched to the profile's GPU name. Error % =
(predicted - measured) / measured x 100. A mode that gives no finite time for
a kernel (the printed paper model: MPD = 0) has no error for it: its MAPE is
reported as infinite, and separately over the kernels it did predict.
Exit status: 0, also when the target is missed (the report says so); 1 on
bad input.
"""

import argparse
import json
import math
import sys

MODES_ORDER = ["hopper", "paper-fix", "paper"]


def read_jsonl(path):
    rows = []
    with open(path) as f:
        for n, line in enumerate(f, 1):
            line = line.strip()
            if not line:
                continue
            try:
                rows.append(json.loads(line))
            except json.JSONDecodeError as e:
                sys.exit("report: %s:%d: not JSON: %s" % (path, n, e))
    return rows


def key_of(row):
    return (row["kernel"], tuple(row["grid"]), tuple(row["block"]))


def same_gpu(profile_name, device):
    """Whether nvidia-smi's device name is the profile's GPU."""
    a, b = profile_name.lower(), device.lower()
    if a == b:
        return True
    for model in ("h100", "h200", "a100", "b200", "gh200"):
        if model in a and model in b:
            return ("gh200" in a) == ("gh200" in b)
    return False


def fmt_ms(x):
    if x is None:
        return "inf"
    return "%.4f" % x if x < 10 else "%.2f" % x


def fmt_pct(x):
    if x is None:
        return "n/a"
    if math.isinf(x):
        return "inf"
    return "%+.1f" % x


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("predictions")
    ap.add_argument("measured", nargs="+")
    ap.add_argument("--json", dest="json_out")
    ap.add_argument("--field", default="seconds",
                    choices=["seconds", "kernel_seconds"],
                    help="the predicted time: with the launch cost "
                         "(seconds, default) or without it")
    ap.add_argument("--target", type=float, default=10.0,
                    help="MAPE target in percent (BENCHMARKS.md: 10)")
    ap.add_argument("--min-kernels", type=int, default=12)
    a = ap.parse_args()

    preds = read_jsonl(a.predictions)
    field = "predicted_s" if a.field == "seconds" else "kernel_s"
    for p in preds:
        for k in ("gpu", "gpu_name", "mode", "kernel", "grid", "block",
                  "counts", "entry"):
            if k not in p:
                sys.exit("report: %s: a prediction without '%s'" %
                         (a.predictions, k))
    gpus = {}  # gpu key -> profile GPU name
    for p in preds:
        gpus.setdefault(p["gpu"], p["gpu_name"])

    # Measurements per GPU key: (kernel, grid, block) -> measured row.
    measured = {g: {} for g in gpus}
    failed = []
    for arg in a.measured:
        forced = None
        path = arg
        if "=" in arg and arg.split("=", 1)[0] in gpus:
            forced, path = arg.split("=", 1)
        for m in read_jsonl(path):
            if m.get("status") != "ok":
                failed.append(m)
                continue
            g = forced
            if g is None:
                match = [k for k, name in gpus.items()
                         if same_gpu(name, m.get("device", ""))]
                if len(match) != 1:
                    sys.exit("report: %s: device '%s' matches %s of the "
                             "predictions' GPUs (%s); write GPU=PATH" %
                             (path, m.get("device"), len(match) or "none",
                              ", ".join(sorted(gpus))))
                g = match[0]
            for k in ("kernel", "grid", "block", "median_ms"):
                if k not in m:
                    sys.exit("report: %s: a measurement without '%s'" %
                             (path, k))
            # The same configuration measured by two entries: keep both,
            # the join prefers the entry that counts it.
            measured[g].setdefault(key_of(m), []).append(m)

    modes = sorted({p["mode"] for p in preds},
                   key=lambda m: (MODES_ORDER.index(m)
                                  if m in MODES_ORDER else 99, m))
    rows = []
    missing = []
    summary = {}
    for g in sorted(gpus):
        # Counted configurations, first entry that counts each.
        counted = {}
        for p in preds:
            if p["gpu"] == g and p["counts"]:
                k = key_of(p)
                counted.setdefault(k, {"entry": p["entry"],
                                       "display": p.get("display", ""),
                                       "preds": {}})
                if counted[k]["entry"] == p["entry"]:
                    counted[k]["preds"][p["mode"]] = p
        for k, c in counted.items():
            ms = measured[g].get(k)
            if not ms:
                missing.append({"gpu": g, "entry": c["entry"], "kernel": k[0],
                                "grid": list(k[1]), "block": list(k[2])})
                continue
            m = next((x for x in ms if x.get("entry") == c["entry"]), ms[0])
            row = {"gpu": g, "gpu_name": gpus[g], "device": m.get("device"),
                   "entry": c["entry"], "kernel": k[0],
                   "display": c["display"], "grid": list(k[1]),
                   "block": list(k[2]), "measured_ms": m["median_ms"],
                   "samples": m.get("samples"), "modes": {}}
            for mode, p in c["preds"].items():
                s = p.get(field)
                pred_ms = None if s is None else s * 1e3
                err = (math.inf if pred_ms is None else
                       (pred_ms - m["median_ms"]) / m["median_ms"] * 100.0)
                row["modes"][mode] = {
                    "predicted_ms": pred_ms,
                    "error_pct": None if math.isinf(err) else err,
                    "bottleneck": p.get("bottleneck")}
            rows.append(row)
        summary[g] = {}
        for mode in modes:
            errs = [r["modes"][mode]["error_pct"] for r in rows
                    if r["gpu"] == g and mode in r["modes"]]
            finite = [abs(e) for e in errs if e is not None]
            n = len(errs)
            mape = (math.inf if len(finite) < n else
                    (sum(finite) / n if n else None))
            summary[g][mode] = {
                "kernels": n,
                "mape_pct": None if mape is None or math.isinf(mape) else mape,
                "mape_infinite": mape is not None and math.isinf(mape),
                "finite": len(finite),
                "mape_finite_pct": (sum(finite) / len(finite)
                                    if finite else None),
                "max_abs_error_pct": max(finite) if finite else None,
                "meets_target": (mape is not None and not math.isinf(mape)
                                 and mape <= a.target
                                 and n >= a.min_kernels)}

    out = sys.stdout
    out.write("# Model accuracy: predicted vs measured kernel time\n\n")
    out.write("Predicted time: `%s` of `cleave analyze --json`; measured: "
              "median of the CUDA-event times of every launch of the "
              "configuration (CLEAVE_LOG=time, one GPU). Error = "
              "(predicted - measured) / measured. Target: MAPE <= %g %% "
              "over >= %d kernels per GPU.\n" %
              (a.field, a.target, a.min_kernels))
    for g in sorted(gpus):
        grows = [r for r in rows if r["gpu"] == g]
        out.write("\n## %s (%s)\n\n" % (gpus[g], g))
        if not grows:
            out.write("No measurement joined.\n")
            continue
        head = ["entry", "kernel", "grid", "block", "measured ms"]
        for mode in modes:
            head += ["%s ms" % mode, "%s err %%" % mode]
        out.write("| " + " | ".join(head) + " |\n")
        out.write("|" + "---|" * len(head) + "\n")
        for r in grows:
            name = r["display"] or r["kernel"]
            name = name.split("(")[0].replace("void ", "").replace("|", "\\|")
            cells = [r["entry"], "`%s`" % name,
                     "x".join(map(str, r["grid"])),
                     "x".join(map(str, r["block"])),
                     fmt_ms(r["measured_ms"])]
            for mode in modes:
                mm = r["modes"].get(mode)
                if mm is None:
                    cells += ["-", "-"]
                else:
                    e = mm["error_pct"]
                    cells += [fmt_ms(mm["predicted_ms"]),
                              fmt_pct(math.inf if e is None else e)]
            out.write("| " + " | ".join(cells) + " |\n")
        out.write("\n| mode | kernels | MAPE % | MAPE % (finite only) | "
                  "max abs err % | target met |\n|---|---|---|---|---|---|\n")
        for mode in modes:
            s = summary[g][mode]
            mape = ("inf" if s["mape_infinite"] else
                    "n/a" if s["mape_pct"] is None else "%.1f" % s["mape_pct"])
            fin = ("n/a" if s["mape_finite_pct"] is None else
                   "%.1f (%d of %d)" % (s["mape_finite_pct"], s["finite"],
                                        s["kernels"]))
            mx = ("n/a" if s["max_abs_error_pct"] is None else
                  "%.1f" % s["max_abs_error_pct"])
            out.write("| %s | %d | %s | %s | %s | %s |\n" %
                      (mode, s["kernels"], mape, fin, mx,
                       "yes" if s["meets_target"] else "no"))
    if missing:
        out.write("\nCounted but not measured (left out of the MAPE):\n\n")
        for x in missing:
            out.write("- %s: %s %s grid %s block %s\n" %
                      (x["gpu"], x["entry"], x["kernel"],
                       "x".join(map(str, x["grid"])),
                       "x".join(map(str, x["block"]))))
    if failed:
        out.write("\nEntries whose run failed on the GPU machine:\n\n")
        for x in failed:
            out.write("- %s on %s: %s\n" % (x.get("entry"), x.get("device"),
                                            x.get("status")))
    if a.json_out:
        with open(a.json_out, "w") as f:
            json.dump({"field": a.field, "target_pct": a.target,
                       "min_kernels": a.min_kernels, "modes": modes,
                       "rows": rows, "summary": summary, "missing": missing,
                       "failed": failed}, f, indent=1, sort_keys=True)
            f.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
