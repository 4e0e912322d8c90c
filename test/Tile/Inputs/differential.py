#!/usr/bin/env python3
"""Builds each named program of this directory twice (clang++ as written;
`cleave tile` then `cleave compile`), runs both and compares their output
line by line. The tiled one runs in each configuration of CONFIGS.

usage: differential.py CLEAVE INPUTS_DIR WORK_DIR PROGRAM[@NAME=VALUE]...
A program named with @NAME=VALUE has its tiled build compiled with
-DNAME=VALUE (CLEAVE_TILE_SCHEDULE=0 or 1 forces one launch per time step
or the time tiles of a technique(timeskew) nest).
Prints one line per program, with the kinds of generated kernels that ran
(kernel: wavefront tiles; tiles, step, copy: time tiles, one launch per
time step, the copy back); exits non-zero on the first difference.
"""
import os
import re
import shutil
import subprocess
import sys


def run(cmd, env=None):
    r = subprocess.run(cmd, capture_output=True, text=True, env=env)
    if r.returncode != 0:
        sys.exit("failed (%d): %s\n%s%s" % (r.returncode, " ".join(cmd),
                                             r.stdout, r.stderr))
    return r


# One CPU device; two sharing each launch's blocks; one checking every global
# memory access of the kernels against the live allocations (the staged
# windows must not read outside the arrays' device copies).
CONFIGS = (
    ("one device", dict(CLEAVE_DEVICES="cpu", CLEAVE_PARTITION="even")),
    ("two devices", dict(CLEAVE_DEVICES="cpu,cpu",
                         CLEAVE_PARTITION="proportional")),
    ("memory check", dict(CLEAVE_DEVICES="cpu", CLEAVE_CHECK="memory")),
)


def compare(what, want, got):
    if got == want:
        return
    for w, g in zip(want, got):
        if w != g:
            print("%s: differs: want '%s', got '%s'" % (what, w, g))
            break
    else:
        print("%s: differs in its number of lines" % what)
    sys.exit(1)


def main():
    cleave, inputs, work = sys.argv[1:4]
    cxx = shutil.which("clang++") or "clang++"
    for arg in sys.argv[4:]:
        name, _, define = arg.partition("@")
        tag = name + ("-" + re.sub(r"\W", "_", define) if define else "")
        src = os.path.join(inputs, name + ".cpp")
        ref, tiled_cu, tiled = (os.path.join(work, tag + s)
                                for s in ("-ref", ".cu", "-tiled"))
        run([cxx, "-std=c++17", "-O1", "-I", inputs, src, "-o", ref])
        run([cleave, "tile", src, "-o", tiled_cu])
        run([cleave, "compile", "-I", inputs] +
            (["-D" + define] if define else []) + [tiled_cu, "-o", tiled])
        want = run([ref]).stdout.splitlines()
        kinds = set()
        for what, extra in CONFIGS:
            env = dict(os.environ, CLEAVE_LOG="plan", **extra)
            got = run([tiled], env)
            compare(arg + " (" + what + ")", want, got.stdout.splitlines())
            kinds.update(re.findall(r"launch __cleave_tile\d+_(\w+)",
                                    got.stderr))
        print("%s: %d lines identical, %s" %
              (arg, len(want), "tiled kernels launched (%s)" %
               ", ".join(sorted(kinds)) if kinds
               else "no tiled kernel launched"))


if __name__ == "__main__":
    main()
