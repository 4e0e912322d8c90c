#!/usr/bin/env python3
"""Builds each named program of this directory twice (clang++ as written;
`cleave tile` then `cleave compile`), runs both and compares their output
line by line. The tiled one runs in each configuration of CONFIGS.

usage: differential.py CLEAVE INPUTS_DIR WORK_DIR PROGRAM...
Prints one line per program; exits non-zero on the first difference.
"""
import os
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
    for name in sys.argv[4:]:
        src = os.path.join(inputs, name + ".cpp")
        ref, tiled_cu, tiled = (os.path.join(work, name + s)
                                for s in ("-ref", ".cu", "-tiled"))
        run([cxx, "-std=c++17", "-O1", "-I", inputs, src, "-o", ref])
        run([cleave, "tile", src, "-o", tiled_cu])
        run([cleave, "compile", "-I", inputs, tiled_cu, "-o", tiled])
        want = run([ref]).stdout.splitlines()
        launched = False
        for what, extra in CONFIGS:
            env = dict(os.environ, CLEAVE_LOG="plan", **extra)
            got = run([tiled], env)
            compare(name + " (" + what + ")", want, got.stdout.splitlines())
            launched = launched or "launch __cleave_tile" in got.stderr
        print("%s: %d lines identical, %s" %
              (name, len(want), "tiled kernels launched" if launched
               else "no tiled kernel launched"))


if __name__ == "__main__":
    main()
