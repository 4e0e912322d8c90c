#!/usr/bin/env python3
"""Compile time of CUDA programs: Cleave's build against nvcc's.

Each program is built into an executable both ways (`cleave compile -O3 F -o X`
and `nvcc -O3 -arch=sm_90 F -o X`, as the corpus benchmark builds them), the
two builds alternating, REPEAT times. The machine is shared: both the wall
time and the CPU time (user + system, the build's child processes included)
are recorded, and the ratio is taken from the median of each. CPU time is the
steadier figure on a loaded machine.

usage: measure.py [--repeat R] [--cleave [NAME=]PATH]... [--nvcc PATH]
                  [--jsonl OUT] FILE.cu...
Several --cleave builds (e.g. before=/tmp/cleave-old after=build/bin/cleave)
are measured in turn with nvcc, each against the same nvcc runs. Prints one
line per program:
  program nvcc_wall nvcc_cpu [NAME_wall NAME_cpu wall_ratio cpu_ratio]...
"""
import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time


def timed(cmd):
    """(wall seconds, CPU seconds of the command's processes)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.monotonic()
    r = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                       text=True)
    wall = time.monotonic() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if r.returncode != 0:
        sys.exit("failed: %s\n%s" % (" ".join(cmd), r.stderr[-2000:]))
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("files", nargs="+")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--cleave", action="append",
                    help="a Cleave to measure, [NAME=]PATH (default "
                    "build/bin/cleave)")
    ap.add_argument("--nvcc", default="/usr/local/cuda/bin/nvcc")
    ap.add_argument("--jsonl", help="also append one JSON record per program")
    a = ap.parse_args()
    cleaves = []
    for c in a.cleave or ["cleave=build/bin/cleave"]:
        name, _, path = c.rpartition("=")
        cleaves.append((name or "cleave", path))
    out = open(a.jsonl, "a") if a.jsonl else None
    print("# program nvcc_wall nvcc_cpu" +
          "".join(" %s_wall %s_cpu %s_wall_ratio %s_cpu_ratio" % ((n,) * 4)
                  for n, _ in cleaves) +
          " (seconds, medians of %d)" % a.repeat, flush=True)
    with tempfile.TemporaryDirectory(prefix="cleave-compile-") as tmp:
        exe = os.path.join(tmp, "a.out")
        for f in a.files:
            runs = {"nvcc": []}
            runs.update((n, []) for n, _ in cleaves)
            for _ in range(a.repeat):
                runs["nvcc"].append(timed([a.nvcc, "-O3", "-arch=sm_90", f,
                                           "-o", exe]))
                for n, path in cleaves:
                    runs[n].append(timed([path, "compile", "-O3", f, "-o",
                                          exe]))
            med = {k: (statistics.median(w for w, _ in v),
                       statistics.median(c for _, c in v))
                   for k, v in runs.items()}
            name = os.path.splitext(os.path.basename(f))[0]
            nw, nc = med["nvcc"]
            line = "%s %.2f %.2f" % (name, nw, nc)
            for n, _ in cleaves:
                cw, cc = med[n]
                line += " %.2f %.2f %.2f %.2f" % (cw, cc, cw / nw, cc / nc)
            print(line, flush=True)
            if out:
                out.write(json.dumps({"program": name, "runs": runs}) + "\n")
                out.flush()


if __name__ == "__main__":
    main()
